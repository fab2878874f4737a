//! Each step's report, and its outputs copied under the survey's numbers: OUT/figures/survey-
//! figN.{png,svg,pdf}, OUT/tables/survey-tableN.{csv,tex}. Figure 6 is drawn here from its
//! sweep's sweep.csv (a line per ftrace clock against threads: `--ftrace-clock` takes one clock
//! per run, so no one run's report draws it), and Table 6 is joined here from Table 4's latency
//! and the stepped run's instruction counts where no PMU gives the survey's counters.
use std::path::Path;

use super::plan::{Kind, NotMade, Output, Source, Step};
use crate::error::Error;
use crate::plot::{self, ScalingFigure, Series};
use crate::report::ReportError;
use crate::results::write_atomic_io as write_atomic;

/// The list of what this machine did not make, one line each with the reason and the fix.
pub const NOT_MADE: &str = "not-made.txt";
/// The list of the files made, each with the survey's table or figure it stands for.
pub const MADE: &str = "made.txt";

/// The step's report: what `tracebench report DIR` writes (figures/, tables/, report.html).
pub fn report(step: &Step, dir: &Path) -> Result<(), ReportError> {
    match step.kind {
        Kind::Run | Kind::Scale => crate::report::build(dir, 1000, 1000).map(|_| ()),
        Kind::Stepped => crate::report::side::single_step::write(dir).map(|_| ()),
        Kind::Sweep(_) => crate::report::side::sweep::write(dir).map(|_| ()),
    }
}

/// A step that could not run or be reported: its outputs are not made, for this reason.
pub fn failed(step: &Step, why: &str) -> NotMade {
    let names: Vec<&str> = step.outputs.iter().map(|o| o.name).collect();
    NotMade {
        what: format!("{} ({})", step.what, names.join(", ")),
        why: format!("the step failed: {why}"),
        fix: format!("see {} and the lines above", step.opts.out.clone().unwrap_or_default().display()),
    }
}

/// `WHAT: not made here: WHY (fix: FIX)`.
pub fn not_made_line(n: &NotMade) -> String {
    format!("{}: not made here: {} (fix: {})", n.what, n.why, n.fix)
}

fn copy(from: &Path, to: &Path) -> Result<bool, Error> {
    match std::fs::read(from) {
        Ok(bytes) => write_atomic(to, &bytes).map(|_| true).map_err(|e| Error::io(to, e)),
        Err(_) => Ok(false),
    }
}

/// Copies one step's outputs into OUT; an output its report did not write is said not made.
pub fn outputs(
    step: &Step,
    dir: &Path,
    out: &Path,
    made: &mut Vec<String>,
    nm: &mut Vec<NotMade>,
) -> Result<(), Error> {
    for o in &step.outputs {
        let got = match &o.from {
            Source::Figure(name) => {
                copy_set(&dir.join("figures"), name, &out.join("figures"), o.name, &["png", "svg", "pdf"])?
            }
            Source::Table(name) => copy_set(&dir.join("tables"), name, &out.join("tables"), o.name, &["csv", "tex"])?,
            Source::ClockLines => clock_lines(dir, &out.join("figures"), o)?,
            Source::Profile => profile(dir, out, o)?,
        };
        match got.is_empty() {
            true => nm.push(NotMade {
                what: format!("{} ({})", o.name, step.what),
                why: "its step's report drew no such figure or table".into(),
                fix: format!("see {}/report.html for what the step measured", dir.display()),
            }),
            false => made.extend(got.into_iter().map(|f| format!("{f}: {}", step.what))),
        }
    }
    Ok(())
}

fn copy_set(from: &Path, name: &str, to: &Path, survey: &str, exts: &[&str]) -> Result<Vec<String>, Error> {
    let mut got = Vec::new();
    for ext in exts {
        let dest = format!("{survey}.{ext}");
        if copy(&from.join(format!("{name}.{ext}")), &to.join(&dest))? {
            got.push(format!("{}/{dest}", to.file_name().unwrap_or_default().to_string_lossy()));
        }
    }
    Ok(got)
}

/// Figure 6 from the sweep's sweep.csv: mean latency against threads, a line per clock.
fn clock_lines(dir: &Path, figs: &Path, o: &Output) -> Result<Vec<String>, Error> {
    let path = dir.join(crate::results::SWEEP_CSV);
    let rows = read_csv(&path)?;
    let mut series: Vec<Series<(f64, f64)>> = Vec::new();
    for r in &rows {
        let (Some(clock), Some(n), Some(mean)) = (r.get("value"), num(r.get("threads")), num(r.get("mean_ns"))) else {
            continue;
        };
        let name = format!("ftrace-{clock}");
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((n, mean)),
            None => series.push(Series { colour: 0, name, points: vec![(n, mean)] }),
        }
    }
    // ftrace's colour for the first clock, then colours of their own (never `none`'s grey).
    let keys: Vec<String> = series.iter().map(|s| s.name.replacen('-', ":", 1)).collect();
    let slots = plot::palette::slots(&keys.iter().map(String::as_str).collect::<Vec<_>>());
    for (s, c) in series.iter_mut().zip(slots) {
        s.colour = c;
    }
    if series.iter().all(|s| s.points.len() < 2) {
        return Ok(Vec::new());
    }
    let fig = ScalingFigure {
        title: "ftrace clock sources: mean latency against thread count (survey Figure 6)".into(),
        series,
        spread: Vec::new(),
    };
    plot::save(&fig, figs, o.name).map_err(|e| Error::io(figs, e))?;
    let files = ["png", "svg", "pdf"].map(|e| format!("{}.{e}", o.name));
    Ok(files.into_iter().filter(|f| figs.join(f).exists()).map(|f| format!("figures/{f}")).collect())
}

