//! report.html (self-contained: figures embedded as data URIs, no script, no external file) and
//! report.md (figures linked from figures/).
#[cfg(test)]
mod browser_test;
pub mod figures;
pub mod page;
pub mod path_line;
#[cfg(test)]
mod path_line_tests;
pub mod tables;

use serde_json::Value;

use crate::report::findings::{ReportJson, REPORT_JSON_SCHEMA};
use crate::report::render::tables::tables;
use crate::report::{base64, write_atomic, Report, ReportError};
use path_line::Markup;

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
    // What `tracebench system show` found during the run that moves these numbers (issue 25).
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

/// What both pages show, computed once.
struct RunPage {
    tables: Vec<crate::report::render::tables::Table>,
    facts: Vec<(String, String)>,
    banner: Option<String>,
    ranked: Vec<String>,
}

/// Writes report.html, report.md, tables/ and report.json.
pub fn write_report(r: &Report) -> Result<(), ReportError> {
    let banner = if r.synthetic {
        Some("SYNTHETIC DATA: these results were generated by `tracebench report --synthetic` to test and time the report; they measure nothing.".to_string())
    } else {
        crate::results::interrupted_line(&r.run)
    };
    let page = RunPage {
        tables: tables(r),
        facts: run_facts(&r.run),
        banner,
        ranked: crate::report::findings::ranking::summary(r),
    };
    crate::report::render::tables::write_files(&r.dir, &page.tables)?;
    let hp = r.dir.join("report.html");
    write_atomic(&hp, html(r, &page)?.as_bytes())
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: hp.clone(), source }))?;
    let mp = r.dir.join("report.md");
    write_atomic(&mp, markdown(r, &page).as_bytes())
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: mp.clone(), source }))?;
    write_json(r)
}

/// DIR/report.json: the findings (findings.rs) for other tools, atomically, mode 0600 like the
/// other outputs.
fn write_json(r: &Report) -> Result<(), ReportError> {
    let path = r.dir.join("report.json");
    let json = ReportJson { schema: REPORT_JSON_SCHEMA, tracers: &r.findings, survey_check: &r.survey_checks };
    let mut text = serde_json::to_string_pretty(&json)
        .map_err(|e| ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source: e.into() }))?;
    text.push('\n');
    write_atomic(&path, text.as_bytes())
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path, source }))
}

/// The code-path lines of every tracer row, in one markup (path_line.rs: the same words everywhere).
fn code_path_lines(r: &Report, markup: Markup) -> Vec<String> {
    r.tracers
        .iter()
        .zip(&r.findings)
        .flat_map(|(t, f)| f.metrics.iter().map(|m| path_line::line(&t.label, m, markup)))
        .collect()
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 0.3em}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#eee}
pre{background:#f6f6f6;padding:0.6em;white-space:pre-wrap;overflow-wrap:anywhere}.banner{background:#fde2a7;padding:0.6em;font-weight:bold}
figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{color:#444;margin-top:0.3em}
.note{color:#555;font-size:0.9em}
";

const CODE_PATHS_NOTE: &str = "Paths of each tracer's latency (and instruction count where a PMU exists) at the fewest threads. A periodic path is found by its period among the slow calls (however rare), with its phase, its extra cost over the fast path's median and how many calls on that period take it; the expected period comes from the tracer's own buffer geometry. Speed phases (long stretches at another speed, the machine's or the tracer's) are not paths; a period is claimed only when reruns of the whole search on the same slow calls at random positions almost never find as strong a lattice (p below 0.001); slow calls on no path are outliers. report.json holds the same findings for other tools.";

/// The header of report.html: title, banner, the run's facts, the ranking.
fn html_head(r: &Report, page: &RunPage) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>tracebench report</title>\n<style>\n");
    h.push_str(STYLE);
    h.push_str("</style></head><body>\n<h1>tracebench report</h1>\n");
    if let Some(b) = &page.banner {
        h.push_str(&format!("<p class=\"banner\">{}</p>\n", esc(b)));
    }
    h.push_str(&format!("<p>Results directory: <code>{}</code></p>\n<ul>\n", esc(&r.dir.display().to_string())));
    for (k, v) in &page.facts {
        // Prose, except the command line, which is code.
        if k == "command" {
            h.push_str(&format!("<li><b>{}</b>: <code>{}</code></li>\n", esc(k), esc(v)));
        } else if k == "all facts" {
            h.push_str("<li><b>all facts</b>: <a href=\"run.json\">run.json</a></li>\n");
        } else {
            h.push_str(&format!("<li><b>{}</b>: {}</li>\n", esc(k), esc(v)));
        }
    }
    h.push_str("</ul>\n");
    if !page.ranked.is_empty() {
        h.push_str(&format!("<h2>{}</h2>\n<ul>\n", crate::report::findings::ranking::HEADING));
        h.extend(page.ranked.iter().map(|l| format!("<li>{}</li>\n", esc(l))));
        h.push_str("</ul>\n");
    }
    h
}

fn html(r: &Report, page: &RunPage) -> Result<String, ReportError> {
    let mut h = html_head(r, page);
    h.push_str("<h2>Code paths (survey section 7.1)</h2>\n<pre>");
    for l in code_path_lines(r, Markup::Html) {
        h.push_str(&l);
        h.push('\n');
    }
    h.push_str(&format!("</pre>\n<p class=\"note\">{}</p>\n", esc(CODE_PATHS_NOTE)));
    if !r.survey_notes.is_empty() {
        h.push_str("<h2>Against the survey</h2>\n<ul>\n");
        h.extend(r.survey_notes.iter().map(|l| format!("<li>{}</li>\n", esc(l))));
        h.push_str("</ul>\n");
    }
    for t in &page.tables {
        h.push_str(&format!("<h2>{}</h2>\n<table>\n<tr>", esc(&t.title)));
        h.extend(t.head.iter().map(|c| format!("<th>{}</th>", esc(c))));
        h.push_str("</tr>\n");
        for row in &t.rows {
            h.push_str("<tr>");
            h.extend(row.iter().map(|c| format!("<td>{}</td>", esc(c))));
            h.push_str("</tr>\n");
        }
        h.push_str(&format!("</table>\n<p class=\"note\">{}</p>\n", esc(&t.note)));
    }
    h.push_str("<h2>Figures</h2>\n");
    for f in &r.figures {
        let path = r.dir.join("figures").join(format!("{}.png", f.name));
        let png = std::fs::read(&path)
            .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source }))?;
        h.push_str(&format!(
            "<figure id=\"{}\"><img alt=\"{}\" src=\"data:image/png;base64,{}\">\n<figcaption><b>{}.</b> {} (figures/{}.png, .svg)</figcaption></figure>\n",
            esc(&f.name),
            esc(&f.title),
            base64(&png),
            esc(&f.title),
            esc(&f.caption),
            esc(&f.name)
        ));
    }
    if !r.notes.is_empty() {
        h.push_str("<h2>Notes</h2>\n<ul>\n");
        h.extend(r.notes.iter().map(|n| format!("<li>{}</li>\n", esc(n))));
        h.push_str("</ul>\n");
    }
    h.push_str("</body></html>\n");
    Ok(h)
}

