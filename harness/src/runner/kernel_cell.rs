//! `tracebench run --kernel`: the same cells, but the timed loop runs inside kbench-module
//! (survey Algorithm 1 with interrupts masked and the NMI count checked per iteration), driven
//! through its ioctl ABI (`crate::kernel`). The measuring child sets the kernel tracer up on the
//! module's tracepoint, asks the module for the samples, tears the tracer down, and writes the
//! same cell files as a user-space cell, so the parent's merge, summary and report are unchanged.
//!
//! The kernel tracers themselves (`none`, `ftrace`, `perf`: 16 KiB per CPU, survey 6.2.3) are
//! backends of the tracers crate (`tracebench_tracers::kernel`), like the userspace ones.
use std::collections::BTreeMap;

use super::protocol::{CellResult, CellSpec, ThreadResult, CELL_RESULT};
use crate::error::Error;
use crate::kernel::{self, KernelCellConfig, KernelClock, KernelCounter};
use crate::results::rows::{DiscardRow, DiscardsWriter, EventRow, EventsWriter};
use crate::results::{write_json, DISCARDED_CSV, EVENTS_CSV};
use tracebench_tracers::kernel::{self as ktracer, KERNEL_TRACERS};

/// 16 KiB per CPU, the survey's buffer size for every tracer (6.2.3).
const BUFFER_BYTES: u64 = 16 * 1024;

/// Checks, in the parent, that a kernel run can start here.
pub fn validate(specs: &[String], payload: u32) -> Result<(), Error> {
    for s in specs {
        if !KERNEL_TRACERS.contains(&s.as_str()) {
            return Err(Error::Usage(format!(
                "--kernel drives {} here; '{s}' needs its own kernel module or program (run it through the kernel lab: make kernel-lab, see kbench-module/README.md)",
                KERNEL_TRACERS.join(", ")
            )));
        }
    }
    if !kernel::PAYLOAD_SIZES.contains(&payload) {
        return Err(Error::Usage(format!("--payload-size must be one of {:?} bytes", kernel::PAYLOAD_SIZES)));
    }
    if !std::path::Path::new(kernel::DEVICE).exists() {
        return Err(Error::Usage(format!(
            "{} not found: build and load kbench-module first (make -C kbench-module && sudo insmod kbench-module/kbench.ko)",
            kernel::DEVICE
        )));
    }
    Ok(())
}

/// A counter name as the module's in-kernel counter: its perf_event_attr (type, config), from
/// the one counter table.
fn kernel_counter(name: &str) -> Option<KernelCounter> {
    crate::counters::table::lookup(name).map(|d| KernelCounter { name: name.into(), type_: d.type_, config: d.config })
}

/// The measuring child of a kernel cell.
pub fn main(spec: &CellSpec) -> Result<i32, Error> {
    let payload = spec.payload_size.unwrap_or(4);
    let (attached, cfg_json) = ktracer::attach(
        &spec.spec,
        &ktracer::event_name(payload),
        &spec.cpus,
        BUFFER_BYTES,
        spec.opts.ftrace_clock.as_deref(),
    )
    .map_err(Error::Measurement)?;
    // Warm-up wraps the 16 KiB buffer at least once with the smallest event (survey 6.2.4).
    let warmup = crate::steady_state::wrap_calls(BUFFER_BYTES / 8);
    let cfg = KernelCellConfig {
        payload_size: payload,
        iterations: spec.iterations as u64,
        warmup,
        cpus: spec.cpus.iter().map(|c| *c as u32).collect(),
        counters: spec.counters.iter().filter_map(|n| kernel_counter(n)).collect(),
        clock: KernelClock::Auto,
        ..Default::default()
    };
    let res = kernel::run_kernel_cell(&cfg);
    drop(attached);
    let samples = res.map_err(|e| Error::Measurement(e.to_string()))?;
    let supported: Vec<usize> =
        samples.counters.iter().enumerate().filter(|(_, c)| c.supported()).map(|(i, _)| i).collect();
    let unsupported: Vec<String> = samples
        .counters
        .iter()
        .filter(|c| !c.supported())
        .map(|c| format!("{} (errno {:?})", c.name, c.errno))
        .collect();

    // Final-form rows (`results::rows`): the run's counter columns, empty where the module could
    // not read a counter.
    let columns = if spec.columns.is_empty() { spec.counters.clone() } else { spec.columns.clone() };
    let slot: Vec<Option<usize>> =
        columns.iter().map(|c| supported.iter().copied().find(|&i| &samples.counters[i].name == c)).collect();
    let mut values: Vec<Option<u64>> = vec![None; columns.len()];
    let mut ev = EventsWriter::create(&spec.dir.join(EVENTS_CSV), &columns)?;
    let mut ds = DiscardsWriter::create(&spec.dir.join(DISCARDED_CSV))?;
    let mut threads = Vec::new();
    for (t, c) in samples.per_cpu.iter().enumerate() {
        let mut kept = 0;
        for s in &c.samples {
            if s.flags & kernel::SAMPLE_DISCARDED_NMI != 0 {
                ds.row(&DiscardRow {
                    tracer: &spec.label,
                    threads: spec.threads,
                    thread: t,
                    cpu: s.cpu,
                    iteration: s.iteration,
                    latency_ns: s.latency_ns as f64,
                    reason: "nmi",
                    repetition: spec.repetition,
                })?;
                continue;
            }
            kept += 1;
            for (v, k) in values.iter_mut().zip(&slot) {
                *v = k.map(|k| s.counters[k]);
            }
            ev.row(&EventRow {
                tracer: &spec.label,
                threads: spec.threads,
                thread: t,
                cpu: s.cpu,
                iteration: s.iteration,
                latency_ns: s.latency_ns as f64,
                counters: &values,
                repetition: spec.repetition,
                counter_set: spec.counter_set,
            })?;
        }
        let mut reasons = BTreeMap::new();
        if c.discarded > 0 {
            reasons.insert("nmi".to_string(), c.discarded);
        }
        threads.push(ThreadResult {
            thread: t,
            cpu: c.cpu as usize,
            kept,
            attempts: c.samples.len() as u64,
            discarded: c.discarded,
            reasons,
            discard_rows_dropped: 0,
            wrap_calls: warmup,
            warmup_calls: warmup,
            steady: true,
            windows: Vec::new(),
            counter_not_running: Vec::new(),
            counter_scheduled_fraction: None,
        });
    }
    ev.commit()?;
    ds.commit()?;
    let result = CellResult {
        tracer_version: format!("kbench-module ABI {} on {}", kernel::ABI_VERSION, crate::host::describe().kernel),
        tracer_config: serde_json::json!({
            "kernel": true, "tracer": cfg_json, "payload_bytes": payload, "clock": samples.clock.name(),
            "tsc_khz": samples.tsc_khz, "interrupts": "masked per iteration (local_irq_save)",
            "steady_state": format!("fixed warm-up of {warmup} calls per CPU (wraps a 16 KiB buffer with 8-byte events)"),
            "counters_unsupported": unsupported,
        }),
        after_run: serde_json::json!({"fired": samples.fired()}),
        buffer_events: BUFFER_BYTES / 8,
        counter_read: "in kernel (pmu->read)".into(),
        detector: serde_json::json!({"kernel": "interrupts masked; NMI count checked per iteration"}),
        threads,
        stopped: false,
        warnings: Vec::new(),
    };
    write_json(spec.dir.join(CELL_RESULT), &result)?;
    Ok(0)
}
