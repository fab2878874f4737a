//! The overview's own tests (overview.rs): the short path texts of the table.
use crate::report::findings::{Finding, PeriodicFinding};
use crate::report::render::overview::paths;

fn periodic(period: u64, phase: u64) -> Finding {
    Finding::PeriodicPath(PeriodicFinding {
        period,
        evenly_spread: 1,
        mean_period: period as f64,
        phase,
        calls: 12,
        slots: 12,
        share_taken: 1.0,
        extra: 49.3,
        p_value: 0.001,
        null_runs: 1000,
        followers: Vec::new(),
        stretch: None,
        expected: None,
        counted_in: Vec::new(),
    })
}

/// Two paths of one period at two phases are told apart by their first call; a lone one is not.
#[test]
fn two_paths_of_one_period_show_their_first_calls() {
    let p = paths(&[periodic(1620, 435), periodic(1620, 1245), periodic(810, 30)], 20000);
    let every: Vec<&str> = p.iter().map(|x| x.every.as_str()).collect();
    assert_eq!(every, ["1620@435", "1620@1245", "810"]);
}
