//! Irregular paths: frequent modes of the latency (or counter) histogram that no periodic path
//! explains, such as printf's buffer flush, whose spacing drifts with the formatted length. A
//! path that recurs at a nearly fixed spacing also owns the slow calls one spacing away from its
//! own that its cost band missed (a flush that wrote more and cost more), so that a call of the
//! path is never counted as an outlier "on no path".
use std::collections::HashMap;

use crate::analysis::code_paths::{CodePath, SlowCall};
use crate::analysis::phases::busiest_quarter_share;
use crate::decisions::claims::ALPHA;
use crate::decisions::irregular::{
    COST_BAND, MODE_MIN_GAPS, RANDOM_IN_WINDOW, RARE_BANDS, RARE_MIN_GAPS, REGULAR_MIN_SPACING, REGULAR_SHARE,
    SPACING_TOLERANCE, UNEXPLAINED_SHARE,
};
use crate::decisions::modes::MIN_MODE_CALLS;
use crate::stats::binomial::upper_tail;
use crate::stats::hist::Mode;
use crate::stats::period::spacing;

/// The slow calls of pass 2 and what they were drawn from.
pub(crate) struct Scan<'a> {
    /// Each call above the fast path, sorted by sequence and iteration.
    pub entries: &'a [SlowCall],
    pub seq_ids: &'a [u64],
    pub ranges: &'a HashMap<u64, (u64, u64)>,
    pub rows: u64,
}

/// Irregular paths, and which entries they explain. `skip(k)`: mode k is the fast path or a
/// phase; `threshold`: calls above it are slow; `on_lattice(seq position, iteration)`: the call
/// is on a periodic path.
pub(crate) fn paths(
    scan: &Scan,
    modes: &[Mode],
    skip: impl Fn(usize) -> bool,
    threshold: f64,
    base: f64,
    on_lattice: &impl Fn(usize, u64) -> bool,
) -> (Vec<CodePath>, Vec<bool>) {
    let entries = scan.entries;
    let mut out = Vec::new();
    let mut explained = vec![false; entries.len()];
    let extents: Vec<(u64, u64)> = scan.seq_ids.iter().map(|id| scan.ranges[id]).collect();
    for (k, x) in modes.iter().enumerate() {
        if skip(k) {
            continue;
        }
        // Per sequence: the mode's calls, and the other slow calls on no path, as (iteration, entry).
        let mut seqs: Vec<Vec<(u64, usize)>> = Vec::new();
        let mut others: Vec<Vec<(u64, usize)>> = Vec::new();
        for (pos, id) in scan.seq_ids.iter().enumerate() {
            let lo = entries.partition_point(|e| e.seq < *id);
            let hi = entries.partition_point(|e| e.seq <= *id);
            let (mut s, mut o) = (Vec::new(), Vec::new());
            for (j, e) in entries[lo..hi].iter().enumerate() {
                if on_lattice(pos, e.it) || explained[lo + j] {
                    continue;
                }
                if e.mode == Some(k) {
                    s.push((e.it, lo + j));
                } else if e.v as f64 > threshold && !e.mode.is_some_and(&skip) {
                    o.push((e.it, lo + j));
                }
            }
            seqs.push(s);
            others.push(o);
        }
        let n: usize = seqs.iter().map(Vec::len).sum();
        if (n as u64) < MIN_MODE_CALLS || (n as f64) < UNEXPLAINED_SHARE * x.count as f64 {
            continue;
        }
        let iters =
            |v: &[Vec<(u64, usize)>]| v.iter().map(|s| s.iter().map(|c| c.0).collect()).collect::<Vec<Vec<u64>>>();
        // A costlier mode is a path only when its calls recur at a nearly fixed spacing, more
        // regularly than calls at random positions would (regular_spacing's binomial test):
        // memoryless slow calls (interrupts, a busy neighbour) form a mode too, and the
        // calibration battery's null runs counted them as irregular paths. Its calls stay
        // outliers on no path.
        let regular = regular_spacing(&iters(&seqs), MODE_MIN_GAPS);
        // (Their cost band is still held against the reference windows, attribution.rs: a
        // memoryless path of the tracer's own is named there.)
        if x.median > base && regular.is_none() {
            continue;
        }
        // A nearly fixed spacing: a slow call one spacing (within 10 %) from a call of the path is
        // the path's.
        if let Some((med, _)) =
            regular.or_else(|| spacing(&iters(&seqs)).filter(|s| s.1 >= REGULAR_SHARE && s.0 >= REGULAR_MIN_SPACING))
        {
            for (s, o) in seqs.iter_mut().zip(&others) {
                let own: Vec<u64> = s.iter().map(|c| c.0).collect();
                let near_one = |it: u64| {
                    own.iter().any(|&p| ((it as f64 - p as f64).abs() - med).abs() <= SPACING_TOLERANCE * med)
                };
                s.extend(o.iter().filter(|c| near_one(c.0)));
                s.sort_unstable();
            }
        }
        seqs.iter().flatten().for_each(|c| explained[c.1] = true);
        let calls = seqs.iter().map(Vec::len).sum::<usize>() as u64;
        let its = iters(&seqs);
        let path = CodePath {
            mode: x.clone(),
            delta: x.median - base,
            calls,
            spacing: typical_spacing(&its).map(Into::into),
            clustered: busiest_quarter_share(&its, &extents, scan.rows),
            keyed: None,
        };
        let costs = seqs.iter().flatten().map(|c| entries[c.1].v).collect();
        out.push(Part { path, its, costs });
    }
    out.extend(rare(scan, &mut explained, &skip, threshold, base, on_lattice));
    let out = one_path_per_spacing(out, base, &extents, scan.rows);
    (out.into_iter().map(|p| p.path).collect(), explained)
}

