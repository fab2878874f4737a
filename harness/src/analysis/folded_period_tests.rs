//! The fold at the expected period on generated rows: noise of every shape the machine shows
//! (spreads narrow to heavy-tailed, a second random mode, memoryless paths, slower stretches,
//! speed phases that drift, stalls, a clock in 10 ns steps) with no path at the period, and the
//! same rows with a path planted at it, cheaper than the spread.
use super::{judge, Folds};
use crate::stats::rng::SplitMix64;

/// A generated row: its sequences of latencies, and the noise drawn for it.
struct Row {
    seqs: Vec<Vec<f64>>,
    period: u64,
}

/// A row of 1 to 12 sequences, each at least `MIN_CYCLES` periods long, of noise only; with
/// `planted` (in units of the spread's sd), every call of one phase per sequence (the phase
/// drawn per sequence, as a buffer's state at the start differs) costs that much more.
fn row(rng: &mut SplitMix64, planted: Option<f64>) -> Row {
    let period = 5 + rng.below(700) as u64;
    let base = 100.0 + rng.unit() * 3000.0;
    let sd = 3.0 + rng.unit() * 150.0;
    let heavy = rng.below(3) == 0;
    let second = (rng.below(3) == 0).then(|| (0.05 + rng.unit() * 0.4, sd * (1.0 + 5.0 * rng.unit())));
    let memoryless = (rng.below(2) == 0).then(|| (1.0 / (20.0 + rng.unit() * 2000.0), 200.0 + rng.unit() * 5000.0));
    let stall_rate = rng.unit() * 0.02;
    let quantum = if rng.below(2) == 0 { 10.0 } else { 0.0 };
    let n_seqs = 1 + rng.below(12);
    let len_min = (super::MIN_CYCLES * (period + super::PERIOD_SLACK)) as usize;
    let len = len_min + rng.below(12_000usize.saturating_sub(len_min).max(1));
    let seqs = (0..n_seqs)
        .map(|_| {
            let phase = rng.below(period as usize) as u64;
            // Speed phases: a level that moves at random points, by up to 40%.
            let mut level = 1.0;
            // Slower stretches: (start, length, extra).
            let stretches: Vec<(usize, usize, f64)> =
                (0..rng.below(6)).map(|_| (rng.below(len), 10 + rng.below(5000), 20.0 + rng.unit() * 1000.0)).collect();
            (0..len)
                .map(|i| {
                    if rng.below(3000) == 0 {
                        level = 1.0 + 0.4 * rng.unit();
                    }
                    let mut v = base * level + sd * rng.normal();
                    if heavy && rng.below(10) == 0 {
                        v += sd * (1.0 / rng.unit()).powf(0.7);
                    }
                    if let Some((share, shift)) = second {
                        if rng.unit() < share {
                            v += shift;
                        }
                    }
                    if let Some((rate, extra)) = memoryless {
                        if rng.unit() < rate {
                            v += extra;
                        }
                    }
                    if rng.unit() < stall_rate {
                        v += 2000.0;
                    }
                    v += stretches.iter().filter(|s| i >= s.0 && i < s.0 + s.1).map(|s| s.2).sum::<f64>();
                    if let Some(d) = planted {
                        if i as u64 % period == phase {
                            v += d * sd;
                        }
                    }
                    if quantum > 0.0 {
                        v = (v / quantum).round() * quantum;
                    }
                    v.max(1.0)
                })
                .collect()
        })
        .collect();
    Row { seqs, period }
}

/// The row folded as the report folds it: marks above the pooled median, values capped above a
/// threshold four median absolute deviations up.
fn verdict(r: &Row) -> Option<super::FoldedPeriod> {
    let mut all: Vec<f64> = r.seqs.iter().flatten().copied().collect();
    all.sort_by(f64::total_cmp);
    let median = all[all.len() / 2];
    let mut dev: Vec<f64> = all.iter().map(|v| (v - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let threshold = median + 4.0 * dev[dev.len() / 2];
    let cap = threshold + 2.0 * (threshold - median);
    let periods = super::periods_tried(r.period as f64, &[]);
    let folds: Vec<Folds> = r
        .seqs
        .iter()
        .map(|s| {
            let mut f = Folds::new(&periods);
            for (i, &v) in s.iter().enumerate() {
                f.add(i as u64, v, cap, &periods);
            }
            f
        })
        .collect();
    judge(&folds, &periods, threshold - median)
}

/// With no path at the period, a claim comes at most at ALPHA's rate; with one planted at the
/// spread's sd or more in a run of 50 periods or more, it is found in nine rows of ten or more,
/// at the planted period. Shorter runs are tried and counted but not held to it: 8 to 20 calls a
/// phase, over hundreds of phases, can hold too little evidence.
#[test]
fn a_phase_of_the_expected_period_stands_out_only_where_planted() {
    let mut rng = SplitMix64(2027);
    let runs = 400;
    let (mut false_claims, mut wrong_period) = (0, 0);
    let (mut long, mut long_found, mut short, mut short_found) = (0, 0, 0, 0);
    for _ in 0..runs {
        let state = rng.next_u64();
        let null = row(&mut SplitMix64(state), None);
        false_claims += usize::from(verdict(&null).is_some());
        let d = 0.5 + 2.5 * rng.unit();
        let planted = row(&mut SplitMix64(state.wrapping_add(1)), Some(d));
        let v = verdict(&planted);
        wrong_period += usize::from(v.as_ref().is_some_and(|v| v.period != planted.period));
        if planted.seqs[0].len() as u64 >= 50 * planted.period && d >= 1.0 {
            long += 1;
            long_found += usize::from(v.is_some());
        } else {
            short += 1;
            short_found += usize::from(v.is_some());
        }
    }
    eprintln!(
        "no path: {false_claims} of {runs} claimed; planted, >= 50 periods and >= 1 sd: {long_found} of {long} \
         found; the rest: {short_found} of {short}; {wrong_period} at another period"
    );
    assert!(false_claims <= 2, "{false_claims} of {runs} rows with no path claim one");
    assert_eq!(wrong_period, 0, "a planted path said at another period");
    assert!(long_found * 10 >= long * 9, "{long_found} of {long} planted paths found");
}

/// The harness's cycles (a sample page every 64 calls, a sentinel window every 31) keep the
/// periods that share a quarter of a cycle or more out of the fold: its work could mark their
/// phases. LTTng's and ftrace's periods stay.
#[test]
fn periods_that_share_a_harness_cycle_are_not_folded() {
    use super::periods_tried;
    assert_eq!(periods_tried(4096.0, &[64, 31]), vec![4094, 4095, 4097, 4098]);
    assert_eq!(periods_tried(64.0, &[64, 31]), vec![63, 65, 66]);
    assert_eq!(periods_tried(62.0, &[64, 31]), vec![60, 61, 63]);
    assert_eq!(periods_tried(810.0, &[64, 31]), vec![808, 809, 810, 811, 812]);
    assert_eq!(periods_tried(51.0, &[64, 31]), vec![49, 50, 51, 52, 53]);
    assert!(periods_tried(f64::NAN, &[]).is_empty());
}
