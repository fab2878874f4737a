//! The laws' words, on given outcomes and on seeded synthetic repetitions judged by the one
//! comparison: a null battery (equal costs at every value) that must almost never read as a
//! trend, and a real step that must be decided at the rounds a sweep typically runs.
use super::*;
use crate::results::sweep_steps::{judge_curve, Reps};
use crate::stats::compare::{compare, ALPHA, MARGIN};
use crate::stats::rng::SplitMix64;

fn p(v: &str, mean: f64, per: Option<f64>) -> Point {
    (v.into(), mean, mean, per, per.map(|_| 900.0))
}

#[test]
fn period_laws_say_what_the_numbers_show() {
    let pts = [p("4096", 74.5, Some(401.0)), p("16384", 71.9, Some(1630.0)), p("65536", 71.0, Some(6545.0))];
    let l = period_law("lttng-ust", "subbuf-size", true, &pts).unwrap();
    assert!(l.contains("proportional to subbuf-size (value x4.00, x16.0; period x4.06, x16.3)"), "{l}");
    let clocks = [p("local", 406.0, Some(145.0)), p("global", 439.0, Some(145.0)), p("counter", 381.0, Some(145.0))];
    assert!(period_law("ftrace", "ftrace-clock", false, &clocks).unwrap().ends_with("the same at every value."));
    assert!(period_law("lw", "payload-size", true, &[p("4", 40.0, None), p("1024", 60.0, None)]).is_none());
    let partial = [p("4096", 74.5, Some(401.0)), p("16384", 71.9, None)];
    assert!(period_law("x", "subbuf-size", true, &partial).unwrap().contains("no law is stated"));
    let blob = [p("4", 96.0, Some(810.0)), p("256", 243.0, Some(30.0)), p("1024", 776.0, Some(7.0))];
    let l = period_law("lttng-ust", "payload-size", true, &blob).unwrap();
    assert!(l.contains("falls as payload-size grows (value x64.0, x256.0; period x0.0370, x0.0086)"), "{l}");
    let off = [p("4096", 1.0, Some(400.0)), p("16384", 1.0, Some(800.0))];
    assert!(period_law("x", "subbuf-size", true, &off).unwrap().contains("neither proportional"));
}

/// Ten paired rounds of B at `ratio` times A, with a little spread, as values of a comparison.
fn step(ratio: f64, spread: f64) -> Option<Comparison> {
    let a: Vec<f64> = (0..10).map(|k| 100.0 * (1.0 + spread * ((k * 7 % 10) as f64 - 4.5) / 4.5)).collect();
    let b: Vec<f64> =
        a.iter().enumerate().map(|(k, x)| x * ratio + spread * 100.0 * ((k * 3 % 10) as f64 - 4.5) / 4.5).collect();
    Some(compare(&a, &b, None, true, MARGIN, ALPHA))
}

