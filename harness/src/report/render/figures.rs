//! The figures of one run's report (the code-path analysis and the summaries computed them;
//! `plot` draws). Each figure reads only the results files (docs/ARCHITECTURE.md).
use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::code_paths::TracerAnalysis;
use crate::plot::{self, BoxStats, Series};
use crate::report::findings::{survey_reference, Report};
use crate::report::load;
use crate::report::model::{FigureRef, ReportError, TracerReport};
use crate::stats::hist::LogHistogram;

pub fn draw(r: &mut Report, iterations: usize) -> Result<(), ReportError> {
    let fdir = r.dir.join("figures");
    crate::results::owner::subdir(&fdir)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: fdir.clone(), source }))?;
    let analysed: Vec<(&TracerReport, &TracerAnalysis)> =
        r.tracers.iter().filter_map(|t| Some((t, t.analysis.as_ref()?))).filter(|(_, a)| a.rows > 0).collect();
    let mut figs = Vec::new();
    if !analysed.is_empty() {
        figs.push(cdf(&analysed, &fdir)?);
        figs.push(boxes(&analysed, &fdir)?);
        figs.push(histograms(&analysed, &fdir)?);
        figs.push(first_iterations(&analysed, &fdir, iterations)?);
        if !r.counters.is_empty() {
            figs.push(counters(&analysed, &fdir, &r.counters)?);
        }
    }
    figs.extend(scaling(r, &fdir)?);
    for f in &figs {
        write_caption(&fdir, f)?;
    }
    r.figures = figs;
    Ok(())
}

/// What a figure shows where its title is off (`--no-titles`): figures/NAME.caption.txt, the
/// title and the caption (what whiskers, bars and edge triangles mean), for a paper's caption.
fn write_caption(fdir: &Path, f: &FigureRef) -> Result<(), ReportError> {
    let p = fdir.join(format!("{}.caption.txt", f.name));
    let text = format!("{}.\n{}\n", f.title, f.caption);
    crate::results::write_atomic_io(&p, text.as_bytes())
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: p.clone(), source }))
}

/// The caption's sentence on axis limits, for figures whose axes stop at quantiles.
const BEYOND: &str = "Axes stop at the 0.5th and 99.5th percentiles (0.1th and 99.9th for scatters) when calls lie far beyond them; a triangle on an edge marks calls beyond it.";

/// The latency CDF of every tracer in one chart.
fn cdf(analysed: &[(&TracerReport, &TracerAnalysis)], fdir: &Path) -> Result<FigureRef, ReportError> {
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
    plot::save(&cdf, fdir, "latency_cdf")?;
    Ok(FigureRef {
        name: "latency_cdf".into(),
        title: cdf.title.clone(),
        caption: "Fraction of kept calls at or below each latency. A step in a curve is a code path or a speed phase (the code-path lines tell which); a long tail is rare slow paths or noise.".to_string() + " " + BEYOND,
    })
}

/// One latency histogram per tracer.
fn histograms(analysed: &[(&TracerReport, &TracerAnalysis)], fdir: &Path) -> Result<FigureRef, ReportError> {
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
    plot::save(&hist, fdir, "latency_histograms")?;
    Ok(FigureRef {
        name: "latency_histograms".into(),
        title: hist.title.clone(),
        caption: format!("Calls per log-spaced bin (25 per decade). A separate hump is a code path or a speed phase; the report's code-path lines tell which, with shares and periods. {BEYOND}"),
    })
}

/// Latency against iteration, the first calls of each tracer.
fn first_iterations(
    analysed: &[(&TracerReport, &TracerAnalysis)],
    fdir: &Path,
    iterations: usize,
) -> Result<FigureRef, ReportError> {
    let iters = plot::IterationGrid {
        title: format!("Latency against iteration index (first {iterations} kept calls of thread 0)"),
        panels: analysed
            .iter()
            .map(|(t, a)| Series { name: t.label.clone(), colour: t.colour, points: a.first_iterations.clone() })
            .collect(),
    };
    plot::save(&iters, fdir, "latency_vs_iteration")?;
    Ok(FigureRef {
        name: "latency_vs_iteration".into(),
        title: iters.title.clone(),
        caption: "Periodic slow paths (a sub-buffer switch, a flush) show as evenly spaced points above the fast path. Gaps in the index are discarded calls. The iteration index counts calls since the end of warm-up.".to_string() + " " + BEYOND,
    })
}

/// Latency against each hardware counter (survey Figures 3, 4 and 7).
fn counters(
    analysed: &[(&TracerReport, &TracerAnalysis)],
    fdir: &Path,
    counters: &[String],
) -> Result<FigureRef, ReportError> {
    let cg = plot::CounterGrid {
        title: "Latency against hardware counters (survey Figures 3, 4 and 7)".into(),
        panels: counters
            .iter()
            .map(|c| {
                let series = analysed
                    .iter()
                    .filter_map(|(t, a)| {
                        let cs = a.counters.iter().find(|x| &x.name == c && x.running.n > 0)?;
                        Some(Series { name: t.label.clone(), colour: t.colour, points: cs.sample.items.clone() })
                    })
                    .collect();
                (c.clone(), series)
            })
            .collect(),
    };
    plot::save(&cg, fdir, "latency_vs_counters")?;
    Ok(FigureRef {
        name: "latency_vs_counters".into(),
        title: cg.title.clone(),
        caption: format!("A uniform sample of up to {} calls per tracer. Columns of points at distinct instruction counts are code paths (survey section 7.1). {BEYOND}", analysed.iter().filter_map(|x| x.1.counters.first()).map(|c| c.sample.cap).max().unwrap_or(0)),
    })
}

