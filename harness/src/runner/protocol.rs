//! What the parent and a measuring cell tell each other. The spec and the pid travel through
//! pipes the parent made, never through files: a file in a directory someone else can write
//! could be swapped (a spec naming their plugin, run as root) or planted (a pid that a Ctrl-C
//! would signal). The rest goes through the cell's directory, which the parent makes
//! private (0700) inside the private `.cells` of the results directory:
//!
//! ```text
//! parent -> cell   stdin        the CellSpec as JSON (`tracebench __cell` reads it to EOF)
//! cell -> parent   fd 3         its pid, written first, so a stop can reach it under a prefix
//! parent -> cell   stop         the stop mark (then a signal), see `supervise`
//! cell -> parent   result.json  the CellResult: per-thread counts, tracer facts, warnings
//! cell -> merge    events.csv, discarded.csv   rows in their final form (`results::rows`)
//! cell -> merge    sentinels.csv               with --sentinel-every K > 0 (timed cells only)
//! ```
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::clock::ClockKind;
use crate::error::Error;
use crate::steady_state::DriftWindow;

pub const CELL_RESULT: &str = "result.json";
/// Tracer options passed through to the backend (see `tracebench_tracers::CreateOptions`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TracerOpts {
    pub ftrace_clock: Option<String>,
    pub subbuf_size: Option<String>,
    pub num_subbuf: Option<u32>,
    pub probe_site: Option<String>,
    #[serde(default)]
    pub otf_buffer_size: Option<String>,
    #[serde(default)]
    pub otf2_chunk_size: Option<String>,
    #[serde(default)]
    pub keep_trace: bool,
}

impl TracerOpts {
    /// The backend's view of these options (the one place they are handed over).
    pub fn create_options(&self, tsc_hz: f64, run_id: &str, payload_size: u32) -> tracebench_tracers::CreateOptions {
        tracebench_tracers::CreateOptions {
            tsc_hz,
            ftrace_clock: self.ftrace_clock.clone(),
            subbuf_size: self.subbuf_size.clone(),
            num_subbuf: self.num_subbuf,
            probe_site: self.probe_site.clone(),
            run_id: run_id.to_string(),
            payload_size,
            otf_buffer_size: self.otf_buffer_size.clone(),
            otf2_chunk_size: self.otf2_chunk_size.clone(),
            keep_trace: self.keep_trace,
        }
    }
}

/// What the parent asks a cell to do (written as `cell.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellSpec {
    pub id: usize,
    pub spec: String,
    pub label: String,
    pub threads: usize,
    pub cpus: Vec<usize>,
    pub iterations: usize,
    /// Counters to read: only those the parent found available.
    pub counters: Vec<String>,
    /// The counter columns of the whole run (the union over sets), in order: the cell writes an
    /// empty field for those it does not read, so its rows are final.
    #[serde(default)]
    pub columns: Vec<String>,
    pub counter_set: usize,
    pub repetition: usize,
    pub clock: ClockKind,
    pub tsc_hz: f64,
    pub resolution_ns: f64,
    pub opts: TracerOpts,
    pub run_id: String,
    pub dir: PathBuf,
    /// `--kernel`: the loop runs in kbench-module (see `kernel_cell`).
    #[serde(default)]
    pub kernel: bool,
    #[serde(default)]
    pub payload_size: Option<u32>,
    /// `--instructions singlestep`: the cell is stepped, not timed (`crate::runner::singlestep`).
    #[serde(default)]
    pub singlestep: bool,
    /// `--sentinel-every K`: every K-th window of the timed loop times the `none` call (0: none;
    /// always 0 for kernel and stepped cells).
    #[serde(default)]
    pub sentinel_every: u64,
    /// `--reference-every R`: every R-th of the other windows times the reference loop of the
    /// tracer's length (0: none; always 0 for kernel and stepped cells; runner/reference.rs).
    #[serde(default)]
    pub reference_every: u64,
}

impl CellSpec {
    /// What the tracer's constructor is handed in the measuring child (timed or stepped).
    pub fn create_options(&self) -> tracebench_tracers::CreateOptions {
        self.opts.create_options(
            self.tsc_hz,
            &self.run_id,
            self.payload_size.unwrap_or(tracebench_tracers::payload::DEFAULT),
        )
    }
}

