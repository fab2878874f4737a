//! The rules on one row's paths, the survey's sub-buffer line, stated thresholds, the tail
//! split, the verdict words and report.md (mod.rs lists them).
use serde_json::Value;

use super::{kind, latency_findings, num, Contradiction, Said};
use crate::report::findings::expected_period::near_expected;
use crate::report::render::overview::OverviewRow;

fn found(out: &mut Vec<Contradiction>, rule: &'static str, row: &str, detail: String) {
    out.push(Contradiction { rule, row: row.to_string(), detail });
}

/// The periods the table's path column shows for a row: exact ("810", "405.5", "1620@435") and
/// about ("~810"); irregular ("1/2000") and random paths have none.
pub(super) fn table_periods(r: &OverviewRow) -> (Vec<f64>, Vec<f64>) {
    let (mut exact, mut about) = (Vec::new(), Vec::new());
    for p in &r.paths {
        if let Some(a) = p.every.strip_prefix('~') {
            about.extend(a.parse::<f64>().ok());
        } else if let Ok(v) = p.every.split('@').next().unwrap_or("").parse::<f64>() {
            exact.push(v);
        }
    }
    (exact, about)
}

/// The period a row's geometry predicts, from its findings (a periodic path's or the missing
/// period's `expected`).
fn expected(json: &Value, name: &str) -> Option<f64> {
    latency_findings(json, name)
        .into_iter()
        .find_map(|f| f.get("expected").and_then(|e| e.get("period")).and_then(Value::as_f64))
}

/// Never "no periodic path" beside a path every N calls in the table.
pub(super) fn periodic_vs_none(s: &Said, out: &mut Vec<Contradiction>) {
    for r in &s.overview.tracers {
        let (exact, about) = table_periods(r);
        let every: Vec<f64> = exact.iter().chain(&about).copied().collect();
        let e = expected(&s.json, &r.name);
        for t in &r.sentences {
            for said in ["no periodic path found", "shows no periodic slow path", "no periodic slow path"] {
                if t.contains(said) && !every.is_empty() {
                    found(
                        out,
                        "periodic-vs-none",
                        &r.label,
                        format!(
                            "says \"{said}\" while the table shows a path every {}: {}",
                            paths_text(r),
                            clip(t, said)
                        ),
                    );
                    break;
                }
            }
            let at = "no periodic path at the expected period";
            if let (true, Some(e)) = (t.contains(at), e) {
                if let Some(p) = every.iter().find(|&&p| near_expected(p, e)) {
                    found(
                        out,
                        "periodic-vs-none",
                        &r.label,
                        format!(
                            "says \"{at}\" ({e:.0}) while the table shows a path every {p} (within 2% of it): {}",
                            clip(t, at)
                        ),
                    );
                }
            }
        }
    }
}

fn paths_text(r: &OverviewRow) -> String {
    r.paths.iter().map(|p| p.every.clone()).collect::<Vec<_>>().join(", ")
}

/// Up to 160 characters of `t` around `at`.
pub(super) fn clip(t: &str, at: &str) -> String {
    let i = t.find(at).unwrap_or(0);
    let lo = t.char_indices().map(|(k, _)| k).filter(|&k| k + 80 <= i).last().unwrap_or(0);
    let s: String = t[lo..].chars().take(200).collect();
    format!("\"{}{s}…\"", if lo > 0 { "…" } else { "" })
}

