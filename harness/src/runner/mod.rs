//! `tracebench run`, `scale` and `sweep`: one pipeline, each stage a module of its own
//! (docs/ARCHITECTURE.md):
//!
//! ```text
//! plan       options -> validated plan                   (options.rs, plan.rs, validate.rs: before anything runs)
//! probe      the clock, the host, the counters, the disk (probe.rs)
//! prepare    the results directory, the rows' paths      (prepare.rs)
//! supervise  the cells, one child process each, rounds   (cells.rs, supervise.rs, protocol.rs, rounds.rs)
//! measure    the cell: set-up, warm-up, timed loop       (cell.rs, timed.rs, kernel_cell.rs)
//! merge      cells -> one pass per row, then summaries   (merge.rs, concat.rs, through `results`)
//! export     run.json, the terminal, --export            (export.rs, run_json.rs)
//! ```
//! Data flows one way: no stage reads what a later one writes. A sweep (sweep.rs) is several
//! plans whose cells are supervised interleaved, then merged and exported one by one.
pub mod affinity;
pub mod calibrate;
pub mod cell;
pub mod cells;
mod concat;
mod drain;
pub mod export;
pub mod kernel_cell;
pub mod merge;
mod merge_acc;
pub mod options;
pub mod plan;
pub mod prepare;
pub mod probe;
pub mod protocol;
pub mod reference;
mod rounds;
pub mod run_json;
pub mod singlestep;
pub mod space;
pub mod supervise;
pub mod sweep;
pub mod timed;
pub mod timings;
mod validate;

use crate::error::Error;

pub use options::{Mode, Options};

/// `run` and `scale`: the pipeline, once. Each stage takes what the one before it made; the
/// options are read by the plan alone.
pub fn run(opts: &Options, mode: Mode, argv: &[String]) -> Result<i32, Error> {
    let mut t = timings::Timings::start();
    let plan = plan::plan(opts, mode)?;
    t.mark("plan");
    // After the plan (bad input leaves nothing, and touches nothing), before anything measures.
    tracebench_tracers::registry::reap_leftovers();
    t.mark("reap_leftovers");
    let probe = probe::probe(&plan, &mut t)?;
    let prepared = prepare::prepare(plan)?;
    t.mark("prepare");
    let ran = cells::run(&prepared, &probe, &mut t)?;
    let merged = merge::merge_run(&prepared, &probe.columns, &ran.runs, &mut t)?;
    export::export(&prepared, &probe, &ran, &merged, argv, &mut t)?;
    // Hands the detector's tracepoints to the background releaser (`KeepAlive`'s Drop).
    drop(probe);
    t.mark("release");
    // The session daemon a guard started has been shutting down since `guards_release`.
    tracebench_tracers::registry::wait_released();
    t.mark("guards_stopped");
    if prepared.plan.timings {
        t.print();
    }
    cells::exit_code(&ran.runs, &prepared.out.path)
}
