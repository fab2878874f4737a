//! `tracebench run`, `scale` and `sweep`: one pipeline, each stage a module of its own
//! (docs/ARCHITECTURE.md):
//!
//! ```text
//! plan       options -> validated plan -> cells          (plan.rs; nothing runs before it passes)
//! supervise  one child process per cell, stop, timeout   (supervise.rs, protocol.rs)
//! measure    the cell: set-up, warm-up, timed loop       (cell.rs, timed.rs, kernel_cell.rs)
//! merge      cells -> events.csv, summary.csv, ...       (merge.rs, through `results`)
//! export     run.json and the terminal                   (export.rs)
//! ```
//! Data flows one way: no stage reads what a later one writes. A sweep (sweep.rs) is several
//! plans whose cells are supervised interleaved, then merged and exported one by one.
pub mod affinity;
pub mod calibrate;
pub mod cell;
mod drain;
pub mod export;
pub mod kernel_cell;
pub mod merge;
mod merge_acc;
pub mod plan;
pub mod protocol;
pub mod reference;
mod rounds;
pub mod singlestep;
pub mod space;
pub mod supervise;
pub mod sweep;
pub mod timed;
pub mod timings;

use std::path::Path;

pub use plan::{Mode, Options};

use crate::clock::ClockInfo;
use crate::counters::{self, Availability};
use crate::error::Error;
use crate::host::{self, CpuTimes, Host};
use crate::results::rows::MergedRow;
use crate::results::{self, ResultsDir};

/// What every run of one invocation shares: its id, the clock and its floor, the host.
struct Shared {
    run_id: String,
    clock: ClockInfo,
    floor: calibrate::Floor,
    host: Host,
    cpu_before: CpuTimes,
    /// Where run.json's `system` checks (steal, load, interrupts) start their window.
    system_since: crate::system::checks_virt::Snapshot,
    _keep_alive: Option<crate::disturbance::KeepAlive>,
}

impl Shared {
    fn measure(opts: &Options, first_cpu: usize, t: &mut timings::Timings) -> Result<Self, Error> {
        // Held until the run ends: the clock thread and every cell then open and close their
        // disturbance detectors in milliseconds instead of 0.5 s each (see `KeepAlive`).
        let keep_alive = (!opts.kernel).then(crate::disturbance::KeepAlive::hold);
        t.mark("detector_hold");
        let (clock, floor) = calibrate::measure_clock(opts.clock, first_cpu)?;
        t.mark("calibrate");
        Ok(Shared {
            run_id: format!("{}-{}", results::utc_stamp(), std::process::id()),
            clock,
            floor,
            host: host::describe(),
            cpu_before: CpuTimes::now(),
            system_since: crate::system::checks_virt::Snapshot::take(&crate::system::Sys::real()),
            _keep_alive: keep_alive,
        })
    }
}

/// One planned run: its options, plan, directory, counters and cells.
struct Prepared {
    opts: Options,
    mode: Mode,
    plan: plan::Plan,
    out: ResultsDir,
    avail: Vec<Availability>,
    columns: Vec<String>,
    cells: Vec<(usize, protocol::CellSpec)>,
}

fn prepare(
    opts: Options,
    mode: Mode,
    plan: plan::Plan,
    avail: Vec<Availability>,
    shared: &Shared,
) -> Result<Prepared, Error> {
    let out = ResultsDir::create(&plan.out)?;
    let columns = plan::counter_columns(&avail);
    let cells_dir = out.path.join(".cells");
    protocol::make_cells_dir(&cells_dir)?;
    let cells = plan.round_cells(0..opts.repeats, 0, &avail, &columns, &shared.clock, &shared.run_id, &cells_dir);
    Ok(Prepared { opts, mode, plan, out, avail, columns, cells })
}

