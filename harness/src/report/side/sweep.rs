//! The report of a sweep (`tracebench sweep`): per knob, latency (mean and p90) against the value,
//! one line per tracer, the main slow path's period against the value, and the law each curve
//! follows, stated only as far as the numbers in sweep.csv show it (survey 7.1: the slow path's
//! period grows with the sub-buffer; 7.3 and Figure 9: cost against payload length).
//!
//! `write` is three steps: `read` (sweep.csv and each value's run.json), `say` (the lines: laws
//! and notes) and the drawing and page (`draw_figures`, `page`).
use std::path::Path;

use super::sweep_law::{latency_law, num, period_law, Point};
use crate::plot::{self, CurveFigure, Series};
use crate::report::model::ReportError;
use crate::report::render::page::Page;
use crate::results::sweep_steps::{judge_sweep, SweepKey};
use crate::results::table::Table;
use crate::stats::compare::{Comparison, Outcome};

struct Curve {
    tracer: String,
    threads: String,
    points: Vec<Point>,
    /// `steps[i]`: point i against point i + 1 by the one comparison (None where either has no
    /// repetitions to compare).
    steps: Vec<Option<Comparison>>,
}

/// What a sweep's files hold: the knob, its values in file order, one curve per tracer (and
/// thread count, unless the knob is the thread count), and the rows holding fewer kept calls
/// than their run planned.
struct Sweep {
    knob: String,
    values: Vec<String>,
    curves: Vec<Curve>,
    short: Vec<String>,
}

impl Sweep {
    /// Every value is a number (an x axis), not a name (categories).
    fn numeric(&self) -> bool {
        self.values.iter().all(|v| num(v).is_some())
    }
    /// A curve's name: a thread-count suffix only when the sweep holds several thread counts.
    fn label(&self, c: &Curve) -> String {
        let several_threads = self.curves.iter().any(|x| x.threads != self.curves[0].threads);
        if several_threads {
            format!("{} x{}", c.tracer, c.threads)
        } else {
            c.tracer.clone()
        }
    }
}

/// Whether DIR is a sweep's output.
pub fn is_sweep(dir: &Path) -> bool {
    dir.join(crate::results::SWEEP_CSV).is_file()
}

/// Writes DIR/report.md, report.html and figures/sweep-*.{png,svg}; returns the page's lines.
pub fn write(dir: &Path) -> Result<Vec<String>, ReportError> {
    let sweep = read(dir)?;
    let figures = draw_figures(dir, &sweep)?;
    let lines = say(&sweep);
    page(&sweep, lines.clone(), figures).write(dir)?;
    Ok(lines)
}

