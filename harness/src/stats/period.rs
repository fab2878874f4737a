//! Period detection: which calls of a sequence recur at a fixed period.
//!
//! Survey section 7.1 explains LTTng's slow path as one event per sub-buffer, i.e. a path taken
//! every SUB-BUFFER_SIZE / EVENT_SIZE calls; the middle path every PAGE_SIZE / EVENT_SIZE. A
//! periodic path is established by its lattice (calls exactly P apart, phase included), which
//! is far stronger evidence than its share of calls.

use super::residues::{best_filled, lattice_slots, Scratch};

/// How regularly a set of events recurs in an iteration sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Periodicity {
    /// The period, in iterations (calls).
    pub period: u64,
    /// Share of the events that sit on one residue class modulo `period` (1.0: perfectly
    /// periodic; noise events and phase jumps lower it).
    pub on_lattice: f64,
    /// Events seen.
    pub events: usize,
}

/// The greatest common divisor of `a` and `b` (Euclid).
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Finds the period of events given their iteration indices, one sorted list per sequence (a
/// sequence is one thread of one repetition: indices restart in each).
///
/// Candidates are the most common differences between consecutive events and their pairwise
/// GCDs (a discarded slow call leaves a gap of 2P; a noise event splits P into two parts that sum
/// to P). Each candidate is scored by how many events sit on its best residue class; the
/// largest candidate that keeps at least 90 % of the best score wins, so a true period P beats
/// its divisors (which score the same) and noise barely moves it. Returns `None` when fewer than
/// 4 events exist, or the winner puts less than half the events on one lattice or leaves more
/// than half of that lattice's slots empty.
pub fn detect_period(seqs: &[Vec<u64>]) -> Option<Periodicity> {
    let events: usize = seqs.iter().map(|s| s.len()).sum();
    if events < 4 {
        return None;
    }
    let mut diffs: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for s in seqs {
        for w in s.windows(2) {
            if w[1] > w[0] {
                *diffs.entry(w[1] - w[0]).or_default() += 1;
            }
        }
    }
    let mut common: Vec<(u64, usize)> = diffs.into_iter().collect();
    common.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    common.truncate(4);
    let mut cands: Vec<u64> = common.iter().map(|c| c.0).collect();
    for i in 0..common.len() {
        for j in i + 1..common.len() {
            cands.push(gcd(common[i].0, common[j].0));
        }
    }
    cands.retain(|&p| p >= 2);
    cands.sort_unstable();
    cands.dedup();
    // (events on the best residue class, lattice slots between the first and last of them)
    let score = |p: u64| -> (usize, u64) {
        seqs.iter()
            .map(|s| {
                let mut by_res: std::collections::HashMap<u64, (usize, u64, u64)> = std::collections::HashMap::new();
                for &i in s {
                    let e = by_res.entry(i % p).or_insert((0, i, i));
                    e.0 += 1;
                    e.2 = i;
                }
                by_res.values().max_by_key(|e| e.0).map(|e| (e.0, (e.2 - e.1) / p + 1)).unwrap_or((0, 0))
            })
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let scored: Vec<(u64, (usize, u64))> = cands.iter().map(|&p| (p, score(p))).collect();
    let best = scored.iter().map(|s| s.1 .0).max()?;
    let (period, (on, slots)) =
        scored.iter().filter(|s| s.1 .0 as f64 >= 0.9 * best as f64).max_by_key(|s| s.0).copied()?;
    let on_lattice = on as f64 / events as f64;
    // Half the events on one lattice, and that lattice mostly filled: random events put 1/p of
    // themselves on a lattice but leave almost all of its slots empty.
    if on_lattice < 0.5 || (on as f64) < 0.5 * slots as f64 {
        return None;
    }
    Some(Periodicity { period, on_lattice, events })
}

/// Median spacing between consecutive events and the share of spacings within 10 % of it, for
/// paths that recur without an exact period (a printf buffer flush every ~N events, where N
/// drifts as the formatted length changes).
pub fn spacing(seqs: &[Vec<u64>]) -> Option<(f64, f64)> {
    let mut d: Vec<f64> =
        seqs.iter().flat_map(|s| s.windows(2).filter(|w| w[1] > w[0]).map(|w| (w[1] - w[0]) as f64)).collect();
    if d.len() < 3 {
        return None;
    }
    d.sort_by(|a, b| a.total_cmp(b));
    let med = super::percentile_sorted(&d, 50.0);
    let near = d.iter().filter(|x| (**x - med).abs() <= 0.1 * med).count();
    Some((med, near as f64 / d.len() as f64))
}

/// The calls of one sequence (one thread of one repetition) that stand above the fast path:
/// (iteration, value), sorted by iteration, with the first and last iteration of the sequence.
#[derive(Debug, Clone, Default)]
pub struct SlowSeq {
    pub first: u64,
    pub last: u64,
    pub calls: Vec<(u64, f32)>,
}

/// A periodic path: slow calls at iterations `r + k * period` of each sequence (survey section
/// 7.1: the slow path every SUB-BUFFER_SIZE / EVENT_SIZE events).
#[derive(Debug, Clone, PartialEq)]
pub struct Lattice {
    pub period: u64,
    /// The phase in each input sequence (None where the sequence holds no call on it).
    pub residues: Vec<Option<u64>>,
    /// Slow calls on the lattice, and their (iteration, value) per sequence.
    pub hits: usize,
    pub calls: Vec<Vec<(u64, f32)>>,
    /// Lattice iterations between each sequence's first and last iteration (discarded calls
    /// included: the report counts the kept ones in a later pass).
    pub slots: u64,
    /// log10 of the chance that slow calls falling anywhere would fill a lattice this well,
    /// counting every period and phase tried (Bonferroni): -6 means one in a million.
    pub log10_chance: f64,
}

/// Candidate periods whose pairwise GCDs are candidates too (the most frequent differences).
pub const GCD_OF: usize = 16;

/// Successors of a call, within its cost band, whose differences are candidate periods. A rare
/// costly path (LTTng's sub-buffer switch every 6545 calls, +2 to +140 us) shares its band with
/// the machine's +2 us stalls, about ten of them between two of its calls in a noisy run: eight
/// successors missed its period there.
pub const BAND_SUCCESSORS: usize = 24;

/// Calls of one sequence on a lattice before they count as its evidence (fewer: misses).
pub const MIN_SEQ_HITS: usize = 3;

/// A call on a found lattice costing more than this times the lattice's 90th-percentile cost is
/// another path's call meeting its slot, not only the lattice's own.
pub const COINCIDENT_FACTOR: f32 = 2.0;

/// The best-supported lattice among the slow calls, if any beats chance by 1000:1.
fn best_lattice(seqs: &[SlowSeq], rows: u64) -> Option<Lattice> {
    let slow: usize = seqs.iter().map(|s| s.calls.len()).sum();
    if slow < 4 || rows == 0 {
        return None;
    }
    let q = (slow as f64 / rows as f64).clamp(1e-9, 0.999);
    // How far ahead to look for calls of like cost: far enough to step over a few hundred
    // outliers between two calls of a path, bounded so that the work stays ~4M comparisons.
    let reach = (4_000_000 / slow.max(1)).clamp(64, 4096);
    // Differences are pushed into plain vectors and counted by sorting (hashing them was most of
    // the search's time, and the permutation null reruns the search a thousand times).
    let mut like_diffs: Vec<u64> = Vec::new();
    // Candidate periods: differences to the next few slow calls. Interrupts and other outliers
    // mixed in split a period into parts, but the period itself still appears between a call and
    // its second or third successor.
    let mut diffs: Vec<u64> = Vec::new();
    for s in seqs {
        for (i, a) in s.calls.iter().enumerate() {
            for b in s.calls.iter().skip(i + 1).take(8) {
                if b.0 > a.0 {
                    diffs.push(b.0 - a.0);
                }
            }
            // When outliers outnumber the path's calls between two of them, the period shows
            // between calls of like cost: the next few within 25 % of this one's value.
            let mut like = 0;
            for b in s.calls.iter().skip(i + 9).take(reach) {
                if (b.1 - a.1).abs() <= 0.25 * a.1.max(b.1) && b.0 > a.0 {
                    like_diffs.push(b.0 - a.0);
                    like += 1;
                    if like == 16 {
                        break;
                    }
                }
            }
        }
    }
    // The most frequent of each kind: among many outliers the nearest-neighbour differences are
    // dominated by small random gaps, while the like-cost ones still single out the period.
    SCRATCH.with_borrow_mut(|scratch| lattice_of_candidates(seqs, slow, q, scratch, &diffs, &like_diffs))
}

thread_local! {
    /// One per thread: the tables grow to the largest period or difference seen and are left
    /// zeroed after each use, so a rerun allocates and clears nothing.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The candidate periods from the differences, each scored: the best lattice, if any.
fn lattice_of_candidates(
    seqs: &[SlowSeq],
    slow: usize,
    q: f64,
    scratch: &mut Scratch,
    diffs: &[u64],
    like_diffs: &[u64],
) -> Option<Lattice> {
    let mut cands = scratch.top(diffs, 24);
    cands.extend(scratch.top(like_diffs, 24));
    // Per cost band (a factor of 4 wide, on log2 steps): a rare costly path among many cheaper
    // slow calls (a sub-buffer switch of ~2 us among hundreds of +150 ns calls) has its period
    // between successive calls of its own band, which the frequent cheap pairs crowd out above.
    let band = |v: f32| (v.max(1.0) as f64).log2().floor() as i64;
    let banded: Vec<Vec<(u64, i64)>> =
        seqs.iter().map(|s| s.calls.iter().map(|c| (c.0, band(c.1))).collect()).collect();
    let bands: std::collections::BTreeSet<i64> = banded.iter().flatten().map(|c| c.1).collect();
    let mut calls: Vec<u64> = Vec::new();
    for &b in &bands {
        let mut in_band: Vec<u64> = Vec::new();
        for s in &banded {
            calls.clear();
            calls.extend(s.iter().filter(|c| (b..=b + 1).contains(&c.1)).map(|c| c.0));
            for (i, a) in calls.iter().enumerate() {
                for c in calls.iter().skip(i + 1).take(BAND_SUCCESSORS) {
                    if c > a {
                        in_band.push(c - a);
                    }
                }
            }
        }
        cands.extend(scratch.top(&in_band, 8));
    }
    // A path whose calls vary in cost pairs up with its second or third successor more often
    // than with the next one (a switch of 1.6 us and one of 2.5 us are not "like"), so 2P and 3P
    // can be frequent where P is not: the pairwise GCDs of the most frequent are candidates too.
    let mut base = cands.clone();
    base.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    base.dedup_by_key(|c| c.0);
    base.truncate(GCD_OF);
    for (i, &(a, _)) in base.iter().enumerate() {
        for &(b, _) in &base[i + 1..] {
            let g = gcd(a, b);
            if g >= 2 && g != a && g != b {
                cands.push((g, 0));
            }
        }
    }
    cands.sort_unstable();
    cands.dedup_by_key(|c| c.0);
    let ln_cands = (cands.len().max(1) as f64).ln();
    let mut best: Option<(f64, Lattice)> = None;
    for &(p, _) in &cands {
        // Fewer calls than half the lattice's slots: it cannot reach the fill below.
        let min_slots: u64 = seqs.iter().map(|s| (s.last - s.first + 1) / p).sum();
        if (slow as f64) < 0.5 * min_slots as f64 {
            continue;
        }
        // An upper bound of the margin below, before any call is counted: the lattice holds at
        // most one call per slot, and the log-likelihood ratio is at most hits * ln(1 / q). A
        // candidate that cannot beat the best so far (or the bar) is skipped: the same winner,
        // far fewer counts (candidates are tried smallest first, and multiples of the true
        // period, frequent among the differences, hold fewer slots).
        let most: usize = seqs.iter().map(|s| s.calls.len().min(((s.last - s.first) / p + 1) as usize)).sum();
        let bound = most as f64 * (1.0 / q).ln() - ln_cands;
        if bound < 1000f64.ln() || best.as_ref().is_some_and(|b| bound <= b.0) {
            continue;
        }
        let mut residues = Vec::with_capacity(seqs.len());
        let (mut hits, mut slots, mut ln_tests) = (0usize, 0u64, ln_cands);
        for s in seqs {
            let best_rn = scratch.most_frequent(&s.calls, p);
            // A sequence without a call on the lattice counts its slots as misses
            // (dropping it would make two calls in one sequence a lattice).
            match best_rn {
                // Two calls of a sequence make a lattice of any period: a sequence's calls count
                // only where three or more of them sit on it (else a flush at the same
                // iterations in three repetitions, twice in each, would read as "every 2156").
                Some((r, n)) if n >= MIN_SEQ_HITS => {
                    hits += n;
                    slots += lattice_slots(s.first, s.last, p, r);
                    ln_tests += (p.min(s.last - s.first + 1) as f64).ln();
                    residues.push(Some(r));
                }
                Some((r, _)) => {
                    slots += lattice_slots(s.first, s.last, p, r);
                    residues.push(None);
                }
                None => {
                    slots += (s.last - s.first + 1) / p;
                    residues.push(None);
                }
            }
        }
        if hits < 4 || slots == 0 {
            continue;
        }
        let fill = (hits as f64 / slots as f64).min(1.0);
        if fill < 0.5 || fill <= q {
            continue;
        }
        // Log-likelihood ratio of "the lattice's calls are slow with probability `fill`" against
        // "any call is slow with probability q".
        let miss = if fill < 1.0 { (slots - hits as u64) as f64 * ((1.0 - fill) / (1.0 - q)).ln() } else { 0.0 };
        let llr = hits as f64 * (fill / q).ln() + miss;
        let margin = llr - ln_tests;
        if margin < 1000f64.ln() {
            continue;
        }
        if best.as_ref().map(|b| margin > b.0).unwrap_or(true) {
            // The new best's residues, each the best filled, unexplained by a finer lattice and
            // costliest (`residues::best_filled`): counted for this candidate only, as most
            // candidates are never the best.
            let mut slots = slots;
            for (s, r) in seqs.iter().zip(residues.iter_mut()) {
                let Some(was) = *r else { continue };
                if let Some((now, _)) = best_filled(&s.calls, p, s.first, s.last).filter(|x| x.1 >= MIN_SEQ_HITS) {
                    slots = slots - lattice_slots(s.first, s.last, p, was) + lattice_slots(s.first, s.last, p, now);
                    *r = Some(now);
                }
            }
            let calls = seqs
                .iter()
                .zip(&residues)
                .map(|(s, r)| match r {
                    Some(r) => s.calls.iter().filter(|c| c.0 % p == *r).copied().collect(),
                    None => Vec::new(),
                })
                .collect::<Vec<Vec<(u64, f32)>>>();
            let hits = calls.iter().map(Vec::len).sum();
            best = Some((
                margin,
                Lattice { period: p, residues, hits, calls, slots, log10_chance: -margin / std::f64::consts::LN_10 },
            ));
        }
    }
    best.map(|b| b.1)
}

/// Finds up to `max` periodic paths among slow calls: the best-supported lattice first, then
/// again among the calls it does not hold (a second path with its own period, such as LTTng's
/// kernel page crossing beside its sub-buffer switch). `rows` is the number of calls the slow
/// ones were drawn from. A handful of calls exactly P apart is strong evidence when slow calls
/// are rare: 5 calls on one lattice of 1 in 800, among 30 slow calls in 5000, happen by chance
/// with odds below 1e-20.
pub fn find_lattices(seqs: &[SlowSeq], rows: u64, max: usize) -> Vec<Lattice> {
    let mut cur: Vec<SlowSeq> = seqs.to_vec();
    let mut out = Vec::new();
    while out.len() < max {
        let Some(l) = best_lattice(&cur, rows) else { break };
        // A call on the lattice that costs far more than the lattice's own calls holds another
        // path too (a costlier path whose slot meets this one's): it stays for the next search,
        // or that path would lose those slots and its phase go to a cheaper neighbour's.
        let mut own: Vec<f32> = l.calls.iter().flatten().map(|c| c.1).collect();
        own.sort_by(|a, b| a.total_cmp(b));
        let above = own.get(own.len() * 9 / 10).map_or(f32::INFINITY, |q| COINCIDENT_FACTOR * q);
        for (s, r) in cur.iter_mut().zip(&l.residues) {
            if let Some(r) = r {
                s.calls.retain(|c| c.0 % l.period != *r || c.1 > above);
            }
        }
        out.push(l);
    }
    out
}

#[cfg(test)]
#[path = "period_tests.rs"]
mod tests;
