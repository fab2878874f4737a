//! Dated levels of one tracer row: `segments` run on the row's events.csv
//! (`t_ns`) and sentinels.csv, with the row's periodic paths found again in each sequence, and
//! what it decides handed to the findings.
//!
//! The analysis's sequences are hashes of (thread, repetition, counter set); dated/mod.rs keys on
//! (repetition, thread). So the residue of each periodic path is read again here from the calls
//! of each sequence: the residue mod the period holding most calls above the path's cut.
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::code_paths::CodePaths;
use crate::analysis::dated::{
    self, fold_call, load_discards, load_sentinels, walk_calls, Attribution, Call, CallSource, LocatedPath, Outcome,
    Outside, SegmentInput, SegmentReport, SeqKey, SequenceSegments, Side, WindowMean, WindowScan,
};
use crate::analysis::stretch::Profile;
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
    let slow_threshold = cp.periodic.iter().map(|p| p.cut).fold(f64::INFINITY, f64::min);
    let (calls, paths) =
        stream(dir, tracer_dir, threads, slow_threshold, cp)?.map_or((None, Vec::new()), |(c, p)| (Some(c), p));
    let sentinels = load_sentinels(dir, tracer_dir, threads)?;
    let input = SegmentInput { tracer: name.into(), threads, slow_threshold, calls, sentinels, paths };
    let mut report = dated::segments(&input);
    if let Some(e) = input.calls.and_then(|c| c.error.into_inner()) {
        return Err(e);
    }
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

/// A row's calls read once from events.csv: each sequence's window means and last call's time
/// (memory that grows with the windows, not the calls), and its calls read again for a fold.
struct Streamed<'a> {
    dir: &'a Path,
    tracer_dir: &'a str,
    threads: u32,
    threshold: f64,
    seqs: BTreeMap<SeqKey, (Vec<WindowMean>, u64)>,
    /// The first error met reading the calls again (`fold` cannot return it).
    error: RefCell<Option<ReadError>>,
}

impl CallSource for Streamed<'_> {
    fn keys(&self) -> Vec<SeqKey> {
        self.seqs.keys().copied().collect()
    }
    fn windows(&self, key: SeqKey, threshold: f64) -> (Vec<WindowMean>, u64) {
        debug_assert_eq!(threshold.to_bits(), self.threshold.to_bits());
        self.seqs.get(&key).cloned().unwrap_or_default()
    }
    fn fold(&self, key: SeqKey, threshold: f64, period: u64, residue: u64) -> Profile {
        let mut profile = Profile::new(period);
        let read = walk_calls(self.dir, self.tracer_dir, self.threads, |k, c| {
            if k == key {
                fold_call(&mut profile, &c, threshold, period, residue);
            }
        });
        if let Err(e) = read {
            self.error.borrow_mut().get_or_insert(e);
        }
        profile
    }
}

/// One pass over the row's calls: the window means of each sequence and each periodic path of
/// `cp` with its residue in every sequence where it can be located; None when the calls carry
/// no times.
fn stream<'a>(
    dir: &'a Path,
    tracer_dir: &'a str,
    threads: u32,
    threshold: f64,
    cp: &CodePaths,
) -> Result<Option<(Streamed<'a>, Vec<LocatedPath>)>, ReadError> {
    let wanted: Vec<(u64, f64)> = cp.periodic.iter().filter(|p| p.period > 1).map(|p| (p.period, p.cut)).collect();
    let mut seqs: BTreeMap<SeqKey, (WindowScan, u64, Vec<Vec<u32>>)> = BTreeMap::new();
    let timed = walk_calls(dir, tracer_dir, threads, |key, c| {
        let s = seqs.entry(key).or_insert_with(|| {
            (WindowScan::new(threshold), 0, wanted.iter().map(|&(period, _)| vec![0u32; period as usize]).collect())
        });
        s.0.add(&c);
        s.1 = c.t_ns;
        for (count, &(period, cut)) in s.2.iter_mut().zip(&wanted) {
            count_residue(count, period, cut, &c);
        }
    })?;
    if !timed {
        return Ok(None);
    }
    let paths = wanted
        .iter()
        .enumerate()
        .map(|(i, &(period, _))| {
            let residues = seqs.iter().filter_map(|(k, s)| residue_of(&s.2[i]).map(|r| (*k, r))).collect();
            LocatedPath { period, residues }
        })
        .filter(|p| !p.residues.is_empty())
        .collect();
    let seqs = seqs.into_iter().map(|(k, s)| (k, (s.0.finish(), s.1))).collect();
    let calls = Streamed { dir, tracer_dir, threads, threshold, seqs, error: RefCell::new(None) };
    Ok(Some((calls, paths)))
}

/// A call above `cut` counted at its residue mod `period`.
fn count_residue(count: &mut [u32], period: u64, cut: f64, c: &Call) {
    if c.latency > cut {
        count[(c.iteration % period) as usize] += 1;
    }
}

/// The residue that most calls above the path's cut share, when at least MIN_ON_RESIDUE do.
fn residue_of(count: &[u32]) -> Option<u64> {
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

    fn residue(calls: &[Call], period: u64, cut: f64) -> Option<u64> {
        let mut count = vec![0u32; period as usize];
        calls.iter().for_each(|c| count_residue(&mut count, period, cut, c));
        residue_of(&count)
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
