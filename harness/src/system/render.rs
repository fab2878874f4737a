//! The one renderer of `system show`: a line per check on the terminal, the same checks in
//! run.json, and the verdict with its exit code (0 fit, 3 fit with warnings, 4 not fit).
use serde_json::json;

use super::{Check, Level};

/// `LEVEL group: text; fix: ...`, one line per check, then the tally.
pub fn lines(checks: &[Check]) -> Vec<String> {
    let w = checks.iter().map(|c| c.group.len()).max().unwrap_or(0);
    let mut out: Vec<String> = checks
        .iter()
        .map(|c| {
            let fix = c.fix.as_ref().map(|f| format!("; fix: {f}")).unwrap_or_default();
            format!("{:<4} {:<w$}  {}{fix}", c.level.word(), c.group, c.text)
        })
        .collect();
    let n = |l: Level| checks.iter().filter(|c| c.level == l).count();
    out.push(format!("{} OK, {} WARN, {} BAD", n(Level::Ok), n(Level::Warn), n(Level::Bad)));
    out
}

pub fn print(checks: &[Check]) {
    for l in lines(checks) {
        println!("{l}");
    }
}

/// `system show`'s last line and its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitnessVerdict {
    pub line: String,
    pub code: i32,
}

/// Exit status of `system show`: fit to measure.
pub const FIT: i32 = 0;
/// Fit with warnings (WARN lines; or `--counters` could not check, no PMU).
pub const FIT_WITH_WARNINGS: i32 = 3;
/// Not fit: a BAD line, or a counter that failed its cross-check.
pub const NOT_FIT: i32 = 4;

/// The verdict over the checks and, with `--counters`, the counter check's outcome (0 passed, 1 a
/// counter failed, 3 could not check: `selfcheck::Outcome::exit_code`).
pub fn verdict(checks: &[Check], counters: Option<i32>) -> FitnessVerdict {
    let mut reasons: Vec<String> = checks.iter().filter(|c| c.level == Level::Bad).map(|c| c.text.clone()).collect();
    if counters == Some(1) {
        reasons.push("a counter failed its cross-check".into());
    }
    if !reasons.is_empty() {
        return FitnessVerdict { line: format!("verdict: not fit ({})", reasons.join("; ")), code: NOT_FIT };
    }
    let warns = checks.iter().filter(|c| c.level == Level::Warn).count() + usize::from(counters == Some(3));
    if warns > 0 {
        return FitnessVerdict { line: format!("verdict: fit with warnings ({warns})"), code: FIT_WITH_WARNINGS };
    }
    FitnessVerdict { line: "verdict: fit to measure".into(), code: FIT }
}

/// run.json's `system`: every check, and over what window the time-dependent ones were measured.
pub fn json(checks: &[Check], window: &str) -> serde_json::Value {
    let n = |l: Level| checks.iter().filter(|c| c.level == l).count();
    json!({
        "how": format!("tracebench system show's checks; steal, load and interrupts measured over {window}"),
        "ok": n(Level::Ok), "warn": n(Level::Warn), "bad": n(Level::Bad),
        "checks": checks,
    })
}
