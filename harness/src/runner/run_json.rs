//! run.json: the facts every later reader of a run needs (host, clock, counters and how they
//! were read, the tracers' configuration and per-cell counts, the system checks over the run).
use std::collections::BTreeMap;

use serde_json::json;

use super::plan::{Mode, Plan, TracerRow};
use super::prepare::Prepared;
use super::probe::Probe;
use super::supervise::{self, CellRun};
use super::timings::Timings;
use crate::counters::Availability;
use crate::error::Error;
use crate::host::CpuTimes;
use crate::results::{write_json, RUN_JSON};

/// Writes run.json from the plan, the probe and the cells (`rounds`: the rounds they made);
/// returns it. The parts this file makes from the plan and the cells come first; then the
/// machine's shares and checks over the run, read as late as they can be.
pub fn write(
    p: &Prepared,
    probe: &Probe,
    runs: &[CellRun],
    rounds: usize,
    argv: &[String],
    t: &mut Timings,
) -> Result<serde_json::Value, Error> {
    let (plan, m) = (&p.plan, &probe.machine);
    let interrupted = supervise::stopped();
    let tracers: Vec<_> = plan.rows.iter().enumerate().map(|(ri, r)| tracer_json(ri, r, runs)).collect();
    let per_counter = counters_json(&probe.avail, runs);
    let interrupted_at = if interrupted { interrupted_at(plan, runs) } else { serde_json::Value::Null };
    let instructions = instructions_json(plan.cell.singlestep);
    let cpus = measuring_cpus(plan);
    let others = others_share(&m.cpu_before, cpus);
    let cpu_busy = serde_json::to_value(m.cpu_before.busy_since(&CpuTimes::now())).unwrap_or_default();
    let system = crate::system::for_run(m.system_since.clone(), &m.clock, &plan.cpus, others.map(|b| (b, cpus)));
    t.mark("system_checks");
    let timings = t.json();
    let clock_info = &m.clock;
    let run_json = json!({
        "tracebench": { "version": env!("CARGO_PKG_VERSION"), "git_commit": env!("TRACEBENCH_GIT_COMMIT") },
        "command_line": argv.join(" "),
        "mode": if plan.cell.kernel { "kernel" } else if plan.mode == Mode::Scale { "scale" } else { "run" },
        "kernel": plan.cell.kernel,
        "run_id": m.run_id,
        "host": m.host,
        "load": { "loadavg_after": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.trim().to_string()),
                  "cpu_busy_during_run": cpu_busy },
        // `stable`: the clock ticks at one rate all run long (CLOCK_MONOTONIC_RAW, or an invariant
        // TSC); a TSC that follows the CPU's frequency makes timings incomparable across runs.
        "clock": { "info": clock_info, "floor": m.floor,
                   "stable": clock_info.kind == crate::clock::ClockKind::Monotonic || clock_info.invariant_tsc },
        "counters": { "sets": probe.avail, "columns": probe.columns,
                      "read": runs.iter().find_map(|r| r.result.as_ref().map(|x| x.counter_read.clone())),
                      "per_counter": per_counter },
        "disturbance": runs.iter().find_map(|r| r.result.as_ref().map(|x| x.detector.clone())),
        "steady_state": {
            "criterion": "buffer wrapped once (max(buffer_events+1, min_calls) untimed calls), then the last `stable` windows of `window` undisturbed calls agree within max(tolerance x median, 1.5 x clock resolution) in median and 10%-trimmed mean; bounded by max_windows",
            "min_calls": crate::steady_state::MIN_CALLS, "window": crate::steady_state::WINDOW,
            "stable": crate::steady_state::STABLE, "tolerance": crate::steady_state::TOLERANCE,
            "max_windows": crate::steady_state::MAX_WINDOWS,
        },
        "iterations": plan.cell.iterations,
        // The rounds run: the planned repeats, or more where `--budget` added some.
        "repeats": rounds,
        // Every K-th timed window timed the `none` call (sentinels.csv); 0: none (kernel and
        // stepped runs never have them).
        "sentinel_every": plan.cell.sentinel_every,
        "reference_every": plan.cell.reference_every,
        // The harness's own cycles in the calls it measures: the sample buffer enters a new page
        // every `sample_page` kept calls. The report checks that slow calls do not gather on
        // them (docs/method.md, "The harness's footprint").
        "harness_cycles": if plan.cell.kernel {
            serde_json::Value::Null
        } else {
            serde_json::json!({ "sample_page": crate::runner::timed::samples_per_page() })
        },
        "threads": plan.threads,
        "cpus": plan.cpus,
        "payload": if plan.cell.kernel {
            let size = plan.cell.payload_size;
            format!("{size} bytes, starting with the u32 sequence number (kbench_event_{size})")
        } else {
            tracebench_tracers::payload::Payload::describe(plan.cell.payload_size)
        },
        "payload_bytes": plan.cell.payload_size,
        "tracers": tracers,
        "interrupted": interrupted,
        "interrupted_at": interrupted_at,
        "instructions": instructions,
        // `tracebench system show`'s checks over the run (`crate::system::for_run`).
        "system": system,
        // Seconds per phase up to writing run.json (`runner::timings`).
        "timings": timings,
    });
    write_json(p.out.file(RUN_JSON), &run_json)?;
    Ok(run_json)
}

