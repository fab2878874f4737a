//! Stage 5, export: what a run says about itself, from what the merge made. run.json
//! (run_json.rs), the terminal's table and lines (`output`), and the `--export` files of a
//! benchmark-history service (`export`). The CSV files are written by `merge` through `results`.
use std::collections::BTreeMap;

use super::cells::Ran;
use super::merge::Merged;
use super::plan::Plan;
use super::prepare::Prepared;
use super::probe::Probe;
use super::run_json;
use super::supervise::{self, CellRun};
use super::timings::Timings;
use crate::error::Error;

/// A run's run.json and terminal output, then its `--export` files and the detector's warning.
pub fn export(
    p: &Prepared,
    probe: &Probe,
    ran: &Ran,
    merged: &Merged,
    argv: &[String],
    t: &mut Timings,
) -> Result<(), Error> {
    run_files(p, probe, &ran.runs, ran.rounds, merged, argv, t)?;
    let dirs = [(p.out.path.as_path(), None)];
    crate::export::export_run(&p.plan.exports, &dirs, supervise::stopped(), merged.summaries.is_empty())?;
    // Last and on stderr (so `--quiet` does not hide it): what a weak disturbance detector could
    // not see; run.json's `disturbance.weak` and the report's header say the same.
    if let Some(w) = &probe.machine.floor.weak {
        eprintln!("tracebench: warning: {w}");
    }
    t.mark("export");
    Ok(())
}

/// run.json (`rounds`: the rounds the cells made), then the terminal's table unless `--quiet`;
/// the cells' directory goes once run.json is written.
pub fn run_files(
    p: &Prepared,
    probe: &Probe,
    runs: &[CellRun],
    rounds: usize,
    merged: &Merged,
    argv: &[String],
    t: &mut Timings,
) -> Result<(), Error> {
    let reasons = runs_reasons(&p.plan, runs);
    let run_json = run_json::write(p, probe, runs, rounds, argv, t)?;
    let _ = std::fs::remove_dir_all(&p.cells);
    t.mark("run_json");
    let m = &probe.machine;
    match (&merged.stepped, p.plan.quiet) {
        (_, true) => {}
        (Some(rows), false) => crate::output::print_stepped(&p.out.path, rows),
        (None, false) => {
            crate::output::print_run(&p.out.path, &m.clock, &m.floor, &merged.summaries, &reasons, &run_json)
        }
    }
    t.mark("print");
    Ok(())
}

/// Discards per reason, per row name, summed over cells.
fn runs_reasons(plan: &Plan, runs: &[CellRun]) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut m: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for c in runs {
        let e = m.entry(plan.rows[c.row].name.clone()).or_default();
        for t in c.result.iter().flat_map(|r| r.threads.iter()) {
            for (k, v) in &t.reasons {
                *e.entry(k.clone()).or_default() += v;
            }
        }
    }
    m
}
