//! `tracebench run` and `tracebench scale`: one pipeline, each stage a module of its own
//! (docs/ARCHITECTURE.md):
//!
//! ```text
//! plan       options -> validated plan -> cells          (plan.rs; nothing runs before it passes)
//! supervise  one child process per cell, stop, timeout   (supervise.rs, protocol.rs)
//! measure    the cell: set-up, warm-up, timed loop       (cell.rs, timed.rs, kernel_cell.rs)
//! merge      cells -> events.csv, summary.csv, ...       (merge.rs, through `results`)
//! export     run.json and the terminal                   (export.rs)
//! ```
//! Data flows one way: no stage reads what a later one writes.
pub mod calibrate;
pub mod cell;
pub mod export;
pub mod kernel_cell;
pub mod merge;
pub mod plan;
pub mod protocol;
pub mod supervise;
pub mod timed;

use std::time::Duration;

pub use plan::{Mode, Options};

use crate::counters::{self, Availability};
use crate::error::Error;
use crate::host::{self, CpuTimes};
use crate::results::{self, ResultsDir};

/// Runs the pipeline; returns the exit code (0, 1 if a cell failed, 130 if interrupted).
pub fn run(opts: &Options, mode: Mode, argv: &[String]) -> Result<i32, Error> {
    let plan = plan::plan(opts, mode)?;
    let out = ResultsDir::create(&plan.out)?;
    let run_id = format!("{}-{}", results::utc_stamp(), std::process::id());
    // Held until the run ends: the clock thread and every cell then open and close their
    // disturbance detectors in milliseconds instead of 0.5 s each (see `KeepAlive`).
    let _keep_alive = (!opts.kernel).then(crate::disturbance::KeepAlive::hold);
    let avail = probe_counters(&plan.sets)?;
    let columns = plan::counter_columns(&avail);
    let (clock, floor) = calibrate::measure_clock(opts.clock, plan.cpus[0])?;
    let (host, cpu_before) = (host::describe(), CpuTimes::now());
    let cells = plan.cells(opts, &avail, &columns, &clock, &run_id, &out.path.join(".cells"));

    supervise::install_handlers();
    let guards = parent_guards(opts, &plan, clock.tsc_hz, &run_id)?;
    let runs = run_cells(cells, opts)?;
    drop(guards);

    let interrupted = supervise::stopped();
    let summaries = merge::merge(&out, &plan, &runs, &columns)?;
    let facts = export::RunFacts {
        opts,
        mode,
        argv,
        run_id: &run_id,
        host: &host,
        cpu_busy: serde_json::to_value(cpu_before.busy_since(&CpuTimes::now())).unwrap_or_default(),
        clock: &clock,
        floor: &floor,
        avail: &avail,
        columns: &columns,
        plan: &plan,
        runs: &runs,
        interrupted,
    };
    let run_json = export::write_run_json(&out, &facts)?;
    let _ = std::fs::remove_dir_all(out.path.join(".cells"));
    if !opts.quiet {
        export::print(&out, &facts, &run_json, &summaries);
    }
    exit_code(&runs, interrupted, &out)
}

/// Counters: probed once, reported once; unsupported ones are left out, never zero-filled.
fn probe_counters(sets: &[Vec<String>]) -> Result<Vec<Availability>, Error> {
    let mut avail = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let a = counters::probe(set)?;
        for (n, why) in &a.unsupported {
            eprintln!("tracebench: counter {n} (set {}) unavailable: {why}; its column is left out", i + 1);
        }
        avail.push(a);
    }
    Ok(avail)
}

/// Each backend's parent-side guard (e.g. LTTng's session daemon), held for the whole run.
fn parent_guards(
    opts: &Options,
    plan: &plan::Plan,
    tsc_hz: f64,
    run_id: &str,
) -> Result<Vec<Box<dyn std::any::Any>>, Error> {
    let copts = tracebench_tracers::CreateOptions {
        tsc_hz,
        ftrace_clock: opts.ftrace_clock.clone(),
        subbuf_size: opts.subbuf_size.clone(),
        num_subbuf: opts.num_subbuf,
        probe_site: opts.probe_site.clone(),
        run_id: run_id.to_string(),
        payload_size: opts.payload_size,
    };
    let mut guards: Vec<Box<dyn std::any::Any>> = Vec::new();
    if !opts.kernel {
        for r in &plan.rows {
            guards.push(Box::new(tracebench_tracers::registry::parent_guard(&r.spec, &copts)?));
        }
    }
    Ok(guards)
}

/// The cells one after another (each is pinned; running two at once would measure contention).
fn run_cells(cells: Vec<(usize, protocol::CellSpec)>, opts: &Options) -> Result<Vec<supervise::CellRun>, Error> {
    let pb = progress(cells.len(), opts.quiet);
    let mut runs = Vec::new();
    for (ri, spec) in cells {
        if supervise::stopped() {
            break;
        }
        pb.set_message(format!("{} x{} rep {}", spec.label, spec.threads, spec.repetition + 1));
        let run = supervise::run_cell(ri, spec, Duration::from_secs(opts.timeout))?;
        if let Some(e) = &run.error {
            pb.suspend(|| eprintln!("tracebench: tracer {} {e}", run.spec.label));
        }
        for w in run.result.iter().flat_map(|r| &r.warnings) {
            pb.suspend(|| eprintln!("tracebench: warning: {w}"));
        }
        runs.push(run);
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(runs)
}

fn progress(cells: usize, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(cells as u64);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb
}

fn exit_code(runs: &[supervise::CellRun], interrupted: bool, out: &ResultsDir) -> Result<i32, Error> {
    if interrupted {
        eprintln!("tracebench: interrupted; results measured so far are in {}", out.path.display());
        return Ok(130);
    }
    let failed = runs.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        eprintln!(
            "tracebench: {failed} cell(s) failed (see above and run.json); the other results are in {}",
            out.path.display()
        );
        return Ok(1);
    }
    Ok(0)
}
