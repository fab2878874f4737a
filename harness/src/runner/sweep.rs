//! `tracebench sweep --vary KNOB=V1,V2,...`: a tracer's knob turned into a curve (survey 7.1:
//! sub-buffer size and the slow path; 7.3 and Figure 9: payload size; Figure 6: ftrace's clock).
//! Each value is an ordinary run, planned like `run` with that one option changed, in its own
//! results directory `OUT/<knob>=<value>/`; the cells of all values are interleaved by repetition
//! (`runner::run_many`), so the machine's drift does not masquerade as a trend. `OUT/sweep.csv`
//! joins them.
use std::io::Write;
use std::path::{Path, PathBuf};

use tracebench_tracers::registry;

use super::cells::{exit_code, round_cells};
use super::export::run_files;
use super::merge::merge_run;
use super::plan::Options;
use super::prepare::prepare;
use super::probe::{Machine, Probe};
use super::{plan, protocol, supervise, Mode};
use crate::error::Error;
use crate::results::rows::MergedRow;
use crate::results::sweep_steps::{judge_sweep, SweepKey};
use crate::results::{self, columns, AtomicFile, ResultsDir};
use crate::stats::compare::Comparison;

/// The knobs `--vary` takes.
pub const KNOBS: [&str; 8] = [
    "subbuf-size",
    "num-subbuf",
    "payload-size",
    "ftrace-clock",
    "probe-site",
    "otf-buffer-size",
    "otf2-chunk-size",
    "threads",
];

/// One parsed `--vary NAME=V1,V2,...`.
#[derive(Debug, Clone)]
pub struct Vary {
    pub knob: String,
    /// As typed (used in directory names) and as written in sweep.csv (sizes in plain bytes).
    pub values: Vec<(String, String)>,
}

fn usage(s: String) -> Error {
    Error::Usage(s)
}

/// The disk check over every value's run: they all exist at once until the sweep ends.
fn check_space(root: &Path, plans: &[plan::Plan], counters: usize) -> Result<(), Error> {
    let total = plans
        .iter()
        .map(|p| super::space::estimate(p, p.cell.iterations, p.repeats, counters, p.cell.sentinel_every))
        .reduce(|a, b| super::space::Estimate {
            rows: a.rows + b.rows,
            row_bytes: a.row_bytes.max(b.row_bytes),
            sentinel_rows: a.sentinel_rows + b.sentinel_rows,
            sentinel_row_bytes: a.sentinel_row_bytes.max(b.sentinel_row_bytes),
            bytes: a.bytes + b.bytes,
        });
    match total {
        Some(e) => super::space::check(root, e),
        None => Ok(()),
    }
}

