//! The detector's tracepoints: which exist here and what each means, and [`KeepAlive`], which
//! keeps them registered with perf while a run lives.
use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter};

use super::Reason;

fn vector_reason(event: &str) -> Reason {
    match event {
        "local_timer_entry" => Reason::TimerIrq,
        "call_function_entry"
        | "call_function_single_entry"
        | "reschedule_entry"
        | "irq_work_entry"
        | "x86_platform_ipi_entry" => Reason::Ipi,
        _ => Reason::OtherVector,
    }
}

pub(super) fn tracefs_events() -> Option<std::path::PathBuf> {
    ["/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.join("sched").is_dir())
}

/// The detector's tracepoints (`group:event`) and what each means, or None without tracefs.
pub(super) fn tracepoint_sources() -> Option<Vec<(String, Reason)>> {
    let ev = tracefs_events()?;
    let mut vectors: Vec<String> = std::fs::read_dir(ev.join("irq_vectors"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with("_entry"))
                .collect()
        })
        .unwrap_or_default();
    vectors.sort();
    let mut out: Vec<(String, Reason)> = vectors
        .into_iter()
        .map(|v| {
            let r = vector_reason(&v);
            (format!("irq_vectors:{v}"), r)
        })
        .collect();
    out.push(("irq:irq_handler_entry".into(), Reason::DeviceIrq));
    out.push(("irq:softirq_entry".into(), Reason::Softirq));
    out.push(("nmi:nmi_handler".into(), Reason::Nmi));
    out.push(("sched:sched_switch".into(), Reason::ContextSwitch));
    Some(out)
}

/// Keeps the detector's tracepoints registered with perf while it lives, so that opening and
/// closing a detector is cheap.
///
/// Why: when the last perf event on a tracepoint is closed, the kernel unregisters its probe and
/// waits for an RCU grace period (`perf_trace_event_unreg` -> `tracepoint_synchronize_unregister`),
/// under a global mutex: measured here, 35-45 ms per tracepoint, so a detector's dozen
/// tracepoints cost 0.5 s to close, twice per `tracebench run` (the clock thread and the cell).
/// While another event on the tracepoint stays open, a close only drops a reference. A
/// `tracebench run` (and an interleaved gate, for all its runs) holds one disabled counting event
/// per tracepoint: it never counts, never samples, and changes nothing inside a measured window,
/// where the detector's own events have the tracepoints enabled anyway. Best effort: an event that
/// cannot be opened is skipped (the detector then reports it).
pub struct KeepAlive {
    events: Vec<Counter>,
}

impl KeepAlive {
    pub fn hold() -> Self {
        let events = tracepoint_sources()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, _)| crate::counters::tracepoint_id(&name))
            .filter_map(|id| {
                Builder::new(Tracepoint::with_id(id)).observe_self().any_cpu().include_kernel().build().ok()
            })
            .collect();
        KeepAlive { events }
    }

    /// How many tracepoints it holds.
    pub fn held(&self) -> usize {
        self.events.len()
    }
}
