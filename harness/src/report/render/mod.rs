//! report.html (self-contained: figures embedded as data URIs, no script, no external file) and
//! report.md (figures linked from figures/).
#[cfg(test)]
mod browser_test;
pub mod figures;
pub mod finding_rows;
pub mod folded;
pub mod format;
pub mod html;
mod markdown;
mod missing_period;
pub mod numbers;
pub mod overview;
#[cfg(test)]
mod overview_tests;
pub mod page;
pub mod path_line;
#[cfg(test)]
mod path_line_tests;
pub mod table_files;
pub mod tables;
pub mod terminal;

use serde_json::Value;

use crate::report::findings::Report;
use crate::report::model::ReportError;
use crate::report::render::tables::tables;
pub use format::{Format, View};
use overview::Overview;

pub(crate) use crate::report::render::path_line::esc;

pub(crate) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A few run.json fields worth showing at the top, compactly.
fn run_facts(run: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let short = |v: &Value| {
        let s = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if s.chars().count() > 240 {
            format!("{}…", s.chars().take(240).collect::<String>())
        } else {
            s
        }
    };
    if let Some(h) = run.get("host") {
        out.push(("host".into(), host_fact(h).unwrap_or_else(|| short(h))));
    }
    if let Some(c) = run.get("command_line").and_then(Value::as_str) {
        out.push(("command".into(), c.to_string()));
    }
    let n = |k: &str| run.get(k).map(&short).unwrap_or_else(|| "?".into());
    out.push((
        "measured".into(),
        format!(
            "{} kept calls per thread and cell, {} repetition(s), thread counts {} ({} mode)",
            n("iterations"),
            n("repeats"),
            n("threads"),
            run.get("mode").and_then(Value::as_str).unwrap_or("run")
        ),
    ));
    if let Some(c) = clock_prose(run) {
        out.push(("clock".into(), c));
    }
    // What `tracebench system show` found during the run that moves these numbers.
    let machine = crate::report::load::system_lines(run);
    if !machine.is_empty() {
        out.push(("machine".into(), machine.join("; ")));
    }
    out.push(("counters".into(), counters_prose(run)));
    if let Some(d) = run.get("disturbance").filter(|d| !d.is_null()) {
        let watched = d.get("watched").and_then(Value::as_array).map_or(0, Vec::len);
        let missing: Vec<String> = d
            .get("missing")
            .and_then(Value::as_array)
            .map(|m| m.iter().filter_map(|x| x.get(0).and_then(Value::as_str).map(String::from)).collect())
            .unwrap_or_default();
        let mut t = format!("{watched} event sources watched around every call (interrupts, softirqs, NMIs, context switches, migrations, page faults)");
        if !missing.is_empty() {
            t.push_str(&format!("; not available here: {}", missing.join(", ")));
        }
        if let Some(w) = d.get("weak").and_then(Value::as_str) {
            t = w.to_string();
        }
        out.push(("disturbance detector".into(), t));
    }
    if let Some(t) = run.get("tracebench") {
        let v = t.get("version").and_then(Value::as_str).unwrap_or("?");
        let c = t.get("git_commit").and_then(Value::as_str).unwrap_or("?");
        out.push(("tracebench".into(), format!("{v} (commit {c})")));
    }
    out.push(("all facts".into(), "run.json in this directory".into()));
    out
}

