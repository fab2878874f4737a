//! Irregular paths: frequent modes of the latency (or counter) histogram that no periodic path
//! explains, such as printf's buffer flush, whose spacing drifts with the formatted length. A
//! path that recurs at a nearly fixed spacing also owns the slow calls one spacing away from its
//! own that its cost band missed (a flush that wrote more and cost more), so that a call of the
//! path is never counted as an outlier "on no path".
use std::collections::HashMap;

use super::paths::CodePath;
use super::phases::busiest_quarter_share;
use crate::stats::hist::Mode;
use crate::stats::period::spacing;

/// The slow calls of pass 2 and what they were drawn from.
pub(super) struct Scan<'a> {
    /// (sequence, iteration, value, mode) of each call above the fast path, sorted.
    pub entries: &'a [(u64, u64, f32, Option<usize>)],
    pub seq_ids: &'a [u64],
    pub ranges: &'a HashMap<u64, (u64, u64)>,
    pub rows: u64,
}

/// Irregular paths, and which entries they explain. `skip(k)`: mode k is the fast path or a
/// phase; `threshold`: calls above it are slow; `on_lattice(seq position, iteration)`: the call
/// is on a periodic path.
pub(super) fn paths(
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
            let lo = entries.partition_point(|e| e.0 < *id);
            let hi = entries.partition_point(|e| e.0 <= *id);
            let (mut s, mut o) = (Vec::new(), Vec::new());
            for (j, e) in entries[lo..hi].iter().enumerate() {
                if on_lattice(pos, e.1) || explained[lo + j] {
                    continue;
                }
                if e.3 == Some(k) {
                    s.push((e.1, lo + j));
                } else if e.2 as f64 > threshold && !e.3.is_some_and(&skip) {
                    o.push((e.1, lo + j));
                }
            }
            seqs.push(s);
            others.push(o);
        }
        let n: usize = seqs.iter().map(Vec::len).sum();
        if (n as u64) < super::analyze::MIN_MODE_CALLS || (n as f64) < 0.2 * x.count as f64 {
            continue;
        }
        let iters =
            |v: &[Vec<(u64, usize)>]| v.iter().map(|s| s.iter().map(|c| c.0).collect()).collect::<Vec<Vec<u64>>>();
        // A nearly fixed spacing: a slow call one spacing (within 10 %) from a call of the path is
        // the path's.
        if let Some((med, _)) = spacing(&iters(&seqs)).filter(|s| s.1 >= 0.5 && s.0 >= 2.0) {
            for (s, o) in seqs.iter_mut().zip(&others) {
                let own: Vec<u64> = s.iter().map(|c| c.0).collect();
                let near_one = |it: u64| own.iter().any(|&p| ((it as f64 - p as f64).abs() - med).abs() <= 0.1 * med);
                s.extend(o.iter().filter(|c| near_one(c.0)));
                s.sort_unstable();
            }
        }
        seqs.iter().flatten().for_each(|c| explained[c.1] = true);
        let calls = seqs.iter().map(Vec::len).sum::<usize>() as u64;
        let its = iters(&seqs);
        out.push(CodePath {
            mode: x.clone(),
            delta: x.median - base,
            calls,
            spacing: spacing(&its),
            clustered: busiest_quarter_share(&its, &extents, scan.rows),
        });
    }
    (out, explained)
}