/// The survey's sub-buffer line against the row's paths and the calls its path's line says.
pub(super) fn survey_paths(s: &Said, out: &mut Vec<Contradiction>) {
    for v in &s.overview.survey {
        let Some(r) = s.overview.tracers.iter().find(|r| v.tracers.iter().any(|t| t == &r.label)) else { continue };
        let (exact, about) = table_periods(r);
        let f = latency_findings(&s.json, &r.name);
        let agrees = format!("Agrees with the survey: {} takes a slow path every ", r.label);
        if let Some(rest) = v.text.strip_prefix(&agrees) {
            let p: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let pv: f64 = p.parse().unwrap_or(f64::NAN);
            if !exact.contains(&pv) {
                found(
                    out,
                    "survey-path-vs-table",
                    &r.label,
                    format!("the survey line says a slow path every {p} events; the table shows {}", paths_text(r)),
                );
            }
            let with = f.iter().find(|x| kind(x) == "periodic_path" && x.get("expected").is_some_and(Value::is_object));
            match with {
                None => found(out, "survey-path-vs-table", &r.label, format!(
                    "the survey line agrees on a path every {p} events, but no periodic path carries the expected period"
                )),
                Some(x) => {
                    // "(+1838 ns, 49 calls)": the calls the path's own line says.
                    let calls = rest.split(" calls)").next().and_then(|h| h.rsplit(' ').next()).and_then(|n| n.parse::<f64>().ok());
                    if calls.is_some_and(|c| c != num(x, "calls")) {
                        found(out, "survey-count", &r.label, format!(
                            "the survey line says {} calls on the path every {p}; the path's line says {} calls",
                            calls.unwrap_or(0.0), num(x, "calls")
                        ));
                    }
                }
            }
        }
        // "one phase of every 51 events of ftrace is slower ...": the fold the table shows.
        if let Some(rest) = v
            .text
            .strip_prefix("Agrees with the survey: one phase of every ")
            .filter(|t| t.contains(&format!(" events of {} is slower", r.label)))
        {
            let p: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if !r.paths.iter().any(|x| x.every == format!("{p} folded")) {
                found(
                    out,
                    "survey-path-vs-table",
                    &r.label,
                    format!(
                        "the survey line says one phase of every {p} events stands out; the table shows {}",
                        paths_text(r)
                    ),
                );
            }
        }
        // The sub-buffer line's departures ("ROW shows no ...", "ROW has periodic path(s) ..."),
        // not an ordering or scaling line that names the row among others.
        let sub_buffer_departs = ["shows no ", "has periodic path(s) "]
            .iter()
            .any(|w| v.text.starts_with(&format!("Departs from the survey: {} {w}", r.label)));
        if sub_buffer_departs {
            if let Some(x) = r.paths.iter().find(|x| x.every.ends_with(" folded")) {
                found(
                    out,
                    "survey-path-vs-table",
                    &r.label,
                    format!(
                        "the survey line departs, but the table shows the expected period's phase standing out ({})",
                        x.every
                    ),
                );
            }
        }
        let departs = format!("Departs from the survey: {} has periodic path(s) every ", r.label);
        if let Some(rest) = v.text.strip_prefix(&departs) {
            let list = rest.split(" events").next().unwrap_or("");
            for p in list.split(", ") {
                if !p.parse::<f64>().is_ok_and(|x| exact.contains(&x)) {
                    found(
                        out,
                        "survey-path-vs-table",
                        &r.label,
                        format!("the survey line says a periodic path every {p}; the table shows {}", paths_text(r)),
                    );
                }
            }
            if let Some(e) = expected(&s.json, &r.name) {
                if let Some(p) = exact.iter().chain(&about).find(|&&p| near_expected(p, e)) {
                    found(
                        out,
                        "survey-path-vs-table",
                        &r.label,
                        format!(
                        "the survey line departs (no path at the expected {e:.0}), but the table shows a path every {p}"
                    ),
                    );
                }
            }
        }
    }
}

/// How a threshold phrase says the quoted share lies against it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Side {
    Below,
    AtLeast,
    Above,
}

const PHRASES: [(&str, Side); 10] = [
    ("needs at least ", Side::Below),
    ("need at least ", Side::Below),
    ("fill at least ", Side::AtLeast),
    ("fills at least ", Side::AtLeast),
    ("at least ", Side::AtLeast),
    ("fewer than ", Side::Below),
    ("less than ", Side::Below),
    ("below ", Side::Below),
    ("more than ", Side::Above),
    ("above ", Side::Above),
];

/// "N%" at the start of `s`.
fn percent_at(s: &str) -> Option<f64> {
    let n: String = s.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    (s[n.len()..].starts_with('%')).then(|| n.parse().ok()).flatten()
}

/// The last "X of Y" or "X of the Y" in `s`.
fn last_share(s: &str) -> Option<(f64, f64)> {
    shares(s).pop()
}