/// `sweep`: one run per value of the knob, cells interleaved by repetition, then OUT/sweep.csv.
pub fn run_sweep(opts: &Options, vary: &str, argv: &[String]) -> Result<i32, Error> {
    super::validate::refuse_stepped_sweep(opts)?;
    if opts.budget.is_some() {
        return Err(Error::Usage(
            "--budget adds rounds to `run` and `scale` until every pair of tracers is decided; a sweep compares \
             values, not tracers: give --repeats N (the values interleave round by round), or drop --budget"
                .into(),
        ));
    }
    let vary = parse(vary)?;
    check_not_given(&vary, opts)?;
    check_tracers(&vary, &opts.tracer, opts.kernel)?;
    let exports = crate::export::parse_specs(&opts.export)?;
    let root = opts.out.clone().unwrap_or_else(|| PathBuf::from("results").join(results::utc_stamp()));
    results::check_new_dir(&root)?;
    // Every value is planned (and so validated) before anything is created or run.
    let mut plans = Vec::new();
    for (typed, plain) in &vary.values {
        let mut o = options_for(opts, &vary.knob, typed, plain);
        o.out = Some(root.join(dir_of(&vary.knob, plain)));
        let p = plan::plan(&o, Mode::Run).map_err(|e| match e {
            Error::Usage(m) => Error::Usage(format!("--vary {}={typed}: {m}", vary.knob)),
            Error::Tracer(e) => Error::Usage(format!("--vary {}={typed}: {e}", vary.knob)),
            other => other,
        })?;
        plans.push(p);
    }
    tracebench_tracers::registry::reap_leftovers();
    // The sweep's phases (`--timings`), shared by the run.json of each of its values.
    let mut t = super::timings::Timings::start();
    let machine = Machine::measure(&plans[0], &mut t)?;
    // Every value reads the same counter sets: probed and reported once.
    let (avail, columns) = crate::counters::probe_sets(&plans[0].sets)?;
    let probe = Probe { machine, avail, columns };
    check_space(&root, &plans, probe.columns.len())?;
    ResultsDir::create(&root)?;
    let mut prepared = Vec::new();
    for p in plans {
        prepared.push(prepare(p)?);
    }
    supervise::install_handlers();
    let guards = supervise::parent_guards(&prepared[0].plan, &probe)?;
    // Interleave: repetition r of every value before repetition r+1 of any.
    let mut order: Vec<(usize, usize, protocol::CellSpec)> = Vec::new();
    for (vi, p) in prepared.iter().enumerate() {
        for (ri, c) in round_cells(&p.plan, 0..p.plan.repeats, 0, &probe, &p.cells) {
            order.push((vi, ri, c));
        }
    }
    order.sort_by_key(|(vi, _, c)| (c.repetition, *vi, c.id));
    let values: Vec<usize> = order.iter().map(|(vi, _, _)| *vi).collect();
    let mut runs: Vec<Vec<supervise::CellRun>> = prepared.iter().map(|_| Vec::new()).collect();
    let flat = order.into_iter().map(|(_, ri, c)| (ri, c)).collect();
    // run_cells returns the cells it ran, in order (fewer after a stop).
    for (vi, r) in values.into_iter().zip(supervise::run_cells(flat, &prepared[0].plan)?) {
        runs[vi].push(r);
    }
    t.mark("cells");
    t.add_cells(runs.iter().flatten().filter_map(|r| r.result.as_ref().map(|x| &x.phases)));
    drop(guards);
    let mut rows = Vec::new();
    for (vi, p) in prepared.iter().enumerate() {
        let merged = merge_run(p, &probe.columns, &runs[vi], &mut t)?;
        run_files(p, &probe, &runs[vi], p.plan.repeats, &merged, argv, &mut t)?;
        rows.push((vi, merged.summaries));
    }
    let mut csv_rows: Vec<SweepRow> = Vec::new();
    for (vi, sums) in &rows {
        for row in sums {
            let slow = slow_path(&prepared[*vi].out, &prepared[*vi].plan, row);
            csv_rows.push(SweepRow { knob: &vary.knob, value: &vary.values[*vi].1, row, slow, vs_previous: None });
        }
    }
    // Each row against its curve's row at the previous value, from the repetitions.csv `finish`
    // wrote: the judgement the report's page states.
    let keys: Vec<SweepKey> = csv_rows
        .iter()
        .map(|r| SweepKey { tracer: r.row.tracer.clone(), value: r.value.to_string(), threads: r.row.threads as u32 })
        .collect();
    for (r, c) in csv_rows.iter_mut().zip(judge_sweep(&root, &vary.knob, &keys)) {
        r.vs_previous = c;
    }
    write_csv(&root.join(crate::results::SWEEP_CSV), &csv_rows)?;
    let dirs: Vec<(&Path, Option<String>)> = prepared
        .iter()
        .zip(&vary.values)
        // threads=N is already in every benchmark name.
        .map(|(p, (_, plain))| {
            (p.out.path.as_path(), (vary.knob != "threads").then(|| format!("{}={plain}", vary.knob)))
        })
        .collect();
    crate::export::export_run(&exports, &dirs, supervise::stopped(), csv_rows.is_empty())?;
    if !opts.quiet {
        println!(
            "sweep: {} values of {}; sweep.csv and one results directory per value in {}",
            vary.values.len(),
            vary.knob,
            root.display()
        );
    }
    let all: Vec<supervise::CellRun> = runs.into_iter().flatten().collect();
    // Last and on stderr: what a weak disturbance detector could not see (as `run` says it).
    if let Some(w) = &probe.machine.floor.weak {
        eprintln!("tracebench: warning: {w}");
    }
    exit_code(&all, &root)
}

