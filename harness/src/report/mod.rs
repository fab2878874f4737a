//! `tracebench report DIR`: tables, figures and code-path analysis from a results directory,
//! written as DIR/report.html (self-contained), DIR/report.md and DIR/figures/*.png + *.svg.
//!
//! Like every step after the measurement it reads files only (docs/ARCHITECTURE.md, "Honesty"), and
//! it streams each events.csv twice with fixed-size state (log histograms, reservoirs, running
//! moments), so memory does not grow with the number of rows. One stage per folder, data flowing
//! down the table:
//!
//! ```text
//! load      run.json, summary.csv, repetitions.csv, events.csv   (load/, through results::read)
//! analysis  code paths of each metric: passes 1-3, modes,          (crate::analysis: also the
//!           periodic paths, irregular paths, speed phases, dated   sweep's slow-path column, so
//!           levels against the sentinel windows                    not inside report/)
//! findings  typed claims (report.json), the survey check and the   (findings/: mod.rs,
//!           period a tracer's geometry predicts, the ranking       survey_check.rs, ranking.rs)
//! render    the overview (report.json's, all the terminal and     (render/: overview.rs,
//!           report.html render from), the terminal table, report.  terminal.rs, html.rs, mod.rs
//!           html, report.md, the code-path line, tables, figures,  (report.md), path_line.rs,
//!           the one rounding rule                                  tables.rs, figures.rs, numbers.rs)
//! ```
//! The reports that are not one run's code-path report (a sweep, a single-step run, several runs
//! side by side) and the synthetic results generator are in side/. What the stages hand each
//! other is in model.rs (a tracer row, a figure, the error) and findings/report.rs (the report the
//! renderers read). This file holds the command's arguments and the order of the stages (`build`).
pub mod contradictions;
pub mod findings;
pub mod load;
pub mod model;
mod progress;
pub mod render;
pub mod side;
#[cfg(test)]
mod tests;

use crate::analysis;
use crate::analysis::dated::tracer_row;
use findings::expected_period::expected_period;
use findings::survey_check::compare_with_survey;
use findings::survey_reference;
use render::{figures, path_line};
use side::{side_by_side, single_step, sweep, synthetic};

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::plot;
use findings::Report;
use load::{SummaryRow, TracerMeta};
pub use model::ReportError;
use model::TracerReport;

#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Results directory written by `tracebench run`, `scale` or `sweep`; several directories
    /// (with --out) give one report with the runs side by side.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Where the report of several directories goes (a new directory).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Calls per tracer drawn in the latency-against-counter figures (a uniform sample).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    pub points: u64,
    /// Calls shown per tracer in the latency-against-iteration figure (the first ones).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    pub iterations: u64,
    /// Figure size in inches, WIDTHxHEIGHT (3.3x2.5 for a column of a two-column paper, 7x4.5
    /// for the full page width): one-chart figures take it as is; grids are that wide and that
    /// tall per two rows of panels. Text prints at 7.5 to 10 pt at any size.
    #[arg(long, value_name = "WxH", value_parser = plot::parse_size)]
    pub figure_size: Option<(f32, f32)>,
    /// Pixels per inch of the PNG figures (the SVG and PDF are vector).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(30..=1200))]
    pub dpi: u32,
    /// Also write each figure as PDF (figures/NAME.pdf: vector, the font embedded).
    #[arg(long)]
    pub pdf: bool,
    /// Benchmarking aid: first write synthetic results, TRACERSxROWS (e.g. 10x100000), into DIR.
    #[arg(long, hide = true, value_name = "TRACERSxROWS")]
    pub synthetic: Option<String>,
    /// Print the full sentences (every row's, or TRACER's) instead of the table: what report.md says.
    #[arg(long, value_name = "TRACER", num_args = 0..=1, default_missing_value = "")]
    pub explain: Option<String>,
    /// Columns of the latency table's CSV and LaTeX files (tables/), in order, comma-separated:
    /// tracer, threads, kept, discarded, mean, std, p50, p90, p99, min, max, above-none,
    /// repetitions, survey; the other tables' with scaling.tracer, scaling.N, scaling.growth,
    /// counters.tracer, counters.mean, counters.std, counters.COUNTER, counters.COUNTER-std.
    #[arg(long, value_delimiter = ',', default_value = "tracer,mean,std,p50,p90,p99,discarded")]
    pub columns: Vec<String>,
    /// Draw the figures without their titles (a paper's caption says what they show).
    #[arg(long)]
    pub no_titles: bool,
    /// With --synthetic: add hardware counter columns, as on a machine with a PMU.
    #[arg(long, hide = true, requires = "synthetic")]
    pub synthetic_counters: bool,
}

