//! The measuring CPU and its SMT sibling (online, busy, isolated from the scheduler, the tick and
//! RCU callbacks), its frequency (governor, min/max, turbo, C-states) and the interrupts aimed at
//! it (survey 6.2.3: frequency scaling, SMT and interrupts change single-call latencies).
use std::collections::BTreeMap;

use super::snapshot::{CpuShare, Snapshot};
use super::{Check, Sys};
use crate::host::parse_cpu_list;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The percent of `cpu`'s time that was busy over the window, if it was measured.
fn busy_percent(shares: &BTreeMap<usize, CpuShare>, cpu: usize) -> Option<f64> {
    shares.get(&cpu).map(|s| 100.0 * s.busy)
}

/// The CPUs sharing a core with `cpu`, itself excluded.
pub fn siblings(sys: &Sys, cpu: usize) -> Vec<usize> {
    sys.get(&format!("{CPU_DIR}/cpu{cpu}/topology/thread_siblings_list"))
        .map(|s| parse_cpu_list(&s).into_iter().filter(|&c| c != cpu).collect())
        .unwrap_or_default()
}

/// A kernel command-line parameter's CPU list (`isolcpus=domain,2-3` gives 2-3).
fn cmdline_cpus(cmdline: &str, key: &str) -> Option<Vec<usize>> {
    let v = cmdline.split_whitespace().find_map(|w| w.strip_prefix(&format!("{key}=")))?;
    let list = v.split(',').filter(|p| p.starts_with(|c: char| c.is_ascii_digit())).collect::<Vec<_>>().join(",");
    Some(parse_cpu_list(&list))
}

/// A measuring CPU busy this much (percent) with other work is not fit to measure on: most of
/// its time goes to someone else, and the calls queue behind them.
pub const BUSY_BAD: f64 = 50.0;

/// Over a run: the share `busy` (0 to 1) of the measuring CPUs' time that other work took, the
/// same thresholds as the check on an idle CPU.
pub fn others_during_run(busy: f64, cpus: &[usize]) -> Check {
    const G: &str = "cpu";
    let list = cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    let b = 100.0 * busy;
    let fix = "pick an idle CPU with --cpu, or move the work away (taskset, cgroups cpusets)";
    let text = format!("cpu {list} busy {b:.0}% with work other than the run's cells during the run");
    if b >= BUSY_BAD {
        Check::bad(G, text, fix).matters(format!("others took {b:.0}% of the measuring CPU: calls waited behind them"))
    } else if b >= 10.0 {
        Check::warn(G, text, fix).matters(format!("others took {b:.0}% of the measuring CPU: expect cold caches"))
    } else {
        Check::ok(G, text)
    }
}

pub fn cpu(sys: &Sys, cpu: usize, shares: &BTreeMap<usize, CpuShare>, ours: &[usize]) -> Vec<Check> {
    const G: &str = "cpu";
    let mut out = Vec::new();
    let online = sys.get(&format!("{CPU_DIR}/cpu{cpu}/online")).map_or(true, |s| s == "1");
    out.push(if online {
        Check::ok(G, format!("cpu {cpu} (measuring) online"))
    } else {
        Check::bad(
            G,
            format!("cpu {cpu} is offline"),
            format!("echo 1 > {CPU_DIR}/cpu{cpu}/online, or pick another --cpu"),
        )
    });
    let fix = "pick an idle CPU with --cpu, or move the work away (taskset, cgroups cpusets)";
    match busy_percent(shares, cpu) {
        _ if ours.contains(&cpu) => {}
        Some(b) if b >= BUSY_BAD => {
            out.push(Check::bad(G, format!("cpu {cpu} busy {b:.0}% during the check (others run there)"), fix).matters(
                format!("cpu {cpu} was {b:.0}% busy with other work: calls wait behind it and share its caches"),
            ))
        }
        Some(b) if b >= 10.0 => out.push(
            Check::warn(G, format!("cpu {cpu} busy {b:.0}% during the check (others run there)"), fix).matters(
                format!("cpu {cpu} was {b:.0}% busy with other work: expect context switches and cold caches"),
            ),
        ),
        Some(b) => out.push(Check::ok(G, format!("cpu {cpu} idle ({b:.0}% busy during the check)"))),
        None => out.push(Check::warn(G, format!("cpu {cpu} load: unknown, /proc/stat unreadable"), "mount /proc")),
    }
    let sib = siblings(sys, cpu);
    for s in sib.iter().filter(|s| !ours.contains(s)) {
        match busy_percent(shares, *s) {
            Some(b) if b >= 10.0 => out.push(
                Check::warn(
                    G,
                    format!("SMT sibling cpu {s} busy {b:.0}%: it shares the core's pipeline and caches"),
                    format!("keep cpu {s} idle, or echo off > {CPU_DIR}/smt/control"),
                )
                .matters(format!("SMT sibling cpu {s} was {b:.0}% busy: calls share a core with other work")),
            ),
            Some(b) => out.push(Check::ok(G, format!("SMT sibling cpu {s} idle ({b:.0}% busy)"))),
            None => out.push(Check::warn(G, format!("SMT sibling cpu {s}: load unknown"), "mount /proc")),
        }
    }
    if sib.is_empty() {
        out.push(Check::ok(G, format!("cpu {cpu} has no SMT sibling online")));
    }
    out.extend(isolation(sys, cpu));
    out
}

