//! Dated levels of one tracer row (issue 23, item 2): `segments` run on the row's events.csv
//! (`t_ns`) and sentinels.csv, with the row's periodic paths found again in each sequence, and
//! what it decides handed to the findings.
//!
//! The analysis's sequences are hashes of (thread, repetition, counter set); segments.rs keys on
//! (repetition, thread). So the residue of each periodic path is read again here from the calls
//! of each sequence: the residue mod the period holding most calls above the path's cut.
use std::collections::BTreeMap;
use std::path::Path;

use super::paths::CodePaths;
use super::segments::{self, load_calls, load_sentinels, Call, PeriodicPath, SegmentInput, SegmentReport, SeqKey};
use super::ReportError;

/// Fewest calls above the cut on one residue for the path to be located in a sequence (one call
/// fits any residue).
const MIN_ON_RESIDUE: u32 = 2;

/// The dated segments of `tracer_dir` at `threads` threads. The slow threshold is the cheapest
/// periodic path's cut: the paths' own calls stay out of the window means, and every other call
/// (a slower stretch, a level) stays in; isolated outliers are clipped by the change-point
/// search itself (stats::changepoint).
pub fn dated(
    dir: &Path,
    tracer_dir: &str,
    name: &str,
    threads: u32,
    cp: &CodePaths,
) -> Result<SegmentReport, ReportError> {
    let calls = load_calls(dir, tracer_dir, threads)?;
    let sentinels = load_sentinels(dir, tracer_dir, threads)?;
    let paths = calls.as_ref().map_or_else(Vec::new, |c| located_paths(c, cp));
    let slow_threshold = cp.periodic.iter().map(|p| p.cut).fold(f64::INFINITY, f64::min);
    let input = SegmentInput { tracer: name.into(), threads, slow_threshold, calls, sentinels, paths };
    Ok(segments::segments(&input))
}

/// Each periodic path of `cp` with its residue in every sequence where it can be located.
fn located_paths(calls: &BTreeMap<SeqKey, Vec<Call>>, cp: &CodePaths) -> Vec<PeriodicPath> {
    cp.periodic
        .iter()
        .filter(|p| p.period > 1)
        .map(|p| {
            let residues = calls.iter().filter_map(|(k, c)| residue(c, p.period, p.cut).map(|r| (*k, r))).collect();
            PeriodicPath { period: p.period, residues }
        })
        .filter(|p| !p.residues.is_empty())
        .collect()
}

/// The residue mod `period` that most calls above `cut` share, when at least MIN_ON_RESIDUE do.
fn residue(calls: &[Call], period: u64, cut: f64) -> Option<u64> {
    let mut count = vec![0u32; period as usize];
    for c in calls.iter().filter(|c| c.latency > cut) {
        count[(c.iteration % period) as usize] += 1;
    }
    let (r, n) = count.iter().enumerate().max_by_key(|(_, n)| **n)?;
    (*n >= MIN_ON_RESIDUE).then_some(r as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_residue_is_where_the_slow_calls_sit() {
        let calls: Vec<Call> = (0..1000u64)
            .map(|i| Call { t_ns: i * 50, iteration: i, latency: if i % 100 == 37 { 900.0 } else { 100.0 } })
            .collect();
        assert_eq!(residue(&calls, 100, 500.0), Some(37));
        // One slow call locates nothing.
        let one: Vec<Call> =
            calls.iter().map(|c| Call { latency: if c.iteration == 37 { 900.0 } else { 100.0 }, ..*c }).collect();
        assert_eq!(residue(&one, 100, 500.0), None);
    }
}
