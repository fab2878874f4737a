//! What the user reads on the terminal: the survey's Table 4 (Average, STD, 90th percentile)
//! plus p50, p99 and the discards, with the counters' and the blocked calls' lines after a run;
//! a stepped run's table; and `tracebench list`.
use std::collections::BTreeMap;
use std::path::Path;

use crate::clock::ClockInfo;
use crate::clock::Floor;
use crate::error::Error;
use crate::results::rows::MergedRow;
use crate::results::stepped::StepSummaryRow;

/// A timed run's terminal output: the table, then one line per counter read (from run.json),
/// per row with blocked calls, and the interrupted line where the run was stopped.
pub fn print_run(
    out: &Path,
    clock: &ClockInfo,
    floor: &Floor,
    rows: &[MergedRow],
    reasons: &BTreeMap<String, BTreeMap<String, u64>>,
    run_json: &serde_json::Value,
) {
    print_table(out, clock, floor, rows, reasons);
    for line in counter_lines(&run_json["counters"]["per_counter"]) {
        println!("{line}");
    }
    for line in blocked_lines(rows) {
        println!("{line}");
    }
    if let Some(line) = crate::results::read::interrupted_line(run_json) {
        println!("{line}");
    }
}

fn print_table(
    out: &Path,
    clock: &ClockInfo,
    floor: &Floor,
    rows: &[MergedRow],
    reasons: &BTreeMap<String, BTreeMap<String, u64>>,
) {
    println!(
        "clock {:?}: resolution {:.1} ns, empty window (floor) median {:.1} ns, mean {:.1} ns, std {:.1} ns",
        clock.kind, clock.resolution_ns, floor.median_ns, floor.mean_ns, floor.std_ns
    );
    if clock.resolution_ns >= 2.0 {
        println!(
            "note: the clock moves in ~{:.0} ns steps, so single-call percentiles are multiples of it; compare means",
            clock.resolution_ns
        );
    }
    let w = rows.iter().map(|r| r.tracer.len()).max().unwrap_or(6).max(6);
    println!(
        "{:<w$} {:>7} {:>7} {:>9} {:>10} {:>9} {:>10} {:>10} {:>10}",
        "tracer", "threads", "kept", "discarded", "mean ns", "std ns", "p50 ns", "p90 ns", "p99 ns"
    );
    for r in rows {
        let s = &r.s;
        println!(
            "{:<w$} {:>7} {:>7} {:>9} {:>10.1} {:>9.1} {:>10.1} {:>10.1} {:>10.1}",
            r.tracer, r.threads, r.kept, r.discarded, s.mean, s.std, s.p50, s.p90, s.p99
        );
    }
    for (t, m) in reasons {
        if let Some(l) = discards_line(t, m.iter().map(|(k, n)| (k.as_str(), *n))) {
            println!("{l}");
        }
    }
    println!("results: {}", out.display());
}

/// "printf at 2 threads: 66 calls blocked inside the tracer, mean 21.5 µs, kept", per row that has any.
fn blocked_lines(rows: &[MergedRow]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.blocked > 0)
        .map(|r| {
            format!(
                "{} at {} thread(s): {} call{} blocked inside the tracer (the thread slept in the call), mean {}, kept in its cost",
                r.tracer,
                r.threads,
                r.blocked,
                if r.blocked == 1 { "" } else { "s" },
                crate::results::duration_text(r.blocked_mean_ns.unwrap_or(f64::NAN))
            )
        })
        .collect()
}

/// One line per counter read: how, whether it counted the whole time, and its discards.
fn counter_lines(per_counter: &serde_json::Value) -> Vec<String> {
    let Some(list) = per_counter.as_array() else { return Vec::new() };
    list.iter()
        .map(|c| {
            let ran = match c["scheduled_fraction_min"].as_f64() {
                Some(f) if f >= 0.9999 => "counting the whole run (time_running = time_enabled)".to_string(),
                Some(f) => format!("counting only {:.1}% of the run (multiplexed, or pinned and in error)", 100.0 * f),
                None => "time counting unknown (the group could not be read at the end)".to_string(),
            };
            format!(
                "counter {} (set {}): read with {}, {ran}; {} samples discarded as counter-not-running",
                c["name"].as_str().unwrap_or("?"),
                c["set"],
                c["read"].as_str().unwrap_or("?"),
                c["samples_discarded_not_running"]
            )
        })
        .collect()
}

