//! The periodic-path search, on the slow calls alone (their iteration and cost), so that the
//! permutation null (permutation.rs) can rerun all of it, every threshold, cost band and candidate, on
//! the same calls at random positions. Survey section 7.1: the slow path every
//! SUB-BUFFER_SIZE / EVENT_SIZE events, a middle path every PAGE_SIZE / EVENT_SIZE.
//!
//! Steps: lattices are searched among the calls above each threshold and in each costlier band
//! (`candidates`); a lattice whose calls form two cost modes on a multiple of its period is split
//! in two (`split_costlier`: two paths of one period at different phases and costs stay apart);
//! a lattice is kept only if nearly every call on it takes the path and most of them stand above
//! their neighbours (`confirm`).
use crate::decisions::periodic::{PER_BAND, PER_THRESHOLD, RISING, SPLIT_HITS, SPLIT_MODE_CALLS, TAKEN};
use crate::stats::hist::{find_modes, LogHistogram, Mode};
use crate::stats::period::{find_lattices, Lattice, SlowSeq};

/// One call above the fast path: its iteration, its cost, and whether its cost mode is a phase
/// (calls in long stretches: never a periodic path's, but counted on a lattice it falls on).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub it: u64,
    pub v: f32,
    pub phase: bool,
}

/// The cost thresholds of one metric, all from its histogram (analysis/mod.rs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Thresholds {
    /// Slow: four kernel widths above the fast path's median.
    pub slow: f64,
    /// Three kernel widths (cheap paths).
    pub low: f64,
    /// The fast path's 90th percentile plus two absolute widths (tight fast paths).
    pub tight: f64,
    /// Calls above this are kept at all.
    pub keep_above: f64,
}

/// What the search reads besides the calls' positions: fixed by the histogram and the run's
/// extent, so a null rerun with the positions randomised uses the same.
pub(crate) struct Space {
    /// First and last iteration of each sequence.
    pub extents: Vec<(u64, u64)>,
    /// Calls the slow ones were drawn from.
    pub rows: u64,
    /// The fast path's median.
    pub base: f64,
    /// Kernel width (relative, absolute) of the metric's modes.
    pub bw: (f64, f64),
    pub th: Thresholds,
}

impl Space {
    /// The same thresholds and widths over other extents, of `rows` calls (a part of the run).
    pub(crate) fn over(&self, extents: Vec<(u64, u64)>, rows: u64) -> Space {
        Space { extents, rows, base: self.base, bw: self.bw, th: self.th }
    }
}

/// The calls above `t` outside phase modes, per sequence.
fn slow_above(sp: &Space, seqs: &[Vec<Call>], t: f64) -> Vec<SlowSeq> {
    seqs.iter()
        .zip(&sp.extents)
        .map(|(s, &(first, last))| SlowSeq {
            first,
            last,
            calls: s.iter().filter(|c| c.v as f64 > t && !c.phase).map(|c| (c.it, c.v)).collect(),
        })
        .collect()
}

/// The whole search: lattices that hold as exact periods, each with its evidence
/// (`log10_chance`, the search statistic the null calibrates).
pub(crate) fn search(sp: &Space, seqs: &[Vec<Call>]) -> Vec<Lattice> {
    let lattices = candidates(sp, seqs);
    let lattices = split_costlier(sp, lattices);
    confirm(sp, seqs, lattices)
}

/// Lattices among the calls above each threshold, then in costlier bands alone: a rare costly
/// path among many slower calls (LTTng's +1 us switch among 700 calls at +50 ns) is weighed
/// against the calls as costly as it. Duplicates are merged in `confirm`.
fn candidates(sp: &Space, seqs: &[Vec<Call>]) -> Vec<Lattice> {
    let th = sp.th;
    let mut out = find_lattices(&slow_above(sp, seqs, th.slow), sp.rows, PER_THRESHOLD);
    if th.low < th.slow {
        out.extend(find_lattices(&slow_above(sp, seqs, th.low), sp.rows, PER_THRESHOLD));
    }
    if th.tight < th.low.min(th.slow) {
        out.extend(find_lattices(&slow_above(sp, seqs, th.tight), sp.rows, PER_THRESHOLD));
    }
    let above = |t: f64| seqs.iter().flatten().filter(|c| c.v as f64 > t && !c.phase).count();
    for t in band_floors(sp, above) {
        out.extend(find_lattices(&slow_above(sp, seqs, t), sp.rows, PER_BAND));
    }
    out
}

/// The floors of the costlier bands: each doubles its distance to the fast path (log-spaced, as
/// costs are), while at least four calls stand above it (`above(t)`: the calls above t).
pub(crate) fn band_floors(sp: &Space, above: impl Fn(f64) -> usize) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = sp.base + 2.0 * (sp.th.slow - sp.base).max(1e-9);
    while above(t) >= 4 {
        out.push(t);
        t = sp.base + 2.0 * (t - sp.base);
    }
    out
}

