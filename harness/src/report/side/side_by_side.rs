//! `tracebench report DIR DIR... --out OUT`: several runs side by side (two hosts, two kernels, two
//! builds), each row's mean and p99 per run, with each run's host and kernel from its run.json.
//! This is where results from many machines meet: each runs tracebench (by hand or as one job of
//! a CI matrix) and the directories are merged here. Timings of different machines differ by
//! the machine as much as by the tracer, so the page also gives each row relative to that run's
//! `none` row when there is one.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::report::load;
use crate::report::model::ReportError;
use crate::report::render::page::Page;

struct Run {
    name: String,
    run: Value,
    rows: Vec<load::SummaryRow>,
}

fn host_line(r: &Run) -> String {
    let h = &r.run["host"];
    let s = |k: &str| h[k].as_str().unwrap_or("?").to_string();
    let res =
        r.run["clock"]["info"]["resolution_ns"].as_f64().map(|v| format!(", clock step {v:.1} ns")).unwrap_or_default();
    let emu = if h["emulated"].as_bool() == Some(true) {
        " (an emulated CPU: its timings say nothing about a tracer and are not comparable with the others)"
    } else {
        ""
    };
    format!("{}: {} on {}, {}{res}{emu}.", r.name, s("hostname"), s("cpu_model"), s("kernel"))
}

/// Writes OUT/report.md and report.html; returns the page's lines.
pub fn write(dirs: &[PathBuf], out: &Path) -> Result<Vec<String>, ReportError> {
    let mut runs = Vec::new();
    for d in dirs {
        let summary = d.join(crate::results::SUMMARY_CSV);
        if crate::report::side::single_step::is_stepped(d) {
            return Err(ReportError::Usage(format!(
                "{} is a `--instructions singlestep` run (exact counts, no timings), which cannot be set beside \
                 timed runs; report it alone (`tracebench report {}`), or compare two stepped runs with \
                 `tracebench gate --metric user_instructions`",
                d.display(),
                d.display()
            )));
        }
        if !summary.is_file() {
            return Err(ReportError::Read(crate::results::read::ReadError::NotResults {
                dir: d.clone(),
                missing: crate::results::SUMMARY_CSV.into(),
            }));
        }
        let mut name =
            d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| d.display().to_string());
        if runs.iter().any(|r: &Run| r.name == name) {
            name = d.display().to_string();
        }
        runs.push(Run { name, run: load::read_run_json(d)?, rows: load::read_summary(&summary, false)? });
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| {
            ReportError::Read(crate::results::read::ReadError::Io { path: parent.to_path_buf(), source })
        })?;
    }
    crate::results::owner::subdir(out)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: out.to_path_buf(), source }))?;
    let mut keys: Vec<(String, u32)> = Vec::new();
    for r in &runs {
        for s in &r.rows {
            if !keys.contains(&(s.tracer.clone(), s.threads)) {
                keys.push((s.tracer.clone(), s.threads));
            }
        }
    }
    let mut head = vec!["tracer".to_string(), "threads".to_string()];
    for r in &runs {
        head.push(format!("{} mean ns", r.name));
        head.push(format!("{} p99 ns", r.name));
        head.push(format!("{} mean - none", r.name));
    }
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|(t, n)| {
            let mut row = vec![t.clone(), n.to_string()];
            for r in &runs {
                let find = |name: &str| r.rows.iter().find(|s| s.tracer == name && s.threads == *n);
                match find(t) {
                    Some(s) => {
                        row.push(format!("{:.1}", s.mean));
                        row.push(format!("{:.1}", s.p99));
                        row.push(
                            find("none")
                                .map(|z| format!("{:+.1}", s.mean - z.mean))
                                .unwrap_or_else(|| "no none row".into()),
                        );
                    }
                    None => row.extend(["not run".to_string(), String::new(), String::new()]),
                }
            }
            row
        })
        .collect();
    let mut lines: Vec<String> = runs.iter().map(host_line).collect();
    lines.push(
        "Absolute latencies are only comparable between runs of one machine; across machines, compare each \
         tracer's distance from its own run's none row (the empty call)."
            .into(),
    );
    Page {
        title: format!("tracebench: {} runs side by side", runs.len()),
        lines: lines.clone(),
        tables: vec![("summary.csv of each run".into(), head, rows)],
        figures: Vec::new(),
        cards: Vec::new(),
    }
    .write(out)?;
    Ok(lines)
}
