//! What `tracebench report DIR` prints: one table of the tracer rows that fits a
//! 120-column screen, then one line per verdict; `--explain [TRACER]` prints the full sentences
//! instead (report.md keeps them too). It renders from report.json's `overview` alone
//! (render/overview.rs), read back after the report is written.
use crate::report::model::ReportError;
use crate::report::render::format::{Format, View};
use crate::report::render::numbers::sig3;
#[cfg(test)]
use crate::report::render::overview::TailShort;
use crate::report::render::overview::{Overview, OverviewRow};

/// The terminal's lines: the table and the verdicts, or with `explain` (`--explain [TRACER]`;
/// empty: every row) the full sentences.
pub struct Terminal<'a> {
    pub explain: Option<&'a str>,
}

impl Format for Terminal<'_> {
    fn file(&self) -> Option<&'static str> {
        None
    }

    fn render(&self, v: &View) -> Result<String, ReportError> {
        let o = v.overview;
        let lines = match self.explain {
            Some(t) => explain(o, (!t.is_empty()).then_some(t)).map_err(ReportError::Usage)?,
            None => table(o).into_iter().chain(verdicts(o)).chain([MORE.to_string()]).collect(),
        };
        Ok(lines.iter().map(|l| format!("{l}\n")).collect())
    }
}

/// Said after the verdicts: where the rest is.
pub const MORE: &str = "full sentences: --explain [TRACER]; a card per tracer in report.html";

/// Where every term the report prints is defined: the user guide's glossary, in the repository
/// and in the book `make docs` builds.
pub const GLOSSARY: &str = "https://github.com/tracebench/tracebench/blob/main/docs/glossary.md";

/// The screen the table and every line fit in.
pub const WIDTH: usize = 120;

const DASH: &str = "—";

fn width(s: &str) -> usize {
    s.chars().count()
}

/// `s` cut to `w` columns, "..." marking a cut (ASCII: a cut line is as wide in bytes as in
/// columns, for tools and terminals that count bytes).
fn fit(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let room = w.saturating_sub(3);
    let head: String = s.chars().take(room).collect();
    // Cut at the end of a clause (else of a word), so the line keeps whole findings: a period or
    // a cost is never cut in half. `--explain` prints the line whole.
    let cut = ["; ", ", ", ": ", " "].iter().find_map(|b| head.rfind(b).filter(|&i| i >= room / 2));
    let kept = cut.map_or(head.as_str(), |i| head[..i].trim_end());
    format!("{kept}...")
}

fn pad(s: &str, w: usize, right: bool) -> String {
    let n = w.saturating_sub(width(s));
    if right {
        format!("{}{s}", " ".repeat(n))
    } else {
        format!("{s}{}", " ".repeat(n))
    }
}

/// What sets a row's tail (its calls above p99, by population): the largest share, in a few
/// words ("82% random path", "41% machine"); "—" without a tail split.
pub fn tail_cell(row: &OverviewRow) -> String {
    row.tail.first().map_or(DASH.into(), |t| t.text())
}

/// "12.3 (11.8–13.0)", "floor 14.5", "—".
fn net_cell(o: &Overview, r: &OverviewRow) -> String {
    match (r.net_ns, r.net_interval) {
        (Some(n), Some((lo, hi, _))) => format!("{} ({}–{})", sig3(n), sig3(lo), sig3(hi)),
        (Some(n), None) => sig3(n),
        (None, _) if r.rank.is_none() && o.floor_ns.is_some() && r.mean_ns == o.floor_ns => {
            format!("floor {}", sig3(r.mean_ns.unwrap_or(f64::NAN)))
        }
        _ => DASH.into(),
    }
}

/// The paths that fit in `w` columns, then "+N".
fn paths_cell(r: &OverviewRow, w: usize) -> String {
    if r.paths.is_empty() {
        return if r.mean_ns.is_some() { "fast path only".into() } else { DASH.into() };
    }
    let mut s = String::new();
    for (i, p) in r.paths.iter().enumerate() {
        let t = p.text();
        let sep = if s.is_empty() { "" } else { ", " };
        let more = r.paths.len() - i - 1;
        let tail = if more > 0 { format!(", +{more}") } else { String::new() };
        if width(&s) + width(sep) + width(&t) + width(&tail) > w {
            let left = r.paths.len() - i;
            return if s.is_empty() { fit(&t, w) } else { format!("{s}, +{left}") };
        }
        s.push_str(sep);
        s.push_str(&t);
    }
    s
}