/// The CPUs the run's cells measure on: the plan's first as many as its most threads.
fn measuring_cpus(plan: &Plan) -> &[usize] {
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

/// Per thread count, the kept calls in which the thread slept inside the tracer (a voluntary
/// context switch: the tracer's cost, kept) and their mean latency.
fn blocked_json(cells: &[&CellRun]) -> serde_json::Value {
    let mut by: BTreeMap<usize, (u64, f64)> = BTreeMap::new();
    for c in cells {
        let e = by.entry(c.spec.threads).or_default();
        for t in c.result.iter().flat_map(|r| &r.threads) {
            e.0 += t.blocked;
            e.1 += t.blocked_ns;
        }
    }
    by.into_iter()
        .map(|(threads, (n, ns))| json!({ "threads": threads, "calls": n, "mean_ns": (n > 0).then(|| ns / n as f64) }))
        .collect()
}

/// Which cell the stop came in (the first one it stopped), or the last one run before it.
fn interrupted_at(plan: &Plan, runs: &[CellRun]) -> serde_json::Value {
    let stopped = runs.iter().find(|c| c.result.as_ref().is_some_and(|r| r.stopped));
    let Some(c) = stopped.or(runs.last()) else {
        return json!({ "cells_run": 0, "in_cell": null });
    };
    json!({
        "cells_run": runs.len(),
        "in_cell": stopped.is_some(),
        "tracer": plan.rows[c.row].name,
        "threads": c.spec.threads,
        "repetition": c.spec.repetition,
        "counter_set": c.spec.counter_set,
    })
}

fn tracer_json(ri: usize, r: &TracerRow, runs: &[CellRun]) -> serde_json::Value {
    let mine: Vec<&CellRun> = runs.iter().filter(|c| c.row == ri).collect();
    let first = mine.iter().find_map(|c| c.result.as_ref());
    json!({
        "name": r.name, "spec": r.spec, "dir": r.dir,
        "version": first.map(|x| x.tracer_version.clone()),
        "config": first.map(|x| x.tracer_config.clone()),
        "buffer_events": first.map(|x| x.buffer_events),
        "blocked": blocked_json(&mine),
        "cells": mine.iter().map(|c| json!({
            "repetition": c.spec.repetition, "counter_set": c.spec.counter_set, "threads": c.spec.threads,
            "cpus": c.spec.cpus, "seconds": c.seconds, "error": c.error,
            "after_run": c.result.as_ref().map(|x| x.after_run.clone()),
            "stopped": c.result.as_ref().map(|x| x.stopped),
            "warnings": c.result.as_ref().map(|x| x.warnings.clone()),
            "per_thread": c.result.as_ref().map(|x| x.threads.iter().map(|t| json!({
                "thread": t.thread, "cpu": t.cpu, "kept": t.kept, "discarded": t.discarded, "reasons": t.reasons,
                "blocked": t.blocked,
                "sentinels": t.sentinels, "sentinels_dropped": t.sentinels_dropped,
                "sentinels_unstored": t.sentinels_unstored,
                "blocked_mean_ns": (t.blocked > 0).then(|| t.blocked_ns / t.blocked as f64),
                "warmup_calls": t.warmup_calls, "wrap_calls": t.wrap_calls, "steady": t.steady,
                "drift_windows": t.windows, "discard_rows_dropped": t.discard_rows_dropped,
            })).collect::<Vec<_>>()),
        })).collect::<Vec<_>>(),
    })
}

/// Per counter actually read: how (rdpmc or read()), the lowest fraction of the time it was on
/// the PMU (time_running / time_enabled) over every measuring thread, and how many samples were
/// discarded because it was not counting (survey Table 2: a counter that did not run is not 0).
fn counters_json(avail: &[Availability], runs: &[CellRun]) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for (si, a) in avail.iter().enumerate() {
        for (k, name) in a.available.iter().enumerate() {
            let mut methods: Vec<String> = Vec::new();
            let mut min_fraction: Option<f64> = None;
            let mut not_running = 0u64;
            for r in runs.iter().filter(|r| r.spec.counter_set == si + 1) {
                let Some(res) = &r.result else { continue };
                if !methods.contains(&res.counter_read) {
                    methods.push(res.counter_read.clone());
                }
                for t in &res.threads {
                    not_running += t.counter_not_running.get(k).copied().unwrap_or(0);
                    if let Some(f) = t.counter_scheduled_fraction {
                        min_fraction = Some(min_fraction.map_or(f, |m: f64| m.min(f)));
                    }
                }
            }
            out.push(json!({
                "name": name, "set": si + 1, "read": methods.join(","),
                "scheduled_fraction_min": min_fraction,
                "ran_whole_time": min_fraction.map(|f| f >= 0.9999),
                "samples_discarded_not_running": not_running,
            }));
        }
    }
    out
}

