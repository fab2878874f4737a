//! Slow calls keyed to the call: the same iterations slow in every repetition. A tracer whose
//! slow path depends on the call's index or on the value it logs (a record that spills a line, a
//! string that needs a longer format) takes it on the same iterations of every repetition that
//! runs the same iterations, at random-looking positions inside each: no period, no regular
//! spacing, and as rare as the machine's stalls. What no memoryless cause does is repeat the
//! positions. The machine cannot count the tracer's calls, so such a population is the tracer's
//! (or its workload's) without the reference windows' test, as an exact period is.
//!
//! The test, per group of sequences over the same iterations (R >= 2 repetitions): the iterations
//! slow in all R, each at the least extra cost it shows in them (a stall or a co-tenant that
//! adds to one repetition's call moves no more than that call); for each band of costs between
//! two cuts of a log grid (KEYED_CUTS_PER_OCTAVE per factor of 2, at most KEYED_BAND_CUTS apart,
//! the top one open), the count of such iterations whose least cost is in the band against what
//! independent positions give (n times the chance that every repetition's call there is at or
//! above the band's floor and not all at or above its top: a binomial tail); the statistic is
//! the smallest of those chances. Its
//! null moves each repetition but the first by its own rotation, read forwards or backwards: a
//! rotation or a reflection keeps everything within a repetition (a timer's regular spacing, a
//! stretch of stalls, a co-tenant's arrival, up to its direction) and moves the repetitions
//! against each other, which is what chance alignment means. Two repetitions of n iterations
//! have only 2n such moves, so all of them are tried where they are few (KEYED_EXACT_MOVES; the
//! chance is then exact, the observed alignment one of them, and n of 500 or fewer can never
//! reach ALPHA); otherwise NULL_RUNS drawn at random. The population is claimed when the null
//! gives as strong a statistic in under ALPHA of its moves (Bonferroni over the groups tested).
//! One population per group: once one is aligned, the calls left are no longer exchangeable
//! under the moves (a random slow call inside an aligned stretch costs that stretch's level
//! more), so a second test would not hold its chance. A call another path takes in one
//! repetition (on its lattice, in its stretch) tells nothing there: an iteration counts as
//! aligned when it is slow in every repetition where it is free, two at least.
use std::collections::BTreeMap;

use crate::decisions::claims::{ALPHA, NULL_RUNS};
use crate::decisions::irregular::{KEYED_BAND_CUTS, KEYED_CUTS_PER_OCTAVE, KEYED_EXACT_MOVES};
use crate::stats::binomial::ln_upper_tail;
use crate::stats::rng::XorShift64Star as Rng;

/// One population of slow calls on the same iterations in every repetition of a group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Keyed {
    /// Iterations slow in every repetition.
    pub iterations: u64,
    /// The repetitions (sequences over the same iterations) they were slow in.
    pub repetitions: u64,
    /// The chance that repetitions moved against each other align as well (the null's share: at
    /// least 1 / (null runs + 1) when drawn, the exact share of every move when all were tried),
    /// and the null's moves.
    pub p: f64,
    pub null_runs: u32,
}

/// A keyed population found: its evidence, its calls as (sequence, iteration), their extra costs
/// (ascending) and its band of extra cost (the top open where `hi` is infinite).
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub keyed: Keyed,
    pub calls: Vec<(u64, u64)>,
    pub extras: Vec<f32>,
    pub cut: f32,
    pub hi: f32,
}

/// One repetition's slow calls: (iteration from the group's first, extra), by iteration.
type Slow = Vec<(u64, f32)>;

/// What one group of repetitions over the same `n` iterations holds: each repetition's slow
/// calls, the iterations another path owns in it (on a claimed lattice, in its stretch, a
/// follower: a bit per iteration), and the step its moves keep (None: any rotation, read either
/// way; Some(L): shifts by whole multiples of L only, where claimed paths sit at one phase in
/// every repetition, so that the null keeps what those paths align).
struct Group {
    slow: Vec<Slow>,
    owned: Vec<Vec<u64>>,
    n: u64,
    step: Option<u64>,
}