/// The table: a header, a rule, a row per tracer in rank order, and the legend.
pub fn table(o: &Overview) -> Vec<String> {
    let head = ["#", "tracer", "net ns (range)", "p50 ns", "p99 ns", "paths: every (extra, calls)", "tail"];
    let mut cells: Vec<[String; 7]> = o
        .tracers
        .iter()
        .map(|r| {
            [
                r.rank.map_or(DASH.into(), |k| k.to_string()),
                fit(&crate::escape::visible(&r.label), 30),
                net_cell(o, r),
                r.p50_ns.map_or(DASH.into(), sig3),
                r.p99_ns.map_or(DASH.into(), sig3),
                String::new(),
                fit(&tail_cell(r), 16),
            ]
        })
        .collect();
    let mut w: Vec<usize> =
        (0..7).map(|c| cells.iter().map(|r| width(&r[c])).chain([width(head[c])]).max().unwrap_or(0)).collect();
    // The paths take what the other columns leave of the screen.
    let others: usize = w.iter().enumerate().filter(|(c, _)| *c != 5).map(|(_, x)| x + 2).sum();
    w[5] = WIDTH.saturating_sub(others).max(width(head[5]));
    for (row, r) in cells.iter_mut().zip(&o.tracers) {
        row[5] = paths_cell(r, w[5]);
    }
    w[5] = cells.iter().map(|r| width(&r[5])).chain([width(head[5])]).max().unwrap_or(0);
    let line = |c: &[String]| {
        let s: Vec<String> = c.iter().enumerate().map(|(i, x)| pad(x, w[i], matches!(i, 0 | 2 | 3 | 4))).collect();
        s.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(&head.map(String::from))];
    out.push("-".repeat(width(&out[0])));
    out.extend(cells.iter().map(|c| line(c)));
    let floor = match o.floor_ns {
        Some(f) => format!("net: mean ns/call above none ({} ns)", sig3(f)),
        None => "net: raw mean ns/call (no none row)".into(),
    };
    // "@N" only where two paths share a period: the legend says it then.
    let at = o.tracers.iter().flat_map(|r| &r.paths).any(|p| p.every.contains('@'));
    out.push(fit(
        &format!("{floor}, range over repetitions; paths: period in calls (extra cost, share of calls)"),
        WIDTH,
    ));
    if at {
        out.push("paths: PERIOD@N where two paths of one tracer share a period: N is the first call on it".into());
    }
    if o.tracers.iter().flat_map(|r| &r.paths).any(|p| p.every.ends_with(" folded")) {
        out.push(
            "paths: P folded: one phase of the expected period P slower than its neighbours, which the search over \
             slow calls did not claim"
                .into(),
        );
    }
    out
}

/// One line per verdict: the orderings left open and what would decide them, then the survey check.
pub fn verdicts(o: &Overview) -> Vec<String> {
    let mut out: Vec<String> = o.notes.iter().map(|n| fit(n, WIDTH)).collect();
    let ranked: Vec<&str> = o.tracers.iter().filter(|r| r.rank.is_some()).map(|r| r.label.as_str()).collect();
    if ranked.len() >= 2 && o.undecided.is_empty() {
        // Adjacent rows the comparison found the same within the margin are joined by "=".
        let same = |a: &str, b: &str| o.pairs.iter().any(|p| p.outcome == "same" && p.a == a && p.b == b);
        let mut order = ranked[0].to_string();
        for w in ranked.windows(2) {
            order.push_str(if same(w[0], w[1]) { " = " } else { " < " });
            order.push_str(w[1]);
        }
        out.push(fit(&format!("order: decided, {order}"), WIDTH));
    }
    let (more, on_margin): (Vec<_>, Vec<_>) = o.undecided.iter().partition(|u| u.repeats_to_decide.is_some());
    if !more.is_empty() {
        let pairs: Vec<String> = more.iter().map(|u| format!("{}/{}", u.cheaper, u.costlier)).collect();
        let reps = more.iter().filter_map(|u| u.repeats_to_decide).max().unwrap_or(10);
        out.push(fit(
            &format!(
                "order: {} pair(s) undecided, about {reps} rounds would decide (--repeats or --budget): {}",
                more.len(),
                pairs.join(", ")
            ),
            WIDTH,
        ));
    }
    if !on_margin.is_empty() {
        let pairs: Vec<String> = on_margin.iter().map(|u| format!("{}/{}", u.cheaper, u.costlier)).collect();
        out.push(fit(
            &format!(
                "order: {} pair(s) differ by about the margin, more rounds would not soon decide: {}",
                on_margin.len(),
                pairs.join(", ")
            ),
            WIDTH,
        ));
    }
    for v in &o.survey {
        out.push(fit(&format!("survey, {}: {}", v.verdict, v.text), WIDTH));
    }
    out
}