/// The terminal's table for a stepped run.
pub fn print_stepped(out: &Path, rows: &[StepSummaryRow]) {
    println!(
        "{:<16} {:>7} {:>10} {:>7} {:>9} {:>9} {:>8}",
        "tracer", "calls", "instr", "share", "min", "max", "kentries"
    );
    for r in rows {
        println!(
            "{:<16} {:>7} {:>10} {:>6.1}% {:>9} {:>9} {:>8.3}",
            r.tracer,
            r.kept,
            r.mode,
            100.0 * r.mode_share,
            r.min,
            r.max,
            r.kernel_entries_mean
        );
    }
    println!(
        "instr: the most frequent exact user-space instruction count per call (share: of the calls); kentries: \
         kernel entries per call (system calls, traps, page faults), whose kernel instructions are not counted"
    );
    println!("results: {}", out.display());
}

/// The discard reasons of one tracer: calls per cause, and that one call can have several (a
/// switch and the softirq it ran, say), so the counts may sum to more than `discarded`.
pub fn discards_line<'a>(tracer: &str, reasons: impl Iterator<Item = (&'a str, u64)>) -> Option<String> {
    let v: Vec<(&str, u64)> = reasons.collect();
    if v.is_empty() {
        return None;
    }
    let list: Vec<String> = v.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let several = if v.len() > 1 {
        " (calls per cause: one call can have several causes, so these may sum to more than its discarded calls)"
    } else {
        ""
    };
    Some(format!("discards {}: {}{several}", crate::escape::visible(tracer), list.join(", ")))
}

/// `--payload-size` sizes a backend takes; spin is a calibration, not a tracer, and records nothing.
fn payload_note(kind: &str) -> String {
    match kind {
        "spin" => String::new(),
        _ => tracebench_tracers::registry::payload_note(kind),
    }
}

/// `tracebench list`.
pub fn list() -> Result<i32, Error> {
    let known = tracebench_tracers::known();
    let w = known.iter().map(|i| i.spec.len()).max().unwrap_or(10);
    let mut any_root = false;
    for i in &known {
        // Marked after the availability word, which scripts read as the second column.
        let root = if tracebench_tracers::registry::needs_root(i.name) { "[root] " } else { "" };
        any_root |= !root.is_empty();
        match &i.availability {
            Ok(()) => println!("{:<w$}  available    {root}{} {}", i.spec, i.description, payload_note(i.name)),
            Err((why, fix)) => {
                println!("{:<w$}  unavailable  {root}{} {}", i.spec, i.description, payload_note(i.name));
                println!("{:<w$}               why: {why}", "");
                println!("{:<w$}               fix: {fix}", "");
            }
        }
        // `run --instructions singlestep`: said only where it cannot step.
        if let Err(why) = tracebench_tracers::registry::singlestep_support(i.spec) {
            println!("{:<w$}               --instructions singlestep: not supported, {why}", "");
        }
    }
    if any_root {
        println!(
            "[root]: needs root (it makes tracefs instances, uprobe events or BPF programs); the others run as any \
             user, LTTng with a per-user session daemon"
        );
    }
    println!("--instructions singlestep steps every tracer above except those marked.");
    Ok(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_discard_line_says_one_call_can_have_several_causes() {
        let l = super::discards_line("printf", [("context-switch", 1), ("softirq", 2), ("timer-irq", 3)].into_iter());
        assert_eq!(
            l.unwrap(),
            "discards printf: context-switch 1, softirq 2, timer-irq 3 (calls per cause: one call can have several \
             causes, so these may sum to more than its discarded calls)"
        );
        assert_eq!(super::discards_line("lw", [("timer-irq", 4)].into_iter()).unwrap(), "discards lw: timer-irq 4");
        assert_eq!(super::discards_line("x\u{1b}[1m", [("a", 1)].into_iter()).unwrap(), "discards x\\x1b[1m: a 1");
        assert!(super::discards_line("lw", std::iter::empty()).is_none());
    }
}