/// `8K`, `16k`, `1M`, `4096` -> bytes.
pub fn parse_bytes(v: &str) -> Option<u64> {
    let t = v.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1024),
        (i, 'm' | 'M') => (&t[..i], 1024 * 1024),
        _ => (t, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// Parses `--vary`.
pub fn parse(spec: &str) -> Result<Vary, Error> {
    let (knob, vals) = spec.split_once('=').ok_or_else(|| {
        usage(format!(
            "--vary '{spec}': write it as KNOB=V1,V2,... (e.g. subbuf-size=4096,16384); knobs: {}",
            KNOBS.join(", ")
        ))
    })?;
    let knob = knob.trim();
    if !KNOBS.contains(&knob) {
        return Err(usage(format!("--vary: unknown knob '{knob}'; use one of {}", KNOBS.join(", "))));
    }
    let mut values = Vec::new();
    for v in vals.split(',').map(str::trim) {
        if v.is_empty() {
            return Err(usage(format!("--vary {knob}: an empty value in '{vals}'")));
        }
        let plain = match knob {
            "subbuf-size" | "payload-size" | "otf-buffer-size" | "otf2-chunk-size" => parse_bytes(v)
                .filter(|b| *b > 0)
                .ok_or_else(|| usage(format!("--vary {knob}: '{v}' is not a size in bytes (e.g. 4096, 16K)")))?
                .to_string(),
            "num-subbuf" | "threads" => v
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| usage(format!("--vary {knob}: '{v}' is not a positive whole number")))?
                .to_string(),
            _ => v.to_string(),
        };
        if values.iter().any(|(_, p)| *p == plain) {
            return Err(usage(format!("--vary {knob}: the value {v} is given twice")));
        }
        values.push((v.to_string(), plain));
    }
    if values.len() < 2 {
        return Err(usage(format!("--vary {knob}: give at least two values to sweep over")));
    }
    Ok(Vary { knob: knob.to_string(), values })
}

/// Which backends a knob applies to (the backend table's knobs); `None`: every backend
/// (`payload-size` is checked value by value against each backend's range, `threads` applies
/// to all).
fn applies_to(knob: &str) -> Option<Vec<&'static str>> {
    match knob {
        "payload-size" | "threads" => None,
        k => Some(tracebench_tracers::backends::with_knob(k)),
    }
}

/// Refuses, before anything runs, a knob that a tracer of the run does not have, or (payload-size)
/// a value outside what the tracer records.
/// With `--kernel`, kbench-module's sizes are checked when each value is planned.
/// Refuses `--vary KNOB` beside `--KNOB`: the sweep sets the knob per value, so the option would
/// be silently overridden.
pub fn check_not_given(vary: &Vary, o: &Options) -> Result<(), Error> {
    let given = match vary.knob.as_str() {
        "subbuf-size" => o.subbuf_size.is_some(),
        "num-subbuf" => o.num_subbuf.is_some(),
        "ftrace-clock" => o.ftrace_clock.is_some(),
        "probe-site" => o.probe_site.is_some(),
        "otf-buffer-size" => o.otf_buffer_size.is_some(),
        "otf2-chunk-size" => o.otf2_chunk_size.is_some(),
        "payload-size" => o.payload_size != tracebench_tracers::payload::DEFAULT,
        "threads" => !o.threads.is_empty(),
        _ => false,
    };
    if given {
        return Err(usage(format!(
            "--vary {k} sets --{k} for each value; drop --{k} (or sweep another knob)",
            k = vary.knob
        )));
    }
    Ok(())
}