/// isolcpus, nohz_full and rcu_nocbs: each keeps something off the measuring CPU.
fn isolation(sys: &Sys, cpu: usize) -> Vec<Check> {
    const G: &str = "cpu";
    let cmdline = sys.read("/proc/cmdline").unwrap_or_default();
    let boot = format!("boot with isolcpus={cpu} nohz_full={cpu} rcu_nocbs={cpu}");
    let from_sys = |f: &str| sys.get(&format!("{CPU_DIR}/{f}")).map(|s| parse_cpu_list(&s));
    let isolated = from_sys("isolated").or_else(|| cmdline_cpus(&cmdline, "isolcpus")).unwrap_or_default();
    let nohz = from_sys("nohz_full").or_else(|| cmdline_cpus(&cmdline, "nohz_full")).unwrap_or_default();
    let nocbs = cmdline_cpus(&cmdline, "rcu_nocbs").unwrap_or_default();
    let one = |on: bool, what: &str, why: &str| {
        if on {
            Check::ok(G, format!("cpu {cpu} in {what}"))
        } else {
            Check::warn(G, format!("cpu {cpu} not in {what}: {why}"), boot.clone())
        }
    };
    vec![
        one(isolated.contains(&cpu), "isolcpus", "the scheduler may put other tasks there"),
        one(nohz.contains(&cpu), "nohz_full", "the timer tick interrupts it (the detector discards those calls)"),
        one(nocbs.contains(&cpu), "rcu_nocbs", "RCU callbacks run there in softirq"),
    ]
}

pub fn frequency(sys: &Sys, cpu: usize) -> Vec<Check> {
    const G: &str = "frequency";
    let base = format!("{CPU_DIR}/cpu{cpu}/cpufreq");
    let mut out = Vec::new();
    match sys.get(&format!("{base}/scaling_governor")) {
        None => out.push(Check::warn(
            G,
            format!("no cpufreq for cpu {cpu}: the frequency is set by the firmware or hypervisor and cannot be seen"),
            "on bare metal, load the cpufreq driver; in a VM, ask for a host without frequency scaling",
        )),
        Some(g) if g == "performance" => out.push(Check::ok(G, "governor performance")),
        Some(g) => out.push(
            Check::warn(G, format!("governor {g}: the frequency follows the load"), "tracebench system tune (as root)")
                .matters(format!("governor {g}: the clock rate moves under the calls")),
        ),
    }
    let f = |n: &str| sys.get(&format!("{base}/{n}"));
    if let (Some(lo), Some(hi)) = (f("scaling_min_freq"), f("scaling_max_freq")) {
        out.push(if lo == hi {
            Check::ok(G, format!("min = max frequency ({hi} kHz)"))
        } else {
            Check::warn(G, format!("frequency may move between {lo} and {hi} kHz"), "tracebench system tune (as root)")
        });
    }
    out.push(turbo(sys));
    out.push(cstates(sys, cpu));
    out
}

fn turbo(sys: &Sys) -> Check {
    const G: &str = "frequency";
    let fix = "tracebench system tune (as root)";
    let m = "turbo/boost on: the frequency depends on temperature and on the other cores";
    if let Some(v) = sys.get(&format!("{CPU_DIR}/intel_pstate/no_turbo")) {
        return if v == "1" {
            Check::ok(G, "turbo off (intel_pstate)")
        } else {
            Check::warn(G, "turbo on (intel_pstate)", fix).matters(m)
        };
    }
    if let Some(v) = sys.get(&format!("{CPU_DIR}/cpufreq/boost")) {
        return if v == "0" { Check::ok(G, "boost off") } else { Check::warn(G, "boost on (cpufreq)", fix).matters(m) };
    }
    Check::warn(
        G,
        "turbo/boost: no control visible (intel_pstate/no_turbo, cpufreq/boost)",
        "turn turbo off in the firmware (BIOS) if the CPU has it",
    )
}

