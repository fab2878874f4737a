//! Which periodic path the geometry's expected period is said of.
use crate::analysis::code_paths::Expected;
use crate::report::findings::{of, Finding};
use crate::report::tests::{analysis_of, xorshift};

#[test]
fn the_expectation_goes_to_the_path_on_exactly_that_period() {
    // CI: lttng-ust at 16 KiB showed its switch every 1630 calls and, as a path of its own, every
    // other switch (3260). With two phases that second path's mean period ties 1630's; the
    // expectation went to it and the switch path was said without "[expected: ...]".
    let mut rnd = xorshift();
    let seqs: Vec<Vec<f64>> = (0..3)
        .map(|_| {
            (0..5000u64).map(|i| 90.0 + (rnd() % 2) as f64 * 10.0 + if i % 810 == 100 { 900.0 } else { 0.0 }).collect()
        })
        .collect();
    let mut cp = analysis_of(&seqs);
    assert_eq!(cp.periodic.iter().map(|p| p.period).collect::<Vec<_>>(), [810], "{:?}", cp.periodic);
    let mut twice = cp.periodic[0].clone();
    (twice.period, twice.phases, twice.taken) = (1620, 2, 3);
    cp.periodic.insert(0, twice);
    let e = Expected { period: 810.0, how: "sub-buffer = 810".into() };
    let said = |cp: &crate::analysis::code_paths::CodePaths| -> Vec<(u64, u64, bool)> {
        of(cp, Some(&e), None, None)
            .findings
            .iter()
            .filter_map(|f| match f {
                Finding::PeriodicPath(p) => Some((p.period, p.phase, p.expected.is_some())),
                _ => None,
            })
            .collect()
    };
    let s = said(&cp);
    assert!(s.contains(&(810, 100, true)) && s.contains(&(1620, 100, false)), "{s:?}");
    // A cheap path on the same period (LTTng: +50 ns about 520 calls after each switch), listed
    // first: the expectation stays on the costly one, the slow path the geometry predicts.
    let mut cheap = cp.periodic[1].clone();
    (cheap.phase, cheap.extra) = (620, 50.0);
    cp.periodic.insert(0, cheap);
    let s = said(&cp);
    assert!(s.contains(&(810, 100, true)) && s.contains(&(810, 620, false)), "{s:?}");
}