/// Merge and export of one run; returns its summary rows.
fn finish(
    p: &Prepared,
    runs: &[supervise::CellRun],
    shared: &Shared,
    argv: &[String],
    t: &mut timings::Timings,
) -> Result<Vec<MergedRow>, Error> {
    // --instructions singlestep: its own columns and table (`crate::runner::singlestep`).
    let stepped =
        if p.plan.cell.singlestep { Some(crate::runner::singlestep::merge(&p.out, &p.plan, runs)?) } else { None };
    let summaries = if stepped.is_some() {
        Vec::new()
    } else {
        merge::merge(&p.out, &p.plan, runs, &p.columns, p.plan.cell.sentinel_every > 0)?
    };
    t.mark("merge");
    let facts = export::RunFacts {
        opts: &p.opts,
        mode: p.mode,
        argv,
        run_id: &shared.run_id,
        host: &shared.host,
        cpu_busy: serde_json::to_value(shared.cpu_before.busy_since(&CpuTimes::now())).unwrap_or_default(),
        clock: &shared.clock,
        floor: &shared.floor,
        avail: &p.avail,
        columns: &p.columns,
        plan: &p.plan,
        runs,
        interrupted: supervise::stopped(),
        system: crate::system::for_run(
            shared.system_since.clone(),
            &shared.clock,
            &p.plan.cpus,
            others_share(&shared.cpu_before, measuring_cpus(&p.plan)).map(|b| (b, measuring_cpus(&p.plan))),
        ),
        timings: {
            t.mark("system_checks");
            t.json()
        },
    };
    let run_json = export::write_run_json(&p.out, &facts)?;
    let _ = std::fs::remove_dir_all(p.out.path.join(".cells"));
    t.mark("run_json");
    match (&stepped, p.plan.quiet) {
        (_, true) => {}
        (Some(rows), false) => crate::runner::singlestep::print(&p.out.path, rows),
        (None, false) => export::print(&p.out, &facts, &run_json, &summaries),
    }
    t.mark("print");
    Ok(summaries)
}

/// `run` and `scale`: the pipeline, once.
pub fn run(opts: &Options, mode: Mode, argv: &[String]) -> Result<i32, Error> {
    let mut t = timings::Timings::start();
    let plan = plan::plan(opts, mode)?;
    // Checked before any run: a bad --export is a usage error, not a late surprise.
    let exports = crate::export::parse_specs(&opts.export)?;
    t.mark("plan");
    // After the plan (bad input leaves nothing, and touches nothing), before anything measures.
    tracebench_tracers::registry::reap_leftovers();
    t.mark("reap_leftovers");
    let shared = Shared::measure(opts, plan.cpus[0], &mut t)?;
    t.mark("host");
    let avail = probe_counters(&plan.sets)?;
    let counters = plan::counter_columns(&avail).len();
    space::check(
        &plan.out,
        space::estimate(&plan, opts.iterations, opts.repeats, counters, opts.effective_sentinel_every()),
    )?;
    t.mark("counters");
    let mut prepared = prepare(opts.clone(), mode, plan, avail, &shared)?;
    supervise::install_handlers();
    t.mark("prepare");
    let guards = parent_guards(&prepared.plan, shared.clock.tsc_hz, &shared.run_id)?;
    t.mark("guards");
    let mut runs = run_cells(std::mem::take(&mut prepared.cells), &prepared.plan)?;
    if let Some(budget) = opts.budget {
        rounds::add_until_decided(&mut prepared, &mut runs, &shared, budget, t.began())?;
    }
    t.mark("cells");
    t.add_cells(runs.iter().filter_map(|r| r.result.as_ref().map(|x| &x.phases)));
    drop(guards);
    t.mark("guards_release");
    let summaries = finish(&prepared, &runs, &shared, argv, &mut t)?;
    export_history(&exports, &[(prepared.out.path.as_path(), None)], summaries.is_empty())?;
    warn_weak(&shared);
    t.mark("export");
    // Hands the detector's tracepoints to the background releaser (`KeepAlive`'s Drop).
    drop(shared);
    t.mark("release");
    // The session daemon a guard started has been shutting down since `guards_release`.
    tracebench_tracers::registry::wait_released();
    t.mark("guards_stopped");
    if opts.timings {
        t.print();
    }
    exit_code(&runs, &prepared.out.path)
}

