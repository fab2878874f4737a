//! What the user reads on the terminal: the survey's Table 4 (Average, STD, 90th percentile)
//! plus p50, p99 and the discards, and `tracebench list`.
use std::collections::BTreeMap;
use std::path::Path;

use crate::clock::ClockInfo;
use crate::clock::Floor;
use crate::error::Error;
use crate::results::rows::SummaryRow;

pub fn print_table(
    out: &Path,
    clock: &ClockInfo,
    floor: &Floor,
    rows: &[SummaryRow],
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
        if !m.is_empty() {
            let v: Vec<String> = m.iter().map(|(k, n)| format!("{k} {n}")).collect();
            println!("discards {t}: {}", v.join(", "));
        }
    }
    println!("results: {}", out.display());
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
        // `run --instructions singlestep` (issue 19): said only where it cannot step.
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
