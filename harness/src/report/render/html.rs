//! report.html, a question per section and the answer first: which tracer costs least
//! (a ranking table and a bar chart of net cost with its interval, in rank order), then a card
//! per tracer (its findings as a table, what sets its tail, its full sentences folded in
//! `<details>`), the survey check, the tables, the figures and the run's facts. It renders from
//! report.json's `overview` alone (render/overview.rs), plus the figure files it embeds.
//! Self-contained: figures as data URIs, no script, no external file.
use std::fmt::Write;
use std::path::Path;

use crate::report::model::{base64, ReportError};
use crate::report::render::format::{Format, View};
use crate::report::render::numbers::sig3;
use crate::report::render::overview::{Overview, OverviewRow};
use crate::report::render::{esc, terminal};

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:0.5em 0 0.3em;max-width:100%}td,th{border:1px solid #bbb;padding:3px 7px;text-align:right;overflow-wrap:anywhere}
td:first-child,th:first-child{text-align:left;white-space:nowrap}th{background:#eee}
.banner{background:#fde2a7;padding:0.6em;font-weight:bold}nav{background:#f6f6f6;padding:0.4em 0.8em}nav a{margin-right:1em}
figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{color:#444;margin-top:0.3em}
.note{color:#555;font-size:0.9em}.sw{display:inline-block;width:0.9em;height:0.9em;margin-right:0.4em;vertical-align:-0.1em}
.card{border:1px solid #ccc;border-left-width:8px;padding:0.2em 1em 0.6em;margin:1em 0}.card h3{margin:0.5em 0 0.2em}
.answer{font-size:1.1em}details p{margin:0.4em 0}svg{max-width:100%;height:auto}code{background:#f2f2f2;padding:0 0.2em}
";

/// Prose as HTML: escaped, and `code` between backticks set as code (never a literal backtick).
pub fn inline(s: &str) -> String {
    let e = esc(s);
    let mut out = String::with_capacity(e.len());
    for (i, part) in e.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    // An odd backtick has no pair: the split dropped it; nothing literal is left.
    out
}

/// `s` cut to `w` characters, "…" marking a cut.
fn terminal_fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    s.chars().take(w - 1).chain(['…']).collect()
}

/// An anchor id from a row name: letters, digits and '-'.
fn anchor(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    format!("t-{s}")
}

fn net_text(r: &OverviewRow) -> String {
    match (r.net_ns, r.net_interval) {
        (Some(n), Some((lo, hi, k))) => format!("{} ns ({} to {} over {k} repetitions)", sig3(n), sig3(lo), sig3(hi)),
        (Some(n), None) => format!("{} ns (1 repetition)", sig3(n)),
        _ => "—".into(),
    }
}

/// The net cost of each ranked row as a bar, its repetitions' range as a whisker, rank order.
fn bar_chart(o: &Overview) -> String {
    let rows: Vec<&OverviewRow> = o.tracers.iter().filter(|r| r.rank.is_some() && r.net_ns.is_some()).collect();
    if rows.is_empty() {
        return String::new();
    }
    let hi_of = |r: &OverviewRow| r.net_interval.map_or(r.net_ns.unwrap_or(0.0), |i| i.1).max(r.net_ns.unwrap_or(0.0));
    let top = rows.iter().map(|r| hi_of(r)).fold(0.0f64, f64::max).max(1e-9);
    let low = rows
        .iter()
        .flat_map(|r| [r.net_ns.unwrap_or(0.0), r.net_interval.map_or(f64::INFINITY, |i| i.0)])
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    // Costs a hundred times apart on a log axis, else the cheap ones are invisible.
    let log = low.is_finite() && top / low > 100.0;
    let floor_log = if log { (low / 2.0).log10() } else { 0.0 };
    let (left, width, row_h) = (270.0, 460.0, 24.0);
    let x = |v: f64| {
        let f =
            if log { ((v.max(low / 2.0)).log10() - floor_log) / (top.log10() - floor_log) } else { v.max(0.0) / top };
        left + width * f
    };
    let h = row_h * rows.len() as f64 + 30.0;
    let mut s = format!(
        "<svg role=\"img\" aria-label=\"net cost per call by tracer\" viewBox=\"0 0 820 {h}\" width=\"820\" height=\"{h}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"13\">\n"
    );
    for (i, r) in rows.iter().enumerate() {
        let y = 6.0 + row_h * i as f64;
        let n = r.net_ns.unwrap_or(0.0);
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\" fill=\"{}\"/>",
            left - 6.0,
            y + 14.0,
            esc(&terminal_fit(&r.label, 38)),
            x(n) - left,
            row_h - 8.0,
            esc(&r.colour)
        );
        if let Some((lo, hi, _)) = r.net_interval {
            let my = y + (row_h - 8.0) / 2.0;
            let _ = writeln!(
                s,
                "<path d=\"M{:.1} {my}H{:.1}M{:.1} {}V{}M{:.1} {}V{}\" stroke=\"#222\" stroke-width=\"1.5\" fill=\"none\"/>",
                x(lo),
                x(hi),
                x(lo),
                my - 5.0,
                my + 5.0,
                x(hi),
                my - 5.0,
                my + 5.0
            );
        }
        let end = r.net_interval.map_or(x(n), |i| x(i.1).max(x(n)));
        let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{}\">{} ns</text>", end + 6.0, y + 14.0, sig3(n));
    }
    let axis = match o.floor_ns {
        Some(f) => format!("mean ns per call above none ({} ns)", sig3(f)),
        None => "raw mean ns per call (no none row)".into(),
    };
    let axis = format!("{axis}{}; whiskers: lowest to highest repetition", if log { ", log scale" } else { "" });
    let _ = writeln!(s, "<text x=\"{left}\" y=\"{}\" fill=\"#555\">{}</text>\n</svg>", h - 6.0, esc(&axis));
    s
}

fn ranking(o: &Overview, h: &mut String) {
    let _ = writeln!(h, "<section id=\"cheapest\"><h2>{}</h2>", crate::report::findings::ranking::HEADING);
    let ranked: Vec<&OverviewRow> = o.tracers.iter().filter(|r| r.rank.is_some()).collect();
    if let Some(first) = ranked.first() {
        let _ = writeln!(
            h,
            "<p class=\"answer\">Cheapest here: <b>{}</b>, {} above the floor.</p>",
            esc(&first.label),
            esc(&net_text(first))
        );
    }
    h.push_str("<table><tr><th>Tracer</th><th>Rank</th><th>Net ns</th><th>Range over repetitions</th><th>p50 ns</th><th>p99 ns</th><th>Paths: every (extra, calls)</th></tr>\n");
    for r in &o.tracers {
        let range = r.net_interval.map_or("—".into(), |(lo, hi, k)| format!("{} to {} ({k})", sig3(lo), sig3(hi)));
        let paths: Vec<String> = r.paths.iter().map(|p| p.text()).collect();
        let _ = writeln!(
            h,
            "<tr><td><span class=\"sw\" style=\"background:{c}\"></span><a href=\"#{a}\">{l}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.rank.map_or(if r.net_ns.is_none() && r.mean_ns == o.floor_ns { "floor".into() } else { "—".into() }, |k| k.to_string()),
            r.net_ns.map_or("—".into(), sig3),
            esc(&range),
            r.p50_ns.map_or("—".into(), sig3),
            r.p99_ns.map_or("—".into(), sig3),
            esc(&if paths.is_empty() { "—".into() } else { paths.join(", ") }),
            c = esc(&r.colour),
            a = anchor(&r.name),
            l = esc(&r.label)
        );
    }
    h.push_str("</table>\n");
    h.push_str(&bar_chart(o));
    let verdicts: Vec<String> = terminal::verdicts(o).into_iter().filter(|l| l.starts_with("order:")).collect();
    if !o.undecided.is_empty() {
        h.push_str("<details><summary>Orders the data leave open, and why</summary><ul>\n");
        for u in &o.undecided {
            // The comparison's words say what would decide it.
            let _ = writeln!(h, "<li>{} and {}: {}</li>", esc(&u.cheaper), esc(&u.costlier), inline(&u.why));
        }
        h.push_str("</ul></details>\n");
    } else {
        h.extend(verdicts.iter().map(|v| format!("<p>{}</p>\n", inline(v))));
    }
    h.push_str("</section>\n");
}

fn card(r: &OverviewRow, h: &mut String) {
    let _ = writeln!(
        h,
        "<section class=\"card\" id=\"{}\" style=\"border-left-color:{c}\"><h3><span class=\"sw\" style=\"background:{c}\"></span>{}</h3>",
        anchor(&r.name),
        esc(&r.label),
        c = esc(&r.colour)
    );
    let mut facts = Vec::new();
    if let Some(k) = r.rank {
        facts.push(format!("rank {k}"));
    }
    if r.net_ns.is_some() {
        facts.push(format!("net {}", net_text(r)));
    }
    if let (Some(a), Some(b)) = (r.p50_ns, r.p99_ns) {
        facts.push(format!("p50 {} ns, p99 {} ns", sig3(a), sig3(b)));
    }
    let _ = writeln!(h, "<p>{}</p>", esc(&facts.join("; ")));
    let tail = if r.tail.is_empty() {
        terminal::tail_cell(r)
    } else {
        r.tail.iter().map(|t| format!("{:.0}% {}", 100.0 * t.share, t.what)).collect::<Vec<_>>().join(", ")
    };
    let _ = writeln!(h, "<p><b>What sets the tail</b> (calls above p99): {}</p>", esc(&tail));
    for s in &r.survey {
        let _ = writeln!(h, "<p>{}</p>", inline(s));
    }
    if !r.findings.is_empty() {
        h.push_str("<table><tr><th>Finding</th><th>Period or rate</th><th>Phase</th><th>Share of calls</th><th>Extra cost</th><th>p-value</th><th>Whose</th></tr>\n");
        for f in &r.findings {
            let cells = [&f.kind, &f.period_or_rate, &f.phase, &f.share, &f.extra, &f.p_value, &f.whose];
            let _ =
                writeln!(h, "<tr>{}</tr>", cells.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>());
        }
        h.push_str("</table>\n");
    }
    if let Some(f) = &r.folded {
        let _ = writeln!(
            h,
            "<figure>{}<figcaption>Its paths: each call's latency against its iteration modulo {} (the main period), slow calls (above {} ns) in colour; a path taken once per period stands as one column.</figcaption></figure>",
            crate::report::render::folded::svg(f, &r.colour),
            f.period,
            sig3(f.threshold)
        );
    }
    if !r.sentences.is_empty() {
        h.push_str("<details><summary>Full sentences</summary>\n");
        h.extend(r.sentences.iter().map(|s| format!("<p>{}</p>\n", inline(s))));
        h.push_str("</details>\n");
    }
    h.push_str("</section>\n");
}

/// report.html.
pub struct Html;

impl Format for Html {
    fn file(&self) -> Option<&'static str> {
        Some("report.html")
    }

    fn render(&self, v: &View) -> Result<String, ReportError> {
        page(v.overview, &v.report.dir)
    }
}

/// report.html from the overview; `dir` holds figures/NAME.png, embedded.
pub fn page(o: &Overview, dir: &Path) -> Result<String, ReportError> {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>tracebench report</title>\n<style>\n",
    );
    h.push_str(STYLE);
    h.push_str("</style></head><body>\n<h1>tracebench report</h1>\n");
    if let Some(b) = &o.banner {
        let _ = writeln!(h, "<p class=\"banner\">{}</p>", inline(b));
    }
    let mut toc =
        vec![("cheapest", crate::report::findings::ranking::HEADING.to_string()), ("tracers", "Each tracer".into())];
    if !o.survey.is_empty() {
        toc.push(("survey", "Against the survey".into()));
    }
    toc.extend([("tables", "Tables".into()), ("figures", "Figures".into()), ("run", "The run".into())]);
    if !o.notes.is_empty() {
        toc.push(("notes", "Notes".into()));
    }
    h.push_str("<nav><b>Contents</b>: ");
    h.extend(toc.iter().map(|(id, t)| format!("<a href=\"#{id}\">{}</a>", esc(t))));
    h.push_str("</nav>\n");
    ranking(o, &mut h);
    h.push_str("<section id=\"tracers\"><h2>Each tracer</h2>\n");
    for r in &o.tracers {
        card(r, &mut h);
    }
    h.push_str("</section>\n");
    if !o.survey.is_empty() {
        h.push_str("<section id=\"survey\"><h2>Against the survey</h2>\n<table><tr><th>Verdict</th><th>What the data say</th></tr>\n");
        for v in &o.survey {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td style=\"text-align:left\">{}</td></tr>",
                esc(&v.verdict),
                inline(&v.text)
            );
        }
        h.push_str("</table></section>\n");
    }
    h.push_str("<section id=\"tables\"><h2>Tables</h2>\n");
    for t in &o.tables {
        let _ = write!(h, "<h3>{}</h3>\n<table>\n<tr>", esc(&t.title));
        h.extend(t.head.iter().map(|c| format!("<th>{}</th>", esc(c))));
        h.push_str("</tr>\n");
        for row in &t.rows {
            h.push_str("<tr>");
            h.extend(row.iter().map(|c| format!("<td>{}</td>", esc(c))));
            h.push_str("</tr>\n");
        }
        let _ = writeln!(h, "</table>\n<p class=\"note\">{} (tables/{}.csv, .tex)</p>", inline(&t.note), esc(&t.file));
    }
    h.push_str("</section>\n<section id=\"figures\"><h2>Figures</h2>\n");
    for f in &o.figures {
        let path = dir.join("figures").join(format!("{}.png", f.name));
        let png = std::fs::read(&path)
            .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source }))?;
        let _ = writeln!(
            h,
            "<figure id=\"{}\"><img alt=\"{}\" src=\"data:image/png;base64,{}\">\n<figcaption><b>{}.</b> {} (figures/{}.png, .svg)</figcaption></figure>",
            esc(&f.name),
            esc(&f.title),
            base64(&png),
            esc(&f.title),
            inline(&f.caption),
            esc(&f.name)
        );
    }
    h.push_str("</section>\n<section id=\"run\"><h2>The run</h2>\n");
    let _ = writeln!(h, "<p>Results directory: <code>{}</code></p>\n<ul>", esc(&dir.display().to_string()));
    for (k, v) in &o.facts {
        match k.as_str() {
            "command" => {
                let _ = writeln!(h, "<li><b>command</b>: <code>{}</code></li>", esc(v));
            }
            "all facts" => h.push_str("<li><b>all facts</b>: <a href=\"run.json\">run.json</a>; the findings: <a href=\"report.json\">report.json</a></li>\n"),
            _ => {
                let _ = writeln!(h, "<li><b>{}</b>: {}</li>", esc(k), inline(v));
            }
        }
    }
    h.push_str("</ul></section>\n");
    if !o.notes.is_empty() {
        h.push_str("<section id=\"notes\"><h2>Notes</h2>\n<ul>\n");
        h.extend(o.notes.iter().map(|n| format!("<li>{}</li>\n", inline(n))));
        h.push_str("</ul></section>\n");
    }
    let _ = writeln!(
        h,
        "<p>Every term on this page is defined in the <a href=\"{}\">glossary</a> (docs/glossary.md).</p>",
        terminal::GLOSSARY
    );
    h.push_str("</body></html>\n");
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backticks_become_code() {
        assert_eq!(inline("above the `none` floor <x>"), "above the <code>none</code> floor &lt;x&gt;");
        assert_eq!(anchor("lttng-ust:8k"), "t-lttng-ust-8k");
    }

    /// The terminal table and report.html come from report.json alone: a directory holding only
    /// report.json and the figures renders the same page and the same table.
    #[test]
    fn the_page_and_the_table_render_from_report_json_alone() {
        let d = tempfile::tempdir().unwrap();
        let opts =
            crate::report::side::synthetic::Options { tracers: 4, rows: 3000, threads: vec![1], counters: false };
        crate::report::side::synthetic::write(d.path(), &opts).unwrap();
        crate::report::build(d.path(), 200, 300).unwrap();
        let only = tempfile::tempdir().unwrap();
        std::fs::copy(d.path().join("report.json"), only.path().join("report.json")).unwrap();
        std::fs::create_dir(only.path().join("figures")).unwrap();
        for f in std::fs::read_dir(d.path().join("figures")).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, only.path().join("figures").join(f.file_name().unwrap())).unwrap();
        }
        let o = crate::report::render::load_overview(only.path()).unwrap();
        let page = page(&o, only.path()).unwrap();
        let was = std::fs::read_to_string(d.path().join("report.html")).unwrap();
        let dir = |p: &Path| esc(&p.display().to_string());
        assert_eq!(page.replace(&dir(only.path()), "DIR"), was.replace(&dir(d.path()), "DIR"));
        assert!(page.contains("<nav><b>Contents</b>") && page.contains("class=\"card\""), "{page}");
        assert!(!page.contains('`'), "no literal backtick");
        let table = terminal::table(&o);
        assert!(table[0].starts_with("#  tracer"), "{table:?}");
        assert_eq!(table.len(), o.tracers.len() + 3, "{table:?}");
    }

    /// Two reports of the same rows given in different orders colour each row alike, in
    /// report.html and in the figures (both take `TracerReport::colour`).
    #[test]
    fn colours_are_the_same_in_two_reports_with_the_tracers_in_other_orders() {
        let d = tempfile::tempdir().unwrap();
        let opts =
            crate::report::side::synthetic::Options { tracers: 4, rows: 2000, threads: vec![1], counters: false };
        crate::report::side::synthetic::write(d.path(), &opts).unwrap();
        let colours = |dir: &Path| {
            let r = crate::report::build(dir, 100, 200).unwrap();
            let order: Vec<String> = r.tracers.iter().map(|t| t.name.clone()).collect();
            let o = crate::report::render::load_overview(dir).unwrap();
            let mut by_name: Vec<(String, String)> =
                o.tracers.iter().map(|t| (t.name.clone(), t.colour.clone())).collect();
            by_name.sort();
            let figures: std::collections::BTreeMap<String, usize> =
                r.tracers.iter().map(|t| (t.name.clone(), t.colour)).collect();
            (order, by_name, figures)
        };
        let (first_order, first, first_fig) = colours(d.path());
        let run_json = d.path().join("run.json");
        let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
        run["tracers"].as_array_mut().unwrap().reverse();
        std::fs::write(&run_json, run.to_string()).unwrap();
        let (second_order, second, second_fig) = colours(d.path());
        assert_ne!(first_order, second_order, "the rows must come in another order");
        assert_eq!(first, second);
        assert_eq!(first_fig, second_fig);
        let distinct: std::collections::BTreeSet<&String> = first.iter().map(|c| &c.1).collect();
        assert_eq!(distinct.len(), first.len(), "a colour each: {first:?}");
    }
}
