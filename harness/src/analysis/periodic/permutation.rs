//! The permutation null of the periodic-path search. The search picks its candidate
//! periods from the data, at several thresholds and cost bands, on each metric, and keeps its
//! strongest evidence, so no fixed-lattice bound says how often it finds a lattice by chance.
//! This reruns the whole search (search.rs) on the same slow calls, their costs kept, at
//! positions drawn uniformly at random (one draw for all sequences of the same span, so calls on
//! the same iteration in several repetitions stay together), and compares the strongest evidence
//! each null rerun finds with each lattice found in the data (a max-statistic permutation test:
//! one null distribution for every lattice of the search, so the family is covered).
//!
//! p = (1 + reruns at least as strong) / (1 + reruns). A period is claimed only below
//! [`ALPHA`] (`decisions::claims`): that needs [`NULL_RUNS`] reruns none of which is as strong. The reruns stop early
//! once every lattice has been matched by one (none can then be claimed): a valid sequential
//! scheme, since a claim still needs all of them.
use crate::analysis::periodic::search::{search, Call, Space};
use crate::analysis::periodic::search_part::Part;
use crate::decisions::claims::{ALPHA, NULL_RUNS};
use crate::stats::period::Lattice;

/// A lattice found in the data with its calibrated p-value.
#[derive(Debug, Clone)]
pub(crate) struct Tested {
    pub lattice: Lattice,
    /// The part of the run it was found in (`search_part`).
    pub part: usize,
    /// Null reruns at least as strong, and the reruns made.
    pub exceed: u32,
    pub runs: u32,
}

impl Tested {
    pub fn p(&self) -> f64 {
        (1.0 + self.exceed as f64) / (1.0 + self.runs as f64)
    }
    pub fn claimed(&self) -> bool {
        self.runs >= NULL_RUNS && self.p() < ALPHA
    }
}

/// The seeded generator (xorshift64*): reports made twice from the same files agree.
pub(crate) use crate::stats::rng::XorShift64Star as Rng;

/// `k` distinct iterations drawn uniformly in `first..=last`, sorted (Floyd's algorithm where
/// they are many, rejection where few).
fn distinct_positions(rng: &mut Rng, first: u64, last: u64, k: usize, out: &mut Vec<u64>) {
    let len = last - first + 1;
    out.clear();
    let k = k.min(len as usize);
    if (k as u64) * 4 >= len {
        // Dense: a partial Fisher-Yates over the range would allocate it; a Bernoulli scan
        // with exact count instead (selection sampling, Knuth's Algorithm S).
        let mut need = k as u64;
        for i in 0..len {
            if rng.below(len - i) < need {
                out.push(first + i);
                need -= 1;
            }
        }
        return;
    }
    let mut seen = std::collections::HashSet::with_capacity(2 * k);
    while out.len() < k {
        let x = first + rng.below(len);
        if seen.insert(x) {
            out.push(x);
        }
    }
    out.sort_unstable();
}

/// The same calls at random positions, their costs kept. Sequences that span the same
/// iterations share one random map of those iterations, which moves their calls alike: a call
/// slow on the same iteration in every repetition (keyed to the call's index or value, not to
/// chance) stays so in the null, and a chance progression of such iterations, repeated in each
/// repetition, is no stronger there than in the null. A sequence of its own span draws its own.
fn permuted(rng: &mut Rng, sp: &Space, seqs: &[Vec<Call>]) -> Vec<Vec<Call>> {
    let mut out: Vec<Vec<Call>> = vec![Vec::new(); seqs.len()];
    let mut done = vec![false; seqs.len()];
    for k in 0..seqs.len() {
        if done[k] {
            continue;
        }
        let group: Vec<usize> = (k..seqs.len()).filter(|&j| sp.extents[j] == sp.extents[k]).collect();
        group.iter().for_each(|&j| done[j] = true);
        let moved = match group.len() {
            1 => None,
            _ => one_map(rng, sp.extents[k], group.iter().map(|&j| &seqs[j])),
        };
        match moved {
            Some(moved) => group.iter().zip(moved).for_each(|(&j, v)| out[j] = v),
            None => group.iter().for_each(|&j| out[j] = own_positions(rng, sp.extents[j], &seqs[j])),
        }
    }
    out
}