/// Every "X of Y" and "X of the Y" in `s`, in order.
fn shares(s: &str) -> Vec<(f64, f64)> {
    // A percentage ("97.9% of the 48 calls") is a share already, not a count of the whole.
    let w: Vec<&str> = s
        .split_whitespace()
        .map(|w| if w.contains('%') { "%" } else { w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '.') })
        .collect();
    let n = |x: &str| x.parse::<f64>().ok().filter(|_| !x.ends_with('.'));
    (0..w.len())
        .filter_map(|i| {
            let x = n(w[i])?;
            (w.get(i + 1) == Some(&"of")).then_some(())?;
            let k = if w.get(i + 2) == Some(&"the") { i + 3 } else { i + 2 };
            Some((x, n(w.get(k)?)?))
        })
        .collect()
}

/// A part said larger than its whole ("99 of the 98 slots"): a count taken over one set and its
/// whole over another.
pub(super) fn parts_of_wholes(s: &Said, out: &mut Vec<Contradiction>) {
    let mut seen = std::collections::BTreeSet::new();
    for (row, t) in all_texts(s) {
        for (x, y) in shares(&t) {
            if x > y && seen.insert(t.clone()) {
                found(out, "part-of-whole", &row, format!("{x} of {y}: the part exceeds its whole: {t}"));
            }
        }
    }
}