/// What one measuring thread reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadResult {
    pub thread: usize,
    pub cpu: usize,
    pub kept: usize,
    pub attempts: u64,
    pub discarded: u64,
    pub reasons: BTreeMap<String, u64>,
    pub discard_rows_dropped: u64,
    pub wrap_calls: u64,
    pub warmup_calls: u64,
    pub steady: bool,
    pub windows: Vec<DriftWindow>,
    /// Per counter (in the cell's counter order): samples discarded because it did not count the
    /// whole call.
    #[serde(default)]
    pub counter_not_running: Vec<u64>,
    /// time_running / time_enabled of the counter group over warm-up and measurement (1.0: on
    /// the PMU the whole time); None without counters or when the group could not be read.
    #[serde(default)]
    pub counter_scheduled_fraction: Option<f64>,
    /// Kept calls in which the thread went to sleep inside the tracer (`Reason::Blocked`), and
    /// their summed latency: the tracer's cost, counted apart.
    #[serde(default)]
    pub blocked: u64,
    #[serde(default)]
    pub blocked_ns: f64,
    /// Sentinel windows kept (written to sentinels.csv), dropped as disturbed, and kept but past
    /// the preallocated buffer (counted, not written).
    #[serde(default)]
    pub sentinels: u64,
    #[serde(default)]
    pub sentinels_dropped: u64,
    #[serde(default)]
    pub sentinels_unstored: u64,
    /// The reference loop's steps, the tracer's fast-path median it was set to last (ns), and
    /// its windows kept (in reference.csv) and dropped as disturbed (runner/reference.rs).
    #[serde(default)]
    pub reference_iterations: u64,
    #[serde(default)]
    pub reference_target_ns: f64,
    #[serde(default)]
    pub reference_windows: u64,
    #[serde(default)]
    pub reference_dropped: u64,
}

impl ThreadResult {
    /// Thread `thread` on `cpu` with nothing counted: every count zero, no window, steady. A
    /// cell names what it measured and takes the rest from here.
    pub fn zero(thread: usize, cpu: usize) -> Self {
        ThreadResult {
            thread,
            cpu,
            kept: 0,
            attempts: 0,
            discarded: 0,
            reasons: BTreeMap::new(),
            discard_rows_dropped: 0,
            wrap_calls: 0,
            warmup_calls: 0,
            steady: true,
            windows: Vec::new(),
            counter_not_running: Vec::new(),
            counter_scheduled_fraction: None,
            blocked: 0,
            blocked_ns: 0.0,
            sentinels: 0,
            sentinels_dropped: 0,
            sentinels_unstored: 0,
            reference_iterations: 0,
            reference_target_ns: 0.0,
            reference_windows: 0,
            reference_dropped: 0,
        }
    }
}

/// What the cell reports (written as `result.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellResult {
    pub tracer_version: String,
    pub tracer_config: serde_json::Value,
    pub after_run: serde_json::Value,
    pub buffer_events: u64,
    pub counter_read: String,
    pub detector: serde_json::Value,
    pub threads: Vec<ThreadResult>,
    pub stopped: bool,
    pub warnings: Vec<String>,
    /// Seconds per phase inside the cell (`runner::timings`): its first thread's for the
    /// per-thread ones.
    #[serde(default)]
    pub phases: BTreeMap<String, f64>,
}

/// The descriptor on which the cell writes its pid (the parent holds the pipe's read end).
pub const CELL_PID_FD: libc::c_int = 3;
/// In a cell's directory: the parent's "stop" mark.
pub const CELL_STOP: &str = "stop";

/// The spec as the cell reads it from its stdin.
pub fn read_spec(from: &mut impl std::io::Read) -> Result<CellSpec, Error> {
    let mut text = String::new();
    from.read_to_string(&mut text).map_err(|e| Error::io("stdin", e))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!("__cell: no cell spec on stdin ({e}); this command is tracebench's own, not for use"))
    })
}

/// Tells the parent this process's pid on [`CELL_PID_FD`], and closes it. Best effort: a cell
/// started by hand has no such descriptor.
pub fn send_pid() {
    let text = std::process::id().to_string();
    // SAFETY: fstat, write and close on a descriptor number; written only when it is a pipe, so
    // a cell started by hand with fd 3 open on some file never writes into that file.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(CELL_PID_FD, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            libc::write(CELL_PID_FD, text.as_ptr().cast(), text.len());
            libc::close(CELL_PID_FD);
        }
    }
}

/// The cell's result, if it wrote one.
pub fn read_result(dir: &Path) -> Option<CellResult> {
    std::fs::read_to_string(dir.join(CELL_RESULT)).ok().and_then(|t| serde_json::from_str(&t).ok())
}
