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
    let said: Vec<(u64, bool)> = of(&cp, Some(&e), None, None)
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::PeriodicPath(p) => Some((p.period, p.expected.is_some())),
            _ => None,
        })
        .collect();
    assert!(said.contains(&(810, true)) && said.contains(&(1620, false)), "{said:?}");
}