/// The `instructions` object of run.json: how a stepped run counts (null unless it was stepped).
fn instructions_json(stepped: bool) -> serde_json::Value {
    if !stepped {
        return serde_json::Value::Null;
    }
    serde_json::json!({
        "mode": "singlestep",
        "how": "a process of ours ptraces the measuring thread and PTRACE_SINGLESTEPs it from the call into the \
                tracer (dynamic dispatch included, as for `none`) to its return: one step per user-space instruction",
        "user_instructions": "exact user-space instructions per call (not a PMU count)",
        "kernel_instructions_counted": false,
        "clock_retries": "passes of the vDSO clock read's seqlock loop that a clock update during the stepped (about \
                          1,000 times slower) read forced are left out of user_instructions and counted per call in \
                          clock_retries; the vDSO's other loop (nanoseconds into seconds) stays counted",
        "kernel_entries": "per call: system-call instructions + int3 traps (uprobes) + page faults of the thread; \
                           what the kernel executes for them is not counted",
        "timing": "not measured: single-stepped time is meaningless, so no latency_ns column is written",
        "warm_up": "untimed and not stepped, as in a timed run (buffer wrap, then steady state)",
        "discarded": "calls a signal landed in (its handler was stepped too)",
        "profile": "<tracer>/profile.json: per exact count, the folded stacks of the stepped instructions (a shadow \
                    call stack from call and return instructions; functions named by blazesym, module+offset where \
                    no symbol covers them) and the system calls by name",
    })
}
