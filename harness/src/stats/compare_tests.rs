//! Seeded batteries: each false decision at or below its nominal rate, over repetition values
//! drawn narrow, heavy-tailed, drifting between rounds and in two clusters of processes.
use super::*;
use crate::stats::rng::SplitMix64;

type Draw = SplitMix64;

/// The shapes of one process's mean around its row's cost `c`.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Narrow,
    HeavyTailed,
    Drifting,
    TwoClusters,
}
const SHAPES: [Shape; 4] = [Shape::Narrow, Shape::HeavyTailed, Shape::Drifting, Shape::TwoClusters];

/// Rounds of (floor, A, B) with B's cost `(1 + diff)` times A's net cost above a 25 ns floor.
/// The noise is shared within a round where the machine moves all rows (drift), and each
/// process draws its own (spread, tail, cluster).
fn rounds(g: &mut Draw, shape: Shape, n: usize, a_net: f64, diff: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let floor = 25.0;
    let (mut f, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..n {
        let phase = match shape {
            Shape::Drifting => 1.0 + 0.3 * (k as f64 / 3.0).sin() + 0.1 * g.normal(),
            _ => 1.0,
        };
        let process = |g: &mut Draw, cost: f64| -> f64 {
            let e = match shape {
                Shape::Narrow | Shape::Drifting => 0.02 * g.normal(),
                // Student-ish: a normal over the root of a chi-square of 2 degrees of freedom.
                Shape::HeavyTailed => 0.02 * g.normal() / (-(g.unit().ln())).sqrt().max(0.05),
                Shape::TwoClusters => 0.02 * g.normal() + if g.unit() < 0.5 { 0.0 } else { 0.25 },
            };
            cost * phase * (1.0 + e)
        };
        f.push(process(g, floor));
        a.push(process(g, floor + a_net));
        b.push(process(g, floor + a_net * (1.0 + diff)));
    }
    (f, a, b)
}

/// Runs `trials` comparisons at true relative difference `diff` and counts those `bad` says
/// are wrong, over every shape and a spread of round counts.
fn battery(seed: u64, diff: f64, trials: usize, bad: impl Fn(&Comparison) -> bool) -> (usize, usize) {
    let mut g = SplitMix64(seed);
    let mut wrong = 0;
    for t in 0..trials {
        let shape = SHAPES[t % SHAPES.len()];
        let n = [3, 5, 9, 10, 14, 20, 28, 40, 80][(t / SHAPES.len()) % 9];
        let a_net = [20.0, 150.0, 800.0][t % 3];
        let (f, a, b) = rounds(&mut g, shape, n, a_net, diff);
        let c = compare(&a, &b, Some(&f), true, MARGIN, ALPHA);
        wrong += usize::from(bad(&c));
    }
    (wrong, trials)
}

/// The nominal rate, and a bound a battery of `trials` stays under unless the rate is above it:
/// the rate plus four binomial standard deviations.
fn bound(rate: f64, trials: usize) -> usize {
    let m = rate * trials as f64;
    (m + 4.0 * m.max(1.0).sqrt()).ceil() as usize
}

#[test]
fn a_true_equality_is_almost_never_called_cheaper() {
    let (w, n) = battery(1, 0.0, 8000, |c| matches!(c.outcome, Outcome::ACheaper | Outcome::BCheaper));
    eprintln!("false 'cheaper' at a true equality: {w} of {n} (nominal at most {ALPHA})");
    assert!(w <= bound(ALPHA, n), "{w} of {n}");
}

#[test]
fn a_true_difference_of_twice_the_margin_is_almost_never_called_the_same() {
    let (w, n) = battery(2, 2.0 * MARGIN, 8000, |c| c.outcome == Outcome::Same);
    eprintln!("false 'the same' at twice the margin: {w} of {n} (nominal at most {})", ALPHA / 2.0);
    assert!(w <= bound(ALPHA / 2.0, n), "{w} of {n}");
    let (w, n) = battery(3, -2.0 * MARGIN, 8000, |c| c.outcome == Outcome::Same);
    assert!(w <= bound(ALPHA / 2.0, n), "{w} of {n}");
}

#[test]
fn a_change_of_exactly_the_margin_is_almost_never_called_beyond_it() {
    let (w, n) = battery(4, MARGIN, 8000, Comparison::b_beyond_margin);
    eprintln!("'beyond the margin' at exactly the margin: {w} of {n} (nominal at most {})", ALPHA / 2.0);
    assert!(w <= bound(ALPHA / 2.0, n), "{w} of {n}");
}

/// Power, so the batteries above cannot pass by never deciding: a tenfold difference decides at
/// the first look, and two equal rows are said to be the same once the rounds suffice.
#[test]
fn clear_answers_are_given() {
    let mut g = SplitMix64(5);
    let (f, a, b) = rounds(&mut g, Shape::Narrow, 10, 20.0, 9.0);
    let c = compare(&a, &b, Some(&f), true, MARGIN, ALPHA);
    assert_eq!(c.outcome, Outcome::ACheaper, "{c:?}");
    assert!(c.net && (c.estimate - 9.0).abs() < 1.0, "{c:?}");
    let c = compare(&b, &a, Some(&f), true, MARGIN, ALPHA);
    assert_eq!(c.outcome, Outcome::BCheaper, "{c:?}");
    let (f, a, b) = rounds(&mut g, Shape::Narrow, 40, 800.0, 0.0);
    let c = compare(&a, &b, Some(&f), true, MARGIN, ALPHA);
    assert_eq!(c.outcome, Outcome::Same, "{c:?}");
    // Three rounds can decide nothing at this level, and say how many would.
    let (f, a, b) = rounds(&mut g, Shape::Narrow, 3, 20.0, 9.0);
    let c = compare(&a, &b, Some(&f), true, MARGIN, ALPHA);
    assert_eq!((c.outcome, c.interval, c.rounds_needed), (Outcome::Undecided, None, Some(10)), "{c:?}");
}

#[test]
fn the_looks_spend_alpha_once() {
    assert_eq!(looks().take(6).collect::<Vec<_>>(), [10, 14, 20, 28, 40, 57]);
    assert_eq!((look(3), look(10), look(12), look(14), look(15)), (1, 1, 2, 2, 3));
    // Over every look a run can make, the levels sum to at most alpha.
    let total: f64 = (1..=200u32).map(|k| ALPHA / (k as f64 * (k as f64 + 1.0))).sum();
    assert!(total <= ALPHA);
    assert!((level(10, ALPHA) - ALPHA / 2.0).abs() < 1e-15);
}

#[test]
fn the_normal_quantile_is_right() {
    for (p, z) in [(0.975, 1.959_964), (0.995, 2.575_829), (0.5, 0.0), (0.999_75, 3.480_756)] {
        assert!((normal_quantile(p) - z).abs() < 1e-3, "{p}: {}", normal_quantile(p));
    }
}

/// Unpaired values (rows not interleaved) use the shift interval; at a true equality it too
/// stays at or below the nominal rate of false "cheaper".
#[test]
fn unpaired_rows_hold_the_rate_too() {
    let mut g = SplitMix64(6);
    let (mut w, trials) = (0, 4000);
    for t in 0..trials {
        let n = [5, 10, 20, 40][t % 4];
        let (_, a, b) = rounds(&mut g, Shape::Narrow, n, 150.0, 0.0);
        let c = compare(&a, &b, None, false, MARGIN, ALPHA);
        w += usize::from(matches!(c.outcome, Outcome::ACheaper | Outcome::BCheaper));
    }
    eprintln!("unpaired false 'cheaper': {w} of {trials}");
    assert!(w <= bound(ALPHA, trials), "{w} of {trials}");
}