/// The thresholds one clause states, with the share quoted before each.
fn clause_thresholds(c: &str) -> Vec<(Side, f64, Option<(f64, f64)>, String)> {
    let l = c.to_lowercase();
    let mut out = Vec::new();
    let mut i = 0;
    while i < l.len() {
        let hit = PHRASES
            .iter()
            .find(|(p, _)| l[i..].starts_with(p) && (i == 0 || !l.as_bytes()[i - 1].is_ascii_alphanumeric()));
        match hit {
            Some((p, side)) => {
                if let Some(t) = percent_at(&l[i + p.len()..]) {
                    out.push((*side, t, last_share(&c[..i]), p.trim().to_string()));
                }
                i += p.len();
            }
            None => i += l[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// Every text the report shows a reader, but the terminal's (rendered from the same overview and
/// cut to the screen).
fn all_texts(s: &Said) -> Vec<(String, String)> {
    let o = &s.overview;
    let mut v: Vec<(String, String)> = o.ranking.iter().map(|t| (String::new(), t.clone())).collect();
    v.extend(o.tracers.iter().flat_map(|r| r.sentences.iter().map(|t| (r.label.clone(), t.clone()))));
    v.extend(o.survey.iter().map(|x| (x.tracers.join(", "), x.text.clone())));
    v.extend(o.notes.iter().map(|t| (String::new(), t.clone())));
    v.extend(s.md.lines().map(|t| (String::new(), t.to_string())));
    v
}

/// A quoted share on the side of its threshold the sentence says, and thresholds said as applied.
pub(super) fn thresholds(s: &Said, out: &mut Vec<Contradiction>) {
    let mut seen = std::collections::BTreeSet::new();
    for (row, t) in all_texts(s) {
        for c in t.split("; ") {
            for (side, p, share, phrase) in clause_thresholds(c) {
                let Some((x, y)) = share.filter(|s| s.1 > 0.0) else { continue };
                let q = 100.0 * x / y;
                let holds = match side {
                    Side::Below => q < p,
                    Side::AtLeast => q >= p,
                    Side::Above => q > p,
                };
                if !holds && seen.insert(c.to_string()) {
                    found(
                        out,
                        "threshold-as-applied",
                        &row,
                        format!(
                            "{x} of {y} is {q:.1}%, not on the side of \"{phrase} {p}%\" the sentence says: {}",
                            clip(c, &phrase)
                        ),
                    );
                }
            }
            let l = c.to_lowercase();
            for bare in ["needs ", "need ", "requires "] {
                for (i, _) in l.match_indices(bare) {
                    if percent_at(&l[i + bare.len()..]).is_some() && seen.insert(format!("{bare}{c}")) {
                        found(
                            out,
                            "threshold-as-applied",
                            &row,
                            format!(
                                "a threshold said without how it applies (at least / more than): {}",
                                clip(c, bare)
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// What sets p99 (p99.9) gives no population more calls than the report says it has.
pub(super) fn tails(s: &Said, out: &mut Vec<Contradiction>) {
    for r in &s.overview.tracers {
        let f = latency_findings(&s.json, &r.name);
        let sum = |k: &str, field: &str| f.iter().filter(|x| kind(x) == k).map(|x| num(x, field)).sum::<f64>();
        for t in f.iter().filter(|x| kind(x) == "tail_split") {
            let parts = t.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let q = if num(t, "quantile") >= 0.999 { "p99.9" } else { "p99" };
            let total: f64 = parts.iter().map(|p| num(p, "calls")).sum();
            if total != num(t, "calls") {
                found(
                    out,
                    "tail-vs-counts",
                    &r.label,
                    format!("what sets {q}: its parts hold {total} calls, it says {}", num(t, "calls")),
                );
            }
            for p in parts {
                let what = p.get("what").and_then(Value::as_str).unwrap_or("");
                let allowed = match p.get("who").and_then(Value::as_str).unwrap_or("") {
                    "periodic_path" if what.starts_with("calls on the period of the path every ") => {
                        let per = what.trim_start_matches("calls on the period of the path every ");
                        let per = per.trim_end_matches(" that do not take it");
                        f.iter()
                            .filter(|x| kind(x) == "periodic_path" && period_text(x) == per)
                            .map(|x| num(x, "slots") - num(x, "calls"))
                            .sum()
                    }
                    // The calls after each of the path's own, as many as its line says.
                    "periodic_path" if what.starts_with("the slower stretch after the path every ") => {
                        let per = what.trim_start_matches("the slower stretch after the path every ");
                        f.iter()
                            .filter(|x| kind(x) == "periodic_path" && period_text(x) == per)
                            .filter_map(|x| x.get("stretch").filter(|s| !s.is_null()).map(|s| (x, s)))
                            .map(|(x, s)| (num(s, "calls") - 1.0).max(0.0) * num(x, "slots"))
                            .sum()
                    }
                    "periodic_path" => {
                        let per = what.trim_start_matches("the path every ");
                        f.iter()
                            .filter(|x| kind(x) == "periodic_path")
                            .filter(|x| period_text(x) == per)
                            .map(|x| num(x, "calls") + followers(x))
                            .sum()
                    }
                    "irregular_path" => sum("irregular_path", "calls"),
                    "memoryless_path" => sum("memoryless_path", "calls"),
                    "machine" => sum("machine_slow_calls", "calls"),
                    "no_path" => {
                        sum("outliers", "count")
                            + sum("undecided_slow_calls", "calls")
                            + f.iter()
                                .filter(|x| x.get("seen_as").and_then(Value::as_str) == Some("off_path"))
                                .map(|x| num(x, "calls"))
                                .sum::<f64>()
                    }
                    _ => continue,
                };
                if num(p, "calls") > allowed {
                    found(
                        out,
                        "tail-vs-counts",
                        &r.label,
                        format!(
                            "what sets {q} gives {} calls to {what}, which the report says has {allowed}",
                            num(p, "calls")
                        ),
                    );
                }
            }
        }
    }
}

fn period_text(x: &Value) -> String {
    if num(x, "evenly_spread") > 1.0 {
        format!("{:.1}", num(x, "mean_period"))
    } else {
        format!("{}", num(x, "period"))
    }
}

fn followers(x: &Value) -> f64 {
    x.get("followers").and_then(Value::as_array).map_or(0.0, |v| v.iter().map(|f| num(f, "calls")).sum())
}

/// A verdict and the first words of its sentence agree.
pub(super) fn verdict_words(s: &Said, out: &mut Vec<Contradiction>) {
    for v in &s.overview.survey {
        let (agrees, departs) = (v.text.starts_with("Agrees with"), v.text.starts_with("Departs from"));
        let ok = match v.verdict.as_str() {
            "agrees" | "agrees in part" => agrees,
            "departs" => departs,
            _ => !agrees && !departs,
        };
        if !ok {
            found(
                out,
                "verdict-word",
                &v.tracers.join(", "),
                format!("verdict {} on \"{}\"", v.verdict, clip(&v.text, "")),
            );
        }
    }
}

/// report.md holds every row's sentences (rows whose label Markdown escapes aside).
pub(super) fn md_vs_json(s: &Said, out: &mut Vec<Contradiction>) {
    for r in &s.overview.tracers {
        if crate::escape::markdown(&r.label) != r.label {
            continue;
        }
        for t in r.sentences.iter().filter(|t| !s.md.contains(t.as_str())) {
            found(out, "md-vs-json", &r.label, format!("report.md lacks {}", clip(t, "")));
        }
    }
}
