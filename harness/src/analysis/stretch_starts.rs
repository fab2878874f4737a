//! A slower stretch that recurs by call count: a phase mode whose stretches start at a
//! nearly fixed number of the tracer's calls apart ("the next 300 calls cost +150 ns after every
//! 810th call", no spike of its own). The machine's speed phases come and go in time, not in the
//! tracer's calls, so such a period is the tracer's, and the period is the finding.
//!
//! A stretch is the mode's calls with no gap of more than STRETCH_GAP calls between them; its start is its
//! first call. The starts' gaps are tested as an irregular path's are (`irregular::regular_spacing`:
//! half of them or more in one +-10 % window, beyond what random gaps put in any window, binomial
//! tail times the windows below ALPHA), with at least STRETCH_MIN_GAPS of them (`decisions::irregular`).
use crate::analysis::code_paths::SlowCall;
use crate::analysis::irregular::regular_spacing;
use crate::decisions::irregular::{SPACING_TOLERANCE, STRETCH_GAP, STRETCH_MIN_GAPS};

/// The mean call count between stretch starts of mode `k`, when they recur at a nearly fixed
/// spacing; None otherwise. `entries`: the calls above the fast path or in a mode, sorted by
/// sequence and iteration.
pub(crate) fn period(entries: &[SlowCall], seq_ids: &[u64], k: usize) -> Option<f64> {
    let starts: Vec<Vec<u64>> = seq_ids
        .iter()
        .map(|id| {
            let lo = entries.partition_point(|e| e.seq < *id);
            let hi = entries.partition_point(|e| e.seq <= *id);
            let mut out = Vec::new();
            let mut last: Option<u64> = None;
            for e in entries[lo..hi].iter().filter(|e| e.mode == Some(k)) {
                if last.is_none_or(|l| e.it > l + STRETCH_GAP) {
                    out.push(e.it);
                }
                last = Some(e.it);
            }
            out
        })
        .collect();
    let (median, _) = regular_spacing(&starts, STRETCH_MIN_GAPS)?;
    // The mean of the gaps within 10 % of the median (a start a window late is one gap long and
    // the next short: their mean is the period).
    let gaps: Vec<f64> = starts
        .iter()
        .flat_map(|s| s.windows(2).map(|w| (w[1] - w[0]) as f64))
        .filter(|g| (g - median).abs() <= SPACING_TOLERANCE * median)
        .collect();
    (!gaps.is_empty()).then(|| gaps.iter().sum::<f64>() / gaps.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(its: &[u64]) -> Vec<SlowCall> {
        its.iter().map(|&it| SlowCall { seq: 0, it, v: 250.0, mode: Some(1) }).collect()
    }

    #[test]
    fn stretches_every_810_calls_have_that_period_and_random_ones_none() {
        // 300 calls after every 810th, 10 times.
        let its: Vec<u64> = (0..10u64).flat_map(|j| j * 810 + 1..j * 810 + 301).collect();
        let p = period(&entries(&its), &[0], 1).unwrap();
        assert!((p - 810.0).abs() < 1.0, "{p}");
        // Stretches of 300 calls at starts 500 to 3000 apart, drawn by a fixed sequence.
        let gaps = [700u64, 2900, 1300, 500, 2100, 900, 2600, 1700, 600, 2300, 1100];
        let mut at = 0;
        let its: Vec<u64> = gaps
            .iter()
            .flat_map(|g| {
                at += g;
                at..at + 300
            })
            .collect();
        assert_eq!(period(&entries(&its), &[0], 1), None);
    }
}