/// Reads sweep.csv by column name into curves, and each value's run.json for the calls it planned.
fn read(dir: &Path) -> Result<Sweep, ReportError> {
    let path = dir.join(crate::results::SWEEP_CSV);
    let t = Table::read(&path).map_err(|e| ReportError::Usage(e.to_string()))?;
    let col = |n: &str| {
        t.col(n).ok_or_else(|| {
            ReportError::Read(crate::results::read::ReadError::MissingColumn { path: path.clone(), column: n.into() })
        })
    };
    let (ct, cp, cv, cth, cmean, cp90, cper, cext) = (
        col("tracer")?,
        col("param")?,
        col("value")?,
        col("threads")?,
        col(crate::results::columns::MEAN)?,
        col(crate::results::columns::P90)?,
        col("slow_period")?,
        col("slow_extra_ns")?,
    );
    let knob = t.rows.first().map(|r| r[cp].clone()).unwrap_or_default();
    let mut curves: Vec<Curve> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    // (curve, point index in it) of each row of sweep.csv.
    let mut curve_of_row: Vec<(usize, usize)> = Vec::new();
    for r in &t.rows {
        if !values.contains(&r[cv]) {
            values.push(r[cv].clone());
        }
        // Sweeping threads, the thread count is the x axis, not a curve of its own.
        let key = (r[ct].clone(), if knob == "threads" { String::new() } else { r[cth].clone() });
        let i = match curves.iter().position(|c| (c.tracer.clone(), c.threads.clone()) == key) {
            Some(i) => i,
            None => {
                curves.push(Curve { tracer: key.0, threads: key.1, points: Vec::new(), steps: Vec::new() });
                curves.len() - 1
            }
        };
        let bad = |what: &str| {
            ReportError::Read(crate::results::read::ReadError::Parse {
                path: path.clone(),
                line: 0,
                msg: format!("{what} is not a number"),
            })
        };
        curves[i].points.push((
            r[cv].clone(),
            num(&r[cmean]).ok_or_else(|| bad("mean_ns"))?,
            num(&r[cp90]).ok_or_else(|| bad("p90_ns"))?,
            num(&r[cper]),
            num(&r[cext]),
        ));
        curve_of_row.push((i, curves[i].points.len() - 1));
    }
    // Each point against the curve's previous one, from the values' repetitions.csv: the same
    // judgement the sweep wrote into sweep.csv, re-made so that a sweep written before those
    // columns existed is judged too.
    let keys: Vec<SweepKey> = t
        .rows
        .iter()
        .map(|r| SweepKey { tracer: r[ct].clone(), value: r[cv].clone(), threads: r[cth].parse().unwrap_or(1) })
        .collect();
    for ((i, k), c) in curve_of_row.into_iter().zip(judge_sweep(dir, &knob, &keys)) {
        if k > 0 {
            curves[i].steps.push(c);
        }
    }
    // A sweep stopped by Ctrl-C holds values measured in fewer repetitions (or not at all): their
    // points are not comparable with the others'. Said where the rows hold fewer kept calls than
    // the run planned (iterations x repeats x threads, from each value's run.json).
    let planned = |v: &str| -> Option<f64> {
        let t = std::fs::read_to_string(dir.join(format!("{knob}={v}")).join(crate::results::RUN_JSON)).ok()?;
        let j: serde_json::Value = serde_json::from_str(&t).ok()?;
        Some(j.get("iterations")?.as_f64()? * j.get("repeats")?.as_f64()?)
    };
    let ckept = t.col(crate::results::columns::KEPT);
    let mut short: Vec<String> = Vec::new();
    for r in &t.rows {
        let (Some(k), Some(p)) = (ckept.and_then(|c| num(&r[c])), planned(&r[cv])) else { continue };
        let threads = num(&r[cth]).unwrap_or(1.0);
        if k < p * threads {
            let what = format!("{} at {knob} {} ({k:.0} of {:.0} calls)", r[ct], r[cv], p * threads);
            if !short.contains(&what) {
                short.push(what);
            }
        }
    }
    Ok(Sweep { knob, values, curves, short })
}

/// The page's lines: the short-run warning, each curve's laws, what each tracer adds over its
/// baseline row, and where each value's own report is.
fn say(s: &Sweep) -> Vec<String> {
    let (knob, numeric) = (&s.knob, s.numeric());
    let mut lines = Vec::new();
    if !s.short.is_empty() {
        lines.push(format!(
            "This sweep holds fewer calls than it planned (an interrupted or failed cell): {}; the curves below compare unequal work, \
             so run the sweep again to completion before reading a law from them.",
            s.short.join(", ")
        ));
    }
    for c in &s.curves {
        lines.push(latency_law(&s.label(c), knob, numeric, &c.points, &c.steps));
        if let Some(l) = period_law(&s.label(c), knob, numeric, &c.points) {
            lines.push(l);
        }
    }
    for c in &s.curves {
        if let Some(l) = baseline_line(c, &s.curves, knob) {
            lines.push(l);
        }
    }
    lines.push(format!(
        "Each value is an ordinary results directory ({knob}=VALUE/ beside sweep.csv) with its own report: tracebench report DIR/{knob}=VALUE."
    ));
    lines
}