/// Mean latency against thread count, and the ftrace clocks apart (survey Figures 5, 6 and 8).
fn scaling(r: &Report, fdir: &Path) -> Result<Vec<FigureRef>, ReportError> {
    let mut figs = Vec::new();
    let scaled: Vec<&TracerReport> = r.tracers.iter().filter(|t| t.by_threads.len() >= 2).collect();
    if scaled.is_empty() {
        return Ok(figs);
    }
    let line = |t: &TracerReport| Series {
        name: t.label.clone(),
        colour: t.colour,
        points: t.by_threads.iter().map(|(&n, s)| (n as f64, s.mean)).filter(|p| p.1 > 0.0).collect(),
    };
    let spread = repetition_spread(&r.dir)?;
    let bars = |ts: &[&TracerReport]| -> Vec<Vec<(f64, f64, f64)>> {
        ts.iter().map(|t| spread.get(&t.name).cloned().unwrap_or_default()).collect()
    };
    let fig_no = if r.kernel { "Figure 5" } else { "Figure 8" };
    let sf = plot::ScalingFigure {
        title: format!("Mean latency against thread count (survey {fig_no})"),
        series: scaled.iter().map(|t| line(t)).collect(),
        spread: bars(&scaled),
    };
    plot::save(&sf, fdir, "scalability")?;
    figs.push(FigureRef {
        name: "scalability".into(),
        title: sf.title.clone(),
        caption: "Each thread traces on its own core at once. A flat line: per-CPU buffers, no shared lock; a rising line: contention. Points are the mean latency per call; error bars span the lowest to the highest repetition's mean (with --repeats 2 or more; none with one repetition).".into(),
    });
    let ftraces: Vec<&&TracerReport> =
        scaled.iter().filter(|t| survey_reference::kind(&t.spec).starts_with("ftrace")).collect();
    if ftraces.len() >= 2 {
        let ff = plot::ScalingFigure {
            title: "ftrace clock sources: mean latency against thread count (survey Figure 6)".into(),
            series: ftraces.iter().map(|t| line(t)).collect(),
            spread: bars(&ftraces.iter().map(|t| **t).collect::<Vec<_>>()),
        };
        plot::save(&ff, fdir, "scalability_ftrace_clocks")?;
        figs.push(FigureRef {
            name: "scalability_ftrace_clocks".into(),
            title: ff.title.clone(),
            caption: "Points are the mean latency per call; error bars span the lowest to the highest repetition's mean (with --repeats 2 or more). The global clock takes a spin lock per event (section 7.1); a CPU-local clock should stay flat."
                .into(),
        });
    }
    Ok(figs)
}

/// Per-call cost per tracer as boxes, cheapest first (quantiles of the kept calls' log
/// histogram, 2.3 % bins, at the fewest threads).
fn boxes(analysed: &[(&TracerReport, &TracerAnalysis)], fdir: &Path) -> Result<FigureRef, ReportError> {
    let mut stats: Vec<BoxStats> = analysed
        .iter()
        .map(|(t, a)| {
            let q = |p| a.latency.quantile(p);
            let mean = t.base().map(|s| s.mean).unwrap_or(f64::NAN);
            BoxStats {
                name: t.label.clone(),
                colour: t.colour,
                p5: q(0.05),
                p25: q(0.25),
                p50: q(0.5),
                p75: q(0.75),
                p95: q(0.95),
                mean,
            }
        })
        .collect();
    stats.sort_by(|a, b| a.p50.total_cmp(&b.p50));
    let fig = plot::BoxFigure { title: "Per-call latency per tracer, cheapest first (box plot)".into(), boxes: stats };
    plot::save(&fig, fdir, "latency_boxes")?;
    Ok(FigureRef {
        name: "latency_boxes".into(),
        title: fig.title.clone(),
        caption: "Boxes span the 25th to the 75th percentile of the kept calls, the black line is the median, whiskers reach the 5th and 95th percentiles (p5/p95) and the cross is the mean (the mean includes the rare slow paths beyond the whiskers).".into(),
    })
}

/// Per tracer, per thread count: (threads, lowest, highest) of the repetitions' means, where
/// there are two or more repetitions (repetitions.csv).
fn repetition_spread(dir: &Path) -> Result<BTreeMap<String, Vec<(f64, f64, f64)>>, ReportError> {
    let path = dir.join(crate::results::REPETITIONS_CSV);
    let mut by: BTreeMap<(String, u32), Vec<f64>> = BTreeMap::new();
    if path.exists() {
        for r in load::read_summary(&path, true)? {
            if r.mean.is_finite() {
                by.entry((r.tracer, r.threads)).or_default().push(r.mean);
            }
        }
    }
    let mut out: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for ((tracer, threads), means) in by.into_iter().filter(|x| x.1.len() >= 2) {
        let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        out.entry(tracer).or_default().push((threads as f64, lo, hi));
    }
    Ok(out)
}