/// The costliest cost mode of a lattice's calls, when they form two or more.
fn top_cost_mode(l: &Lattice, bw: (f64, f64)) -> Option<Mode> {
    let mut h = LogHistogram::new();
    l.calls.iter().flatten().for_each(|c| h.add(c.1 as f64));
    // Half the relative kernel width: two paths 15 % apart in cost (+500 and +600 ns) are two
    // modes here; the absolute floor still keeps the clock's comb together.
    let mut cm = find_modes(&h, 0.5 * bw.0, bw.1, 0.0);
    cm.retain(|x| x.count >= SPLIT_MODE_CALLS);
    if cm.len() < 2 {
        return None;
    }
    cm.pop()
}

/// A costlier path on a multiple of a cheaper one's period (the sub-buffer switch on a page
/// crossing; or +600 ns at phase 60 of 100 beside +500 ns at phase 10, which fill one lattice
/// every 50): the costlier calls' own lattice is split off, and the cheaper calls keep the
/// multiple too when they hold one phase on it.
fn split_costlier(sp: &Space, mut lattices: Vec<Lattice>) -> Vec<Lattice> {
    let mut extra = Vec::new();
    for l in lattices.iter_mut() {
        if l.hits < SPLIT_HITS {
            continue;
        }
        let Some(top) = top_cost_mode(l, sp.bw) else { continue };
        let of = |keep: &dyn Fn(&(u64, f32)) -> bool, l: &Lattice| -> Vec<SlowSeq> {
            sp.extents
                .iter()
                .zip(&l.calls)
                .map(|(&(first, last), c)| SlowSeq {
                    first,
                    last,
                    calls: c.iter().filter(|x| keep(x)).copied().collect(),
                })
                .collect()
        };
        let Some(n) = find_lattices(&of(&|x| top.contains(x.1 as f64), l), sp.rows, 1).pop() else { continue };
        if n.period <= l.period || n.period % l.period != 0 {
            continue;
        }
        let on_n = |x: &(u64, f32), k: usize| n.residues[k].is_some_and(|r| x.0 % n.period == r);
        for (k, c) in l.calls.iter_mut().enumerate() {
            c.retain(|x| !on_n(x, k));
        }
        l.hits = l.calls.iter().map(Vec::len).sum();
        if let Some(rest) = find_lattices(&of(&|_| true, l), sp.rows, 1).pop().filter(|r| r.period == n.period) {
            *l = rest;
        }
        extra.push(n);
    }
    lattices.extend(extra);
    lattices
}

/// Median cost of a lattice's calls (between the two middle calls of an even count, as the
/// report's medians are), and the cut half-way between the fast path and the path's
/// cheaper calls (its lower decile): a call takes the path when it is closer to the path's cost
/// than to the fast path's. A path whose cost grows over the run (+100 ns early, +4 us late) is
/// judged by what it cost early too, not by its median, so its early calls are not misses.
fn cut_of(sp: &Space, l: &Lattice) -> (f64, f64) {
    let mut v: Vec<f32> = l.calls.iter().flatten().map(|c| c.1).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let med = crate::stats::percentile_sorted(&v.iter().map(|&x| x as f64).collect::<Vec<f64>>(), 50.0);
    let low = v.get(v.len() / 10).copied().unwrap_or(f32::NAN) as f64;
    (med, (sp.base + 0.5 * (low - sp.base)).max(sp.th.keep_above))
}

/// Calls above `cut` on the lattice (period, residue per sequence), and the lattice's slots.
pub(crate) fn taken_on(
    extents: &[(u64, u64)],
    seqs: &[Vec<Call>],
    period: u64,
    residues: &[Option<u64>],
    cut: f64,
) -> (Vec<Vec<(u64, f32)>>, u64) {
    let mut slots = 0u64;
    let calls = seqs
        .iter()
        .zip(extents)
        .zip(residues)
        .map(|((s, &(first, last)), r)| {
            let Some(r) = *r else { return Vec::new() };
            let on = first + (r + period - first % period) % period;
            slots += if on > last { 0 } else { (last - on) / period + 1 };
            s.iter().filter(|c| c.it % period == r && c.v as f64 > cut).map(|c| (c.it, c.v)).collect()
        })
        .collect();
    (calls, slots)
}