pub fn check_tracers(vary: &Vary, tracers: &[String], kernel: bool) -> Result<(), Error> {
    if vary.knob == "payload-size" && !kernel {
        for t in tracers.iter().filter(|t| *t != "all") {
            for (typed, plain) in &vary.values {
                let size = plain.parse::<u32>().map_err(|_| {
                    usage(format!("--vary payload-size: {typed} bytes is too large (at most {})", u32::MAX))
                })?;
                registry::validate_payload(t, size).map_err(|e| match e {
                    tracebench_tracers::TracerError::Payload { why, .. } => {
                        usage(format!("--vary payload-size={typed}: {why}"))
                    }
                    other => other.into(),
                })?;
            }
        }
        return Ok(());
    }
    let Some(kinds) = applies_to(&vary.knob) else { return Ok(()) };
    for t in tracers {
        let kind = registry::split(t).0;
        if t != "all" && !kinds.contains(&kind) {
            return Err(usage(format!(
                "--vary {}: tracer '{t}' has no such knob (it applies to {}); sweep those tracers, or another knob",
                vary.knob,
                kinds.join(", ")
            )));
        }
    }
    Ok(())
}

/// The run options of one value of the sweep.
pub fn options_for(base: &Options, knob: &str, typed: &str, plain: &str) -> Options {
    let mut o = base.clone();
    match knob {
        "subbuf-size" => o.subbuf_size = Some(plain.to_string()),
        "num-subbuf" => o.num_subbuf = plain.parse().ok(),
        // check_tracers has refused a value that is not a u32.
        "payload-size" => o.payload_size = plain.parse().unwrap_or(tracebench_tracers::payload::DEFAULT),
        "ftrace-clock" => o.ftrace_clock = Some(typed.to_string()),
        "probe-site" => o.probe_site = Some(typed.to_string()),
        "otf-buffer-size" => o.otf_buffer_size = Some(plain.to_string()),
        "otf2-chunk-size" => o.otf2_chunk_size = Some(plain.to_string()),
        "threads" => o.threads = vec![plain.parse().unwrap_or(1)],
        _ => {}
    }
    o
}

/// The directory of one value: `subbuf-size=16384`.
pub fn dir_of(knob: &str, plain: &str) -> String {
    format!("{knob}={}", crate::results::dir_name(plain))
}

/// The tracer's own main slow path of a row, as the report's analysis finds it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlowPath {
    /// Mean period: not a whole number where the path comes every 56 or 57 calls (fractional.rs),
    /// or a spacing where it has no exact period (printf's flush).
    pub period: Option<f64>,
    pub extra_ns: Option<f64>,
    /// The share of calls that take it.
    pub share: Option<f64>,
}

/// The tracer's own main slow path of one summary row (the typed finding the report shows,
/// `attribution::main_slow_path`, never a second estimate): the costliest periodic path
/// (survey 7.1), else the costliest irregular path the reference windows do not give to the
/// machine, else its costliest memoryless path; empty when none.
pub fn slow_path(out: &crate::results::ResultsDir, plan: &super::plan::Plan, row: &MergedRow) -> SlowPath {
    let Some(r) = plan.rows.iter().find(|r| r.name == row.tracer) else { return SlowPath::default() };
    let events = out.path.join(&r.dir).join(crate::results::EVENTS_CSV);
    let Ok(a) = crate::analysis::analyze(&events, Some(row.threads as u32), 0, 0) else {
        return SlowPath::default();
    };
    let Some(cp) = a.code_paths.iter().find(|c| c.metric == "latency") else { return SlowPath::default() };
    let reference = crate::analysis::attribution::load(&out.path, &r.dir, a.threads).ok().flatten();
    let attr = crate::analysis::attribution::attribute(cp, reference.as_ref());
    match crate::analysis::attribution::main_slow_path(cp, attr.as_ref()) {
        Some(m) => SlowPath { period: Some(m.mean_period), extra_ns: Some(m.extra), share: Some(m.share) },
        None => SlowPath::default(),
    }
}

