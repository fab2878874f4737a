//! The one renderer of `system show`: a line per check on the terminal, the same checks in
//! run.json, and the exit code (0 when nothing is BAD, 1 otherwise).
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

pub fn exit_code(checks: &[Check]) -> i32 {
    i32::from(checks.iter().any(|c| c.level == Level::Bad))
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