/// Idle states the measuring CPU may enter, with their exit latencies: a deep one makes the
/// first call after an idle stretch slow (the warm-up absorbs it, an interrupt's return does not).
fn cstates(sys: &Sys, cpu: usize) -> Check {
    const G: &str = "frequency";
    let dir = sys.path(&format!("{CPU_DIR}/cpu{cpu}/cpuidle"));
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Check::ok(G, format!("C-states: none visible for cpu {cpu}"));
    };
    let mut states: Vec<(String, u64)> = Vec::new();
    let mut names: Vec<_> =
        rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("state")).collect();
    names.sort();
    for s in names {
        let rel = format!("{CPU_DIR}/cpu{cpu}/cpuidle/{s}");
        if sys.get(&format!("{rel}/disable")).as_deref() == Some("1") {
            continue;
        }
        let name = sys.get(&format!("{rel}/name")).unwrap_or(s);
        states.push((name, sys.get(&format!("{rel}/latency")).and_then(|l| l.parse().ok()).unwrap_or(0)));
    }
    let list = states.iter().map(|(n, l)| format!("{n} {l} us")).collect::<Vec<_>>().join(", ");
    let deepest = states.iter().map(|s| s.1).max().unwrap_or(0);
    if deepest > 10 {
        Check::warn(
            G,
            format!("C-states enabled: {list}"),
            "cpupower idle-set -D 10 (or boot with processor.max_cstate=1)",
        )
    } else {
        Check::ok(G, format!("C-states: {}", if list.is_empty() { "none enabled".into() } else { list }))
    }
}

/// Whether a hex CPU mask (`/proc/irq/default_smp_affinity`: `3`, `00000000,00000003`) has `cpu`.
pub fn mask_has(mask: &str, cpu: usize) -> Option<bool> {
    let hex: String = mask.trim().chars().filter(|c| *c != ',').collect();
    let digit = hex.len().checked_sub(1 + cpu / 4)?;
    let d = hex[digit..=digit].chars().next()?.to_digit(16)?;
    Some(d & (1 << (cpu % 4)) != 0)
}

pub fn interrupts(sys: &Sys, cpu: usize, before: &Snapshot, after: &Snapshot) -> Vec<Check> {
    const G: &str = "interrupts";
    let fix = "tracebench system tune (as root) moves them to the other CPUs";
    let mut aimed = Vec::new();
    let mut pending = Vec::new();
    let mut unreadable = 0;
    for irq in after.irqs.iter().filter(|i| i.label.chars().all(|c| c.is_ascii_digit())) {
        let rel = format!("/proc/irq/{}", irq.label);
        let has = |f: &str| sys.get(&format!("{rel}/{f}")).map(|l| parse_cpu_list(&l).contains(&cpu));
        let name = format!("{} ({})", irq.label, irq.desc.split_whitespace().last().unwrap_or("?"));
        // The affinity asked for decides; x86 moves an IRQ's vector at its next interrupt, so
        // the effective one may lag behind (said, not counted against the CPU).
        match (has("smp_affinity_list"), has("effective_affinity_list")) {
            (Some(true), _) => aimed.push(name),
            (Some(false), Some(true)) => pending.push(name),
            (Some(false), _) => {}
            (None, _) => unreadable += 1,
        }
    }
    let mut out = Vec::new();
    let moving = if pending.is_empty() {
        String::new()
    } else {
        format!(" ({} still delivered there until their next interrupt moves them)", pending.join(", "))
    };
    out.push(if aimed.is_empty() && unreadable == 0 {
        Check::ok(G, format!("no device IRQ aimed at cpu {cpu}{moving}"))
    } else if aimed.is_empty() {
        Check::warn(
            G,
            format!("IRQ affinity unknown for {unreadable} IRQs (cannot read /proc/irq)"),
            "run as root to check it",
        )
    } else {
        Check::warn(G, format!("device IRQs aimed at cpu {cpu}: {}", aimed.join(", ")), fix).matters(format!(
            "device IRQs aimed at the measuring cpu {cpu}: their calls are discarded, their cache damage is not"
        ))
    });
    out.push(match sys.get("/proc/irq/default_smp_affinity").map(|m| mask_has(&m, cpu)) {
        Some(Some(false)) => Check::ok(G, format!("default IRQ affinity excludes cpu {cpu}")),
        Some(Some(true)) => {
            Check::warn(G, format!("default IRQ affinity includes cpu {cpu} (new IRQs may land there)"), fix)
        }
        _ => Check::unreadable(G, "default IRQ affinity", &sys.path("/proc/irq/default_smp_affinity")),
    });
    out.push(rates(before, after, cpu));
    out
}

/// Interrupts taken on `cpu` during the window, per second, busiest first.
fn rates(before: &Snapshot, after: &Snapshot, cpu: usize) -> Check {
    let secs = after.taken.duration_since(before.taken).as_secs_f64().max(1e-3);
    let mut r: Vec<(String, f64)> = after
        .irqs
        .iter()
        .filter_map(|a| {
            let b = before.irqs.iter().find(|b| b.label == a.label)?;
            let d = a.counts.get(cpu)?.saturating_sub(*b.counts.get(cpu)?);
            (d > 0).then(|| (a.label.clone(), d as f64 / secs))
        })
        .collect();
    r.sort_by(|a, b| b.1.total_cmp(&a.1));
    let list = r.iter().take(5).map(|(l, n)| format!("{l} {n:.0}/s")).collect::<Vec<_>>().join(", ");
    Check::ok(
        "interrupts",
        format!("taken on cpu {cpu} during the check: {}", if list.is_empty() { "none".into() } else { list }),
    )
}