/// Figure 10 as this machine gives it: instructions per function of each tracer's paths
/// (tables/survey-fig10.csv) and a flame graph per path (figures/survey-fig10-TRACER-N.svg).
fn profile(dir: &Path, out: &Path, o: &Output) -> Result<Vec<String>, Error> {
    let mut got = Vec::new();
    let csv = crate::report::side::function_profile::FUNCTIONS_CSV;
    if copy(&dir.join(csv), &out.join("tables").join(format!("{}.csv", o.name)))? {
        got.push(format!("tables/{}.csv", o.name));
    }
    let mut flames: Vec<String> = std::fs::read_dir(dir.join("figures"))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    flames.retain(|f| f.starts_with("flame-") && f.ends_with(".svg"));
    flames.sort();
    for f in flames {
        let dest = format!("{}-{}", o.name, f.trim_start_matches("flame-"));
        if copy(&dir.join("figures").join(&f), &out.join("figures").join(&dest))? {
            got.push(format!("figures/{dest}"));
        }
    }
    Ok(got)
}

type CsvRecord = std::collections::HashMap<String, String>;

fn read_csv(path: &Path) -> Result<Vec<CsvRecord>, Error> {
    let data = |why: String| Error::Data { path: path.display().to_string(), why };
    let mut r = csv::Reader::from_path(path).map_err(|e| data(e.to_string()))?;
    let head: Vec<String> = r.headers().map_err(|e| data(e.to_string()))?.iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            rec.map(|rec| head.iter().cloned().zip(rec.iter().map(String::from)).collect())
                .map_err(|e| data(e.to_string()))
        })
        .collect()
}

fn num(v: Option<&String>) -> Option<f64> {
    v?.parse().ok()
}

/// Table 6 where no PMU gave the counters: per tracer, Table 4's latency (mean, STD at one thread)
/// and the stepped run's instructions per call (mean, lowest, highest), cheapest first.
pub fn table6(steps: &[Step], out: &Path, made: &mut Vec<String>, nm: &mut Vec<NotMade>) -> Result<(), Error> {
    if made.iter().any(|m| m.starts_with("tables/survey-table6")) {
        return Ok(());
    }
    let dir = |key: &str| steps.iter().find(|s| s.key == key).and_then(|s| s.opts.out.clone());
    let (Some(lat), Some(ins)) = (dir("table4"), dir("instructions")) else {
        nm.push(NotMade {
            what: "survey-table6 (Table 6)".into(),
            why: "it joins Table 4's latency and the instruction counts, and neither step was planned".into(),
            fix: "install a user-space tracer of Table 4 (tracebench list)".into(),
        });
        return Ok(());
    };
    let (Ok(lat), Ok(ins)) = (read_csv(&lat.join("summary.csv")), read_csv(&ins.join("summary.csv"))) else {
        nm.push(NotMade {
            what: "survey-table6 (Table 6)".into(),
            why: "Table 4's or the stepped run's summary.csv is missing (a step failed or the budget was spent)".into(),
            fix: "see the lines above; a larger --budget".into(),
        });
        return Ok(());
    };
    let mut rows: Vec<(f64, Vec<String>)> = lat
        .iter()
        .filter(|r| r.get("threads").map(String::as_str) == Some("1"))
        .filter_map(|r| {
            let t = r.get("tracer")?;
            let mean = num(r.get("mean_ns"))?;
            let i = ins.iter().find(|x| x.get("tracer") == Some(t));
            let f = |k: &str| i.and_then(|i| i.get(k)).cloned().unwrap_or_default();
            let std = num(r.get("std_ns")).map(plot::fmt_num).unwrap_or_default();
            let imean = num(i.and_then(|i| i.get("user_instructions_mean"))).map(plot::fmt_num).unwrap_or_default();
            Some((
                mean,
                vec![
                    t.clone(),
                    plot::fmt_num(mean),
                    std,
                    imean,
                    f("user_instructions_min"),
                    f("user_instructions_max"),
                ],
            ))
        })
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let head = ["Tracer", "Latency (ns)", "STD (ns)", "Instructions", "Instr. min", "Instr. max"];
    let mut csv = head.join(",") + "\n";
    let mut tex = String::from(
        "% Survey Table 6 as this machine gives it: latency from Table 4's run, instructions per call\n\
         % exact from single-stepping (user space only). L1 misses, cache misses and CPU cycles need a PMU.\n\
         \\begin{tabular}{lrrrrr}\n\\toprule\n",
    );
    tex += &(head.join(" & ") + " \\\\\n\\midrule\n");
    for (_, r) in &rows {
        csv += &(r.join(",") + "\n");
        tex += &(r.iter().map(|c| c.replace('_', "\\_")).collect::<Vec<_>>().join(" & ") + " \\\\\n");
    }
    tex += "\\bottomrule\n\\end{tabular}\n";
    for (ext, body) in [("csv", &csv), ("tex", &tex)] {
        let p = out.join("tables").join(format!("survey-table6.{ext}"));
        write_atomic(&p, body.as_bytes()).map_err(|e| Error::io(&p, e))?;
        made.push(format!("tables/survey-table6.{ext}: Table 6 (latency and instructions)"));
    }
    Ok(())
}

/// OUT/made.txt and OUT/not-made.txt.
pub fn write_lists(out: &Path, made: &[String], nm: &[NotMade]) -> Result<(), Error> {
    let made_text: String = made.iter().map(|m| format!("{m}\n")).collect();
    let nm_text: String = nm.iter().map(|n| not_made_line(n) + "\n").collect();
    for (name, text) in [(MADE, made_text), (NOT_MADE, nm_text)] {
        let p = out.join(name);
        write_atomic(&p, text.as_bytes()).map_err(|e| Error::io(&p, e))?;
    }
    Ok(())
}
