//! Kernel-space tracers as `tracebench run --kernel` attaches them to kbench-module's tracepoint
//! (survey 6.2: the module's loop fires `kbench:kbench_event_<size>`; the tracer is whatever is
//! attached to it). The harness's kernel cell only asks for one of these and drops it after the
//! run; the set-up shares [`crate::ftrace::Instance`] and [`crate::perf_ring`] with the
//! userspace backends, so one ftrace instance and one perf ring exist in the code.
//!
//! Drivable here: `none` (the tracepoint with no probe attached), `ftrace` (the event in a private
//! instance, overwrite, `--ftrace-clock`, default global as in survey 6.2.3) and `perf` (the
//! tracepoint recorded into a per-CPU overwrite ring that is never read during the run). LTTng
//! kernel, eBPF and SystemTap need their own modules or programs built for the running kernel;
//! the kernel lab (scripts/kernel-lab) runs them.
use crate::ftrace::Instance;
use crate::perf_ring::{self, Target, PAGE};

/// Tracers `--kernel` can drive.
pub const KERNEL_TRACERS: [&str; 3] = ["none", "ftrace", "perf"];

/// The module's tracepoint for a payload size (`kbench:kbench_event_<size>`).
pub fn event_name(payload: u32) -> String {
    format!("kbench_event_{payload}")
}

/// A kernel tracer attached to the module's tracepoint; dropping it detaches it.
pub enum Attached {
    None,
    Ftrace(Instance),
    Perf(Vec<perf_ring::Ring>),
}

/// Attaches `tracer` to `kbench:<event>` with a buffer of `buffer_bytes` per CPU on `cpus`.
/// Returns the guard and the configuration to record in run.json.
pub fn attach(
    tracer: &str,
    event: &str,
    cpus: &[usize],
    buffer_bytes: u64,
    ftrace_clock: Option<&str>,
) -> Result<(Attached, serde_json::Value), String> {
    let full = format!("kbench:{event}");
    match tracer {
        "none" => Ok((Attached::None, serde_json::json!({"event": full, "probe": "none"}))),
        "ftrace" => {
            let root = crate::sys::tracefs_root_with("instances").ok_or("tracefs with instances is not mounted")?;
            let inst = Instance::create(&root, &format!("tracebench-k{}", std::process::id()))
                .map_err(|e| format!("create the ftrace instance: {e}"))?;
            let clock = ftrace_clock.unwrap_or("global").to_string();
            let kb = (buffer_bytes / 1024).max(1);
            for (f, v) in [
                ("buffer_size_kb", kb.to_string()),
                ("options/overwrite", "1".into()),
                ("trace_clock", clock.clone()),
                (&format!("events/kbench/{event}/enable"), "1".into()),
                ("tracing_on", "1".into()),
            ] {
                inst.write(f, &v).map_err(|e| e.to_string())?;
            }
            let cfg = serde_json::json!({"event": full, "instance": inst.path, "buffer_size_kb": kb,
                "overwrite": true, "trace_clock": clock});
            Ok((Attached::Ftrace(inst), cfg))
        }
        "perf" => {
            let id =
                crate::sys::tracepoint_id(&full).ok_or_else(|| format!("tracepoint {full} not found in tracefs"))?;
            let pages = (buffer_bytes as usize).div_ceil(PAGE).next_power_of_two();
            let sample = perf_ring::PERF_SAMPLE_TIME | perf_ring::PERF_SAMPLE_RAW | perf_ring::PERF_SAMPLE_CPU;
            let rings = cpus
                .iter()
                .map(|&cpu| perf_ring::Ring::open(id, Target::Cpu(cpu), sample, pages))
                .collect::<Result<Vec<_>, _>>()?;
            let cfg = serde_json::json!({"event": full, "ring_bytes_per_cpu": pages * PAGE,
                "mode": "write_backward, never read"});
            Ok((Attached::Perf(rings), cfg))
        }
        other => Err(format!("--kernel cannot drive '{other}' (it drives {})", KERNEL_TRACERS.join(", "))),
    }
}
