//! Stage 1, plan: the user's options -> a validated plan -> the list of cells (repetition x
//! counter set x tracer x thread count). Everything the user typed is checked here, before any
//! directory exists or anything runs, so bad input costs nothing and leaves nothing behind.
use std::path::PathBuf;

use tracebench_tracers::registry;

use super::protocol::TracerOpts;
use crate::clock::ClockKind;
use crate::counters;
use crate::error::Error;
use crate::host;
use crate::results;

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
    /// The sentinel period the cells use: kernel-lab and stepped cells have none (0).
    pub fn effective_sentinel_every(&self) -> u64 {
        if self.kernel || self.singlestep {
            0
        } else {
            self.sentinel_every
        }
    }
    /// The reference period the cells use: kernel-lab and stepped cells have none (0).
    pub fn effective_reference_every(&self) -> u64 {
        if self.kernel || self.singlestep {
            0
        } else {
            self.reference_every
        }
    }
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
    /// The sentinel and reference periods the cells use (`Options::effective_sentinel_every`).
    pub sentinel_every: u64,
    pub reference_every: u64,
}

/// Checks everything the user typed before anything runs, so bad input costs nothing and leaves
/// nothing behind.
/// Why a row name (a `--label`, a plugin's own name) cannot name a row, if it cannot: it is a
/// CSV field of every results file and a line of every table.
pub fn bad_row_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name.contains(',') {
        return Some("it holds a comma, which separates the columns of the results' CSV files".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!(
            "it holds the control character {}, which would break the CSV rows or act on a terminal",
            crate::escape::visible(&c.to_string())
        ));
    }
    None
}

pub fn plan(args: &Options, mode: Mode) -> Result<Plan, Error> {
    if args.iterations == 0 {
        return Err(Error::Usage("--iterations must be at least 1 (the survey keeps 5000)".into()));
    }
    if args.sentinel_every == 1 {
        return Err(Error::Usage(
            "--sentinel-every 1 would time only empty calls; give 0 (no sentinels) or at least 2 (default 32)".into(),
        ));
    }
    if args.reference_every == 1 {
        return Err(Error::Usage(
            "--reference-every 1 would time only reference loops; give 0 (none) or at least 2 (default 2)".into(),
        ));
    }
    if args.repeats == 0 {
        return Err(Error::Usage("--repeats must be at least 1".into()));
    }
    if args.budget.is_some() && args.singlestep {
        return Err(Error::Usage(
            "--budget adds timed rounds until the rows' costs are told apart; --instructions counts exactly and \
             has nothing to decide: drop one of them"
                .into(),
        ));
    }
    let mut specs = Vec::new();
    for t in &args.tracer {
        if t == "all" {
            specs.extend(
                registry::known()
                    .into_iter()
                    .filter(|i| i.in_all && i.availability.is_ok())
                    .map(|i| i.spec.to_string()),
            );
        } else if t.is_empty() {
            return Err(Error::Usage("empty tracer name in --tracer (see `tracebench list`)".into()));
        } else {
            // Kernel tracers are checked by `kernel_cell::validate` below.
            if !args.kernel {
                registry::validate(t)?;
            }
            specs.push(t.clone());
        }
    }
    validate_singlestep(&specs, args, mode)?; // refuse what cannot be stepped, before anything runs
    if args.kernel {
        super::kernel_cell::validate(&specs, args.payload_size)?;
    } else {
        for s in &specs {
            registry::validate_payload(s, args.payload_size)?;
        }
        validate_tracer_options(args, &specs)?;
    }
    if !args.label.is_empty() && args.label.len() != specs.len() {
        return Err(Error::Usage(format!(
            "--label gives {} names for {} tracers; give one per tracer, in the same order",
            args.label.len(),
            specs.len()
        )));
    }
    let mut rows: Vec<Row> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        // Default row name: the spec, or a plugin's own name (registry::row_name).
        let name = match args.label.get(i) {
            Some(l) => l.clone(),
            None => registry::row_name(spec)?,
        };
        if let Some(why) = bad_row_name(&name) {
            let what = if args.label.get(i).is_some() { "--label" } else { "the tracer's name" };
            return Err(Error::Usage(format!(
                "bad row name '{}' ({what}): {why}; give the row another name with --label",
                crate::escape::visible(&name)
            )));
        }
        if rows.iter().any(|r| r.name == name) {
            return Err(Error::Usage(format!(
                "tracer row '{}' appears twice; use --label to tell them apart",
                crate::escape::visible(&name)
            )));
        }
        rows.push(Row { spec: spec.clone(), dir: results::dir_name(&name), name });
    }
    let online = host::online_cpus();
    let first = match args.cpu {
        Some(c) if online.contains(&c) => c,
        Some(c) => {
            return Err(Error::Pin { cpu: c, why: format!("CPU {c} is not online (online: {online:?})") });
        }
        None => *online.last().ok_or_else(|| Error::Usage("no online CPU found".into()))?,
    };
    let cpus = host::measuring_order(&online, first);
    let threads = if !args.threads.is_empty() {
        args.threads.clone()
    } else if mode == Mode::Scale {
        (1..=cpus.len()).collect()
    } else {
        vec![1]
    };
    for &t in &threads {
        if t == 0 || t > cpus.len() {
            return Err(Error::Usage(format!(
                "--threads {t}: each count must be between 1 and the {} online CPUs (one pinned thread per core)",
                cpus.len()
            )));
        }
    }
    let first_set: Vec<String> = if args.singlestep {
        Vec::new() // counts instructions itself: a stepped run needs no PMU
    } else if args.counters.is_empty() {
        counters::SET1.iter().map(|s| s.to_string()).collect()
    } else {
        args.counters.clone()
    };
    counters::validate(&first_set)?;
    let mut sets = vec![first_set];
    if args.counter_sets == 2 {
        sets.push(counters::SET2.iter().map(|s| s.to_string()).collect());
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(results::utc_stamp()));
    results::check_new_dir(&out)?;
    let cell = CellSettings {
        iterations: args.iterations,
        clock: args.clock,
        tracer: args.tracer_opts(),
        kernel: args.kernel,
        payload_size: args.payload_size,
        singlestep: args.singlestep,
        sentinel_every: args.effective_sentinel_every(),
        reference_every: args.effective_reference_every(),
    };
    let (quiet, timeout) = (args.quiet, std::time::Duration::from_secs(args.timeout));
    let exports = crate::export::parse_specs(&args.export)?;
    Ok(Plan {
        rows,
        threads,
        cpus,
        sets,
        out,
        cell,
        quiet,
        timeout,
        mode,
        repeats: args.repeats,
        budget: args.budget,
        timings: args.timings,
        exports,
    })
}

