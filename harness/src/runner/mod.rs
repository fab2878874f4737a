//! The parent side of a run: validate, plan cells, spawn one measuring child per cell, collect,
//! write the output contract (run.json, summary.csv, repetitions.csv, per-tracer events.csv and
//! discarded.csv), print the table. Everything after measurement reads files, never re-runs.
pub mod cell;
pub mod kernel_cell;
pub mod timed;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tracebench_tracers::registry;

use crate::cli::RunArgs;
use crate::clock::{self, Clock, ClockInfo, ClockKind, Monotonic, Tsc};
use crate::counters::{self, Availability};
use crate::disturbance::Detector;
use crate::error::Error;
use crate::host::{self, CpuTimes};
use crate::sink::{self, AtomicFile, Csv};
use crate::stats::{self, Summary};
use cell::{CellResult, CellSpec, TracerOpts};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Run,
    Scale,
}

static PARENT_STOP: AtomicBool = AtomicBool::new(false);
static PARENT_SIG: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_parent_signal(sig: libc::c_int) {
    PARENT_SIG.store(sig, Ordering::Relaxed);
    PARENT_STOP.store(true, Ordering::Relaxed);
}

/// One tracer row of the run.
#[derive(Debug, Clone)]
pub struct Row {
    pub spec: String,
    pub name: String,
    pub dir: String,
}

/// A validated run plan.
#[derive(Debug)]
pub struct Plan {
    pub rows: Vec<Row>,
    pub threads: Vec<usize>,
    pub cpus: Vec<usize>,
    pub sets: Vec<Vec<String>>,
    pub out: PathBuf,
}

/// Checks everything the user typed before anything runs, so bad input costs nothing and leaves
/// nothing behind.
pub fn plan(args: &RunArgs, mode: Mode) -> Result<Plan, Error> {
    if args.iterations == 0 {
        return Err(Error::Usage("--iterations must be at least 1 (the survey keeps 5000)".into()));
    }
    if args.repeats == 0 {
        return Err(Error::Usage("--repeats must be at least 1".into()));
    }
    let mut specs = Vec::new();
    for t in &args.tracer {
        if t == "all" {
            specs.extend(
                registry::known()
                    .into_iter()
                    .filter(|i| i.in_all && i.availability.is_ok())
                    .map(|i| i.spec.to_string()),
            );
        } else if t.is_empty() {
            return Err(Error::Usage("empty tracer name in --tracer (see `tracebench list`)".into()));
        } else {
            // Kernel tracers are checked by `kernel_cell::validate` below.
            if !args.kernel {
                registry::validate(t)?;
            }
            specs.push(t.clone());
        }
    }
    if args.kernel {
        kernel_cell::validate(&specs, args.payload_size)?;
    }
    if !args.label.is_empty() && args.label.len() != specs.len() {
        return Err(Error::Usage(format!(
            "--label gives {} names for {} tracers; give one per tracer, in the same order",
            args.label.len(),
            specs.len()
        )));
    }
    let mut rows: Vec<Row> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        // Default row name: the spec, or a plugin's own name (registry::row_name).
        let name = match args.label.get(i) {
            Some(l) => l.clone(),
            None => registry::row_name(spec)?,
        };
        if name.is_empty() || name.contains(',') || name.contains('\n') {
            return Err(Error::Usage(format!("bad label '{name}': labels must be non-empty, without commas")));
        }
        if rows.iter().any(|r| r.name == name) {
            return Err(Error::Usage(format!("tracer row '{name}' appears twice; use --label to tell them apart")));
        }
        rows.push(Row { spec: spec.clone(), dir: sink::dir_name(&name), name });
    }
    let online = host::online_cpus();
    let first = match args.cpu {
        Some(c) if online.contains(&c) => c,
        Some(c) => {
            return Err(Error::Pin { cpu: c, why: format!("CPU {c} is not online (online: {online:?})") });
        }
        None => *online.last().ok_or_else(|| Error::Usage("no online CPU found".into()))?,
    };
    let mut cpus = vec![first];
    cpus.extend(online.iter().rev().copied().filter(|c| *c != first));
    let threads = if !args.threads.is_empty() {
        args.threads.clone()
    } else if mode == Mode::Scale {
        (1..=cpus.len()).collect()
    } else {
        vec![1]
    };
    for &t in &threads {
        if t == 0 || t > cpus.len() {
            return Err(Error::Usage(format!(
                "--threads {t}: each count must be between 1 and the {} online CPUs (one pinned thread per core)",
                cpus.len()
            )));
        }
    }
    let first_set: Vec<String> = if args.counters.is_empty() {
        counters::SET1.iter().map(|s| s.to_string()).collect()
    } else {
        args.counters.clone()
    };
    counters::validate(&first_set)?;
    let mut sets = vec![first_set];
    if args.counter_sets == 2 {
        sets.push(counters::SET2.iter().map(|s| s.to_string()).collect());
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(sink::utc_stamp()));
    Ok(Plan { rows, threads, cpus, sets, out })
}

