//! Stage 1, plan: the user's options -> a validated plan, the one value every later stage reads
//! (the options are read here and by its checks alone). Everything the user typed is checked first,
//! in one place (`validate`), before any directory exists or anything runs.
use std::path::PathBuf;

pub use super::options::{Mode, Options};
use super::protocol::TracerOpts;
pub use super::validate::TracerRow;
use super::validate::{validate, Checked};
use crate::clock::ClockKind;
use crate::error::Error;

/// A validated run plan.
#[derive(Debug)]
pub struct Plan {
    pub rows: Vec<TracerRow>,
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