pub fn run(args: &ReportArgs) -> Result<i32, ReportError> {
    plot::set_options(plot::FigureOptions {
        size_in: args.figure_size,
        dpi: args.dpi,
        pdf: args.pdf,
        titles: !args.no_titles,
    });
    render::table_files::set_columns(&args.columns).map_err(ReportError::Usage)?;
    // A results directory made under sudo and read without it: say so, not "not a results
    // directory".
    if let Some(why) = args.dirs.iter().find_map(|d| crate::results::owner::unreadable(d)) {
        return Err(ReportError::Usage(why));
    }
    if args.dirs.len() > 1 {
        let Some(out) = &args.out else {
            return Err(ReportError::Usage(
                "several directories make one report side by side: say where it goes with --out DIR".into(),
            ));
        };
        let lines = side_by_side::write(&args.dirs, out)?;
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
    // `run --instructions singlestep`: counts, not timings, so a report of its own.
    if single_step::is_stepped(dir) && args.synthetic.is_none() {
        let lines = single_step::write(dir)?;
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
        synthetic::write(
            dir,
            &synthetic::Options { tracers, rows, threads: vec![1, 2, 4], counters: args.synthetic_counters },
        )?;
        eprintln!(
            "synthetic results ({tracers} tracers x {rows} rows) written to {} in {:.2} s",
            dir.display(),
            t0.elapsed().as_secs_f64()
        );
    }
    let t0 = Instant::now();
    let progress = progress::Progress::start();
    let report = build(dir, args.points as usize, args.iterations as usize)?;
    drop(progress);
    // What the terminal says renders from report.json alone, so it says what report.html says.
    let overview = render::load_overview(dir)?;
    let terminal = render::terminal::Terminal { explain: args.explain.as_deref() };
    render::format::emit(&terminal, &render::View { report: &report, overview: &overview })?;
    // Ignore a closed stdout (`| head`): the files are written already.
    let _ = writeln!(
        std::io::stdout().lock(),
        "report: {} tracers, {} figures -> {} and report.md in {:.2} s",
        report.tracers.len(),
        report.figures.len(),
        dir.join("report.html").display(),
        t0.elapsed().as_secs_f64(),
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
        return Err(ReportError::Read(crate::results::read::ReadError::NotResults {
            dir: dir.to_path_buf(),
            missing: "the directory itself".into(),
        }));
    }
    let run = load::read_run_json(dir)?;
    let summary_path = dir.join(crate::results::SUMMARY_CSV);
    if !summary_path.exists() {
        return Err(ReportError::Read(crate::results::read::ReadError::NotResults {
            dir: dir.to_path_buf(),
            missing: crate::results::SUMMARY_CSV.into(),
        }));
    }
    let summary = load::read_summary(&summary_path, false)?;
    let reps_path = dir.join(crate::results::REPETITIONS_CSV);
    let reps = if reps_path.exists() { load::read_summary(&reps_path, true)? } else { Vec::new() };
    let synthetic = run.get("synthetic").and_then(Value::as_bool).unwrap_or(false);
    let kernel = survey_reference::is_kernel(&run);

    let tracers = tracer_reports(dir, &run, &summary, &reps, points, iterations)?;
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
        findings: Vec::new(),
        code_paths: Vec::new(),
        survey_notes: Vec::new(),
        survey_checks: Vec::new(),
        notes: Vec::new(),
        figures: Vec::new(),
    };
    report.notes.extend(blocked_lines(&report.tracers));
    report.notes.extend(report.tracers.iter().filter_map(|t| t.note.clone()));
    report.findings = report.tracers.iter().map(|t| tracer_findings(&report.run, t)).collect();
    for (t, f) in report.tracers.iter().zip(&report.findings) {
        report.code_paths.extend(f.metrics.iter().map(|m| path_line::line(&t.label, m, path_line::Markup::Terminal)));
    }
    report.survey_checks = compare_with_survey(&report);
    report.survey_notes = report.survey_checks.iter().map(|c| c.text.clone()).collect();
    figures::draw(&mut report, iterations)?;
    render::write_report(&report)?;
    Ok(report)
}