impl Group {
    fn owns(&self, k: usize, it: u64) -> bool {
        self.owned[k].get((it / 64) as usize).is_some_and(|w| w >> (it % 64) & 1 == 1)
    }
    /// Each repetition's share of iterations owned by another path.
    fn owned_share(&self, k: usize) -> f64 {
        self.owned[k].iter().map(|w| w.count_ones() as f64).sum::<f64>() / self.n as f64
    }
}

/// The keyed populations among `outliers` ((extra, sequence, iteration)); `extents`: each
/// sequence's (id, first iteration, last iteration); `owned(seq, it)`: another path of the
/// tracer's takes that call; `step(ids)`: the least common multiple of the periods of the claimed
/// paths at one phase in every one of those sequences.
pub(crate) fn find(
    outliers: &[(f32, u64, u64)],
    extents: &[(u64, u64, u64)],
    owned: &dyn Fn(u64, u64) -> bool,
    step: &dyn Fn(&[u64]) -> Option<u64>,
    seed: u64,
) -> Vec<Found> {
    let mut groups: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
    for &(id, lo, hi) in extents {
        groups.entry((lo, hi)).or_default().push(id);
    }
    groups.retain(|_, ids| ids.len() >= 2);
    let tests = groups.len().max(1);
    let mut out = Vec::new();
    let mut rng = Rng(seed | 1);
    for ((lo, hi), ids) in groups {
        let n = hi - lo + 1;
        let slow: Vec<Slow> = ids
            .iter()
            .map(|id| {
                let mut v: Slow =
                    outliers.iter().filter(|c| c.1 == *id && c.2 >= lo && c.2 <= hi).map(|c| (c.2 - lo, c.0)).collect();
                v.sort_unstable_by_key(|c| c.0);
                v
            })
            .collect();
        let owned = ids
            .iter()
            .map(|&id| {
                let mut bits = vec![0u64; n.div_ceil(64) as usize];
                (0..n).filter(|&i| owned(id, i + lo)).for_each(|i| bits[(i / 64) as usize] |= 1 << (i % 64));
                bits
            })
            .collect();
        let g = Group { slow, owned, n, step: step(&ids) };
        let Some(((cut, top), mut keyed)) = test(&g, tests, &mut rng) else { continue };
        // Its calls: the slow calls on the iterations whose least cost is in the band.
        let its = aligned(&g, &vec![(0, false); g.slow.len()]);
        let keep: Vec<u64> = its.iter().filter(|c| c.1 >= cut && c.1 < top).map(|c| c.0).collect();
        keyed.iterations = keep.len() as u64;
        let mut found = Found { keyed, calls: Vec::new(), extras: Vec::new(), cut, hi: top };
        for (s, id) in g.slow.iter().zip(&ids) {
            for &(it, x) in s.iter().filter(|c| keep.binary_search(&c.0).is_ok()) {
                found.calls.push((*id, it + lo));
                found.extras.push(x);
            }
        }
        found.extras.sort_by(|a, b| a.total_cmp(b));
        out.push(found);
    }
    out
}

/// How one repetition is moved against the others: read backwards or not, then rotated by
/// `.0` iterations (within its span).
type Move = (u64, bool);

/// Where iteration `it` of a span of `n` lands under move `m`, and where the iteration that
/// lands on `at` came from.
fn moved(it: u64, m: Move, n: u64) -> u64 {
    (if m.1 { n - 1 - it } else { it } + m.0) % n
}
fn origin(at: u64, m: Move, n: u64) -> u64 {
    let u = (at + n - m.0 % n) % n;
    if m.1 {
        n - 1 - u
    } else {
        u
    }
}