/// The same path as costs go: the calls a divisor adds cost what the lattice's own calls cost
/// (within two kernel widths or the spread of the lattice's own calls). +500 ns at phase 10 and
/// +600 ns at phase 60 of period 100 are two paths, not one every 50.
fn same_cost(sp: &Space, own: &Lattice, added: &[f32]) -> bool {
    let mut a: Vec<f32> = own.calls.iter().flatten().map(|c| c.1).collect();
    let mut b = added.to_vec();
    if b.is_empty() || a.is_empty() {
        return true;
    }
    a.sort_by(|x, y| x.total_cmp(y));
    b.sort_by(|x, y| x.total_cmp(y));
    let (ma, mb) = (a[a.len() / 2] as f64, b[b.len() / 2] as f64);
    let spread = (a[a.len() * 9 / 10] - a[a.len() / 10]) as f64;
    (ma - mb).abs() <= (2.0 * sp.bw.0 * ma.abs()).max(2.0 * sp.bw.1).max(spread)
}

/// The path may come every d calls for a divisor d of the period found: the threshold that
/// picked the lattice's calls can miss some of a cheap path's calls, and a multiple of the true
/// period then fills best. The smallest divisor on which the path is still taken nearly every
/// time, at the same cost, is the period.
fn settle_divisor(sp: &Space, seqs: &[Vec<Call>], l: &mut Lattice, cut: f64) {
    for d in crate::stats::residues::divisors(l.period) {
        let res: Vec<Option<u64>> = l.residues.iter().map(|r| r.map(|r| r % d)).collect();
        let (calls, slots) = taken_on(&sp.extents, seqs, d, &res, cut);
        let n: usize = calls.iter().map(Vec::len).sum();
        let per = l.period;
        let added: Vec<f32> = calls
            .iter()
            .zip(&l.residues)
            .flat_map(|(c, r)| c.iter().filter(move |x| Some(x.0 % per) != *r).map(|x| x.1))
            .collect();
        if n >= 4 && n as f64 >= TAKEN * slots as f64 && same_cost(sp, l, &added) {
            l.period = d;
            l.residues = res;
            l.hits = n;
            l.calls = calls;
            l.slots = slots;
            break;
        }
    }
}

/// Each sequence's phase read again over all its calls above the path's cut, where a finer
/// lattice explains the residue the search read (`stats::residues::unexplained_stand_in`). A
/// sequence whose phase moves takes its calls on the new residue.
fn settle_phases(sp: &Space, seqs: &[Vec<Call>], l: &mut Lattice, cut: f64) {
    let p = l.period;
    for (k, r) in l.residues.iter_mut().enumerate() {
        let Some(was) = *r else { continue };
        let above: Vec<(u64, f32)> =
            seqs[k].iter().filter(|c| !c.phase && c.v as f64 > cut).map(|c| (c.it, c.v)).collect();
        let now = crate::stats::residues::unexplained_stand_in(&above, p, sp.extents[k], was, TAKEN);
        if now != was {
            use crate::stats::residues::lattice_slots;
            let (first, last) = sp.extents[k];
            l.slots = l.slots + lattice_slots(first, last, p, now) - lattice_slots(first, last, p, was);
            *r = Some(now);
            l.calls[k] = above.into_iter().filter(|c| c.0 % p == now).collect();
        }
    }
    l.hits = l.calls.iter().map(Vec::len).sum();
}

/// Per residue of `p` in sequence `k`: (residue, calls that rise `rise` above the median of
/// their neighbours, slots), over all of the sequence's calls (`stats::residues::rising_fill`).
fn rising_by_residue(sp: &Space, seq: &[Call], k: usize, p: u64, rise: f64) -> Vec<(u64, usize, u64)> {
    let all: Vec<(u64, f32)> = seq.iter().map(|c| (c.it, c.v)).collect();
    crate::stats::residues::rising_fill(&all, p, sp.extents[k], sp.base, rise)
}

/// Each sequence's phase judged against its neighbours (`stats::residues::rising_fill`). In a
/// sequence that spends a stretch at a slower level every call there is above the path's cut,
/// every residue fills, and the costliest (the one the machine's stalls hit most) was read as
/// the path's phase; against its neighbours only the path's own call rises. Where the search's
/// residue rises on fewer than TAKEN of its slots, and another rises on TAKEN or more, more
/// often than chance would let any of the period's residues (the binomial tail at the share of
/// the sequence's calls that rise, times the period, below ALPHA), the path is on that one. A
/// second random mode rises too: the guard keeps such a mode's luck from moving a phase.
fn settle_rising(sp: &Space, seqs: &[Vec<Call>], l: &mut Lattice, cut: f64) {
    use crate::decisions::claims::ALPHA;
    let (p, rise) = (l.period, cut - sp.base);
    if !(rise > 0.0) {
        return;
    }
    for (k, r) in l.residues.iter_mut().enumerate() {
        let Some(was) = *r else { continue };
        let (first, last) = sp.extents[k];
        let by = rising_by_residue(sp, &seqs[k], k, p, rise);
        let share = |f: &(u64, usize, u64)| f.1 as f64 / f.2.max(1) as f64;
        let own = by.iter().find(|f| f.0 == was).map_or(0.0, share);
        // The best filled, then the smaller residue.
        let Some(best) = by.iter().max_by(|a, b| share(a).total_cmp(&share(b)).then(b.0.cmp(&a.0))) else { continue };
        let q = by.iter().map(|f| f.1).sum::<usize>() as f64 / (last - first + 1) as f64;
        let chance = p as f64 * crate::stats::binomial::upper_tail(best.2, best.1 as u64, q.min(1.0));
        if own < TAKEN && share(best) >= TAKEN && best.0 != was && chance < ALPHA {
            let now = best.0;
            use crate::stats::residues::lattice_slots;
            l.slots = l.slots + lattice_slots(first, last, p, now) - lattice_slots(first, last, p, was);
            *r = Some(now);
            l.calls[k] = seqs[k].iter().filter(|c| c.it % p == now && c.v as f64 > cut).map(|c| (c.it, c.v)).collect();
        }
    }
    l.hits = l.calls.iter().map(Vec::len).sum();
}