/// figures/sweep-{mean,p90,period}: each curve against the knob (a log axis over a wide numeric
/// range, categories for names); a figure without a point is not drawn. Returns (name, title).
fn draw_figures(dir: &Path, s: &Sweep) -> Result<Vec<(String, String)>, ReportError> {
    let (knob, values, numeric) = (&s.knob, &s.values, s.numeric());
    let x_of =
        |v: &str| if numeric { num(v).unwrap_or(0.0) } else { values.iter().position(|x| x == v).unwrap_or(0) as f64 };
    let (lo, hi) = values.iter().filter_map(|v| num(v)).fold((f64::INFINITY, 0f64), |a, v| (a.0.min(v), a.1.max(v)));
    let log_x = numeric && lo > 0.0 && hi / lo >= 16.0;
    let unit = if matches!(knob.as_str(), "subbuf-size" | "payload-size") { " (bytes)" } else { "" };
    let fdir = dir.join("figures");
    crate::results::owner::subdir(&fdir)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: fdir.clone(), source }))?;
    let mut figures = Vec::new();
    // The steps were judged on the repetitions' means: only the mean's figure draws them.
    let undecided = |c: &Curve| -> Vec<bool> {
        c.steps.iter().map(|st| st.as_ref().is_none_or(|x| x.outcome == Outcome::Undecided)).collect()
    };
    let mut draw = |name: &str,
                    title: String,
                    y: &str,
                    pick: &dyn Fn(&Point) -> Option<f64>,
                    judged: bool|
     -> Result<(), ReportError> {
        let (series, undecided): (Vec<Series<(f64, f64)>>, Vec<Vec<bool>>) = s
            .curves
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let points: Vec<(f64, f64)> =
                    c.points.iter().filter_map(|p| pick(p).map(|y| (x_of(&p.0), y))).collect();
                // A step is drawn as judged only where no point of the curve is missing.
                let dashed = if judged && points.len() == c.points.len() { undecided(c) } else { Vec::new() };
                (Series { name: s.label(c), colour: i, points }, dashed)
            })
            .filter(|s| !s.0.points.is_empty())
            .unzip();
        if series.is_empty() {
            return Ok(());
        }
        let any_dashed = undecided.iter().flatten().any(|d| *d);
        let fig = CurveFigure {
            title: title.clone(),
            x_desc: format!("{knob}{unit}{}", if log_x { ", log scale" } else { "" }),
            y_desc: y.into(),
            log_x,
            x_names: (!numeric).then(|| values.clone()),
            series,
            undecided,
        };
        plot::save(&fig, &fdir, name)?;
        let caption = match any_dashed {
            true => format!(
                "{title}; dashed: a step between two values not decided by the comparison of their \
                     repetitions (the page says how many rounds would decide it)"
            ),
            false => title,
        };
        figures.push((name.to_string(), caption));
        Ok(())
    };
    let mean = |p: &Point| Some(p.1);
    draw("sweep-mean", format!("Mean latency per call against {knob}"), "mean latency (ns, log scale)", &mean, true)?;
    let p90 = |p: &Point| Some(p.2);
    draw("sweep-p90", format!("p90 latency per call against {knob}"), "p90 latency (ns, log scale)", &p90, false)?;
    draw(
        "sweep-period",
        format!("Period of the main slow path against {knob} (survey 7.1)"),
        "slow-path period (calls, log scale)",
        &|p| p.3,
        false,
    )?;
    Ok(figures)
}