/// Every tracer option against what each row's backend accepts here (LTTng's sub-buffer geometry,
/// the kernel's ftrace clocks, the probe site), so that a bad value exits 2 before any directory
/// exists instead of failing inside a cell (`registry::validate_options`).
fn validate_tracer_options(args: &Options, specs: &[String]) -> Result<(), Error> {
    // A tracer option that no tracer of the run reads would be silently ignored: refused.
    let o = args.tracer_opts();
    let given = [
        ("--subbuf-size", "subbuf-size", o.subbuf_size.is_some()),
        ("--num-subbuf", "num-subbuf", o.num_subbuf.is_some()),
        ("--ftrace-clock", "ftrace-clock", o.ftrace_clock.is_some()),
        ("--probe-site", "probe-site", o.probe_site.is_some()),
        ("--otf-buffer-size", "otf-buffer-size", o.otf_buffer_size.is_some()),
        ("--otf2-chunk-size", "otf2-chunk-size", o.otf2_chunk_size.is_some()),
        ("--keep-trace", "keep-trace", o.keep_trace),
    ];
    for (flag, knob, set) in given {
        let takers = tracebench_tracers::backends::with_knob(knob);
        if set && !specs.iter().any(|s| takers.contains(&registry::split(s).0)) {
            return Err(Error::Usage(format!(
                "{flag}: no tracer of this run reads it ({}); it applies to {}: add one of them, or drop {flag}",
                specs.join(","),
                takers.join(", ")
            )));
        }
    }
    let copts = o.create_options(0.0, "", args.payload_size);
    for s in specs {
        registry::validate_options(s, &copts)?;
    }
    Ok(())
}

/// Refuses what cannot be stepped, before anything runs (exit 2).
pub fn validate_singlestep(specs: &[String], opts: &Options, mode: Mode) -> Result<(), Error> {
    if !opts.singlestep {
        return Ok(());
    }
    let no = |m: &str| Err(Error::Usage(format!("--instructions singlestep: {m}")));
    if opts.kernel {
        return no("counts user-space instructions; it cannot step the kernel's loop (drop --kernel)");
    }
    if mode == Mode::Scale || opts.threads.iter().any(|&t| t != 1) {
        return no("steps one thread; stepping serialises threads, so thread counts other than 1 mean nothing \
                   (use `run` without --threads)");
    }
    if !opts.counters.is_empty() || opts.counter_sets != 1 {
        return no("reads no counters (it counts instructions itself); drop --counters/--counter-sets");
    }
    if !opts.export.is_empty() {
        return no("--export writes timings, which a stepped run has none of; drop --export");
    }
    for s in specs {
        if let Err(why) = registry::singlestep_support(s) {
            return no(&format!("tracer '{s}' cannot be stepped: {why}"));
        }
    }
    Ok(())
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
