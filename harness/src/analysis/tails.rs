//! What sets a tail: the calls above p99 and p99.9, each given to its population (a
//! periodic path, an irregular path, a speed phase, an outlier on no path, the fast path's own
//! spread). The report names the outliers' share by the reference windows' bands (findings).
use super::code_paths::{CodePaths, PeriodicPath, SlowCall, Tail, TailClass};
use crate::decisions::tails::TAIL_QUANTILES;
use crate::stats::hist::{LogHistogram, Mode};

/// What the tails read of a latency scan after pass 3: its kept calls (by sequence, then
/// iteration), its modes, which of the calls an irregular path explains, and the sample's
/// sequences in order.
pub(super) struct Scanned<'a> {
    pub entries: &'a [SlowCall],
    pub modes: &'a [Mode],
    pub explained: &'a [bool],
    pub seq_ids: &'a [u64],
}

/// The calls above quantile `q` of the latency (above the upper edge of its histogram bin), each
/// with its population; None when no call lies above it.
fn tail(m: &Scanned, cp: &CodePaths, h: &LogHistogram, q: f64) -> Option<Tail> {
    let b = LogHistogram::bin_of(h.quantile(q))?;
    let above = LogHistogram::bin_lo(b + 1);
    let total: u64 = h.bins()[b + 1..].iter().sum();
    if total == 0 {
        return None;
    }
    let base = cp.dominant.median;
    // A path's own call above its cut, or a follower's call above half-way to the follower's
    // cost: the criteria pass 3 counts them by (passes.rs), so the tail gives a path no more
    // calls than its line says.
    let taking = |p: &PeriodicPath, seq: u64, it: u64, v: f64| {
        (p.on(seq, it) && v > p.cut)
            || p.followers.iter().any(|f| it >= f.offset && p.on(seq, it - f.offset) && v > follower_cut(base, f))
    };
    let mut members: Vec<(TailClass, f32)> = Vec::new();
    // The irregular path an explained call belongs to: the one whose mode holds it, else the
    // one closest in cost (a costlier flush, owned by its spacing: irregular.rs).
    let irregular_of = |v: f64| {
        cp.irregular.iter().position(|p| p.mode.contains(v)).or_else(|| {
            (0..cp.irregular.len()).min_by(|&a, &b| {
                (cp.irregular[a].delta - (v - base)).abs().total_cmp(&(cp.irregular[b].delta - (v - base)).abs())
            })
        })
    };
    for id in m.seq_ids.iter() {
        let lo = m.entries.partition_point(|e| e.seq < *id);
        let hi = m.entries.partition_point(|e| e.seq <= *id);
        for (j, e) in m.entries[lo..hi].iter().enumerate() {
            if !LogHistogram::bin_of(e.v as f64).is_some_and(|x| x > b) {
                continue;
            }
            let v = e.v as f64;
            let class = if let Some(i) = cp.periodic.iter().position(|p| taking(p, *id, e.it, v)) {
                TailClass::Periodic(i)
            } else if let Some(i) = cp.periodic.iter().position(|p| p.on(*id, e.it) && v > cp.threshold) {
                // Not an outlier: the outliers leave out every call on a path's lattice.
                TailClass::OnPeriod(i)
            } else if let Some(i) = cp.periodic.iter().position(|p| p.in_stretch(*id, e.it) && v > cp.threshold) {
                TailClass::Stretch(i)
            } else if e.mode.is_some_and(|k| m.modes[k].count > 0 && cp.phases.iter().any(|ph| ph.mode == m.modes[k])) {
                TailClass::Phase
            } else if let Some(i) = m.explained[lo + j].then(|| irregular_of(v)).flatten() {
                TailClass::Irregular(i)
            } else if v > cp.threshold && cp.in_slower_level(*id, e.it, v) {
                TailClass::Phase
            } else if v > cp.threshold {
                TailClass::Outlier
            } else {
                TailClass::FastPath
            };
            // In f32 as the outliers' extra costs are (analysis/mod.rs), so that a call at a band's
            // edge falls on the same side here as in the band's count.
            members.push((class, e.v - base as f32));
        }
    }
    // Calls above the edge that pass 2 did not keep (below its keep threshold): the fast path's.
    let kept = members.len() as u64;
    members.extend((kept..total).map(|_| (TailClass::FastPath, (above - base) as f32)));
    Some(Tail { quantile: q, above, members })
}

/// The value above which a call at a follower's offset counts as the follower's: half-way from the
/// fast path to its cost, as a path's own cut is half-way to the path's.
pub(crate) fn follower_cut(base: f64, f: &crate::analysis::code_paths::Follower) -> f64 {
    base + 0.5 * f.extra
}

/// The tails of the latency's code paths, after pass 3 (its paths are the ones that stay).
pub(super) fn of(m: &Scanned, cp: &CodePaths, h: &LogHistogram) -> Vec<Tail> {
    TAIL_QUANTILES.iter().filter_map(|&q| tail(m, cp, h, q)).collect()
}