/// An irregular path with its calls' iterations (per sequence) and costs.
struct Part {
    path: CodePath,
    its: Vec<Vec<u64>>,
    costs: Vec<f32>,
}

/// A path whose cost drifts over the run (from +150 ns to +900 ns, say) spreads over several
/// modes of the histogram, one stretch of the run in each: each mode's calls recur at the path's
/// spacing, with gaps of two or three spacings where the cost crossed into a neighbouring mode.
/// Parts at one spacing (within `SPACING_TOLERANCE`) whose calls together keep that spacing, as
/// regularly as the parts apart (their shares of gaps near it, weighted by calls, less
/// `SPACING_TOLERANCE` for the gaps where the cost crossed between modes), are one path, said
/// once. Two paths at one spacing but different phases do not merge: together their gaps split
/// the spacing in two, so at most half of them lie near it, and more than `REGULAR_SHARE` must.
fn one_path_per_spacing(mut parts: Vec<Part>, base: f64, extents: &[(u64, u64)], rows: u64) -> Vec<Part> {
    let near = |a: f64, b: f64| (a - b).abs() <= SPACING_TOLERANCE * a.max(b);
    let mut i = 0;
    while i < parts.len() {
        let mut j = i + 1;
        while j < parts.len() {
            let (a, b) = (&parts[i], &parts[j]);
            let (Some(sa), Some(sb)) = (a.path.spacing, b.path.spacing) else {
                j += 1;
                continue;
            };
            let its: Vec<Vec<u64>> = a
                .its
                .iter()
                .zip(&b.its)
                .map(|(x, y)| {
                    let mut u: Vec<u64> = x.iter().chain(y).copied().collect();
                    u.sort_unstable();
                    u.dedup();
                    u
                })
                .collect();
            // The parts' shares of gaps near the spacing, weighted by their calls.
            let (na, nb) = (a.path.calls as f64, b.path.calls as f64);
            let apart = (sa.near_share * na + sb.near_share * nb) / (na + nb).max(1.0);
            let both = typical_spacing(&its).filter(|u| {
                near(sa.median, sb.median)
                    && near(u.0, sa.median)
                    && near(u.0, sb.median)
                    && u.1 > REGULAR_SHARE
                    && u.1 >= apart - SPACING_TOLERANCE
            });
            let Some(sp) = both else {
                j += 1;
                continue;
            };
            let b = parts.remove(j);
            let a = &mut parts[i];
            a.costs.extend(b.costs);
            a.costs.sort_by(f32::total_cmp);
            let median = a.costs[a.costs.len() / 2] as f64;
            let (ma, mb) = (&a.path.mode, &b.path.mode);
            let mode = Mode {
                first_bin: ma.first_bin.min(mb.first_bin),
                end_bin: ma.end_bin.max(mb.end_bin),
                zero: ma.zero && mb.zero,
                median,
                count: ma.count + mb.count,
                fraction: ma.fraction + mb.fraction,
            };
            a.path = CodePath {
                mode,
                delta: median - base,
                calls: a.path.calls + b.path.calls,
                spacing: Some(sp.into()),
                clustered: busiest_quarter_share(&its, extents, rows),
                keyed: None,
            };
            a.its = its;
            j = i + 1;
        }
        i += 1;
    }
    parts
}

/// The spacing a path is said at (and the sweep's slow period): the median of all its
/// consecutive gaps, and the share within 10 % of it or one call, whichever is wider (a flush every
/// 7 to 9 calls is "about every 8", all of its gaps within one call of that).
fn typical_spacing(its: &[Vec<u64>]) -> Option<(f64, f64)> {
    let (med, _) = spacing(its)?;
    let g: Vec<f64> =
        its.iter().flat_map(|s| s.windows(2).filter(|w| w[1] > w[0]).map(|w| (w[1] - w[0]) as f64)).collect();
    let near = g.iter().filter(|&&x| (x - med).abs() <= (SPACING_TOLERANCE * med).max(1.0)).count();
    Some((med, near as f64 / g.len() as f64))
}

