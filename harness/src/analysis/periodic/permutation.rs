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
use crate::decisions::claims::{ALPHA, NULL_RUNS};
use crate::stats::period::Lattice;

/// A lattice found in the data with its calibrated p-value.
#[derive(Debug, Clone)]
pub(crate) struct Tested {
    pub lattice: Lattice,
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

/// The same calls at random positions, their costs kept. Where the sequences span the same
/// iterations, one random map of the iterations moves every sequence's calls alike: a call slow
/// on the same iteration in every repetition (keyed to the call's index or value, not to chance)
/// stays so in the null, and a chance progression of such iterations, repeated in each
/// repetition, is no stronger there than in the null. Otherwise each sequence draws its own.
fn permuted(rng: &mut Rng, sp: &Space, seqs: &[Vec<Call>]) -> Vec<Vec<Call>> {
    let mut pos = Vec::new();
    if let Some(&(first, last)) = sp.extents.first().filter(|e| sp.extents.iter().all(|x| x == *e)) {
        let mut at: Vec<u64> = seqs.iter().flatten().map(|c| c.it).filter(|&i| i >= first && i <= last).collect();
        at.sort_unstable();
        at.dedup();
        if at.len() as u64 > last - first + 1 {
            return independently(rng, sp, seqs);
        }
        distinct_positions(rng, first, last, at.len(), &mut pos);
        for i in (1..pos.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            pos.swap(i, j);
        }
        return seqs
            .iter()
            .map(|s| {
                let mut v: Vec<Call> =
                    s.iter().filter_map(|c| at.binary_search(&c.it).ok().map(|k| Call { it: pos[k], ..*c })).collect();
                v.sort_by_key(|c| c.it);
                v
            })
            .collect();
    }
    independently(rng, sp, seqs)
}

/// The calls of each sequence at positions drawn within it alone, their costs shuffled over them.
fn independently(rng: &mut Rng, sp: &Space, seqs: &[Vec<Call>]) -> Vec<Vec<Call>> {
    let mut pos = Vec::new();
    seqs.iter()
        .zip(&sp.extents)
        .map(|(s, &(first, last))| {
            distinct_positions(rng, first, last, s.len(), &mut pos);
            let mut v: Vec<Call> = s.clone();
            for i in (1..v.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                v.swap(i, j);
            }
            v.iter_mut().zip(&pos).for_each(|(c, &p)| c.it = p);
            v.truncate(pos.len());
            v
        })
        .collect()
}

/// The strongest evidence of one search: minus the smallest log10 chance of its lattices.
fn strength(found: &[Lattice]) -> f64 {
    found.iter().map(|l| -l.log10_chance).fold(f64::NEG_INFINITY, f64::max)
}

/// Tests each lattice the search found in `seqs` against reruns of the search at random
/// positions. `seed` makes the reruns reproducible.
pub(crate) fn test(sp: &Space, seqs: &[Vec<Call>], found: Vec<Lattice>, seed: u64) -> Vec<Tested> {
    let mut out: Vec<Tested> = found.into_iter().map(|lattice| Tested { lattice, exceed: 0, runs: 0 }).collect();
    if out.is_empty() {
        return out;
    }
    let mut rng = Rng(seed | 1);
    // The reruns are drawn in order from one generator and counted in order, a batch at a time
    // searched on the machine's cores: the same p-values, and the same early stop, as one by one
    // (the reruns a batch holds past the stop are searched and not counted).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_CORES);
    let mut drawn = 0;
    while drawn < NULL_RUNS && !out.iter().all(|t| t.exceed > 0) {
        let batch = if cores > 1 { (cores * PER_CORE).min((NULL_RUNS - drawn) as usize) } else { 1 };
        let inputs: Vec<Vec<Vec<Call>>> = (0..batch).map(|_| permuted(&mut rng, sp, seqs)).collect();
        drawn += batch as u32;
        let strengths: Vec<f64> = if cores > 1 {
            std::thread::scope(|s| {
                let parts: Vec<_> = inputs
                    .chunks(batch.div_ceil(cores))
                    .map(|part| s.spawn(move || part.iter().map(|x| strength(&search(sp, x))).collect::<Vec<f64>>()))
                    .collect();
                parts.into_iter().flat_map(|h| h.join().expect("a null rerun's search panicked")).collect()
            })
        } else {
            inputs.iter().map(|x| strength(&search(sp, x))).collect()
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
