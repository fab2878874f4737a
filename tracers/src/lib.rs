//! Tracer backends measured by tracebench.
//!
//! Every backend is one file in this crate and implements [`Tracer`]. The harness calls
//! [`Tracer::fire`] through a `&dyn Tracer`, so every backend, `none` included, pays the same
//! indirect-call dispatch and the `none` floor cancels it (survey section 6.2.1: the "None" row).
//!
//! Set-up happens in a backend's constructor and teardown in its `Drop`, so that an error or a
//! signal unwinding through the harness restores the system as it was found.

pub mod backends;
pub mod clock;
pub mod ftrace;
pub mod hpc;
pub mod kernel;
pub mod lttng;
pub mod lw;
pub mod none;
pub mod open;
// OTF 1 and OTF2 trace writers: VampirTrace's and Score-P's formats.
pub mod otf;
pub mod owned;
pub mod payload;
pub mod plugin;
pub mod printf;
pub mod reason;
pub mod registry;
pub mod spin;
pub mod sys;
pub mod syscall;
// Dynamic-instrumentation backends (uprobe, ebpf, perf, systemtap, bpftrace) and their site.
pub mod bpftrace;
pub mod dynamic;
#[cfg(feature = "ebpf")]
pub mod ebpf;
pub mod perf;
pub mod perf_ring;
pub mod probe_site;
pub mod systemtap;
pub mod tool_process;
pub mod uprobe;
pub mod uprobe_event;

pub use registry::{create, known, launch_prefix, parent_guard, row_name, validate, CreateOptions, TracerInfo};

use thiserror::Error;

/// Why a tracer cannot be created.
#[derive(Debug, Error)]
pub enum TracerError {
    /// `hint` is "did you mean X? " for a near miss (`registry::did_you_mean`), else empty.
    #[error("unknown tracer '{spec}': {hint}run `tracebench list` to see the tracers this build knows")]
    Unknown { spec: String, hint: String },
    #[error("bad tracer spec '{spec}': {why}")]
    BadSpec { spec: String, why: String },
    /// A tracer option (`--subbuf-size`, `--ftrace-clock`, ...) the backend does not accept.
    #[error("tracer '{spec}': {why}")]
    BadOption { spec: String, why: String },
    #[error("tracer '{name}' is not available here: {why} (fix: {fix})")]
    Unavailable { name: String, why: String, fix: String },
    #[error("tracer '{name}' failed to set up: {why}")]
    Setup { name: String, why: String },
    /// A `--payload-size` the backend cannot record: the message says which sizes it can.
    #[error("--payload-size {size}: {why}")]
    Payload { size: u32, why: String },
    /// A `plugin:PATH[:ARGS]` that cannot be used: the message names the file and the cause.
    #[error("{0}")]
    Plugin(String),
}

impl TracerError {
    /// A set-up step of backend `name` failed, for the reason `why`.
    pub fn setup(name: &str, why: impl Into<String>) -> TracerError {
        TracerError::Setup { name: name.into(), why: why.into() }
    }
}

/// One tracer backend, set up and ready to record.
///
/// `fire` is the only thing the harness puts between its two clock reads.
pub trait Tracer: Send + Sync {
    /// Row name in results (the spec as the user typed it, unless relabelled).
    fn name(&self) -> &str;
    /// Tracer version, recorded in run.json.
    fn version(&self) -> String;
    /// Tracer configuration, recorded in run.json.
    fn config(&self) -> serde_json::Value;
    /// Events needed to wrap the tracer's buffer once (per thread/CPU); 0 = no buffer.
    /// The warm-up runs at least this many calls (survey section 6.2.4).
    fn buffer_events(&self) -> u64 {
        0
    }
    /// Called once on each measuring thread, after it is pinned to `cpu`.
    fn thread_init(&self, _cpu: usize) -> Result<(), TracerError> {
        Ok(())
    }
    /// Disturbance reasons that the tracer itself causes on every call. They are part of its
    /// cost, so the harness keeps iterations that only they touched instead of discarding every
    /// one: `strace` stops the process at each system call, which is a context switch.
    fn intrinsic_disturbances(&self) -> &'static [reason::Reason] {
        &[]
    }
    /// The tracepoint. The payload is 4 bytes: the iteration index. With `--payload-size N`
    /// (N != 4) a backend that takes it records N bytes of its preallocated buffer instead
    /// (payload.rs); the index is still passed, for backends that record it beside them.
    fn fire(&self, payload: u32);
    /// What the tracer itself reports after the run (overruns, lost events), for run.json.
    fn after_run(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}
