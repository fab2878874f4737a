//! The report of a sweep (`tracebench sweep`): per knob, latency (mean and p90) against the value,
//! one line per tracer, the main slow path's period against the value, and the law each curve
//! follows, stated only as far as the numbers in sweep.csv show it (survey 7.1: the slow path's
//! period grows with the sub-buffer; 7.3 and Figure 9: cost against payload length).
//!
//! `write` is three steps: `read` (sweep.csv and each value's run.json), `say` (the lines: laws
//! and notes) and the drawing and page (`draw_figures`, `page`).
use std::path::Path;

use crate::decisions::findings::SWEEP_FLAT;
use crate::plot::{self, CurveFigure, Series};
use crate::report::render::page::Page;
use crate::report::ReportError;
use crate::results::table::Table;

/// (value as typed in sweep.csv, mean, p90, slow-path period, slow-path extra ns)
type Point = (String, f64, f64, Option<f64>, Option<f64>);

struct Curve {
    tracer: String,
    threads: String,
    points: Vec<Point>,
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

fn num(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
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
    for r in &t.rows {
        if !values.contains(&r[cv]) {
            values.push(r[cv].clone());
        }
        // Sweeping threads, the thread count is the x axis, not a curve of its own.
        let key = (r[ct].clone(), if knob == "threads" { String::new() } else { r[cth].clone() });
        let i = match curves.iter().position(|c| (c.tracer.clone(), c.threads.clone()) == key) {
            Some(i) => i,
            None => {
                curves.push(Curve { tracer: key.0, threads: key.1, points: Vec::new() });
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
        lines.push(latency_law(&s.label(c), knob, numeric, &c.points));
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
    crate::results::subdir(&fdir)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: fdir.clone(), source }))?;
    let mut figures = Vec::new();
    let mut draw =
        |name: &str, title: String, y: &str, pick: &dyn Fn(&Point) -> Option<f64>| -> Result<(), ReportError> {
            let series: Vec<Series<(f64, f64)>> = s
                .curves
                .iter()
                .enumerate()
                .map(|(i, c)| Series {
                    name: s.label(c),
                    colour: i,
                    points: c.points.iter().filter_map(|p| pick(p).map(|y| (x_of(&p.0), y))).collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            if series.is_empty() {
                return Ok(());
            }
            let fig = CurveFigure {
                title: title.clone(),
                x_desc: format!("{knob}{unit}{}", if log_x { ", log scale" } else { "" }),
                y_desc: y.into(),
                log_x,
                x_names: (!numeric).then(|| values.clone()),
                series,
            };
            plot::save(&fig, &fdir, name)?;
            figures.push((name.to_string(), title));
            Ok(())
        };
    draw("sweep-mean", format!("Mean latency per call against {knob}"), "mean latency (ns, log scale)", &|p| {
        Some(p.1)
    })?;
    draw("sweep-p90", format!("p90 latency per call against {knob}"), "p90 latency (ns, log scale)", &|p| Some(p.2))?;
    draw(
        "sweep-period",
        format!("Period of the main slow path against {knob} (survey 7.1)"),
        "slow-path period (calls, log scale)",
        &|p| p.3,
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

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// "lw: mean 40.1 / 45.2 / 60.3 ns at 4 / 256 / 1024: grows x1.50 from 4 to 1024". A curve is
/// said to grow or fall only when it is monotonic over numeric values; otherwise the page names
/// its lowest and highest values.
fn latency_law(name: &str, knob: &str, numeric: bool, pts: &[Point]) -> String {
    let means: Vec<String> = pts.iter().map(|p| fmt(p.1)).collect();
    let vals: Vec<&str> = pts.iter().map(|p| p.0.as_str()).collect();
    let (min, max) = pts.iter().fold((f64::INFINITY, 0f64), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    let (first, last) = (pts[0].1, pts[pts.len() - 1].1);
    let rising = pts.windows(2).all(|w| w[1].1 >= w[0].1);
    let falling = pts.windows(2).all(|w| w[1].1 <= w[0].1);
    let at = |v: f64| pts.iter().find(|p| p.1 == v).map(|p| p.0.as_str()).unwrap_or("?");
    let shape = if pts.len() < 2 {
        "one value only, so no curve".to_string()
    } else if max <= min * (1.0 + SWEEP_FLAT) {
        format!("flat (all within {:.0}% of each other)", 100.0 * (max / min - 1.0))
    } else if numeric && rising {
        format!("grows x{:.2} from {} to {}", last / first, vals[0], vals[vals.len() - 1])
    } else if numeric && falling {
        format!("falls x{:.2} from {} to {}", first / last, vals[0], vals[vals.len() - 1])
    } else {
        format!("lowest at {} ({} ns), highest at {} ({} ns, x{:.2})", at(min), fmt(min), at(max), fmt(max), max / min)
    };
    format!("{name}: mean {} ns at {knob} {}: {shape}.", means.join(" / "), vals.join(" / "))
}

/// "lttng-ust: slow-path period 401 / 1630 / 6545 at subbuf-size 4096 / 16384 / 65536:
/// proportional to subbuf-size (value x4.00, x16.0; period x4.06, x16.3)".
fn period_law(name: &str, knob: &str, numeric: bool, pts: &[Point]) -> Option<String> {
    let with: Vec<&Point> = pts.iter().filter(|p| p.3.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let per: Vec<String> =
        pts.iter().map(|p| p.3.map(|v| format!("{v:.0}")).unwrap_or_else(|| "none".into())).collect();
    let vals: Vec<&str> = pts.iter().map(|p| p.0.as_str()).collect();
    let mut s = format!("{name}: slow-path period {} at {knob} {}", per.join(" / "), vals.join(" / "));
    let all_same = with.len() == pts.len() && with.iter().all(|p| p.3 == with[0].3);
    if all_same && pts.len() > 1 {
        s.push_str(": the same at every value.");
        return Some(s);
    }
    if with.len() < pts.len() || with.len() < 2 || !numeric {
        s.push_str(if with.len() < pts.len() {
            ": no period at some values (a run too short for one, or no periodic path), so no law is stated."
        } else {
            "."
        });
        return Some(s);
    }
    let (v0, p0) = (num(&with[0].0).unwrap_or(1.0), with[0].3.unwrap_or(1.0));
    let vr: Vec<f64> = with[1..].iter().map(|p| num(&p.0).unwrap_or(0.0) / v0).collect();
    let pr: Vec<f64> = with[1..].iter().map(|p| p.3.unwrap_or(0.0) / p0).collect();
    let fmt_r = |v: &[f64]| {
        v.iter()
            .map(|r| {
                format!(
                    "x{}",
                    if *r >= 10.0 {
                        format!("{r:.1}")
                    } else if *r >= 0.1 {
                        format!("{r:.2}")
                    } else {
                        format!("{r:.4}")
                    }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let proportional = vr.iter().zip(&pr).all(|(v, p)| (p / v - 1.0).abs() <= SWEEP_FLAT);
    let flat = pr.iter().all(|p| (p - 1.0).abs() <= SWEEP_FLAT);
    let law = if proportional {
        format!("proportional to {knob} (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    } else if flat {
        format!("independent of {knob} (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    } else if vr.windows(2).all(|w| w[1] > w[0]) && pr.iter().all(|p| *p < 1.0) && pr.windows(2).all(|w| w[1] < w[0]) {
        // E.g. LTTng's sub-buffer switch against the payload size: fewer, bigger events per
        // sub-buffer (survey 7.1: SUB-BUFFER_SIZE / EVENT_SIZE).
        format!("falls as {knob} grows (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    } else {
        format!("neither proportional to {knob} nor flat (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    };
    s.push_str(&format!(": {law}."));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &str, mean: f64, per: Option<f64>) -> (String, f64, f64, Option<f64>, Option<f64>) {
        (v.into(), mean, mean, per, per.map(|_| 900.0))
    }

    #[test]
    fn laws_say_what_the_numbers_show() {
        let pts = [p("4096", 74.5, Some(401.0)), p("16384", 71.9, Some(1630.0)), p("65536", 71.0, Some(6545.0))];
        let l = period_law("lttng-ust", "subbuf-size", true, &pts).unwrap();
        assert!(l.contains("proportional to subbuf-size (value x4.00, x16.0; period x4.06, x16.3)"), "{l}");
        let l = latency_law("lttng-ust", "subbuf-size", true, &pts);
        assert!(l.contains("flat (all within 5% of each other)"), "{l}");
        let grow = [p("4", 40.0, None), p("1024", 60.0, None)];
        assert!(latency_law("lw", "payload-size", true, &grow).contains("grows x1.50 from 4 to 1024"));
        let clocks =
            [p("local", 406.0, Some(145.0)), p("global", 439.0, Some(145.0)), p("counter", 381.0, Some(145.0))];
        let l = latency_law("ftrace", "ftrace-clock", false, &clocks);
        assert!(l.contains("lowest at counter (381 ns), highest at global (439 ns"), "{l}");
        assert!(period_law("ftrace", "ftrace-clock", false, &clocks).unwrap().ends_with("the same at every value."));
        assert!(period_law("lw", "payload-size", true, &grow).is_none());
        let partial = [p("4096", 74.5, Some(401.0)), p("16384", 71.9, None)];
        assert!(period_law("x", "subbuf-size", true, &partial).unwrap().contains("no law is stated"));
        let curve = |t: &str, m: &[f64]| Curve {
            tracer: t.into(),
            threads: "1".into(),
            points: ["4", "1024", "4095"].iter().zip(m).map(|(v, &m)| p(v, m, None)).collect(),
        };
        let cs = [curve("open", &[1028.0, 1141.0, 1794.0]), curve("ftrace-open", &[1641.0, 1749.0, 2503.0])];
        let l = baseline_line(&cs[1], &cs, "payload-size").unwrap();
        assert_eq!(
            l,
            "ftrace-open over open: +613 / +608 / +709 ns at payload-size 4 / 1024 / 4095; from 4 to 4095 it changes \
             +96 ns, open itself +766 ns."
        );
        assert!(baseline_line(&cs[0], &cs, "payload-size").is_none());
        let blob = [p("4", 96.0, Some(810.0)), p("256", 243.0, Some(30.0)), p("1024", 776.0, Some(7.0))];
        let l = period_law("lttng-ust", "payload-size", true, &blob).unwrap();
        assert!(l.contains("falls as payload-size grows (value x64.0, x256.0; period x0.0370, x0.0086)"), "{l}");
        let off = [p("4096", 1.0, Some(400.0)), p("16384", 1.0, Some(800.0))];
        assert!(period_law("x", "subbuf-size", true, &off).unwrap().contains("neither proportional"));
    }
}