/// `--export FORMAT=FILE`: the results in a benchmark-history service's format (`export`).
fn export_history(
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

/// The CPUs the run's cells measure on: the plan's first as many as its most threads.
fn measuring_cpus(plan: &plan::Plan) -> &[usize] {
    let most = plan.threads.iter().copied().max().unwrap_or(1).min(plan.cpus.len());
    &plan.cpus[..most]
}

/// The share of the measuring CPUs' time since the run began that went to work other than its
/// cells: their busy ticks (/proc/stat) less the CPU time of this process's children (the cells,
/// each pinned to a measuring CPU). None when the ticks are too few to tell (under 0.2 s).
fn others_share(before: &CpuTimes, cpus: &[usize]) -> Option<f64> {
    let (busy, total) = before.ticks_since(&CpuTimes::now(), cpus);
    // SAFETY: getrusage fills the struct it is given; sysconf reads a constant.
    // This process's own time counts as the run's too, wherever it ran (merging, the clock).
    let (ours, hz) = unsafe {
        let cpu_time = |who| {
            let mut ru: libc::rusage = std::mem::zeroed();
            (libc::getrusage(who, &mut ru) == 0).then(|| {
                let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
                tv(ru.ru_utime) + tv(ru.ru_stime)
            })
        };
        (cpu_time(libc::RUSAGE_CHILDREN)? + cpu_time(libc::RUSAGE_SELF)?, libc::sysconf(libc::_SC_CLK_TCK) as f64)
    };
    (total >= 20 && hz > 0.0).then(|| ((busy as f64 - ours * hz) / total as f64).clamp(0.0, 1.0))
}

/// Says, last and on stderr (so `--quiet` does not hide it), what a weak disturbance detector
/// could not see; run.json's `disturbance.weak` and the report's header say the same.
fn warn_weak(shared: &Shared) {
    if let Some(w) = &shared.floor.weak {
        eprintln!("tracebench: warning: {w}");
    }
}

/// Counters: probed once, reported once; unsupported ones are left out, never zero-filled.
fn probe_counters(sets: &[Vec<String>]) -> Result<Vec<Availability>, Error> {
    let mut avail = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let a = counters::probe(set)?;
        // One line per reason: a VM without a PMU refuses every hardware event the same way.
        let mut by_why: Vec<(&str, Vec<&str>)> = Vec::new();
        for (n, why) in &a.unsupported {
            match by_why.iter_mut().find(|(w, _)| *w == why.as_str()) {
                Some((_, names)) => names.push(n),
                None => by_why.push((why, vec![n])),
            }
        }
        for (why, names) in by_why {
            let (what, col) =
                if names.len() == 1 { ("counter", "its column is") } else { ("counters", "their columns are") };
            eprintln!("tracebench: {what} {} (set {}) unavailable: {why}; {col} left out", names.join(", "), i + 1);
        }
        avail.push(a);
    }
    Ok(avail)
}

/// Each backend's parent-side guard (e.g. LTTng's session daemon), held for the whole run.
fn parent_guards(plan: &plan::Plan, tsc_hz: f64, run_id: &str) -> Result<Vec<Box<dyn std::any::Any>>, Error> {
    let copts = plan.cell.tracer.create_options(tsc_hz, run_id, plan.cell.payload_size);
    let mut guards: Vec<Box<dyn std::any::Any>> = Vec::new();
    if !plan.cell.kernel {
        for r in &plan.rows {
            guards.push(Box::new(tracebench_tracers::registry::parent_guard(&r.spec, &copts)?));
        }
    }
    Ok(guards)
}

/// The cells one after another (each is pinned; running two at once would measure contention).
fn run_cells(cells: Vec<(usize, protocol::CellSpec)>, plan: &plan::Plan) -> Result<Vec<supervise::CellRun>, Error> {
    let pb = progress(cells.len(), plan.quiet);
    let mut runs = Vec::new();
    for (ri, spec) in cells {
        if supervise::stopped() {
            break;
        }
        pb.set_message(format!("{} x{} rep {}", spec.label, spec.threads, spec.repetition + 1));
        let run = supervise::run_cell(ri, spec, plan.timeout)?;
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

fn exit_code(runs: &[supervise::CellRun], out: &Path) -> Result<i32, Error> {
    if supervise::stopped() {
        eprintln!("tracebench: interrupted; results measured so far are in {}", out.display());
        return Ok(130);
    }
    let failed = runs.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        eprintln!(
            "tracebench: {failed} cell(s) failed (see above and run.json); the other results are in {}",
            out.display()
        );
        return Ok(1);
    }
    Ok(0)
}