/// The host in a few words: CPU, online CPUs, kernel, and what moves timings; None when run.json
/// says none of them.
fn host_fact(h: &Value) -> Option<String> {
    let g = |k: &str| h.get(k).and_then(Value::as_str).map(String::from);
    let mut parts = Vec::new();
    if let Some(m) = g("cpu_model") {
        parts.push(m);
    }
    if let Some(n) = h.get("online_cpus").and_then(Value::as_array) {
        parts.push(format!("{} online CPUs", n.len()));
    }
    if let Some(k) = g("kernel") {
        parts.push(format!("kernel {k}"));
    }
    for k in ["virtualized", "hypervisor", "governor", "smt_active", "clocksource"] {
        if let Some(v) = g(k) {
            parts.push(format!("{k}: {v}"));
        }
    }
    if h.get("emulated").and_then(Value::as_bool) == Some(true) {
        parts.push("EMULATED CPU: timings are not overhead figures".into());
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// "TSC 2.596 GHz, invariant, advances in 10.0 ns steps; empty window (the floor every latency
/// includes) 10.0 ns median, 14.5 ns mean".
fn clock_prose(run: &Value) -> Option<String> {
    let c = run.get("clock")?;
    let info = c.get("info")?;
    let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    let mut s = match info.get("kind").and_then(Value::as_str) {
        Some("tsc") => format!(
            "TSC {:.3} GHz, {}",
            f(info, "tsc_hz").unwrap_or(0.0) / 1e9,
            if info.get("invariant_tsc").and_then(Value::as_bool) == Some(true) {
                "invariant"
            } else {
                "not flagged invariant"
            }
        ),
        Some(k) => k.replace('_', " "),
        None => "unknown clock".into(),
    };
    if let Some(r) = f(info, "resolution_ns") {
        s.push_str(&format!(", advances in {r:.1} ns steps"));
    }
    if let Some(fl) = c.get("floor") {
        if let (Some(m), Some(a)) = (f(fl, "median_ns"), f(fl, "mean_ns")) {
            s.push_str(&format!("; empty window (the floor every latency includes) {m:.1} ns median, {a:.1} ns mean"));
        }
    }
    Some(s)
}

/// What was counted, per counter (how it was read, whether it counted the whole run, its
/// discards), and what could not be.
fn counters_prose(run: &Value) -> String {
    let c = &run["counters"];
    let mut parts = Vec::new();
    for p in c["per_counter"].as_array().into_iter().flatten() {
        let ran = match p["scheduled_fraction_min"].as_f64() {
            Some(f) if f >= 0.9999 => "counting the whole run".to_string(),
            Some(f) => format!("counting only {:.1}% of the run", 100.0 * f),
            None => "time counting unknown".into(),
        };
        parts.push(format!(
            "{} (set {}) read with {}, {ran}, {} samples discarded as counter-not-running",
            p["name"].as_str().unwrap_or("?"),
            p["set"],
            p["read"].as_str().unwrap_or("?"),
            p["samples_discarded_not_running"]
        ));
    }
    let mut missing: Vec<String> = Vec::new();
    let mut why = String::new();
    for set in c["sets"].as_array().into_iter().flatten() {
        for u in set["unsupported"].as_array().into_iter().flatten() {
            if let Some(name) = u.get(0).and_then(Value::as_str) {
                if !missing.iter().any(|m| m == name) {
                    missing.push(name.to_string());
                }
                if why.is_empty() {
                    why = u.get(1).and_then(Value::as_str).unwrap_or("").to_string();
                }
            }
        }
    }
    if !missing.is_empty() {
        let head = if parts.is_empty() { "none available" } else { "not available" };
        parts.push(format!("{head}: {} ({why}); their columns are left out, never written as 0", missing.join(", ")));
    }
    if parts.is_empty() {
        "none requested".into()
    } else {
        parts.join("; ")
    }
}

/// Writes tables/, report.md, report.json and report.html, each format through `Format`;
/// report.html from report.json as written (`load_overview`), like the terminal.
pub fn write_report(r: &Report) -> Result<(), ReportError> {
    let banner = if r.synthetic {
        Some("SYNTHETIC DATA: these results were generated by `tracebench report --synthetic` to test and time the report; they measure nothing.".to_string())
    } else {
        crate::results::read::interrupted_line(&r.run)
    };
    let tables = tables(r);
    crate::report::render::table_files::write_files(&r.dir, &tables)?;
    let o = overview::of(r, banner, run_facts(&r.run), tables);
    let view = View { report: r, overview: &o };
    format::emit(&markdown::Markdown, &view)?;
    format::emit(&format::Json, &view)?;
    let o = load_overview(&r.dir)?;
    format::emit(&html::Html, &View { report: r, overview: &o })
}

/// The `overview` of DIR/report.json: all the terminal and report.html render from.
pub fn load_overview(dir: &std::path::Path) -> Result<Overview, ReportError> {
    let path = dir.join("report.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source }))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        ReportError::Usage(format!("{}: not JSON ({e}); run `tracebench report` again", path.display()))
    })?;
    serde_json::from_value(v.get("overview").cloned().unwrap_or(Value::Null)).map_err(|e| {
        ReportError::Usage(format!(
            "{}: no overview this version reads ({e}); run `tracebench report` again",
            path.display()
        ))
    })
}
