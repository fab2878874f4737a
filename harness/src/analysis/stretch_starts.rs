//! A slower stretch that recurs by call count: a phase mode whose stretches start at a
//! nearly fixed number of the tracer's calls apart ("the next 300 calls cost +150 ns after every
//! 810th call", no spike of its own). The machine's speed phases come and go in time, not in the
//! tracer's calls, so such a period is the tracer's, and the period is the finding.
//!
//! A stretch is the mode's calls with no gap of more than STRETCH_GAP calls between them, at least
//! STRETCH_GAP calls from its first to its last; its start is its first call. The starts' gaps are tested as an irregular path's are (`irregular::regular_spacing`:
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
            // (first, last) call of each stretch.
            let mut runs: Vec<(u64, u64)> = Vec::new();
            for e in entries[lo..hi].iter().filter(|e| e.mode == Some(k)) {
                match runs.last_mut() {
                    Some(r) if e.it <= r.1 + STRETCH_GAP => r.1 = e.it,
                    _ => runs.push((e.it, e.it)),
                }
            }
            // A stretch shorter than the phase detector's window is a few slow calls, not a
            // slower stretch: a cheap periodic path's lone calls in a phase mode would otherwise
            // recur as "stretches" at its period.
            runs.iter().filter(|r| r.1 - r.0 + 1 >= STRETCH_GAP).map(|r| r.0).collect()
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

    /// A cheap path's lone calls every P in a phase mode, between the machine's stretches at
    /// random starts, are no stretches every P, for periods on both sides of a window.
    #[test]
    fn lone_calls_every_p_are_no_stretches() {
        let mut g = crate::stats::rng::XorShift64Star(17);
        for p in [20u64, 63, 65, 71, 92, 128, 400, 1500] {
            let n = 40 * p.max(300);
            let mut its: Vec<u64> = (0..n).filter(|i| i % p == 3).collect();
            let mut at = 0;
            while at < n {
                at += 500 + g.below(2500);
                let len = 300 + g.below(2700);
                its.extend(at..(at + len).min(n));
                at += len;
            }
            its.sort_unstable();
            its.dedup();
            assert_eq!(period(&entries(&its), &[0], 1), None, "a path every {p}");
        }
    }
}