/// The calls of sequences of one span moved by one random map of the iterations they use, or
/// None where they use more iterations than the span holds (then each draws its own).
fn one_map<'a>(
    rng: &mut Rng,
    (first, last): (u64, u64),
    seqs: impl Iterator<Item = &'a Vec<Call>> + Clone,
) -> Option<Vec<Vec<Call>>> {
    let mut at: Vec<u64> = seqs.clone().flatten().map(|c| c.it).filter(|&i| i >= first && i <= last).collect();
    at.sort_unstable();
    at.dedup();
    if at.len() as u64 > last - first + 1 {
        return None;
    }
    let mut pos = Vec::new();
    distinct_positions(rng, first, last, at.len(), &mut pos);
    for i in (1..pos.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        pos.swap(i, j);
    }
    Some(
        seqs.map(|s| {
            let mut v: Vec<Call> =
                s.iter().filter_map(|c| at.binary_search(&c.it).ok().map(|k| Call { it: pos[k], ..*c })).collect();
            v.sort_by_key(|c| c.it);
            v
        })
        .collect(),
    )
}

/// The calls of one sequence at positions drawn within it alone, their costs shuffled over them.
fn own_positions(rng: &mut Rng, (first, last): (u64, u64), s: &[Call]) -> Vec<Call> {
    let mut pos = Vec::new();
    distinct_positions(rng, first, last, s.len(), &mut pos);
    let mut v: Vec<Call> = s.to_vec();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v.iter_mut().zip(&pos).for_each(|(c, &p)| c.it = p);
    v.truncate(pos.len());
    v
}

/// The strongest evidence of one search: minus the smallest log10 chance of its lattices.
fn strength(found: &[Lattice]) -> f64 {
    found.iter().map(|l| -l.log10_chance).fold(f64::NEG_INFINITY, f64::max)
}

/// Tests each lattice the search found in the run's parts (each with the part it was found in)
/// against reruns of the search at random positions: one rerun moves the calls of every part
/// and searches each, and its evidence is the strongest of all. `seed` makes the reruns
/// reproducible.
pub(crate) fn test(parts: &[Part], found: Vec<(usize, Lattice)>, seed: u64) -> Vec<Tested> {
    let mut out: Vec<Tested> =
        found.into_iter().map(|(part, lattice)| Tested { lattice, part, exceed: 0, runs: 0 }).collect();
    if out.is_empty() {
        return out;
    }
    let mut rng = Rng(seed | 1);
    // The reruns are drawn in order from one generator and counted in order, a batch at a time
    // searched on the machine's cores: the same p-values, and the same early stop, as one by one
    // (the reruns a batch holds past the stop are searched and not counted).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_CORES);
    let mut drawn = 0;
    let rerun = |x: &Vec<Vec<Vec<Call>>>| {
        parts.iter().zip(x).map(|(p, calls)| strength(&search(&p.space, calls))).fold(f64::NEG_INFINITY, f64::max)
    };
    while drawn < NULL_RUNS && !out.iter().all(|t| t.exceed > 0) {
        let batch = if cores > 1 { (cores * PER_CORE).min((NULL_RUNS - drawn) as usize) } else { 1 };
        let inputs: Vec<Vec<Vec<Vec<Call>>>> =
            (0..batch).map(|_| parts.iter().map(|p| permuted(&mut rng, &p.space, &p.calls)).collect()).collect();
        drawn += batch as u32;
        let strengths: Vec<f64> = if cores > 1 {
            std::thread::scope(|s| {
                let parts: Vec<_> = inputs
                    .chunks(batch.div_ceil(cores))
                    .map(|chunk| s.spawn(move || chunk.iter().map(rerun).collect::<Vec<f64>>()))
                    .collect();
                parts.into_iter().flat_map(|h| h.join().expect("a null rerun's search panicked")).collect()
            })
        } else {
            inputs.iter().map(rerun).collect()
        };
        for s in strengths {
            if out.iter().all(|t| t.exceed > 0) {
                break;
            }
            for t in out.iter_mut() {
                t.runs += 1;
                if s >= -t.lattice.log10_chance {
                    t.exceed += 1;
                }
            }
        }
    }
    out
}

/// Cores the null's reruns are searched on, at most, and reruns per core in a batch.
const MAX_CORES: usize = 8;
const PER_CORE: usize = 8;