/// `--explain [TRACER]`: the ranking's sentences and every row's full sentences, or one row's.
pub fn explain(o: &Overview, tracer: Option<&str>) -> Result<Vec<String>, String> {
    let Some(name) = tracer else {
        let mut out = o.ranking.clone();
        // A survey sentence about several tracers (Table 4's order) is in each of their rows, for
        // `--explain TRACER`; the whole report says it once, after the first of them.
        for s in o.tracers.iter().flat_map(|r| r.sentences.iter()) {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out.extend(o.survey.iter().filter(|v| v.tracers.is_empty()).map(|v| v.text.clone()));
        out.push(format!("Terms used above: {GLOSSARY}"));
        return Ok(out);
    };
    match o.tracers.iter().find(|r| r.name == name || r.label == name) {
        Some(r) => Ok(r.sentences.clone()),
        None => Err(format!(
            "--explain {name}: no such tracer row in this report (rows: {})",
            o.tracers.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::render::overview::{PathShort, UndecidedPair};

    fn row(name: &str, rank: Option<usize>, net: Option<f64>, paths: usize) -> OverviewRow {
        OverviewRow {
            name: name.into(),
            label: name.into(),
            colour: "#000000".into(),
            rank,
            mean_ns: Some(net.unwrap_or(14.5) + 14.5),
            net_ns: net,
            net_interval: net.map(|n| (n * 0.9, n * 1.1, 5)),
            p50_ns: Some(70.06),
            p99_ns: Some(1234.0),
            paths: (0..paths)
                .map(|i| PathShort { every: (810 * (i + 1)).to_string(), extra_ns: 1630.0, share: 0.0012 })
                .collect(),
            findings: Vec::new(),
            sentences: vec![format!("{name}: fast path 99.8%")],
            survey: Vec::new(),
            folded: None,
            tail: Vec::new(),
        }
    }

    fn overview(tracers: Vec<OverviewRow>) -> Overview {
        Overview {
            floor_ns: None,
            tracers,
            undecided: Vec::new(),
            pairs: Vec::new(),
            ranking: vec!["Ranked by ...".into()],
            survey: Vec::new(),
            notes: Vec::new(),
            banner: None,
            facts: Vec::new(),
            tables: Vec::new(),
            figures: Vec::new(),
        }
    }

    /// A line too long for the screen is cut at a clause, never inside a number.
    #[test]
    fn a_long_line_is_cut_at_a_clause() {
        let s = "survey, departs: lttng-ust (116 ns) is slower than printf (105 ns; printf against lttng-ust: +11.9% \
                 [+5.2%, +16.9%]), but the survey (Table 4) has lttng-ust 1208 ns < printf 8400 ns";
        let t = fit(s, 100);
        assert!(width(&t) <= 100 && t.ends_with("..."), "{t}");
        assert_eq!(t, "survey, departs: lttng-ust (116 ns) is slower than printf (105 ns...");
        assert_eq!(fit("short", 100), "short");
    }

    #[test]
    fn twenty_rows_fit_one_screen() {
        let mut tracers: Vec<OverviewRow> = (0..20)
            .map(|i| row(&format!("a-very-long-tracer-name-{i}"), Some(i + 1), Some(1234.5 * i as f64), i))
            .collect();
        tracers.push(OverviewRow { mean_ns: Some(14.5), ..row("none", None, None, 0) });
        let undecided = (0..28)
            .map(|i| UndecidedPair {
                cheaper: format!("t{i}"),
                costlier: "lw".into(),
                why: "close".into(),
                repeats_to_decide: (i % 2 == 0).then_some(5),
            })
            .collect();
        let o = Overview { floor_ns: Some(14.5), undecided, ..overview(tracers) };
        let lines: Vec<String> = table(&o).into_iter().chain(verdicts(&o)).collect();
        for l in &lines {
            assert!(width(l) <= WIDTH, "{} columns: {l}", width(l));
        }
        assert!(lines.len() <= 30, "{}", lines.join("\n"));
        let t = lines.join("\n");
        assert!(t.contains("810 (+1.63 µs, 0.12%)"), "{t}");
        assert!(t.contains("floor 14.5"), "{t}");
        assert!(t.contains("about 5 rounds would decide (--repeats or --budget)"), "{t}");
        assert!(t.contains("differ by about the margin, more rounds would not soon decide"), "{t}");
        assert_eq!(explain(&o, Some("none")).unwrap(), vec!["none: fast path 99.8%".to_string()]);
        let e = explain(&o, Some("nope")).unwrap_err();
        assert!(e.contains("--explain nope: no such tracer row in this report (rows: "), "{e}");
        assert_eq!(tail_cell(&o.tracers[0]), DASH);
        let mut r = o.tracers[0].clone();
        r.tail = vec![
            TailShort { who: "machine".into(), share: 0.41, what: "the machine's slow calls".into() },
            TailShort { who: "path 810".into(), share: 0.12, what: "the path every 810".into() },
        ];
        assert_eq!(tail_cell(&r), "41% machine");
    }

    #[test]
    fn a_survey_sentence_about_several_rows_is_said_once() {
        let order = "Agrees with the survey (Table 4): mean latency orders as none < lw < lttng-ust.";
        let tracers: Vec<OverviewRow> = ["lw", "lttng-ust", "none"]
            .iter()
            .map(|n| {
                let mut r = row(n, None, None, 0);
                r.sentences.push(order.into());
                r
            })
            .collect();
        let o = overview(tracers);
        let all = explain(&o, None).unwrap();
        assert_eq!(all.iter().filter(|l| *l == order).count(), 1, "{all:?}");
        assert_eq!(all[1..3], ["lw: fast path 99.8%", order], "{all:?}");
        assert!(all.contains(&"none: fast path 99.8%".to_string()), "{all:?}");
        assert_eq!(explain(&o, Some("none")).unwrap().last().map(String::as_str), Some(order));
    }
}
