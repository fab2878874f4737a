//! A call is counted once: a costlier path on a cheaper one's lattice (every kP events at one of
//! its phases: a sub-buffer switch on a page crossing, or a cost that cycles over k values) takes
//! its calls from the cheaper path's count and cost.
use crate::report::findings::{of, Finding};
use crate::report::tests::{analysis_of, xorshift};

/// A generator of runs: a path every P at +c1, and on its lattice, every kP, a costlier value
/// (+c2) instead, at one or two of its k phases. The paths said count each slow call once: their
/// calls add up to the calls planted, and the cheaper path's cost is +c1, not a median pulled
/// towards +c2 by calls that are not its own.
#[test]
fn calls_on_a_costlier_path_on_a_cheaper_ones_lattice_are_counted_once() {
    let mut rnd = xorshift();
    for run in 0..8 {
        let p = [97u64, 128, 300, 500][run % 4];
        let k = 3 + rnd() % 3;
        let two = run % 2 == 1;
        let (c1, c2) = (300.0 + (rnd() % 300) as f64, 1500.0 + (rnd() % 1000) as f64);
        let n = 40 * k * p;
        let v: Vec<f64> = (0..n)
            .map(|i| {
                let fast = 100.0 + (rnd() % 2) as f64 * 10.0;
                if i % p != 5 {
                    fast
                } else if (i / p) % k == 1 {
                    fast + c2
                } else if two && (i / p) % k == 2 {
                    fast + 1.5 * c2
                } else {
                    fast + c1
                }
            })
            .collect();
        let planted = (0..n).filter(|i| i % p == 5).count() as u64;
        let cp = analysis_of(&[v]);
        let paths: Vec<_> = of(&cp, None, None, None, None)
            .findings
            .into_iter()
            .filter_map(|f| match f {
                Finding::PeriodicPath(x) => Some(x),
                _ => None,
            })
            .collect();
        let said: Vec<(u64, u64, f64)> = paths.iter().map(|x| (x.period, x.calls, x.extra)).collect();
        let cheap =
            paths.iter().find(|x| x.period == p).unwrap_or_else(|| panic!("run {run}: no path every {p}: {said:?}"));
        assert!(paths.iter().any(|x| x.period == k * p), "run {run}: no path every {}: {said:?}", k * p);
        let total: u64 = paths.iter().map(|x| x.calls).sum();
        assert_eq!(total, planted, "run {run}: {said:?} count {total} calls of {planted}");
        assert!(
            (cheap.extra - c1).abs() < 0.1 * c1 + 20.0,
            "run {run}: the path every {p} at +{}, planted +{c1}",
            cheap.extra
        );
        assert_eq!(cheap.counted_in.len(), 1 + two as usize, "run {run}: {said:?}");
        // The sweep's main slow path is the path every P: the costlier values are its own slots.
        let main = crate::analysis::attribution::main_slow_path(&cp, None).map(|m| m.mean_period);
        assert_eq!(main, Some(p as f64), "run {run}: the main slow path of {said:?}");
    }
}