/// The page: the lines, the sweep's table (one row per curve and value) and the figures.
fn page(s: &Sweep, lines: Vec<String>, figures: Vec<(String, String)>) -> Page {
    let head: Vec<String> =
        ["tracer", "threads", &s.knob, "mean ns", "p90 ns", "slow-path period", "slow-path extra ns"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let rows = s
        .curves
        .iter()
        .flat_map(|c| {
            c.points.iter().map(move |p| {
                vec![
                    c.tracer.clone(),
                    if c.threads.is_empty() { p.0.clone() } else { c.threads.clone() },
                    p.0.clone(),
                    format!("{:.1}", p.1),
                    format!("{:.1}", p.2),
                    p.3.map(|v| format!("{v:.0}")).unwrap_or_else(|| "none found".into()),
                    p.4.map(|v| format!("{v:+.0}")).unwrap_or_default(),
                ]
            })
        })
        .collect();
    Page {
        title: format!("tracebench sweep over {}", s.knob),
        lines,
        tables: vec![(crate::results::SWEEP_CSV.into(), head, rows)],
        figures,
        cards: Vec::new(),
    }
}

/// The row a tracer's cost is read against: the untraced call of the same family (survey 6.2.1
/// "None" row; 7.3 for system calls).
fn baseline_of(tracer: &str) -> Option<&'static str> {
    match tracer {
        "none" | "syscall" | "open" => None,
        "ftrace-open" | "strace-open" => Some("open"),
        "ftrace-syscall" | "ftrace-raw-syscall" | "strace" => Some("syscall"),
        _ => Some("none"),
    }
}

/// "ftrace-open over open: +606 / +704 / +609 / +710 ns at payload-size 4 / 256 / 1024 / 4095;
/// from 4 to 4095 it changes +104 ns, open itself +766 ns": what the tracer adds at each value,
/// when the sweep has its baseline row, so that a reader sees whether the tracer's own cost
/// follows the knob (survey Figure 9: a tracer that copies the string grows, one that records
/// the pointer does not). Numbers only: no law is claimed for a difference of two noisy means.
fn baseline_line(c: &Curve, curves: &[Curve], knob: &str) -> Option<String> {
    let base = curves.iter().find(|b| Some(b.tracer.as_str()) == baseline_of(&c.tracer) && b.threads == c.threads)?;
    let pairs: Vec<(&str, f64, f64)> = c
        .points
        .iter()
        .filter_map(|p| base.points.iter().find(|q| q.0 == p.0).map(|q| (p.0.as_str(), p.1 - q.1, q.1)))
        .collect();
    if pairs.len() < 2 {
        return None;
    }
    let (first, last) = (pairs[0], pairs[pairs.len() - 1]);
    Some(format!(
        "{} over {}: {} ns at {knob} {}; from {} to {} it changes {:+.0} ns, {} itself {:+.0} ns.",
        c.tracer,
        base.tracer,
        pairs.iter().map(|p| format!("{:+.0}", p.1)).collect::<Vec<_>>().join(" / "),
        pairs.iter().map(|p| p.0).collect::<Vec<_>>().join(" / "),
        first.0,
        last.0,
        last.1 - first.1,
        base.tracer,
        last.2 - first.2
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &str, mean: f64) -> Point {
        (v.into(), mean, mean, None, None)
    }

    #[test]
    fn a_tracer_is_read_over_its_baseline_row() {
        let curve = |t: &str, m: &[f64]| Curve {
            tracer: t.into(),
            threads: "1".into(),
            points: ["4", "1024", "4095"].iter().zip(m).map(|(v, &m)| p(v, m)).collect(),
            steps: Vec::new(),
        };
        let cs = [curve("open", &[1028.0, 1141.0, 1794.0]), curve("ftrace-open", &[1641.0, 1749.0, 2503.0])];
        let l = baseline_line(&cs[1], &cs, "payload-size").unwrap();
        assert_eq!(
            l,
            "ftrace-open over open: +613 / +608 / +709 ns at payload-size 4 / 1024 / 4095; from 4 to 4095 it changes \
             +96 ns, open itself +766 ns."
        );
        assert!(baseline_line(&cs[0], &cs, "payload-size").is_none());
    }
}
