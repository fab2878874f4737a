//! The report read as a user reads it, for places where it says a thing and its opposite: a
//! sentence that its own table, its findings (report.json) or another sentence contradicts.
//! `tracebench __contradictions DIR...` runs it on written reports (scripts/contradictions.sh);
//! the tests run it on seeded generated runs and on short real ones.
//!
//! It reads only what a reader sees: report.json (the findings and the overview the terminal and
//! report.html render from), report.md, and the terminal's text rendered from that overview, as
//! `tracebench report` prints it. Each rule (rules.rs, pairs.rs) names what it compares; a
//! contradiction is a bug of the renderer or of the findings, never of the data.
#[cfg(test)]
mod generated_tests;
mod pairs;
mod rules;
#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::Value;

use crate::report::render::overview::Overview;
use crate::report::render::terminal;

/// One contradiction: the rule it breaks, the row it is about ("" for the whole report), and the
/// two things that disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction {
    pub rule: &'static str,
    pub row: String,
    pub detail: String,
}

impl std::fmt::Display for Contradiction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.row.is_empty() {
            write!(f, "{}: {}", self.rule, self.detail)
        } else {
            write!(f, "{} [{}]: {}", self.rule, self.row, self.detail)
        }
    }
}

/// The rules, by name, with what each holds against what (the command's `--rules` and the tests).
pub const RULES: [(&str, &str); 10] = [
    ("periodic-vs-none", "a row whose table shows a path every N calls (exact or about) is never said to have no periodic path"),
    ("survey-path-vs-table", "the survey's sub-buffer line (agrees/departs, the periods it quotes) matches the row's periodic paths, or the phase of the expected period its table shows folded"),
    ("survey-count", "the calls a survey line quotes for a path are the calls the path's own line says"),
    ("threshold-as-applied", "a quoted share (X of Y) lies on the side of the threshold the sentence says, and a threshold is said as applied (at least / fewer than)"),
    ("pair-order", "the ranking, the terminal's order line and overview.pairs say the same of each pair"),
    ("survey-order", "a survey line that one tracer is slower than another, the same, or undecided matches overview.pairs"),
    ("part-of-whole", "a quoted part (X of Y, X of the Y) is no larger than its whole"),
    ("tail-vs-counts", "what sets p99 gives a population no more calls than the report says it has"),
    ("verdict-word", "a survey verdict and the first words of its sentence agree"),
    ("md-vs-json", "report.md says every sentence report.json's rows say"),
];

/// What one report says, as read back from its files.
pub struct Said {
    pub json: Value,
    pub overview: Overview,
    pub md: String,
    /// The terminal's table and verdict lines, as `tracebench report DIR` prints them.
    pub terminal: Vec<String>,
}

impl Said {
    /// Reads DIR's report.json and report.md (written by `tracebench report DIR`).
    pub fn read(dir: &Path) -> Result<Said, String> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .map_err(|e| format!("{}: {e}; run `tracebench report` on it first", dir.join(name).display()))
        };
        let json: Value = serde_json::from_str(&read("report.json")?)
            .map_err(|e| format!("{}: not JSON ({e})", dir.join("report.json").display()))?;
        let overview: Overview = serde_json::from_value(json.get("overview").cloned().unwrap_or(Value::Null))
            .map_err(|e| format!("{}: no overview this version reads ({e})", dir.join("report.json").display()))?;
        let md = read("report.md")?;
        let terminal = terminal::table(&overview).into_iter().chain(terminal::verdicts(&overview)).collect();
        Ok(Said { json, overview, md, terminal })
    }
}

/// Every contradiction in what `s` says.
pub fn check(s: &Said) -> Vec<Contradiction> {
    let mut out = Vec::new();
    rules::periodic_vs_none(s, &mut out);
    rules::survey_paths(s, &mut out);
    rules::thresholds(s, &mut out);
    rules::parts_of_wholes(s, &mut out);
    rules::tails(s, &mut out);
    rules::verdict_words(s, &mut out);
    rules::md_vs_json(s, &mut out);
    pairs::pair_order(s, &mut out);
    pairs::survey_order(s, &mut out);
    out
}

/// Reads DIR's report and checks it.
pub fn check_dir(dir: &Path) -> Result<Vec<Contradiction>, String> {
    Ok(check(&Said::read(dir)?))
}

/// `tracebench __contradictions DIR...`: each contradiction on a line, "DIR: N contradiction(s)"
/// per directory; exit 1 when there is any, 2 when a directory has no report to read.
pub fn main(dirs: &[std::path::PathBuf]) -> i32 {
    let mut any = false;
    for d in dirs {
        match check_dir(d) {
            Ok(found) => {
                for c in &found {
                    println!("{}: {c}", d.display());
                }
                println!("{}: {} contradiction(s)", d.display(), found.len());
                any |= !found.is_empty();
            }
            Err(why) => {
                eprintln!("tracebench: {why}");
                return 2;
            }
        }
    }
    i32::from(any)
}

/// The latency findings of row `name` in report.json.
pub(crate) fn latency_findings<'a>(json: &'a Value, name: &str) -> Vec<&'a Value> {
    let rows = json.get("tracers").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    rows.iter()
        .filter(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .flat_map(|t| t.get("metrics").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default())
        .filter(|m| m.get("metric").and_then(Value::as_str) == Some("latency"))
        .flat_map(|m| m.get("findings").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default())
        .collect()
}

pub(crate) fn kind(f: &Value) -> &str {
    f.get("kind").and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn num(f: &Value, k: &str) -> f64 {
    f.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN)
}
