//! `tracebench report DIR`: tables, figures and code-path analysis from a results directory,
//! written as DIR/report.html (self-contained), DIR/report.md and DIR/figures/*.png + *.svg.
//!
//! Like every step after the measurement it reads files only (docs/ARCHITECTURE.md, "Honesty"), and
//! it streams each events.csv twice with fixed-size state (log histograms, reservoirs, running
//! moments), so memory does not grow with the number of rows.
mod against;
use against::{compare_with_survey, expected_period};
pub mod analyze;
#[cfg(test)]
mod browser_test;
mod compare;
mod fractional;
mod irregular;
pub mod load;
mod page;
mod passes;
pub mod paths;
mod phases;
mod render;
pub mod stepped;
pub mod stream;
pub mod survey;
pub mod sweep;
pub mod synth;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::plot::{self, PlotError, Series};
use crate::stats::hist::LogHistogram;
use load::{SummaryRow, TracerMeta};
use paths::TracerAnalysis;

#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Results directory written by `tracebench run`, `scale` or `sweep`; several directories
    /// (with --out) give one report with the runs side by side.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Where the report of several directories goes (a new directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Calls per tracer drawn in the latency-against-counter figures (a uniform sample).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    pub points: u64,
    /// Calls shown per tracer in the latency-against-iteration figure (the first ones).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    pub iterations: u64,
    /// Benchmarking aid: first write synthetic results, TRACERSxROWS (e.g. 10x100000), into DIR.
    #[arg(long, hide = true, value_name = "TRACERSxROWS")]
    pub synthetic: Option<String>,
    /// With --synthetic: add hardware counter columns, as on a machine with a PMU.
    #[arg(long, hide = true, requires = "synthetic")]
    pub synthetic_counters: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "{dir} is not a results directory: {missing} is missing; pass the directory `tracebench run --out DIR` wrote"
    )]
    NotResults { dir: PathBuf, missing: String },
    #[error("{path}: line {line}: {msg}")]
    Parse { path: PathBuf, line: u64, msg: String },
    #[error(
        "{path}: column '{column}' is missing; the file does not follow the output contract (re-run `tracebench run`)"
    )]
    MissingColumn { path: PathBuf, column: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("{0}")]
    Usage(String),
}

/// Report files go through the results module's one atomic writer (docs/ARCHITECTURE.md).
pub use crate::results::write_atomic_io as write_atomic;

/// One tracer row as the report sees it.
pub struct TracerReport {
    pub name: String,
    /// What was measured (`--tracer` spec, e.g. `lw` for a row labelled `lw-a`); the survey
    /// comparisons key on it.
    pub spec: String,
    /// Display name: ftrace rows get their clock, from run.json (survey Fig. 6).
    pub label: String,
    pub colour: usize,
    pub config: Value,
    /// summary.csv rows of this tracer, by thread count.
    pub by_threads: BTreeMap<u32, SummaryRow>,
    /// repetitions.csv means at the base thread count.
    pub rep_means: Vec<f64>,
    /// repetitions.csv means by thread count, as (repetition, mean): the scaling verdict's
    /// interval across repetitions (`against`).
    pub rep_by_threads: BTreeMap<u32, Vec<(u32, f64)>>,
    pub analysis: Option<TracerAnalysis>,
    pub note: Option<String>,
}

impl TracerReport {
    pub fn base(&self) -> Option<&SummaryRow> {
        self.by_threads.values().next()
    }
}

pub struct FigureRef {
    pub name: String,
    pub title: String,
    pub caption: String,
}

pub struct Report {
    pub dir: PathBuf,
    pub run: Value,
    pub synthetic: bool,
    pub kernel: bool,
    pub tracers: Vec<TracerReport>,
    pub counters: Vec<String>,
    pub code_paths: Vec<String>,
    pub survey_notes: Vec<String>,
    pub notes: Vec<String>,
    pub figures: Vec<FigureRef>,
}

impl ReportError {
    /// 2 for input the user must fix (not a results directory, a malformed file); 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            ReportError::NotResults { .. }
            | ReportError::Parse { .. }
            | ReportError::MissingColumn { .. }
            | ReportError::Usage(_) => 2,
            ReportError::Io { .. } | ReportError::Plot(_) => 1,
        }
    }
}

pub fn run(args: &ReportArgs) -> Result<i32, ReportError> {
    run_report(args)
}

impl crate::error::ExitCode for ReportError {
    fn exit_code(&self) -> i32 {
        ReportError::exit_code(self)
    }
}