/// The empty-window cost and resolution of the clock, measured on the first measuring CPU.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Floor {
    pub samples: usize,
    pub discarded: usize,
    pub median_ns: f64,
    pub mean_ns: f64,
    pub std_ns: f64,
    pub min_ns: f64,
}

fn empty_windows<C: Clock>(clock: &C, det: &Detector, n: usize, hz: f64) -> (Vec<f64>, usize) {
    let mut v = Vec::with_capacity(n);
    let mut discarded = 0;
    for _ in 0..n * 4 {
        if v.len() == n {
            break;
        }
        let h0 = det.head();
        let t0 = clock.start();
        let t1 = clock.end();
        if det.head() == h0 {
            v.push(t1.wrapping_sub(t0) as f64 * 1e9 / hz);
        } else {
            discarded += 1;
        }
    }
    (v, discarded)
}

/// Calibrates the clock and measures its floor on `cpu`, in a thread of its own so that the
/// parent's own affinity (which children inherit) is untouched.
pub fn measure_clock(kind: ClockKind, cpu: usize) -> Result<(ClockInfo, Floor), Error> {
    std::thread::spawn(move || {
        cell::pin(cpu)?;
        let info = clock::describe(kind);
        let mut det = Detector::open()?;
        let (mut v, discarded) = match kind {
            ClockKind::Tsc => empty_windows(&Tsc, &det, 20_000, info.hz),
            ClockKind::Monotonic => empty_windows(&Monotonic, &det, 20_000, info.hz),
        };
        let h = det.head();
        det.consume(h);
        let s = stats::summarize(&mut v);
        Ok((info, Floor { samples: s.n, discarded, median_ns: s.p50, mean_ns: s.mean, std_ns: s.std, min_ns: s.min }))
    })
    .join()
    .map_err(|_| Error::Measurement("clock calibration thread panicked".into()))?
}

struct CellRun {
    spec: CellSpec,
    row: usize,
    result: Option<CellResult>,
    error: Option<String>,
    seconds: f64,
}