/// The iterations slow in every repetition where no other path owns them (in two at least), once
/// repetition k is moved by `moves[k]`, each with its least extra cost there, by iteration. A
/// repetition whose call there another path takes tells nothing of it: the call is that path's
/// (a keyed iteration on a lattice in one repetition is still keyed in the others).
fn aligned(g: &Group, moves: &[Move]) -> Vec<(u64, f32)> {
    let n = g.n;
    let mut out = Vec::new();
    for (first, s) in g.slow.iter().enumerate() {
        'calls: for &(it, x) in s {
            let at = moved(it, moves[first], n);
            let (mut least, mut seen) = (x, 1);
            for (k, t) in g.slow.iter().enumerate() {
                if k == first {
                    continue;
                }
                // The call of repetition k that lands on `at` after its move.
                let from = origin(at, moves[k], n);
                match t.binary_search_by_key(&from, |c| c.0) {
                    // Counted once, from the first repetition that holds it.
                    Ok(_) if k < first => continue 'calls,
                    Ok(j) => (least, seen) = (least.min(t[j].1), seen + 1),
                    Err(_) if g.owns(k, from) => {}
                    Err(_) => continue 'calls,
                }
            }
            if seen >= 2 {
                out.push((at, least));
            }
        }
    }
    out.sort_unstable_by_key(|c| c.0);
    out
}

/// The cuts of the grid (extra ns, ascending) from the least slow call's extra up to the largest.
fn cuts(slow: &[Slow]) -> Vec<f32> {
    let all = slow.iter().flatten().map(|c| c.1);
    let (lo, hi) = all.fold((f32::INFINITY, 0f32), |(a, b), x| (a.min(x), b.max(x)));
    if !(lo > 0.0 && hi >= lo) {
        return Vec::new();
    }
    let step = 2f64.powf(1.0 / KEYED_CUTS_PER_OCTAVE);
    let mut v = Vec::new();
    let mut c = lo as f64;
    while c <= hi as f64 {
        v.push(c as f32);
        c *= step;
    }
    v
}

/// The bands of the grid: (lower cut, upper cut or None for open), each at most KEYED_BAND_CUTS
/// cuts wide.
fn bands(cuts: &[f32]) -> Vec<(f32, f32)> {
    let mut v = Vec::new();
    for j in 0..cuts.len() {
        for k in j + 1..=(j + KEYED_BAND_CUTS).min(cuts.len()) {
            v.push((cuts[j], cuts.get(k).copied().unwrap_or(f32::INFINITY)));
        }
    }
    v
}

/// The statistic of one alignment: the least ln chance, over the bands, of as many iterations
/// whose least cost over the repetitions is in the band as `aligned` holds (`chance`: that of one
/// iteration), and the band it is reached at.
fn strongest(aligned: &[(u64, f32)], bands: &[(f32, f32)], chance: &[f64], n: u64) -> (f64, usize) {
    let mut best = (0.0, 0);
    if aligned.is_empty() {
        return best;
    }
    for (b, &(lo, hi)) in bands.iter().enumerate() {
        let k = aligned.iter().filter(|c| c.1 >= lo && c.1 < hi).count() as u64;
        if k == 0 {
            continue;
        }
        let l = ln_upper_tail(n, k, chance[b]);
        if l < best.0 {
            best = (l, b);
        }
    }
    best
}

