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
use crate::disturbance::Reason;
use crate::error::Error;
use crate::kernel::{self, KernelCellConfig, KernelClock, KernelCounter, KernelSamples};
use crate::results::rows::{DiscardRow, DiscardsWriter, EventRow, EventsWriter};
use crate::results::{write_json, DISCARDED_CSV, EVENTS_CSV};
use tracebench_tracers::kernel as ktracer;

/// 16 KiB per CPU, the survey's buffer size for every tracer (6.2.3).
const BUFFER_BYTES: u64 = 16 * 1024;

/// The module's discard flags (kbench_abi.h `KBENCH_SAMPLE_DISCARDED_*`) and the one reason table
/// (`tracers/src/reason.rs`) they are written with.
const MODULE_REASONS: [(u32, Reason); 2] =
    [(kernel::SAMPLE_DISCARDED_NMI, Reason::Nmi), (kernel::SAMPLE_DISCARDED_COUNTER, Reason::CounterNotRunning)];
// Every flag the ABI defines has a reason here: a new flag without one fails the build.
const _: () = assert!(MODULE_REASONS[0].0 | MODULE_REASONS[1].0 == kernel::SAMPLE_DISCARDED_ALL);

/// A sample's flags as a mask of `Reason`s (0: kept). Flags the ABI does not define count as
/// discarded too, so that a sample the module did not vouch for is never kept.
fn reason_mask(flags: u32) -> u16 {
    let mut mask = 0;
    for (flag, reason) in MODULE_REASONS {
        if flags & flag != 0 {
            mask |= reason as u16;
        }
    }
    if flags & !kernel::SAMPLE_DISCARDED_ALL != 0 {
        mask |= Reason::Lost as u16;
    }
    mask
}

