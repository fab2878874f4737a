//! The plan's checks: everything the user typed, against this machine and the tracers' registry,
//! in one place, before any directory exists or anything runs, so bad input costs nothing and
//! leaves nothing behind. The checks run in a fixed order and the first that fails is the one
//! the user reads (exit 2).
use std::path::PathBuf;

use tracebench_tracers::kernel::KERNEL_TRACERS;
use tracebench_tracers::registry;

use super::options::{Mode, Options};
use super::protocol::TracerOpts;
use crate::error::Error;
use crate::export::ExportSpec;
use crate::{counters, host, kernel, results};

/// One tracer row of the run, as the checks named it.
#[derive(Debug, Clone)]
pub struct TracerRow {
    pub spec: String,
    pub name: String,
    pub dir: String,
    /// What the row's cells are started under (strace, say), from the registry once, here.
    pub launch: Vec<String>,
}

/// What passed the checks: everything of the plan that is more than a copy of an option.
pub struct Checked {
    pub rows: Vec<TracerRow>,
    pub cpus: Vec<usize>,
    pub threads: Vec<usize>,
    pub sets: Vec<Vec<String>>,
    pub out: PathBuf,
    pub exports: Vec<ExportSpec>,
}

/// Every check, in order: the counts, the tracers (kinds, stepping, payload, options), the rows'
/// names, the CPUs and thread counts, the counters, the results directory, the export files.
pub fn validate(args: &Options, mode: Mode, tracer: &TracerOpts) -> Result<Checked, Error> {
    counts(args)?;
    let specs = tracers(args, mode, tracer)?;
    // One row per spec: its name (a `--label`, else the spec or a plugin's own name), which must
    // name a row (`results::bad_row_name`) and no other row, its directory's name and its launch
    // prefix.
    if !args.label.is_empty() && args.label.len() != specs.len() {
        return Err(Error::Usage(format!(
            "--label gives {} names for {} tracers; give one per tracer, in the same order",
            args.label.len(),
            specs.len()
        )));
    }
    let mut rows: Vec<TracerRow> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let name = match args.label.get(i) {
            Some(l) => l.clone(),
            None => registry::row_name(spec)?,
        };
        if let Some(why) = results::bad_row_name(&name) {
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
        rows.push(TracerRow {
            spec: spec.clone(),
            dir: results::dir_name(&name),
            name,
            launch: registry::launch_prefix(spec),
        });
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
    if let Some(t) = threads.iter().find(|&&t| t == 0 || t > cpus.len()) {
        return Err(Error::Usage(format!(
            "--threads {t}: each count must be between 1 and the {} online CPUs (one pinned thread per core)",
            cpus.len()
        )));
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
    let exports = crate::export::parse_specs(&args.export)?;
    Ok(Checked { rows, cpus, threads, sets, out, exports })
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

/// The counts and periods, and the options that exclude each other.
fn counts(args: &Options) -> Result<(), Error> {
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
    Ok(())
}

/// The tracer specs (`all` expanded), each checked against what this run asks of it: a kind
/// the registry knows (or the kernel lab drives), stepping, the payload size, and the tracer
/// options, so that a bad value exits 2 before any directory exists instead of failing inside
/// a cell.
fn tracers(args: &Options, mode: Mode, tracer: &TracerOpts) -> Result<Vec<String>, Error> {
    // What the backends are handed, for `registry::validate_options` below.
    let copts = tracer.create_options(0.0, "", args.payload_size);
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
            // Kernel tracers are checked against the kernel lab's list below.
            if !args.kernel {
                registry::validate(t)?;
            }
            specs.push(t.clone());
        }
    }
    if args.singlestep {
        let no = |m: &str| Err(Error::Usage(format!("--instructions singlestep: {m}")));
        if args.kernel {
            return no("counts user-space instructions; it cannot step the kernel's loop (drop --kernel)");
        }
        if mode == Mode::Scale || args.threads.iter().any(|&t| t != 1) {
            return no("steps one thread; stepping serialises threads, so thread counts other than 1 mean nothing \
                       (use `run` without --threads)");
        }
        if !args.counters.is_empty() || args.counter_sets != 1 {
            return no("reads no counters (it counts instructions itself); drop --counters/--counter-sets");
        }
        if !args.export.is_empty() {
            return no("--export writes timings, which a stepped run has none of; drop --export");
        }
        for s in &specs {
            if let Err(why) = registry::singlestep_support(s) {
                return no(&format!("tracer '{s}' cannot be stepped: {why}"));
            }
        }
    }
    if args.kernel {
        if let Some(s) = specs.iter().find(|s| !KERNEL_TRACERS.contains(&s.as_str())) {
            return Err(Error::Usage(format!(
                "--kernel drives {} here; '{s}' needs its own kernel module or program (run it through the kernel lab: make kernel-lab, see kbench-module/README.md)",
                KERNEL_TRACERS.join(", ")
            )));
        }
        if !kernel::PAYLOAD_SIZES.contains(&args.payload_size) {
            return Err(Error::Usage(format!("--payload-size must be one of {:?} bytes", kernel::PAYLOAD_SIZES)));
        }
        if !std::path::Path::new(kernel::DEVICE).exists() {
            return Err(Error::Usage(format!(
                "{} not found: build and load kbench-module first (make -C kbench-module && sudo insmod kbench-module/kbench.ko)",
                kernel::DEVICE
            )));
        }
        return Ok(specs);
    }
    for s in &specs {
        registry::validate_payload(s, args.payload_size)?;
    }
    // A tracer option that no tracer of the run reads would be silently ignored: refused.
    let given = [
        ("--subbuf-size", "subbuf-size", tracer.subbuf_size.is_some()),
        ("--num-subbuf", "num-subbuf", tracer.num_subbuf.is_some()),
        ("--ftrace-clock", "ftrace-clock", tracer.ftrace_clock.is_some()),
        ("--probe-site", "probe-site", tracer.probe_site.is_some()),
        ("--otf-buffer-size", "otf-buffer-size", tracer.otf_buffer_size.is_some()),
        ("--otf2-chunk-size", "otf2-chunk-size", tracer.otf2_chunk_size.is_some()),
        ("--keep-trace", "keep-trace", tracer.keep_trace),
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
    // What each row's backend accepts here: LTTng's sub-buffer geometry, the kernel's ftrace
    // clocks, the probe site (`registry::validate_options`).
    for s in &specs {
        registry::validate_options(s, &copts)?;
    }
    Ok(specs)
}