/// The strongest keyed population of group `g` and the null's verdict on it: Some((its band of
/// extra cost, evidence)) when the moves give as strong a statistic in under ALPHA / tests of
/// their runs.
fn test(g: &Group, tests: usize, rng: &mut Rng) -> Option<((f32, f32), Keyed)> {
    let (n, reps) = (g.n, g.slow.len());
    if g.slow.iter().filter(|s| !s.is_empty()).count() < 2 {
        return None;
    }
    let bands = bands(&cuts(&g.slow));
    // Every repetition's call at or above `c`, or owned by another path, by independent positions.
    let all_above = |c: f32| {
        (0..reps)
            .map(|k| g.slow[k].iter().filter(|x| x.1 >= c).count() as f64 / n as f64 + g.owned_share(k))
            .product::<f64>()
    };
    let chance: Vec<f64> = bands.iter().map(|&(lo, hi)| (all_above(lo) - all_above(hi)).max(1e-300)).collect();
    let stay = vec![(0, false); reps];
    let (obs, at) = strongest(&aligned(g, &stay), &bands, &chance, n);
    let alpha = ALPHA / tests as f64;
    // Not even one band's own chance below ALPHA: no null can make it a claim.
    if obs > alpha.ln() {
        return None;
    }
    // The moves: any rotation read either way, or shifts by whole steps only.
    let (count_moves, flips) = match g.step {
        None => (n, true),
        Some(l) => (n.div_ceil(l.max(1)), false),
    };
    let move_of = |k: u64| match g.step {
        None => (k % n, k >= n),
        Some(l) => ((k * l) % n, false),
    };
    let all = if flips { 2 * count_moves } else { count_moves };
    let as_strong = |m: &[Move]| strongest(&aligned(g, m), &bands, &chance, n).0 <= obs;
    let (p, runs) = if reps == 2 && all <= KEYED_EXACT_MOVES {
        // Every move of the second repetition, the observed one among them: p = count / moves.
        let allowed = (alpha * all as f64).ceil() as u64;
        let mut count = 0;
        for k in 0..all {
            if as_strong(&[(0, false), move_of(k)]) {
                count += 1;
                if count >= allowed {
                    return None;
                }
            }
        }
        (count as f64 / all as f64, all as u32)
    } else {
        let runs = NULL_RUNS * tests as u32;
        let allowed = (alpha * (runs + 1) as f64 - 1.0).floor().max(0.0) as u32;
        let mut count = 0;
        let mut m = stay;
        for _ in 0..runs {
            for x in m.iter_mut().skip(1) {
                *x = move_of(rng.below(all));
            }
            if as_strong(&m) {
                count += 1;
                if count > allowed {
                    return None;
                }
            }
        }
        ((count + 1) as f64 / (runs + 1) as f64, runs)
    };
    let keyed = Keyed { iterations: 0, repetitions: reps as u64, p, null_runs: runs };
    Some((bands[at], keyed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outliers of `reps` repetitions of `n` calls: a memoryless share `q` at +100..+3000 ns in
    /// each, and `keyed` iterations (the same in each) at +`extra`.
    fn run(rng: &mut Rng, reps: u64, n: u64, q: f64, keyed: &[u64], extra: f32) -> Vec<(f32, u64, u64)> {
        let mut v = Vec::new();
        for r in 0..reps {
            for it in 0..n {
                if keyed.contains(&it) {
                    v.push((extra, r, it));
                } else if (rng.next() >> 11) as f64 / (1u64 << 53) as f64 <= q {
                    v.push((100.0 + rng.below(2900) as f32, r, it));
                }
            }
        }
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// The keyed populations of outliers `v` of `reps` repetitions of `n` calls each (a call given
    /// twice counts once).
    fn found(mut v: Vec<(f32, u64, u64)>, reps: u64, n: u64, seed: u64) -> Vec<Found> {
        v.sort_by_key(|c| (c.1, c.2));
        v.dedup_by_key(|c| (c.1, c.2));
        let ext: Vec<(u64, u64, u64)> = (0..reps).map(|r| (r, 0, n - 1)).collect();
        find(&v, &ext, &|_, _| false, &|_| None, seed)
    }

    #[test]
    fn iterations_slow_in_every_repetition_are_one_keyed_population() {
        let mut rng = Rng(7);
        let mut named = 0;
        for case in 0..20u64 {
            let (reps, n) = (2 + case % 4, 2000 + 500 * case);
            let keyed: Vec<u64> = (0..4 + case % 5).map(|_| rng.below(n)).collect();
            let extra = 400.0 + 200.0 * case as f32;
            let f = found(run(&mut rng, reps, n, 0.01, &keyed, extra), reps, n, case + 1);
            let mut uniq = keyed.clone();
            uniq.sort_unstable();
            uniq.dedup();
            if f.len() == 1 && f[0].keyed.iterations >= uniq.len() as u64 {
                let mid = f[0].extras[f[0].extras.len() / 2];
                assert!((mid - extra).abs() < 0.3 * extra, "case {case}: +{mid} for +{extra}");
                named += 1;
            }
        }
        assert!(named >= 18, "{named} of 20 keyed populations found whole");
    }

    #[test]
    fn of_two_keyed_paths_at_two_costs_one_is_said_at_its_own() {
        let mut rng = Rng(5);
        let mut own = 0;
        for case in 0..20u64 {
            let (reps, n) = (2 + case % 4, 3000 + 300 * case);
            let a: Vec<u64> = (0..5).map(|_| rng.below(n)).collect();
            let b: Vec<u64> = (0..5).map(|_| rng.below(n)).filter(|x| !a.contains(x)).collect();
            let (ca, cb) = (300.0 + 20.0 * case as f32, 2500.0 + 100.0 * case as f32);
            let mut v = run(&mut rng, reps, n, 0.01, &a, ca);
            v.iter_mut().filter(|c| b.contains(&c.2)).for_each(|c| c.0 = cb);
            v.extend((0..reps).flat_map(|r| b.iter().map(move |&it| (cb, r, it))));
            let mid: Vec<f32> = found(v, reps, n, case + 1).iter().map(|f| f.extras[f.extras.len() / 2]).collect();
            let near = |c: f32| mid.iter().any(|&m| (m - c).abs() < 0.3 * c);
            own += (mid.len() == 1 && (near(ca) || near(cb))) as u32;
        }
        assert!(own >= 18, "{own} of 20 runs with two keyed paths said one at its own cost");
    }

    /// A keyed path whose iterations another path takes in some repetitions (on its lattice, at
    /// its own phase in each) is still found whole in the others.
    #[test]
    fn a_keyed_iteration_on_another_path_in_one_repetition_stays_keyed() {
        let mut rng = Rng(3);
        let mut whole = 0;
        for case in 0..20u64 {
            let (reps, n, p) = (3, 4000 + 200 * case, 5 + case % 7);
            let keyed: Vec<u64> = (0..30).map(|_| rng.below(n)).collect();
            let phase: Vec<u64> = (0..reps).map(|_| rng.below(p)).collect();
            let on = |r: u64, it: u64| it % p == phase[r as usize];
            let v: Vec<(f32, u64, u64)> =
                run(&mut rng, reps, n, 0.01, &keyed, 900.0).into_iter().filter(|c| !on(c.1, c.2)).collect();
            let ext: Vec<(u64, u64, u64)> = (0..reps).map(|r| (r, 0, n - 1)).collect();
            let f = find(&v, &ext, &on, &|_| None, case + 1);
            let mut uniq = keyed.clone();
            uniq.sort_unstable();
            uniq.dedup();
            // Iterations on the lattice in two or more repetitions show in one at most.
            let shown = uniq.iter().filter(|&&it| (0..reps).filter(|&r| !on(r, it)).count() >= 2).count();
            whole += (f.len() == 1 && f[0].keyed.iterations == shown as u64) as u32;
        }
        assert!(whole >= 18, "{whole} of 20 keyed paths among another path's lattices found whole");
    }

    /// Seeded null battery: memoryless slow calls, clustered stretches and a timer-like regular
    /// spacing per repetition, nothing keyed. A claim at ALPHA should come at most about once
    /// in a thousand; 300 runs allow none beyond the binomial's 99.9 % bound of 2.
    #[test]
    fn no_keyed_claim_on_independent_repetitions() {
        let mut rng = Rng(11);
        let mut claims = 0;
        for case in 0..300u64 {
            let (reps, n) = (2 + case % 4, 1000 + 37 * case);
            let mut v = run(&mut rng, reps, n, [0.002, 0.01, 0.05][case as usize % 3], &[], 0.0);
            // A regular spacing in every repetition (a timer), at its own phase in each, and a
            // burst of slow calls.
            let every = 20 + rng.below(200);
            for r in 0..reps {
                let phase = rng.below(every);
                v.extend((phase..n).step_by(every as usize).map(|it| (900.0 + rng.below(50) as f32, r, it)));
                let start = rng.below(n - 50);
                v.extend((start..start + 30).map(|it| (2000.0, r, it)));
            }
            claims += found(v, reps, n, case + 1).len();
        }
        assert!(claims <= 2, "{claims} keyed claims on 300 runs with nothing keyed");
    }
}
