//! Stage 5, export: what a run says about itself. run.json (run_json.rs), the terminal's table
//! and counter lines, and the `--export` files of a benchmark-history service. The CSV files are
//! written by `merge` through `results`.
use std::collections::BTreeMap;
use std::path::Path;

use super::cells::Ran;
use super::merge::Merged;
use super::plan::Plan;
use super::prepare::Prepared;
use super::probe::Probe;
use super::supervise::{self, CellRun};
use super::timings::Timings;
use super::{run_json, singlestep};
use crate::error::Error;
use crate::results::rows::MergedRow;

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
    export_history(&p.plan.exports, &[(p.out.path.as_path(), None)], merged.summaries.is_empty())?;
    warn_weak(probe);
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
    let run_json = run_json::write(p, probe, runs, rounds, argv, t)?;
    let _ = std::fs::remove_dir_all(p.cells_dir());
    t.mark("run_json");
    match (&merged.stepped, p.plan.quiet) {
        (_, true) => {}
        (Some(rows), false) => singlestep::print(&p.out.path, rows),
        (None, false) => print(p, probe, runs, &run_json, &merged.summaries),
    }
    t.mark("print");
    Ok(())
}

/// `--export FORMAT=FILE`: the results in a benchmark-history service's format (`export`).
pub fn export_history(
    exports: &[crate::export::ExportSpec],
    dirs: &[(&Path, Option<String>)],
    nothing_measured: bool,
) -> Result<(), Error> {
    if exports.is_empty() {
        return Ok(());
    }
    if supervise::stopped() {
        eprintln!("tracebench: interrupted, so the --export files were not written (the rows may lack repetitions)");
    } else if nothing_measured {
        eprintln!("tracebench: no row was measured, so the --export files were not written");
    } else {
        crate::export::export_dirs(exports, dirs)?;
    }
    Ok(())
}

/// Says, last and on stderr (so `--quiet` does not hide it), what a weak disturbance detector
/// could not see; run.json's `disturbance.weak` and the report's header say the same.
pub fn warn_weak(probe: &Probe) {
    if let Some(w) = &probe.machine.floor.weak {
        eprintln!("tracebench: warning: {w}");
    }
}

/// The terminal's table and counter lines.
fn print(p: &Prepared, probe: &Probe, runs: &[CellRun], run_json: &serde_json::Value, summaries: &[MergedRow]) {
    let m = &probe.machine;
    crate::output::print_table(&p.out.path, &m.clock, &m.floor, summaries, &runs_reasons(&p.plan, runs));
    for line in counter_lines(&run_json["counters"]["per_counter"]) {
        println!("{line}");
    }
    for line in blocked_lines(summaries) {
        println!("{line}");
    }
    if let Some(line) = crate::results::interrupted_line(run_json) {
        println!("{line}");
    }
}

/// "printf at 2 threads: 66 calls blocked inside the tracer, mean 21.5 µs, kept", per row that has any.
pub fn blocked_lines(rows: &[MergedRow]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.blocked > 0)
        .map(|r| {
            format!(
                "{} at {} thread(s): {} call{} blocked inside the tracer (the thread slept in the call), mean {}, kept in its cost",
                r.tracer,
                r.threads,
                r.blocked,
                if r.blocked == 1 { "" } else { "s" },
                crate::results::duration_text(r.blocked_mean_ns.unwrap_or(f64::NAN))
            )
        })
        .collect()
}

/// One line per counter read: how, whether it counted the whole time, and its discards.
fn counter_lines(per_counter: &serde_json::Value) -> Vec<String> {
    let Some(list) = per_counter.as_array() else { return Vec::new() };
    list.iter()
        .map(|c| {
            let ran = match c["scheduled_fraction_min"].as_f64() {
                Some(f) if f >= 0.9999 => "counting the whole run (time_running = time_enabled)".to_string(),
                Some(f) => format!("counting only {:.1}% of the run (multiplexed, or pinned and in error)", 100.0 * f),
                None => "time counting unknown (the group could not be read at the end)".to_string(),
            };
            format!(
                "counter {} (set {}): read with {}, {ran}; {} samples discarded as counter-not-running",
                c["name"].as_str().unwrap_or("?"),
                c["set"],
                c["read"].as_str().unwrap_or("?"),
                c["samples_discarded_not_running"]
            )
        })
        .collect()
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