/// The share of a lattice's calls above `cut` that stand above their neighbourhood
/// (`stats::residues::rising_fill`) by more than the fast path's own spread (the slow threshold's
/// distance from its median) or, for a cheap path, half its cost. A periodic path's call stands
/// out from the calls around it; a lattice of a nearby period that slides through the slower
/// stretch after a path sits on a slow call in every slot, but each of them among as slow
/// neighbours. A stretch as costly as the path after it leaves the path's call standing out by
/// half the stretch's cost or more, which is still above the spread.
fn rising_share(sp: &Space, seqs: &[Vec<Call>], l: &Lattice, calls: &[Vec<(u64, f32)>], cut: f64) -> f64 {
    let rise = (sp.th.slow - sp.base).min(cut - sp.base);
    if !(rise > 0.0) {
        return 1.0;
    }
    let (mut up, mut n) = (0usize, 0usize);
    for (k, r) in l.residues.iter().enumerate() {
        let Some(r) = *r else { continue };
        if calls[k].is_empty() {
            continue;
        }
        let by = rising_by_residue(sp, &seqs[k], k, l.period, rise);
        up += by.iter().find(|f| f.0 == r).map_or(0, |f| f.1).min(calls[k].len());
        n += calls[k].len();
    }
    if n == 0 {
        1.0
    } else {
        up as f64 / n as f64
    }
}

/// Lattices that hold: taken on at least TAKEN of their slots, with at least RISING of their
/// calls standing above their neighbours. A lattice found again (at another threshold or band)
/// is one path, with its strongest evidence.
fn confirm(sp: &Space, seqs: &[Vec<Call>], lattices: Vec<Lattice>) -> Vec<Lattice> {
    let mut kept: Vec<Lattice> = Vec::new();
    for mut l in lattices {
        let (_, cut) = cut_of(sp, &l);
        settle_divisor(sp, seqs, &mut l, cut);
        settle_phases(sp, seqs, &mut l, cut);
        settle_rising(sp, seqs, &mut l, cut);
        let (calls, slots) = taken_on(&sp.extents, seqs, l.period, &l.residues, cut);
        let n: usize = calls.iter().map(Vec::len).sum();
        if let Some(k) = kept.iter_mut().find(|k| k.period == l.period && k.residues == l.residues) {
            k.log10_chance = k.log10_chance.min(l.log10_chance);
        } else if n as f64 >= TAKEN * slots as f64 && rising_share(sp, seqs, &l, &calls, cut) >= RISING {
            kept.push(l);
        }
    }
    kept
}

/// The median cost and the cut of a kept lattice (for the report).
pub(crate) fn cost_and_cut(sp: &Space, l: &Lattice) -> (f64, f64) {
    cut_of(sp, l)
}

/// A claimed path's residue in a sequence the search did not read (its part held other whole
/// sequences): the residue the sequence's calls above the path's cut fill best
/// (`stats::residues::best_filled`), where they take at least TAKEN of its slots, as the claim's
/// own sequences do; None where no residue does.
pub(crate) fn residue_beyond(calls: &[Call], (first, last): (u64, u64), period: u64, cut: f64) -> Option<u64> {
    use crate::stats::residues::{best_filled, lattice_slots};
    let above: Vec<(u64, f32)> = calls.iter().filter(|c| !c.phase && c.v as f64 > cut).map(|c| (c.it, c.v)).collect();
    let (r, n) = best_filled(&above, period, first, last)?;
    let slots = lattice_slots(first, last, period, r);
    (n >= crate::stats::period::MIN_SEQ_HITS && n as f64 >= TAKEN * slots as f64).then_some(r)
}