/// One line of sweep.csv.
pub struct SweepRow<'a> {
    pub knob: &'a str,
    pub value: &'a str,
    pub row: &'a MergedRow,
    pub slow: SlowPath,
    /// This row against the same curve's row at the previous value.
    pub vs_previous: Option<Comparison>,
}

/// The `vs_previous*` columns of one row (empty at a curve's first value).
fn step_columns(c: Option<&Comparison>) -> String {
    let Some(c) = c else { return ",,,,,,".into() };
    let (lo, hi) =
        c.interval.map_or((String::new(), String::new()), |(lo, hi)| (format!("{lo:.4}"), format!("{hi:.4}")));
    format!(
        "{},{:.4},{lo},{hi},{},{},{}",
        c.outcome.word(),
        c.estimate,
        c.net,
        c.rounds,
        c.rounds_needed.map(|n| n.to_string()).unwrap_or_default()
    )
}

/// Writes OUT/sweep.csv.
pub fn write_csv(path: &std::path::Path, rows: &[SweepRow]) -> Result<(), Error> {
    let mut f = AtomicFile::create(path)?;
    let io = |e: std::io::Error| Error::io(path, e);
    writeln!(f, "{}", columns::SWEEP.join(",")).map_err(io)?;
    for r in rows {
        let s = &r.row.s;
        writeln!(
            f,
            "{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{},{},{},{}",
            r.row.tracer,
            r.knob,
            r.value,
            r.row.threads,
            r.row.kept,
            s.mean,
            s.p50,
            s.p90,
            r.row.mom,
            r.slow
                .period
                .map(|p| if p.fract() == 0.0 { format!("{p:.0}") } else { format!("{p:.1}") })
                .unwrap_or_default(),
            r.slow.extra_ns.map(|x| format!("{x:.1}")).unwrap_or_default(),
            r.slow.share.map(|x| format!("{x:.6}")).unwrap_or_default(),
            step_columns(r.vs_previous.as_ref()),
        )
        .map_err(io)?;
    }
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_knobs_and_sizes() {
        let v = parse("subbuf-size=4K,16384,1M").unwrap();
        assert_eq!(v.knob, "subbuf-size");
        let plain: Vec<&str> = v.values.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(plain, ["4096", "16384", "1048576"]);
        assert!(parse("subbuf-size=4K").is_err(), "one value is not a sweep");
        assert!(parse("subbuf-size=4K,4096").is_err(), "same value twice");
        assert!(parse("colour=red,blue").is_err());
        assert!(parse("threads=1,x").is_err());
        assert!(parse("threads").is_err());
        assert_eq!(dir_of("subbuf-size", "4096"), "subbuf-size=4096");
    }

    #[test]
    fn a_knob_a_tracer_lacks_is_refused() {
        let v = parse("subbuf-size=4096,8192").unwrap();
        assert!(check_tracers(&v, &["lttng-ust".into()], false).is_ok());
        let e = check_tracers(&v, &["lw".into()], false).unwrap_err().to_string();
        assert!(e.contains("'lw' has no such knob"), "{e}");
        assert!(check_tracers(&parse("threads=1,2").unwrap(), &["lw".into()], false).is_ok());
        let p = parse("payload-size=4,256").unwrap();
        assert!(check_tracers(&p, &["lw".into(), "ftrace".into()], false).is_ok());
        let e = check_tracers(&p, &["syscall".into()], false).unwrap_err().to_string();
        assert!(e.contains("'syscall' records a fixed 4-byte payload"), "{e}");
        let e = check_tracers(&parse("payload-size=4,8K").unwrap(), &["ftrace".into()], false).unwrap_err().to_string();
        assert!(e.contains("1 to 4000 bytes"), "{e}");
    }
}