fn run_report(args: &ReportArgs) -> Result<i32, ReportError> {
    if args.dirs.len() > 1 {
        let Some(out) = &args.out else {
            return Err(ReportError::Usage(
                "several directories make one report side by side: say where it goes with --out DIR".into(),
            ));
        };
        let lines = compare::write(&args.dirs, out)?;
        for l in lines {
            println!("{l}");
        }
        println!("report: {} runs side by side -> {}", args.dirs.len(), out.join("report.html").display());
        return Ok(0);
    }
    let dir = &args.dirs[0];
    if args.out.is_some() {
        return Err(ReportError::Usage(
            "--out is for several directories; the report of one directory is written into it".into(),
        ));
    }
    if sweep::is_sweep(dir) && args.synthetic.is_none() {
        let lines = sweep::write(dir)?;
        for l in lines {
            println!("{l}");
        }
        println!("report: sweep -> {}", dir.join("report.html").display());
        return Ok(0);
    }
    // `run --instructions singlestep` (issue 19): counts, not timings, so a report of its own.
    if stepped::is_stepped(dir) && args.synthetic.is_none() {
        let lines = stepped::write(dir)?;
        for l in lines {
            println!("{l}");
        }
        println!("report: instructions per call -> {}", dir.join("report.html").display());
        return Ok(0);
    }
    if let Some(spec) = &args.synthetic {
        let bad = || ReportError::Usage(format!("--synthetic expects TRACERSxROWS, e.g. 10x100000, got '{spec}'"));
        let (t, r) = spec.split_once(['x', 'X']).ok_or_else(bad)?;
        let tracers: usize = t.trim().parse().ok().filter(|&t| (1..=100).contains(&t)).ok_or_else(bad)?;
        let rows: usize = r.trim().parse().ok().filter(|&r| (100..=100_000_000).contains(&r)).ok_or_else(bad)?;
        let t0 = Instant::now();
        synth::write(
            dir,
            &synth::Options { tracers, rows, threads: vec![1, 2, 4], counters: args.synthetic_counters },
        )?;
        eprintln!(
            "synthetic results ({tracers} tracers x {rows} rows) written to {} in {:.2} s",
            dir.display(),
            t0.elapsed().as_secs_f64()
        );
    }
    let t0 = Instant::now();
    let report = build(dir, args.points as usize, args.iterations as usize)?;
    // Ignore a closed stdout (`| head`): the files are written already.
    let mut out = std::io::stdout().lock();
    let said = crate::results::interrupted_line(&report.run).into_iter().chain(blocked_lines(&report.tracers));
    for l in said.chain(report.code_paths.iter().cloned()).chain(report.survey_notes.iter().cloned()) {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(
        out,
        "report: {} tracers, {} figures -> {} and report.md in {:.2} s",
        report.tracers.len(),
        report.figures.len(),
        dir.join("report.html").display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}

/// The blocked-call line of every summary row that has one (`SummaryRow::blocked_line`).
fn blocked_lines(tracers: &[TracerReport]) -> Vec<String> {
    tracers.iter().flat_map(|t| t.by_threads.values().filter_map(|s| s.blocked_line(&t.label))).collect()
}

/// Reads DIR, analyses it and writes report.html, report.md and figures/.
pub fn build(dir: &Path, points: usize, iterations: usize) -> Result<Report, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::NotResults { dir: dir.to_path_buf(), missing: "the directory itself".into() });
    }
    let run = load::read_run_json(dir)?;
    let summary_path = dir.join(crate::results::SUMMARY_CSV);
    if !summary_path.exists() {
        return Err(ReportError::NotResults { dir: dir.to_path_buf(), missing: crate::results::SUMMARY_CSV.into() });
    }
    let summary = load::read_summary(&summary_path, false)?;
    let reps_path = dir.join(crate::results::REPETITIONS_CSV);
    let reps = if reps_path.exists() { load::read_summary(&reps_path, true)? } else { Vec::new() };
    let synthetic = run.get("synthetic").and_then(Value::as_bool).unwrap_or(false);
    let kernel = survey::is_kernel(&run);

    // Tracers in run.json order, then any summary row run.json does not list.
    let mut metas = load::tracers_of(&run);
    for name in load::ordered_unique(summary.iter().map(|r| r.tracer.clone())) {
        if !metas.iter().any(|m| m.name == name) {
            metas.push(TracerMeta { dir: load::dir_name(&name), spec: name.clone(), name, config: Value::Null });
        }
    }
    let mut tracers = Vec::new();
    for (i, m) in metas.into_iter().enumerate() {
        let by_threads: BTreeMap<u32, SummaryRow> =
            summary.iter().filter(|r| r.tracer == m.name).map(|r| (r.threads, r.clone())).collect();
        let base = by_threads.keys().next().copied();
        let rep_means = reps.iter().filter(|r| r.tracer == m.name && Some(r.threads) == base).map(|r| r.mean).collect();
        let mut rep_by_threads: BTreeMap<u32, Vec<(u32, f64)>> = BTreeMap::new();
        for r in reps.iter().filter(|r| r.tracer == m.name) {
            rep_by_threads.entry(r.threads).or_default().push((r.repetition.unwrap_or(0), r.mean));
        }
        let events = dir.join(&m.dir).join(crate::results::EVENTS_CSV);
        let (analysis, note) = if events.exists() {
            (Some(analyze::analyze(&events, base, points, iterations)?), None)
        } else {
            (None, Some(format!("{}: no {} (figures and code paths skipped)", m.name, events.display())))
        };
        let label = match survey::ftrace_clock(&m.config) {
            Some(c) if survey::kind(&m.spec).starts_with("ftrace") => {
                format!("{} (clock={c})", m.name)
            }
            _ => m.name.clone(),
        };
        tracers.push(TracerReport {
            name: m.name,
            spec: m.spec,
            label,
            colour: i,
            config: m.config,
            by_threads,
            rep_means,
            rep_by_threads,
            analysis,
            note,
        });
    }
    let counters: Vec<String> = load::ordered_unique(
        tracers
            .iter()
            .filter_map(|t| t.analysis.as_ref())
            .flat_map(|a| a.counters.iter().filter(|c| c.running.n > 0).map(|c| c.name.clone())),
    );

    let mut report = Report {
        dir: dir.to_path_buf(),
        run,
        synthetic,
        kernel,
        tracers,
        counters,
        code_paths: Vec::new(),
        survey_notes: Vec::new(),
        notes: Vec::new(),
        figures: Vec::new(),
    };
    report.notes.extend(blocked_lines(&report.tracers));
    for t in &report.tracers {
        if let Some(n) = &t.note {
            report.notes.push(n.clone());
        }
        if let Some(a) = &t.analysis {
            let expected = expected_period(&report.run, t);
            for cp in &a.code_paths {
                let e = if cp.metric == "latency" { expected.as_ref() } else { None };
                report.code_paths.push(paths::describe(&t.label, cp, e));
            }
        }
    }
    report.survey_notes = compare_with_survey(&report);
    draw_figures(&mut report, points, iterations)?;
    render::write(&report)?;
    Ok(report)
}