/// The header of report.md: title, banner, the run's facts, the ranking, the code paths.
fn markdown_head(r: &Report, page: &RunPage) -> String {
    let mut m = String::from("# tracebench report\n\n");
    if let Some(b) = &page.banner {
        m.push_str(&format!("> **{b}**\n\n"));
    }
    m.push_str(&format!("Results directory: `{}`\n\n", r.dir.display()));
    for (k, v) in &page.facts {
        match k.as_str() {
            "command" => m.push_str(&format!("- **{k}**: `{}`\n", v.replace('`', "'"))),
            "all facts" => m.push_str("- **all facts**: [run.json](run.json)\n"),
            _ => m.push_str(&format!("- **{k}**: {v}\n")),
        }
    }
    if !page.ranked.is_empty() {
        m.push_str(&format!("\n## {}\n\n", crate::report::findings::ranking::HEADING));
        m.extend(page.ranked.iter().map(|l| format!("- {l}\n")));
    }
    m.push_str("\n## Code paths (survey section 7.1)\n\n```\n");
    for l in code_path_lines(r, Markup::Markdown) {
        m.push_str(&l);
        m.push('\n');
    }
    m.push_str("```\n\n");
    m
}

fn markdown(r: &Report, page: &RunPage) -> String {
    let mut m = markdown_head(r, page);
    if !r.survey_notes.is_empty() {
        m.push_str("## Against the survey\n\n");
        m.extend(r.survey_notes.iter().map(|l| format!("- {l}\n")));
        m.push('\n');
    }
    for t in &page.tables {
        m.push_str(&format!(
            "## {}\n\n| {} |\n|",
            t.title,
            t.head.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        ));
        m.push_str(" :--- |");
        m.push_str(&" ---: |".repeat(t.head.len() - 1));
        m.push('\n');
        for row in &t.rows {
            m.push_str(&format!("| {} |\n", row.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")));
        }
        m.push_str(&format!("\n{}\n\n", t.note));
    }
    m.push_str("## Figures\n\n");
    for f in &r.figures {
        m.push_str(&format!(
            "![{}](figures/{}.png)\n\n**{}.** {} ([SVG](figures/{}.svg))\n\n",
            f.title, f.name, f.title, f.caption, f.name
        ));
    }
    if !r.notes.is_empty() {
        m.push_str("## Notes\n\n");
        m.extend(r.notes.iter().map(|n| format!("- {n}\n")));
    }
    m
}