#[test]
fn a_curve_grows_falls_or_is_flat_only_where_every_step_is_decided() {
    let pts = [p("4", 100.0, None), p("256", 130.0, None), p("1024", 170.0, None)];
    let up = [step(1.3, 0.01), step(1.3, 0.01)];
    let l = latency_law("lw", "payload-size", true, &pts, &up);
    assert!(
        l.starts_with("lw: mean 100 / 130 / 170 ns at payload-size 4 / 256 / 1024: grows x1.70 from 4 to 1024: "),
        "{l}"
    );
    assert!(l.contains("costlier at 256 than at 4 (+30% [") && l.contains("costlier at 1024 than at 256"), "{l}");
    assert!(l.contains("steps judged on 10 interleaved rounds of means, 99.5% intervals"), "{l}");
    assert!(l.contains("relative to the cheaper value's raw cost, the same within 5%"), "{l}");

    // A step the same within the margin counts as flat inside a growing curve.
    let l = latency_law("lw", "payload-size", true, &pts, &[step(1.0, 0.005), step(1.3, 0.01)]);
    assert!(l.contains("grows x1.70") && l.contains("the same at 4 and 256 within 5% ("), "{l}");

    // Means that disagree with the decided steps (a stalled repetition) give no ratio.
    let l = latency_law("lw", "payload-size", true, &[p("4", 50.0, None), p("1024", 48.0, None)], &[step(1.3, 0.01)]);
    assert!(l.contains(": grows from 4 to 1024: costlier at 1024 than at 4"), "{l}");
    let down = [p("4", 170.0, None), p("256", 119.0, None), p("1024", 120.0, None)];
    let l = latency_law("lw", "payload-size", true, &down, &[step(0.7, 0.01), step(1.0, 0.005)]);
    assert!(l.contains(": falls x1.42 from 4 to 1024: cheaper at 256 than at 4"), "{l}");

    let flat = [p("4096", 74.5, None), p("16384", 71.9, None), p("65536", 71.0, None)];
    let l = latency_law("lttng-ust", "subbuf-size", true, &flat, &[step(1.0, 0.005), step(1.0, 0.005)]);
    assert!(l.contains(": flat: the same at 4096 and 16384 within 5% ("), "{l}");

    // Undecided: no trend word, and the rounds that would decide.
    let l = latency_law("printf", "payload-size", true, &pts, &[step(1.3, 0.01), step(1.04, 0.2)]);
    assert!(!l.contains("grows") && !l.contains("falls") && !l.contains("flat"), "{l}");
    assert!(l.contains("costlier at 256 than at 4 (+30% ["), "{l}");
    assert!(l.contains("; not decided between 256 and 1024 (") && l.contains("rounds would decide: --repeats "), "{l}");

    // Decided both ways: each step said, no trend.
    let l = latency_law("ftrace", "payload-size", true, &pts, &[step(1.3, 0.01), step(0.7, 0.01)]);
    assert!(!l.contains("grows") && !l.contains("falls"), "{l}");
    assert!(l.contains("costlier at 256 than at 4") && l.contains(", cheaper at 1024 than at 256"), "{l}");

    // Categories (clocks) are never said to grow, only step by step.
    let clocks = [p("local", 406.0, None), p("global", 439.0, None)];
    let l = latency_law("ftrace", "ftrace-clock", false, &clocks, &[step(1.08, 0.005)]);
    assert!(l.contains(": costlier at global than at local (+8.0% ["), "{l}");

    // One repetition per value: no interval, never a trend.
    let one = compare(&[187.0], &[230.0], None, true, MARGIN, ALPHA);
    let l = latency_law("printf", "payload-size", true, &pts[..2], &[Some(one)]);
    assert!(l.contains("not decided between 4 and 256 (+23%, too few rounds for an interval: about 10 rounds would decide: --repeats 10)"), "{l}");
    assert!(l.contains("steps judged on 1 round of means, relative to"), "no interval, so no level: {l}");

    let l = latency_law("x", "payload-size", true, &pts[..2], &[None]);
    assert!(l.ends_with(": not compared between 4 and 256 (no repetitions of both)."), "{l}");
    assert!(latency_law("x", "payload-size", true, &pts[..1], &[]).ends_with("one value only, so no curve."));
}

type Draw = SplitMix64;