fn draw_figures(r: &mut Report, _points: usize, iterations: usize) -> Result<(), ReportError> {
    let fdir = r.dir.join("figures");
    std::fs::create_dir_all(&fdir).map_err(|source| ReportError::Io { path: fdir.clone(), source })?;
    let analysed: Vec<(&TracerReport, &TracerAnalysis)> =
        r.tracers.iter().filter_map(|t| Some((t, t.analysis.as_ref()?))).filter(|(_, a)| a.rows > 0).collect();
    let mut figs = Vec::new();
    if !analysed.is_empty() {
        let threads = analysed.iter().map(|x| x.1.threads).min().unwrap_or(1);
        let cdf = plot::CdfFigure {
            title: format!(
                "Latency distribution per tracer (CDF, {threads} thread{})",
                if threads == 1 { "" } else { "s" }
            ),
            series: analysed
                .iter()
                .map(|(t, a)| {
                    // One point per bin from the first to the last non-empty one, so empty
                    // stretches draw flat and each step sits within one bin (2.3 %).
                    let total = a.latency.total() as f64;
                    let bins = a.latency.bins();
                    let first = bins.iter().position(|&c| c > 0).unwrap_or(0);
                    let last = bins.iter().rposition(|&c| c > 0).unwrap_or(0);
                    let mut acc = a.latency.zero_count() as f64;
                    let mut pts = vec![(LogHistogram::bin_lo(first), acc / total)];
                    for (i, &c) in bins.iter().enumerate().take(last + 1).skip(first) {
                        acc += c as f64;
                        pts.push((LogHistogram::bin_lo(i + 1), acc / total));
                    }
                    Series { name: t.label.clone(), colour: t.colour, points: pts }
                })
                .collect(),
        };
        plot::save(&cdf, &fdir, "latency_cdf")?;
        figs.push(FigureRef {
            name: "latency_cdf".into(),
            title: cdf.title.clone(),
            caption: "Fraction of kept calls at or below each latency. A step in a curve is a code path or a phase of the machine (the code-path lines tell which); a long tail is rare slow paths or noise.".into(),
        });
        let hist = plot::HistogramGrid {
            title: "Latency histogram per tracer (log-spaced bins, 25 per decade)".into(),
            panels: analysed
                .iter()
                .map(|(t, a)| {
                    let mut bins: BTreeMap<usize, u64> = BTreeMap::new();
                    for (i, &c) in a.latency.bins().iter().enumerate() {
                        if c > 0 {
                            *bins.entry(i / 4).or_default() += c;
                        }
                    }
                    let pts = bins
                        .into_iter()
                        .map(|(g, c)| (LogHistogram::bin_lo(g * 4), LogHistogram::bin_lo(g * 4 + 4), c))
                        .collect();
                    Series { name: format!("{} ({} calls)", t.label, a.rows), colour: t.colour, points: pts }
                })
                .collect(),
        };
        plot::save(&hist, &fdir, "latency_histograms")?;
        figs.push(FigureRef {
            name: "latency_histograms".into(),
            title: hist.title.clone(),
            caption: "A separate hump is a code path or a phase of the machine; the report's code-path lines tell which, with shares and periods."
                .into(),
        });
        let iters = plot::IterationGrid {
            title: format!("Latency against iteration index (first {iterations} kept calls of thread 0)"),
            panels: analysed
                .iter()
                .map(|(t, a)| Series { name: t.label.clone(), colour: t.colour, points: a.first_iterations.clone() })
                .collect(),
        };
        plot::save(&iters, &fdir, "latency_vs_iteration")?;
        figs.push(FigureRef {
            name: "latency_vs_iteration".into(),
            title: iters.title.clone(),
            caption: "Periodic slow paths (a sub-buffer switch, a flush) show as evenly spaced points above the fast path. Gaps in the index are discarded calls.".into(),
        });
        if !r.counters.is_empty() {
            let cg = plot::CounterGrid {
                title: "Latency against hardware counters (survey Figures 3, 4 and 7)".into(),
                panels: r
                    .counters
                    .iter()
                    .map(|c| {
                        let series = analysed
                            .iter()
                            .filter_map(|(t, a)| {
                                let cs = a.counters.iter().find(|x| &x.name == c && x.running.n > 0)?;
                                Some(Series {
                                    name: t.label.clone(),
                                    colour: t.colour,
                                    points: cs.sample.items.clone(),
                                })
                            })
                            .collect();
                        (c.clone(), series)
                    })
                    .collect(),
            };
            plot::save(&cg, &fdir, "latency_vs_counters")?;
            figs.push(FigureRef {
                name: "latency_vs_counters".into(),
                title: cg.title.clone(),
                caption: format!("A uniform sample of up to {} calls per tracer. Columns of points at distinct instruction counts are code paths (survey section 7.1).", analysed.iter().filter_map(|x| x.1.counters.first()).map(|c| c.sample.cap).max().unwrap_or(0)),
            });
        }
    }
    let scaled: Vec<&TracerReport> = r.tracers.iter().filter(|t| t.by_threads.len() >= 2).collect();
    if !scaled.is_empty() {
        let line = |t: &TracerReport| Series {
            name: t.label.clone(),
            colour: t.colour,
            points: t.by_threads.iter().map(|(&n, s)| (n as f64, s.mean)).filter(|p| p.1 > 0.0).collect(),
        };
        let fig_no = if r.kernel { "Figure 5" } else { "Figure 8" };
        let sf = plot::ScalingFigure {
            title: format!("Mean latency against thread count (survey {fig_no})"),
            series: scaled.iter().map(|t| line(t)).collect(),
        };
        plot::save(&sf, &fdir, "scalability")?;
        figs.push(FigureRef {
            name: "scalability".into(),
            title: sf.title.clone(),
            caption: "Each thread traces on its own core at once. A flat line: per-CPU buffers, no shared lock; a rising line: contention.".into(),
        });
        let ftraces: Vec<&&TracerReport> =
            scaled.iter().filter(|t| survey::kind(&t.spec).starts_with("ftrace")).collect();
        if ftraces.len() >= 2 {
            let ff = plot::ScalingFigure {
                title: "ftrace clock sources: mean latency against thread count (survey Figure 6)".into(),
                series: ftraces.iter().map(|t| line(t)).collect(),
            };
            plot::save(&ff, &fdir, "scalability_ftrace_clocks")?;
            figs.push(FigureRef {
                name: "scalability_ftrace_clocks".into(),
                title: ff.title.clone(),
                caption:
                    "The global clock takes a spin lock per event (section 7.1); a CPU-local clock should stay flat."
                        .into(),
            });
        }
    }
    r.figures = figs;
    Ok(())
}

/// Standard base64 (RFC 4648) for embedding figures in report.html.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for ch in data.chunks(3) {
        let b = [ch[0], *ch.get(1).unwrap_or(&0), *ch.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= ch.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
