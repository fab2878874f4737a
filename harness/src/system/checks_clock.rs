//! The clock: an invariant TSC, a clocksource the vDSO reads without a system call, and the TSC's
//! measured step (the calibration `run` makes, `crate::clock`).
use super::{Check, Sys};
use crate::clock::{self, ClockInfo, ClockKind};

const G: &str = "clock";

/// Clocksources that `clock_gettime` reads in user space (through the vDSO).
const VDSO_SOURCES: [&str; 4] = ["tsc", "kvm-clock", "arch_sys_counter", "hyperv_clocksource_tsc_page"];

pub fn checks(sys: &Sys, made: Option<&ClockInfo>) -> Vec<Check> {
    let mut out = vec![invariant(sys), clocksource(sys)];
    let info = match made {
        Some(c) => c.clone(),
        None => clock::describe(ClockKind::Tsc),
    };
    out.push(step(&info));
    out
}

fn invariant(sys: &Sys) -> Check {
    let Ok(info) = sys.read("/proc/cpuinfo") else {
        return Check::unreadable(G, "invariant TSC", &sys.path("/proc/cpuinfo"));
    };
    let flags: Vec<&str> =
        info.lines().find(|l| l.starts_with("flags")).map(|l| l.split_whitespace().collect()).unwrap_or_default();
    let missing: Vec<&str> = ["constant_tsc", "nonstop_tsc"].into_iter().filter(|f| !flags.contains(f)).collect();
    if missing.is_empty() {
        Check::ok(G, "invariant TSC (constant_tsc, nonstop_tsc)")
    } else if flags.is_empty() {
        Check::warn(G, "invariant TSC: no x86 flags line in /proc/cpuinfo", "measure with --clock monotonic")
    } else {
        Check::bad(
            G,
            format!("TSC not invariant ({} missing): its rate follows the CPU's frequency", missing.join(", ")),
            "measure with --clock monotonic (CLOCK_MONOTONIC_RAW)",
        )
        .matters("the TSC is not invariant: nanoseconds drift with the CPU's frequency")
    }
}

fn clocksource(sys: &Sys) -> Check {
    const P: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    let Some(cur) = sys.get(P) else { return Check::unreadable(G, "clocksource", &sys.path(P)) };
    let avail = sys.get("/sys/devices/system/clocksource/clocksource0/available_clocksource").unwrap_or_default();
    if VDSO_SOURCES.contains(&cur.as_str()) {
        Check::ok(G, format!("clocksource {cur} (clock_gettime is read without a system call)"))
    } else {
        let better = VDSO_SOURCES.iter().find(|s| avail.split_whitespace().any(|a| a == **s));
        Check::warn(
            G,
            format!("clocksource {cur}: clock_gettime may enter the kernel, so --clock monotonic costs a system call"),
            match better {
                Some(b) => format!("echo {b} > {P}"),
                None => "use the default --clock tsc".into(),
            },
        )
    }
}

fn step(c: &ClockInfo) -> Check {
    let text = format!(
        "TSC {:.3} GHz measured, advances in {:.1} ns steps ({:.0}% of back-to-back reads equal)",
        c.tsc_hz / 1e9,
        c.resolution_ns,
        100.0 * c.zero_step_fraction
    );
    if c.resolution_ns >= 20.0 {
        Check::warn(G, text, "none on this machine: compare means, not percentiles (a coarse TSC is the platform's)")
            .matters(format!(
                "the clock moves in {:.0} ns steps: single-call percentiles are multiples of it",
                c.resolution_ns
            ))
    } else {
        Check::ok(G, text)
    }
}
