//! The generative battery's power by size: each planted path counted in the cell of the calls
//! it is expected to take in the run and its extra cost, so that a power figure says which
//! paths were within reach of any analysis.
use std::fmt::Write as _;

/// Power by size: the calls a path takes in the run (fewer than 10 cannot show a period or a
/// mode; a thousand and more leave no doubt) and its extra cost (under 200 ns it is within the
/// reach of the fast path's spreads and second modes, from 1 us above them all).
pub(super) const CALL_EDGES: [f64; 3] = [10.0, 100.0, 1000.0];
pub(super) const EXTRA_EDGES: [f64; 2] = [200.0, 1000.0];

/// Per (component label, calls cell, extra-cost cell): (planted, named).
pub type Cells = std::collections::BTreeMap<(&'static str, usize, usize), (u32, u32)>;

/// The power table by size: per path component, named / planted in each (calls, extra) cell.
pub(super) fn table(by_size: &Cells, s: &mut String) {
    let calls = ["< 10", "10-99", "100-999", ">= 1000"];
    let _ = writeln!(
        s,
        "\npower by size: named / planted, by the calls the path is expected to take in the run and its extra cost"
    );
    let _ = writeln!(s, "{:<30} {:>8} {:>14} {:>14} {:>14}", "component", "calls", "< 200 ns", "200-999 ns", ">= 1 us");
    let mut labels: Vec<&str> = by_size.keys().map(|k| k.0).collect();
    labels.dedup();
    for l in labels {
        for (c, name) in calls.iter().enumerate() {
            let cell = |x: usize| match by_size.get(&(l, c, x)) {
                Some(&(p, n)) if p > 0 => format!("{n}/{p} ({:.0}%)", 100.0 * n as f64 / p as f64),
                _ => "-".into(),
            };
            let _ = writeln!(
                s,
                "{:<30} {name:>8} {:>14} {:>14} {:>14}",
                if c == 0 { l } else { "" },
                cell(0),
                cell(1),
                cell(2)
            );
        }
    }
}

/// The (calls, extra cost) cell of a path: bins closed below, open above.
pub(super) fn cell(calls: f64, extra: f64) -> (usize, usize) {
    let bin = |v: f64, edges: &[f64]| edges.iter().take_while(|&&e| v >= e).count();
    (bin(calls, &CALL_EDGES), bin(extra, &EXTRA_EDGES))
}
