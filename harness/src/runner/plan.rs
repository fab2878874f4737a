//! Stage 1, plan: the user's options -> a validated plan, the one value every later stage reads
//! (the options are read here alone). Everything the user typed is checked first, in one place
//! (`validate`), before any directory exists or anything runs.
use std::path::PathBuf;

use super::protocol::TracerOpts;
use super::validate::{validate, Checked};
use crate::clock::ClockKind;
use crate::error::Error;

/// What a run was asked to do: the CLI's `run`/`scale` arguments as plain data (the runner does
/// not depend on the CLI's types).
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Run,
    Scale,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub spec: String,
    pub name: String,
    pub dir: String,
    /// What the row's cells are started under (strace, say), from the registry once, here.
    pub launch: Vec<String>,
}

/// A validated run plan.
#[derive(Debug)]
pub struct Plan {
    pub rows: Vec<Row>,
    pub threads: Vec<usize>,
    pub cpus: Vec<usize>,
    pub sets: Vec<Vec<String>>,
    pub out: PathBuf,
    /// What every cell is told beside its row, thread count and counters.
    pub cell: CellSettings,
    /// How the cells are run: no progress bar (`--quiet`), and how long one may take.
    pub quiet: bool,
    pub timeout: std::time::Duration,
    /// `run` or `scale`: the default thread counts, and run.json's `mode`.
    pub mode: Mode,
    /// The planned rounds (every row, set and thread count once each).
    pub repeats: usize,
    /// `--budget`: rounds are added after the planned ones until every pair of rows is decided,
    /// or this much wall time has passed since the run began (runner/rounds.rs).
    pub budget: Option<std::time::Duration>,
    /// `--timings`: the seconds per phase on stderr at the end.
    pub timings: bool,
    /// `--export FORMAT=FILE`, parsed: a bad one is a usage error before anything runs.
    pub exports: Vec<crate::export::ExportSpec>,
}

/// The options every cell of a run measures with, read from `Options` once, by `plan`.
#[derive(Debug, Clone)]
pub struct CellSettings {
    pub iterations: usize,
    pub clock: ClockKind,
    pub tracer: TracerOpts,
    pub kernel: bool,
    pub payload_size: u32,
    pub singlestep: bool,
    /// The sentinel and reference periods the cells use (0 for kernel-lab and stepped cells).
    pub sentinel_every: u64,
    pub reference_every: u64,
}

/// The options -> the plan: every check first (`validate`), then what the cells are told.
pub fn plan(args: &Options, mode: Mode) -> Result<Plan, Error> {
    let cell = CellSettings {
        iterations: args.iterations,
        clock: args.clock,
        tracer: args.tracer_opts(),
        kernel: args.kernel,
        payload_size: args.payload_size,
        singlestep: args.singlestep,
        // Kernel-lab and stepped cells have no sentinel or reference windows.
        sentinel_every: if args.kernel || args.singlestep { 0 } else { args.sentinel_every },
        reference_every: if args.kernel || args.singlestep { 0 } else { args.reference_every },
    };
    let Checked { rows, cpus, threads, sets, out, exports } = validate(args, mode, &cell.tracer)?;
    Ok(Plan {
        rows,
        threads,
        cpus,
        sets,
        out,
        cell,
        quiet: args.quiet,
        timeout: std::time::Duration::from_secs(args.timeout),
        mode,
        repeats: args.repeats,
        budget: args.budget,
        timings: args.timings,
        exports,
    })
}

/// `sweep` with `--instructions singlestep`: refused (a sweep's curves are timings).
pub fn refuse_stepped_sweep(opts: &Options) -> Result<(), Error> {
    if opts.singlestep {
        return Err(Error::Usage(
            "--instructions singlestep works with `run` only (a sweep's curves are timings); run one `tracebench \
             run --instructions singlestep` per value"
                .into(),
        ));
    }
    Ok(())
}