/// A run that kept fewer samples than requested on some CPU (the module's record buffer,
/// iterations + max_discarded, filled with discarded iterations first): what `run.json` records
/// under `after_run.short_run`, and one warning line per CPU saying why and how to fix it.
fn short_run(samples: &KernelSamples) -> (Vec<serde_json::Value>, Vec<String>) {
    let mut marks = Vec::new();
    let mut warnings = Vec::new();
    for c in samples.short_cpus() {
        let nmi = c.discarded_with(kernel::SAMPLE_DISCARDED_NMI);
        let counter = c.discarded_with(kernel::SAMPLE_DISCARDED_COUNTER);
        let mut fixes = Vec::new();
        if counter > 0 {
            fixes.push("request fewer counters or stop other users of the PMU (perf, the NMI watchdog) so that the kernel counters stay scheduled");
        }
        if nmi > 0 {
            fixes.push("quiet the CPU's NMIs (sysctl kernel.nmi_watchdog=0, no perf sampling on it)");
        }
        fixes.push("or request fewer iterations (-n) so that the discard budget covers them");
        marks.push(serde_json::json!({
            "cpu": c.cpu, "kept": c.kept, "requested": samples.iterations, "discarded": c.discarded,
            "discarded_nmi": nmi, "discarded_counter_not_running": counter,
            "record_buffer": samples.iterations + samples.max_discarded,
        }));
        warnings.push(format!(
            "short run on CPU {}: kept {} of {} requested samples; the module's record buffer ({} iterations + {} discards) filled first with {} discarded iterations (nmi: {nmi}, counter-not-running: {counter}); to fix: {}",
            c.cpu,
            c.kept,
            samples.iterations,
            samples.iterations,
            samples.max_discarded,
            c.discarded,
            fixes.join("; ")
        ));
    }
    (marks, warnings)
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
    let mut ev = EventsWriter::create(&spec.dir.join(EVENTS_CSV), &columns, (spec.iterations * spec.threads) as u64)?;
    let mut ds = DiscardsWriter::create(&spec.dir.join(DISCARDED_CSV))?;
    let mut threads = Vec::new();
    for (t, c) in samples.per_cpu.iter().enumerate() {
        let mut kept = 0;
        for s in &c.samples {
            let mask = reason_mask(s.flags);
            if mask != 0 {
                ds.row(&DiscardRow {
                    tracer: &spec.label,
                    threads: spec.threads,
                    thread: t,
                    cpu: s.cpu,
                    iteration: s.iteration,
                    latency_ns: s.latency_ns as f64,
                    reason: &Reason::names(mask),
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
                // The module's samples hold no window start: kernel rows have no time.
                t_ns: None,
            })?;
        }
        let mut reasons = BTreeMap::new();
        for (flag, reason) in MODULE_REASONS {
            let n = c.discarded_with(flag);
            if n > 0 {
                reasons.insert(reason.name().to_string(), n);
            }
        }
        threads.push(ThreadResult {
            kept,
            attempts: c.samples.len() as u64,
            discarded: c.discarded,
            reasons,
            wrap_calls: warmup,
            warmup_calls: warmup,
            ..ThreadResult::zero(t, c.cpu as usize)
        });
    }
    ev.commit()?;
    ds.commit()?;
    let (short, warnings) = short_run(&samples);
    let result = CellResult {
        tracer_version: format!("kbench-module ABI {} on {}", kernel::ABI_VERSION, crate::host::describe().kernel),
        tracer_config: serde_json::json!({
            "kernel": true, "tracer": cfg_json, "payload_bytes": payload, "clock": samples.clock.name(),
            "tsc_khz": samples.tsc_khz, "interrupts": "masked per iteration (local_irq_save)",
            "steady_state": format!("fixed warm-up of {warmup} calls per CPU (wraps a 16 KiB buffer with 8-byte events)"),
            "counters_unsupported": unsupported,
        }),
        after_run: serde_json::json!({"fired": samples.fired(), "short_run": short}),
        buffer_events: BUFFER_BYTES / 8,
        counter_read: "in kernel (pmu->read; the event checked active on the CPU around each iteration)".into(),
        detector: serde_json::json!({"kernel": "interrupts masked; NMI count and counter state checked per iteration"}),
        threads,
        stopped: false,
        warnings,
        phases: Default::default(),
    };
    write_json(spec.dir.join(CELL_RESULT), &result)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{CpuSamples, KbenchSample, KernelClock, KernelSamples};

    fn samples(kept: u64, flags: &[u32]) -> KernelSamples {
        let mut v: Vec<KbenchSample> = (0..kept).map(|i| KbenchSample { iteration: i, ..Default::default() }).collect();
        v.extend(flags.iter().map(|&f| KbenchSample { flags: f, ..Default::default() }));
        KernelSamples {
            clock: KernelClock::Ktime,
            tsc_khz: 0,
            run_id: 1,
            payload_size: 4,
            warmup: 0,
            counters: Vec::new(),
            per_cpu: vec![CpuSamples { cpu: 2, kept, discarded: flags.len() as u64, samples: v }],
            iterations: 10,
            max_discarded: 3,
        }
    }

    #[test]
    fn flags_map_to_the_one_reason_table() {
        assert_eq!(reason_mask(0), 0);
        assert_eq!(Reason::names(reason_mask(kernel::SAMPLE_DISCARDED_NMI)), "nmi");
        assert_eq!(Reason::names(reason_mask(kernel::SAMPLE_DISCARDED_COUNTER)), "counter-not-running");
        assert_eq!(Reason::names(reason_mask(kernel::SAMPLE_DISCARDED_ALL)), "nmi+counter-not-running");
        // A flag this build does not know is never kept.
        assert_ne!(reason_mask(1 << 7), 0);
    }

    #[test]
    fn a_full_run_is_not_short() {
        let (marks, warnings) = short_run(&samples(10, &[kernel::SAMPLE_DISCARDED_NMI]));
        assert!(marks.is_empty() && warnings.is_empty());
    }

    #[test]
    fn a_short_run_is_marked_and_says_why_and_how_to_fix() {
        let s = samples(
            7,
            &[kernel::SAMPLE_DISCARDED_COUNTER, kernel::SAMPLE_DISCARDED_COUNTER, kernel::SAMPLE_DISCARDED_NMI],
        );
        let (marks, warnings) = short_run(&s);
        assert_eq!(marks.len(), 1);
        assert_eq!((marks[0]["kept"].as_u64(), marks[0]["requested"].as_u64()), (Some(7), Some(10)));
        assert_eq!(marks[0]["discarded_counter_not_running"].as_u64(), Some(2));
        let w = &warnings[0];
        assert!(w.contains("kept 7 of 10"), "{w}");
        assert!(w.contains("record buffer (10 iterations + 3 discards)"), "{w}");
        assert!(w.contains("fewer counters") && w.contains("nmi_watchdog") && w.contains("fewer iterations"), "{w}");
    }
}