/// The tracer rows in run.json order, then any summary row run.json does not list, each with
/// its summary rows, repetition means and the analysis of its events.csv.
fn tracer_reports(
    dir: &Path,
    run: &Value,
    summary: &[SummaryRow],
    reps: &[SummaryRow],
    points: usize,
    iterations: usize,
) -> Result<Vec<TracerReport>, ReportError> {
    let mut metas = load::tracers_of(run);
    for name in load::ordered_unique(summary.iter().map(|r| r.tracer.clone())) {
        if !metas.iter().any(|m| m.name == name) {
            metas.push(TracerMeta { dir: load::dir_name(&name), spec: name.clone(), name, config: Value::Null });
        }
    }
    let mut tracers = Vec::new();
    for m in metas {
        let by_threads: BTreeMap<u32, SummaryRow> =
            summary.iter().filter(|r| r.tracer == m.name).map(|r| (r.threads, r.clone())).collect();
        let base = by_threads.keys().next().copied();
        let rep_means = reps.iter().filter(|r| r.tracer == m.name && Some(r.threads) == base).map(|r| r.mean).collect();
        let mut rep_by_threads: BTreeMap<u32, Vec<(u32, f64)>> = BTreeMap::new();
        for r in reps.iter().filter(|r| r.tracer == m.name) {
            rep_by_threads.entry(r.threads).or_default().push((r.repetition.unwrap_or(0), r.mean));
        }
        let events = dir.join(&m.dir).join(crate::results::EVENTS_CSV);
        let (analysis, note) = if crate::results::events_file::exists(&events) {
            let a = analysis::analyze(&events, base, points, iterations)?;
            let note = a.sample_note(&m.name);
            (Some(a), note)
        } else {
            (None, Some(format!("{}: no {} (figures and code paths skipped)", m.name, events.display())))
        };
        // The dated levels, the footprint check and the fold at the expected period each stream
        // the row's events once more, from the same findings and independently: at once.
        let latency =
            analysis.as_ref().and_then(|a| a.code_paths.iter().find(|c| c.metric == "latency").map(|c| (a, c)));
        let expected = findings::expected_period::expected_of(run, &m.name, &m.spec, &m.config);
        let (dated, footprint, folded) = match latency {
            Some((a, cp)) => {
                let src = crate::results::read::Source::File(events.clone());
                let cycles = crate::analysis::footprint::cycles(run);
                // Folded only where the search found no path at the expected period.
                let fold = expected.as_ref().map(|e| e.period).filter(|&e| {
                    !cp.periodic.iter().any(|p| findings::expected_period::near_expected(p.mean_period(), e))
                });
                let (dated, footprint, folded) = std::thread::scope(|s| {
                    let footprint = s.spawn(|| crate::analysis::footprint::check(&src, a.threads, cp, &cycles));
                    let folded = s.spawn(|| match fold {
                        Some(e) => crate::analysis::folded_period::at_expected(
                            &src,
                            a.threads,
                            cp,
                            e,
                            &cycles.iter().map(|c| c.length).collect::<Vec<_>>(),
                        ),
                        None => Ok(None),
                    });
                    let dated = tracer_row::dated(dir, &m.dir, &m.name, a.threads, cp);
                    (
                        dated,
                        footprint.join().expect("the footprint check panicked"),
                        folded.join().expect("the fold at the expected period panicked"),
                    )
                });
                (Some(dated?), footprint?, folded?)
            }
            None => (None, Vec::new(), None),
        };
        let attribution =
            match analysis.as_ref().and_then(|a| a.code_paths.iter().find(|c| c.metric == "latency").map(|c| (a, c))) {
                Some((a, cp)) => {
                    let r = crate::analysis::attribution::load(dir, &m.dir, a.threads)?;
                    crate::analysis::attribution::attribute(cp, r.as_ref())
                }
                None => None,
            };
        let label = match survey_reference::ftrace_clock(&m.config) {
            Some(c) if survey_reference::kind(&m.spec).starts_with("ftrace") => {
                format!("{} (clock={c})", m.name)
            }
            _ => m.name.clone(),
        };
        tracers.push(TracerReport {
            name: m.name,
            spec: m.spec,
            label,
            colour: 0,
            config: m.config,
            by_threads,
            rep_means,
            rep_by_threads,
            analysis,
            dated,
            footprint,
            folded,
            attribution,
            note,
        });
    }
    // A colour per row name, whatever the rows' order (plot/palette.rs).
    let slots = crate::plot::palette::slots(&tracers.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
    for (t, s) in tracers.iter_mut().zip(slots) {
        t.colour = s;
    }
    Ok(tracers)
}

/// The findings of one tracer row: the code paths of each metric, with the period its geometry
/// predicts beside the latency's.
fn tracer_findings(run: &Value, t: &TracerReport) -> findings::TracerFindings {
    let expected = expected_period(run, t);
    let metrics = t.analysis.as_ref().map_or(Vec::new(), |a| {
        a.code_paths
            .iter()
            .map(|cp| {
                let latency = cp.metric == "latency";
                let mut f = findings::of(
                    cp,
                    expected.as_ref().filter(|_| latency),
                    t.dated.as_ref().filter(|_| latency),
                    t.attribution.as_ref().filter(|_| latency),
                    t.folded.as_ref().filter(|_| latency),
                );
                if latency {
                    f.findings.extend(t.footprint.iter().cloned().map(findings::Finding::HarnessCycle));
                }
                f
            })
            .collect()
    });
    findings::TracerFindings {
        name: t.name.clone(),
        label: t.label.clone(),
        threads: t.analysis.as_ref().map(|a| a.threads).or(t.by_threads.keys().next().copied()).unwrap_or(0),
        summary: t.base().map(findings::SummaryFigures::of),
        metrics,
    }
}