/// The spacing of calls that recur at a nearly fixed spacing with interlopers among them: the
/// window of +-10 % that holds most consecutive gaps, when it holds half of them or more, at
/// least `min_gaps`, and more than random gaps would put in any window (binomial tail, times
/// the windows tried, below 1e-3). Returns the median gap in the window and its share.
pub(crate) fn regular_spacing(its: &[Vec<u64>], min_gaps: usize) -> Option<(f64, f64)> {
    let mut g: Vec<f64> =
        its.iter().flat_map(|s| s.windows(2).filter(|w| w[1] > w[0]).map(|w| (w[1] - w[0]) as f64)).collect();
    if g.len() < min_gaps {
        return None;
    }
    g.sort_by(f64::total_cmp);
    let (mut best, mut j) = ((0usize, 0usize), 0usize);
    for i in 0..g.len() {
        j = j.max(i);
        while j + 1 < g.len() && g[j + 1] <= g[i] * (1.0 + SPACING_TOLERANCE) / (1.0 - SPACING_TOLERANCE) {
            j += 1;
        }
        if j + 1 - i > best.1 - best.0 {
            best = (i, j + 1);
        }
    }
    let k = best.1 - best.0;
    let n = g.len();
    let chance = upper_tail(n as u64, k as u64, RANDOM_IN_WINDOW) * n as f64;
    let med = g[(best.0 + best.1) / 2];
    (2 * k >= n && chance < ALPHA && med >= REGULAR_MIN_SPACING).then_some((med, k as f64 / n as f64))
}

/// Rare paths too few to form a mode (a 64 KiB buffer fed variable-size events: 0.04 % of calls),
/// among the slow calls on no path: calls of like cost (within a factor of 1.7) that recur at a
/// nearly fixed spacing (regular_spacing).
fn rare(
    scan: &Scan,
    explained: &mut [bool],
    skip: &impl Fn(usize) -> bool,
    threshold: f64,
    base: f64,
    on_lattice: &impl Fn(usize, u64) -> bool,
) -> Vec<Part> {
    let entries = scan.entries;
    // Cost bands of 20 %; a path's calls are looked for within three (a factor of 1.7).
    let band = |v: f32| ((v.max(1.0) as f64).ln() / COST_BAND.ln()).floor() as i64;
    let slow_free = |i: usize, pos: usize| {
        let e = &entries[i];
        e.v as f64 > threshold && !e.mode.is_some_and(skip) && !on_lattice(pos, e.it)
    };
    let spans: Vec<(usize, usize)> = scan
        .seq_ids
        .iter()
        .map(|id| (entries.partition_point(|e| e.seq < *id), entries.partition_point(|e| e.seq <= *id)))
        .collect();
    let bands: std::collections::BTreeSet<i64> = spans
        .iter()
        .enumerate()
        .flat_map(|(pos, &(lo, hi))| (lo..hi).filter(move |&i| slow_free(i, pos)))
        .map(|i| band(entries[i].v))
        .collect();
    let mut out = Vec::new();
    for b in bands {
        let members: Vec<Vec<usize>> = spans
            .iter()
            .enumerate()
            .map(|(pos, &(lo, hi))| {
                (lo..hi)
                    .filter(|&i| {
                        !explained[i] && slow_free(i, pos) && (b..b + RARE_BANDS).contains(&band(entries[i].v))
                    })
                    .collect()
            })
            .collect();
        let its: Vec<Vec<u64>> = members.iter().map(|m| m.iter().map(|&i| entries[i].it).collect()).collect();
        let Some(sp) = regular_spacing(&its, RARE_MIN_GAPS) else { continue };
        let mut v: Vec<f32> = members.iter().flatten().map(|&i| entries[i].v).collect();
        v.sort_by(f32::total_cmp);
        let med = v[v.len() / 2] as f64;
        members.iter().flatten().for_each(|&i| explained[i] = true);
        let bin = |x: f64| crate::stats::hist::LogHistogram::bin_of(x).unwrap_or(0);
        let calls = v.len() as u64;
        let path = CodePath {
            mode: Mode {
                first_bin: bin(COST_BAND.powi(b as i32)),
                end_bin: bin(COST_BAND.powi(b as i32 + RARE_BANDS as i32)),
                zero: false,
                median: med,
                count: calls,
                fraction: calls as f64 / scan.rows.max(1) as f64,
            },
            delta: med - base,
            calls,
            spacing: Some(sp.into()),
            clustered: None,
            keyed: None,
        };
        out.push(Part { path, its, costs: v });
    }
    out
}

#[cfg(test)]
#[path = "irregular_tests.rs"]
mod tests;
