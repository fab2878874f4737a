//! Dated levels of one tracer row: `segments` run on the row's events.csv
//! (`t_ns`) and sentinels.csv, with the row's periodic paths found again in each sequence, and
//! what it decides handed to the findings.
//!
//! The analysis's sequences are hashes of (thread, repetition, counter set); dated/mod.rs keys on
//! (repetition, thread). So the residue of each periodic path is read again here from the calls
//! of each sequence: the residue mod the period holding most calls above the path's cut.
use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::code_paths::CodePaths;
use crate::analysis::dated::{
    self, load_calls, load_discards, load_sentinels, Attribution, Call, LocatedPath, Outcome, Outside, SegmentInput,
    SegmentReport, SeqKey, SequenceSegments, Side,
};
use crate::decisions::claims::ALPHA;
use crate::decisions::dated::{MIN_ON_RESIDUE, NEIGHBOUR_RATIO};
use crate::results::read::ReadError;
use crate::stats::binomial::upper_tail;

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
) -> Result<SegmentReport, ReadError> {
    let calls = load_calls(dir, tracer_dir, threads)?;
    let sentinels = load_sentinels(dir, tracer_dir, threads)?;
    let paths = calls.as_ref().map_or_else(Vec::new, |c| located_paths(c, cp));
    let slow_threshold = cp.periodic.iter().map(|p| p.cut).fold(f64::INFINITY, f64::min);
    let input = SegmentInput { tracer: name.into(), threads, slow_threshold, calls, sentinels, paths };
    let mut report = dated::segments(&input);
    if let (Outcome::Dated { sequences }, Some(discards)) =
        (&mut report.outcome, load_discards(dir, tracer_dir, threads)?)
    {
        for s in sequences.iter_mut() {
            neighbour(s, discards.get(&s.key).map_or(&[][..], Vec::as_slice));
        }
    }
    Ok(report)
}

/// A level whose spans hold clearly more calls disturbed from outside than its base's (below
/// ALPHA, and at least NEIGHBOUR_RATIO times the rate) had a neighbour on the core: the
/// machine's, even where an empty sentinel call did not feel it (a neighbour's cache and TLB
/// damage slows a call that touches memory, not an empty one). A CPU hog that came and went on
/// the measuring core had its levels said the tracer's in 1 of 10 runs without this rule
/// (scripts/machine-phase.sh).
fn neighbour(s: &mut SequenceSegments, discards: &[u64]) {
    let spans = |side: Side| -> (u64, u64) {
        let segs = s.segments.iter().filter(|g| g.side == side);
        let calls = segs.clone().map(|g| g.end_iteration - g.start_iteration).sum();
        let hits = discards
            .iter()
            .filter(|&&i| segs.clone().any(|g| (g.start_iteration..g.end_iteration).contains(&i)))
            .count() as u64;
        (hits, calls)
    };
    let (base, base_calls) = spans(Side::Base);
    for l in s.levels.iter_mut() {
        let (level, level_calls) = spans(l.side);
        if level_calls == 0 || base_calls == 0 {
            continue;
        }
        let share = level_calls as f64 / (level_calls + base_calls) as f64;
        let p = upper_tail(level + base, level, share);
        l.outside = Some(Outside { level, level_calls, base, base_calls, p });
        let ratio = (level as f64 / level_calls as f64) / ((base as f64 + 0.5) / base_calls as f64);
        if p < ALPHA && ratio >= NEIGHBOUR_RATIO {
            l.attribution = Attribution::Machine;
        }
    }
}

/// Each periodic path of `cp` with its residue in every sequence where it can be located.
fn located_paths(calls: &BTreeMap<SeqKey, Vec<Call>>, cp: &CodePaths) -> Vec<LocatedPath> {
    cp.periodic
        .iter()
        .filter(|p| p.period > 1)
        .map(|p| {
            let residues = calls.iter().filter_map(|(k, c)| residue(c, p.period, p.cut).map(|r| (*k, r))).collect();
            LocatedPath { period: p.period, residues }
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
    fn binomial_tail_matches_exact_values() {
        // P(X >= 3), X ~ B(4, 0.5) = 5/16; P(X >= 0) = 1; P(X >= 10), X ~ B(10, 0.1) = 1e-10.
        assert!((upper_tail(4, 3, 0.5) - 5.0 / 16.0).abs() < 1e-12);
        assert_eq!(upper_tail(7, 0, 0.3), 1.0);
        assert!((upper_tail(10, 10, 0.1) - 1e-10).abs() < 1e-20);
    }

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
