//! What a run was asked to do: the CLI's `run`, `scale` and `sweep` arguments as plain data (the
//! runner does not depend on the CLI's types). The plan (plan.rs) is the one stage that reads them.
use std::path::PathBuf;

use super::protocol::TracerOpts;
use crate::clock::ClockKind;

/// The options of one `run` or `scale` (each value of a sweep is one too).
#[derive(Debug, Clone)]
pub struct Options {
    pub tracer: Vec<String>,
    pub label: Vec<String>,
    pub iterations: usize,
    pub threads: Vec<usize>,
    pub cpu: Option<usize>,
    pub clock: ClockKind,
    pub counters: Vec<String>,
    pub counter_sets: u8,
    pub repeats: usize,
    pub out: Option<PathBuf>,
    pub timeout: u64,
    pub quiet: bool,
    /// `--timings`: print the seconds per phase on stderr (run.json has them anyway).
    pub timings: bool,
    pub ftrace_clock: Option<String>,
    pub subbuf_size: Option<String>,
    pub num_subbuf: Option<u32>,
    pub kernel: bool,
    pub payload_size: u32,
    pub probe_site: Option<String>,
    /// `--otf-buffer-size`, `--otf2-chunk-size` (the otf and otf2 backends' buffers).
    pub otf_buffer_size: Option<String>,
    pub otf2_chunk_size: Option<String>,
    /// `--keep-trace`: the otf and otf2 backends keep their trace archives.
    pub keep_trace: bool,
    /// `--export FORMAT=FILE` (benchmark-history formats; see `export`).
    pub export: Vec<String>,
    /// `--instructions singlestep`: exact user-space instruction counts, no timing (`singlestep`).
    pub singlestep: bool,
    /// `--sentinel-every K`: every K-th timed window times the `none` call (0: off).
    pub sentinel_every: u64,
    /// `--reference-every R`: every R-th of the other windows times the reference loop (0: off).
    pub reference_every: u64,
    /// `--budget`: add interleaved rounds after the planned ones until every pair of rows is
    /// decided (runner/rounds.rs), or this much wall time has passed since the run began.
    pub budget: Option<std::time::Duration>,
}

impl Options {
    pub fn tracer_opts(&self) -> TracerOpts {
        TracerOpts {
            ftrace_clock: self.ftrace_clock.clone(),
            subbuf_size: self.subbuf_size.clone(),
            num_subbuf: self.num_subbuf,
            probe_site: self.probe_site.clone(),
            otf_buffer_size: self.otf_buffer_size.clone(),
            otf2_chunk_size: self.otf2_chunk_size.clone(),
            keep_trace: self.keep_trace,
        }
    }
}

/// `run` or `scale`: the default thread counts, and run.json's `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Run,
    Scale,
}