/// A sweep's repetitions of one tracer (net costs `net[v]` above a 25 ns floor) and of `none`,
/// interleaved as the runner runs them: round k measures every value in order, and the machine's
/// speed drifts over the whole sweep (a slow wave with a random start, plus a random walk), so
/// values of one round share most of it and rounds differ. Each process draws its own spread
/// (2%); `rough` adds a stall-heavy mean now and then and one of two placements per process.
fn sweep(g: &mut Draw, net: &[f64], rounds: usize, rough: bool) -> (Vec<Reps>, Vec<Option<Reps>>) {
    let (start, period) = (g.unit() * 10.0, 4.0 + 20.0 * g.unit());
    let mut walk = 0.0;
    let mut vals: Vec<Reps> = vec![Vec::new(); net.len()];
    let mut floors: Vec<Reps> = vec![Vec::new(); net.len()];
    for k in 0..rounds {
        for (v, &c) in net.iter().enumerate() {
            let t = (k * net.len() + v) as f64;
            walk += 0.01 * g.normal();
            let phase = 1.0 + 0.25 * ((start + t) / period).sin() + walk;
            let mut process = |cost: f64| {
                let tail = if rough && g.unit() < 0.05 { 0.3 * g.unit() } else { 0.0 };
                let cluster = if rough && g.unit() < 0.5 { 0.04 } else { 0.0 };
                cost * phase * (1.0 + 0.02 * g.normal() + tail + cluster)
            };
            floors[v].push((k as u32, process(25.0)));
            vals[v].push((k as u32, process(25.0 + c)));
        }
    }
    (vals, floors.into_iter().map(Some).collect())
}

fn law_of(net: &[f64], vals: &[Reps], floors: &[Option<Reps>]) -> String {
    let names = ["4", "64", "256", "1024"];
    let pts: Vec<Point> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| p(names[i], v.iter().map(|x| x.1).sum::<f64>() / v.len() as f64, None))
        .collect();
    assert_eq!(pts.len(), net.len());
    latency_law("t", "payload-size", true, &pts, &judge_curve(vals, floors))
}

/// Equal true costs at every value, noisy and drifting repetitions (half of them rough): the page says the curve grows
/// or falls in at most 1% of seeded sweeps, at any number of rounds (the one-round sweeps of the
/// old page said a trend from two single means whenever they differed).
#[test]
fn a_flat_curve_is_almost_never_said_to_grow_or_fall() {
    let mut g = SplitMix64(0x5eed_5eed);
    let (mut trend, mut flat, mut total) = (0usize, 0usize, 0usize);
    for trial in 0..2400 {
        let rounds = [1, 2, 3, 5, 10, 14, 20, 40][trial % 8];
        let values = 2 + trial % 3;
        let net = vec![[15.0, 40.0, 200.0][trial % 3]; values];
        let (vals, floors) = sweep(&mut g, &net, rounds, trial % 2 == 1);
        let l = law_of(&net, &vals, &floors);
        total += 1;
        if l.contains("grows") || l.contains("falls") {
            trend += 1;
        }
        if l.contains(": flat: ") {
            flat += 1;
        }
    }
    let rate = trend as f64 / total as f64;
    println!(
        "null battery: {trend} of {total} flat sweeps said to grow or fall ({:.2}%); {flat} said flat",
        100.0 * rate
    );
    assert!(rate <= 0.01, "{trend} of {total}");
}

/// A real +30% step (of the tracer's cost net of the floor) between two values is decided at 10
/// interleaved rounds, and the curve said to grow, in nearly every seeded sweep.
#[test]
fn a_thirty_percent_step_is_decided_at_ten_rounds() {
    let mut g = SplitMix64(0x30);
    let mut grown = 0;
    let trials = 200;
    for trial in 0..trials {
        let net = [40.0, 52.0];
        let (vals, floors) = sweep(&mut g, &net, 10, false);
        let steps = judge_curve(&vals, &floors);
        let c = steps[0].as_ref().unwrap();
        assert!(c.net && c.paired && c.rounds == 10, "{c:?}");
        let l = law_of(&net, &vals, &floors);
        assert!(l.contains("relative to the cheaper value's cost net of none, the same within 5%"), "{l}");
        if c.outcome == Outcome::ACheaper && l.contains(": grows x") {
            grown += 1;
        } else if trial < 3 {
            println!("not decided: {l}");
        }
    }
    println!("+30% step at 10 rounds: decided growing in {grown} of {trials} sweeps");
    assert!(grown as f64 >= 0.95 * trials as f64, "{grown} of {trials}");
}