fn tail(s: &str, n: usize) -> String {
    let t: Vec<&str> = s.lines().rev().take(n).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Spawns the child for one cell and waits for it, bounded by `timeout`.
fn run_cell(spec: &CellSpec, timeout: Duration) -> Result<(Option<CellResult>, Option<String>), Error> {
    std::fs::create_dir_all(&spec.dir).map_err(|e| Error::io(&spec.dir, e))?;
    let spec_path = spec.dir.join("cell.json");
    sink::write_json(&spec_path, spec)?;
    let exe = std::env::current_exe().map_err(|e| Error::io("current_exe", e))?;
    let prefix = registry::launch_prefix(&spec.spec);
    let mut cmd = match prefix.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.arg("__cell").arg(&spec_path).stdin(Stdio::null()).stdout(Stdio::inherit()).stderr(Stdio::piped());
    let mut child: Child =
        cmd.spawn().map_err(|e| Error::Measurement(format!("cannot start the measuring process: {e}")))?;
    let mut err_pipe = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let mut forwarded = false;
    let mut cell_signalled = false;
    let mut killed_for_timeout = false;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| Error::Measurement(e.to_string()))? {
            break st;
        }
        let sig = PARENT_SIG.load(Ordering::Relaxed);
        let sig = if sig == 0 { libc::SIGTERM } else { sig };
        if PARENT_STOP.load(Ordering::Relaxed) && !forwarded {
            // The mark first, then the signal (see the handshake in `cell::main`).
            let _ = std::fs::write(spec.dir.join(cell::CELL_STOP), b"");
            // SAFETY: kill with a valid pid of our child.
            unsafe { libc::kill(child.id() as i32, sig) };
            forwarded = true;
        }
        if forwarded && !cell_signalled {
            // The measuring process itself, when it runs under a launch prefix (strace) that
            // may not pass the signal on: once it has written its pid.
            if let Some(pid) = std::fs::read_to_string(spec.dir.join(cell::CELL_PID))
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
                .filter(|&p| p > 0 && p != child.id() as i32)
            {
                // SAFETY: a pid the cell wrote; it is our descendant and still running (its
                // prefix parent has not exited, or try_wait above would have returned).
                unsafe { libc::kill(pid, sig) };
                cell_signalled = true;
            }
        }
        if start.elapsed() > timeout && !killed_for_timeout {
            // SAFETY: as above. TERM first so the tracer's teardown can run; KILL if it is stuck.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            killed_for_timeout = true;
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = reader.join().unwrap_or_default();
    let result: Option<CellResult> =
        std::fs::read_to_string(spec.dir.join("result.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
    use std::os::unix::process::ExitStatusExt;
    let error = if killed_for_timeout {
        Some(format!("hung: killed after the --timeout of {} s", timeout.as_secs()))
    } else if let Some(sig) = status.signal() {
        Some(format!("crashed: killed by {}", tracebench_tracers::plugin::signal_name(sig)))
    } else if status.code() == Some(130) && result.is_some() {
        None
    } else if !status.success() || result.is_none() {
        Some(format!("failed with exit code {}", status.code().unwrap_or(-1)))
    } else {
        None
    };
    let error = error.map(|e| if stderr.trim().is_empty() { e } else { format!("{e}; stderr: {}", tail(&stderr, 6)) });
    if error.is_none() && !stderr.trim().is_empty() {
        eprint!("{stderr}");
    }
    Ok((result, error))
}

/// `tracebench run` and `tracebench scale`.
pub fn run(args: &RunArgs, mode: Mode, argv: &[String]) -> Result<i32, Error> {
    let plan = plan(args, mode)?;
    if plan.rows.is_empty() {
        return Err(Error::Usage("no tracer to run (see `tracebench list`)".into()));
    }
    let exports = crate::export::parse_specs(&args.export)?;
    sink::prepare_out_dir(&plan.out)?;
    let run_id = format!("{}-{}", sink::utc_stamp(), std::process::id());
    let cells_dir = plan.out.join(".cells");

    // Held until the run ends: the clock thread and every cell then open and close their
    // disturbance detectors in milliseconds instead of 0.5 s each (see `KeepAlive`).
    let _keep_alive = (!args.kernel).then(crate::disturbance::KeepAlive::hold);

    // Counters: probed once, reported once; unsupported ones are left out, never zero-filled.
    let mut avail: Vec<Availability> = Vec::new();
    for (i, set) in plan.sets.iter().enumerate() {
        let a = counters::probe(set)?;
        for (n, why) in &a.unsupported {
            eprintln!("tracebench: counter {n} (set {}) unavailable: {why}; its column is left out", i + 1);
        }
        avail.push(a);
    }
    let mut all_counters: Vec<String> = Vec::new();
    for a in &avail {
        for c in &a.available {
            if !all_counters.contains(c) {
                all_counters.push(c.clone());
            }
        }
    }

    let (clock_info, floor) = measure_clock(args.clock, plan.cpus[0])?;
    let host = host::describe();
    let cpu_before = CpuTimes::now();

    install_parent_handlers();
    let copts = tracebench_tracers::CreateOptions {
        tsc_hz: clock_info.tsc_hz,
        ftrace_clock: args.ftrace_clock.clone(),
        subbuf_size: args.subbuf_size.clone(),
        num_subbuf: args.num_subbuf,
        probe_site: args.probe_site.clone(),
        run_id: run_id.clone(),
    };
    let mut guards = Vec::new();
    for r in &plan.rows {
        if !args.kernel {
            guards.push(registry::parent_guard(&r.spec, &copts)?);
        }
    }

    // Plan: repetitions outermost, so repeats interleave across tracers and bursts of noise hit
    // every tracer alike instead of one.
    let mut cells: Vec<(usize, CellSpec)> = Vec::new();
    for rep in 0..args.repeats {
        for (si, _) in plan.sets.iter().enumerate() {
            for (ri, r) in plan.rows.iter().enumerate() {
                for &t in &plan.threads {
                    let id = cells.len();
                    cells.push((
                        ri,
                        CellSpec {
                            id,
                            spec: r.spec.clone(),
                            label: r.name.clone(),
                            threads: t,
                            cpus: plan.cpus[..t].to_vec(),
                            iterations: args.iterations,
                            counters: avail[si].available.clone(),
                            counter_set: si + 1,
                            repetition: rep,
                            clock: args.clock,
                            tsc_hz: clock_info.tsc_hz,
                            resolution_ns: clock_info.resolution_ns,
                            opts: TracerOpts {
                                ftrace_clock: args.ftrace_clock.clone(),
                                subbuf_size: args.subbuf_size.clone(),
                                num_subbuf: args.num_subbuf,
                                probe_site: args.probe_site.clone(),
                            },
                            run_id: run_id.clone(),
                            dir: cells_dir.join(format!("{id:04}")),
                            kernel: args.kernel,
                            payload_size: args.kernel.then_some(args.payload_size),
                        },
                    ));
                }
            }
        }
    }

    let pb = if args.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let pb = indicatif::ProgressBar::new(cells.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells  {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    };
    let mut runs: Vec<CellRun> = Vec::new();
    for (ri, spec) in cells {
        if PARENT_STOP.load(Ordering::Relaxed) {
            break;
        }
        pb.set_message(format!("{} x{} rep {}", spec.label, spec.threads, spec.repetition + 1));
        let t0 = Instant::now();
        let (result, error) = run_cell(&spec, Duration::from_secs(args.timeout))?;
        if let Some(e) = &error {
            pb.suspend(|| eprintln!("tracebench: tracer {} {e}", spec.label));
        }
        if let Some(r) = &result {
            for w in &r.warnings {
                pb.suspend(|| eprintln!("tracebench: warning: {w}"));
            }
        }
        runs.push(CellRun { spec, row: ri, result, error, seconds: t0.elapsed().as_secs_f64() });
        pb.inc(1);
    }
    pb.finish_and_clear();
    drop(guards);
    let interrupted = PARENT_STOP.load(Ordering::Relaxed);
    let cpu_busy = cpu_before.busy_since(&CpuTimes::now());

    let summaries = write_outputs(&plan, &runs, &all_counters)?;
    let run_json = json!({
        "tracebench": { "version": env!("CARGO_PKG_VERSION"), "git_commit": env!("TRACEBENCH_GIT_COMMIT") },
        "command_line": argv.join(" "),
        "mode": if args.kernel { "kernel" } else if mode == Mode::Scale { "scale" } else { "run" },
        "kernel": args.kernel,
        "run_id": run_id,
        "host": host,
        "load": { "loadavg_after": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.trim().to_string()),
                  "cpu_busy_during_run": cpu_busy },
        "clock": { "info": clock_info, "floor": floor },
        "counters": { "sets": avail, "columns": all_counters,
                      "read": runs.iter().find_map(|r| r.result.as_ref().map(|x| x.counter_read.clone())) },
        "disturbance": runs.iter().find_map(|r| r.result.as_ref().map(|x| x.detector.clone())),
        "steady_state": {
            "criterion": "buffer wrapped once (max(buffer_events+1, min_calls) untimed calls), then the last `stable` windows of `window` undisturbed calls agree within max(tolerance x median, 1.5 x clock resolution) in median and 10%-trimmed mean; bounded by max_windows",
            "min_calls": crate::steady_state::MIN_CALLS, "window": crate::steady_state::WINDOW,
            "stable": crate::steady_state::STABLE, "tolerance": crate::steady_state::TOLERANCE,
            "max_windows": crate::steady_state::MAX_WINDOWS,
        },
        "iterations": args.iterations,
        "repeats": args.repeats,
        "threads": plan.threads,
        "cpus": plan.cpus,
        "payload": "u32 iteration index (4 bytes)",
        "tracers": plan.rows.iter().enumerate().map(|(ri, r)| tracer_json(ri, r, &runs)).collect::<Vec<_>>(),
        "interrupted": interrupted,
    });
    sink::write_json(plan.out.join("run.json"), &run_json)?;
    let _ = std::fs::remove_dir_all(&cells_dir);

    if !args.quiet {
        crate::output::print_table(&plan.out, &clock_info, &floor, &summaries, &runs_reasons(&plan, &runs));
    }
    let failed = runs.iter().filter(|r| r.error.is_some()).count();
    if !exports.is_empty() {
        if interrupted {
            eprintln!(
                "tracebench: interrupted, so the --export files were not written (the rows may lack repetitions)"
            );
        } else if summaries.is_empty() {
            eprintln!("tracebench: no row was measured, so the --export files were not written");
        } else {
            crate::export::export_dirs(&exports, &[(plan.out.as_path(), None)])?;
        }
    }
    if interrupted {
        eprintln!("tracebench: interrupted; results measured so far are in {}", plan.out.display());
        return Ok(130);
    }
    if failed > 0 {
        eprintln!(
            "tracebench: {failed} cell(s) failed (see above and run.json); the other results are in {}",
            plan.out.display()
        );
        return Ok(1);
    }
    Ok(0)
}

fn install_parent_handlers() {
    cell::install_stop_handlers(on_parent_signal);
}

fn tracer_json(ri: usize, r: &Row, runs: &[CellRun]) -> serde_json::Value {
    let mine: Vec<&CellRun> = runs.iter().filter(|c| c.row == ri).collect();
    let first = mine.iter().find_map(|c| c.result.as_ref());
    json!({
        "name": r.name, "spec": r.spec, "dir": r.dir,
        "version": first.map(|x| x.tracer_version.clone()),
        "config": first.map(|x| x.tracer_config.clone()),
        "buffer_events": first.map(|x| x.buffer_events),
        "cells": mine.iter().map(|c| json!({
            "repetition": c.spec.repetition, "counter_set": c.spec.counter_set, "threads": c.spec.threads,
            "cpus": c.spec.cpus, "seconds": c.seconds, "error": c.error,
            "after_run": c.result.as_ref().map(|x| x.after_run.clone()),
            "stopped": c.result.as_ref().map(|x| x.stopped),
            "per_thread": c.result.as_ref().map(|x| x.threads.iter().map(|t| json!({
                "thread": t.thread, "cpu": t.cpu, "kept": t.kept, "discarded": t.discarded, "reasons": t.reasons,
                "warmup_calls": t.warmup_calls, "wrap_calls": t.wrap_calls, "steady": t.steady,
                "drift_windows": t.windows, "discard_rows_dropped": t.discard_rows_dropped,
            })).collect::<Vec<_>>()),
        })).collect::<Vec<_>>(),
    })
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

/// One line of summary.csv (and of the terminal table).
#[derive(Debug, Clone)]
pub struct SummaryRow {
    pub tracer: String,
    pub threads: usize,
    pub repetition: Option<usize>,
    pub kept: usize,
    pub discarded: u64,
    pub s: Summary,
    pub counter_means: Vec<Option<f64>>,
    /// Median of the means of `MOM_BLOCKS` blocks of consecutive kept iterations (`mom_ns`).
    pub mom: f64,
}

/// Blocks of `mom_ns`: a stall must hit 5 of 10 blocks to move it.
pub const MOM_BLOCKS: usize = 10;

#[derive(Default)]
struct Acc {
    lat: Vec<f64>,
    discarded: u64,
    sums: Vec<(f64, usize)>,
}

impl Acc {
    fn row(mut self, tracer: &str, threads: usize, repetition: Option<usize>) -> SummaryRow {
        let mom = stats::median_of_means(&self.lat, MOM_BLOCKS);
        let s = stats::summarize(&mut self.lat);
        SummaryRow {
            mom,
            tracer: tracer.into(),
            threads,
            repetition,
            kept: s.n,
            discarded: self.discarded,
            s,
            counter_means: self.sums.iter().map(|(sum, n)| (*n > 0).then(|| sum / *n as f64)).collect(),
        }
    }
}

/// Merges the cells' rows into the output contract and returns the summary rows.
fn write_outputs(plan: &Plan, runs: &[CellRun], all_counters: &[String]) -> Result<Vec<SummaryRow>, Error> {
    let mut summary_rows = Vec::new();
    let mut rep_rows = Vec::new();
    for (ri, row) in plan.rows.iter().enumerate() {
        let mine: Vec<&CellRun> = runs.iter().filter(|c| c.row == ri && c.result.is_some()).collect();
        if mine.is_empty() {
            continue;
        }
        let dir = plan.out.join(&row.dir);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let ev_path = dir.join("events.csv");
        let mut ev = AtomicFile::create(&ev_path)?;
        let io = |p: &Path, e: std::io::Error| Error::io(p, e);
        let mut header = String::from("tracer,threads,thread,cpu,iteration,latency_ns");
        for c in all_counters {
            header.push(',');
            header.push_str(c);
        }
        header.push_str(",repetition,counter_set");
        writeln!(ev, "{header}").map_err(|e| io(&ev_path, e))?;
        let ds_path = dir.join("discarded.csv");
        let mut ds = AtomicFile::create(&ds_path)?;
        writeln!(ds, "tracer,threads,thread,cpu,iteration,latency_ns,reason,repetition")
            .map_err(|e| io(&ds_path, e))?;

        let mut by_threads: BTreeMap<usize, Acc> = BTreeMap::new();
        let mut by_rep: BTreeMap<(usize, usize), Acc> = BTreeMap::new();
        for c in &mine {
            let (t, rep) = (c.spec.threads, c.spec.repetition);
            let csv = Csv::read(&c.spec.dir.join("events.csv"))?;
            let lat_i =
                csv.col("latency_ns").ok_or_else(|| Error::Measurement("cell events.csv lacks latency_ns".into()))?;
            let map: Vec<Option<usize>> = all_counters.iter().map(|n| csv.col(n)).collect();
            let discarded: u64 = c.result.as_ref().map(|r| r.threads.iter().map(|x| x.discarded).sum()).unwrap_or(0);
            let a = by_threads
                .entry(t)
                .or_insert_with(|| Acc { sums: vec![(0.0, 0); all_counters.len()], ..Default::default() });
            a.discarded += discarded;
            let b = by_rep
                .entry((t, rep))
                .or_insert_with(|| Acc { sums: vec![(0.0, 0); all_counters.len()], ..Default::default() });
            b.discarded += discarded;
            for r in &csv.rows {
                let lat: f64 = r[lat_i].parse().unwrap_or(f64::NAN);
                let mut line = format!("{},{t},{},{},{},{}", row.name, r[0], r[1], r[2], r[lat_i]);
                for (k, m) in map.iter().enumerate() {
                    line.push(',');
                    if let Some(i) = m {
                        line.push_str(&r[*i]);
                        if let Ok(v) = r[*i].parse::<f64>() {
                            a.sums[k].0 += v;
                            a.sums[k].1 += 1;
                            b.sums[k].0 += v;
                            b.sums[k].1 += 1;
                        }
                    }
                }
                writeln!(ev, "{line},{rep},{}", c.spec.counter_set).map_err(|e| io(&ev_path, e))?;
                a.lat.push(lat);
                b.lat.push(lat);
            }
            let d = Csv::read(&c.spec.dir.join("discarded.csv"))?;
            for r in &d.rows {
                writeln!(ds, "{},{t},{},{},{},{},{},{rep}", row.name, r[0], r[1], r[2], r[3], r[4])
                    .map_err(|e| io(&ds_path, e))?;
            }
        }
        ev.commit()?;
        ds.commit()?;
        for (t, a) in by_threads {
            summary_rows.push(a.row(&row.name, t, None));
        }
        for ((t, rep), a) in by_rep {
            rep_rows.push(a.row(&row.name, t, Some(rep)));
        }
    }
    write_summary(&plan.out.join("summary.csv"), &summary_rows, all_counters)?;
    write_summary(&plan.out.join("repetitions.csv"), &rep_rows, all_counters)?;
    Ok(summary_rows)
}

fn write_summary(path: &Path, rows: &[SummaryRow], counters: &[String]) -> Result<(), Error> {
    let mut f = AtomicFile::create(path)?;
    let rep = path.file_name().map(|n| n == "repetitions.csv").unwrap_or(false);
    let mut header = String::from("tracer,threads");
    if rep {
        header.push_str(",repetition");
    }
    header.push_str(",kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns");
    for c in counters {
        header.push_str(&format!(",{c}_mean"));
    }
    // Added after the counters: the contract only ever appends columns.
    header.push_str(",mom_ns");
    let io = |e: std::io::Error| Error::io(path, e);
    writeln!(f, "{header}").map_err(io)?;
    for r in rows {
        let s = &r.s;
        let mut line = format!("{},{}", r.tracer, r.threads);
        if let Some(rep) = r.repetition {
            line.push_str(&format!(",{rep}"));
        }
        line.push_str(&format!(
            ",{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
            r.kept, r.discarded, s.mean, s.std, s.p50, s.p90, s.p99, s.min, s.max
        ));
        for m in &r.counter_means {
            match m {
                Some(v) => line.push_str(&format!(",{v:.3}")),
                None => line.push(','),
            }
        }
        line.push_str(&format!(",{:.3}", r.mom));
        writeln!(f, "{line}").map_err(io)?;
    }
    f.commit()
}
