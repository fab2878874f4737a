//! Virtualization: the hypervisor, and the steal time it took from the measuring CPU over the
//! check's window (/proc/stat's 8th field: time the vCPU was runnable but the host ran something
//! else). A stolen stretch inside a timed call shows in no event the detector sees.
//!
//! [`Snapshot`] is the window's two ends for every time-dependent check: per-CPU /proc/stat and
//! per-CPU /proc/interrupts counts.
use std::collections::BTreeMap;
use std::time::Instant;

use super::{Check, Sys};

const G: &str = "virtualization";

/// /proc/stat's per-CPU fields and /proc/interrupts' per-CPU counts at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub taken: Instant,
    /// cpu number -> user nice system idle iowait irq softirq steal ...
    pub stat: BTreeMap<usize, Vec<u64>>,
    /// (irq label, description, count per CPU column).
    pub irqs: Vec<Irq>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Irq {
    pub label: String,
    pub desc: String,
    pub counts: Vec<u64>,
}

impl Snapshot {
    pub fn take(sys: &Sys) -> Snapshot {
        Snapshot {
            taken: Instant::now(),
            stat: parse_stat(&sys.read("/proc/stat").unwrap_or_default()),
            irqs: parse_interrupts(&sys.read("/proc/interrupts").unwrap_or_default()),
        }
    }
}

pub fn parse_stat(text: &str) -> BTreeMap<usize, Vec<u64>> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cpu = it.next()?.strip_prefix("cpu")?.parse().ok()?;
            Some((cpu, it.filter_map(|x| x.parse().ok()).collect()))
        })
        .collect()
}

/// /proc/interrupts: a header of CPU columns, then `LABEL: count... description` per line.
pub fn parse_interrupts(text: &str) -> Vec<Irq> {
    let mut lines = text.lines();
    let ncpu = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let (label, rest) = l.split_once(':')?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let counts: Vec<u64> = words.iter().take(ncpu).map_while(|w| w.parse().ok()).collect();
            let desc = words[counts.len()..].join(" ");
            Some(Irq { label: label.trim().to_string(), desc, counts })
        })
        .collect()
}

/// (busy share, steal share) of `cpu` between two snapshots; None without both readings.
pub fn shares(before: &Snapshot, after: &Snapshot, cpu: usize) -> Option<(f64, f64)> {
    let (a, b) = (before.stat.get(&cpu)?, after.stat.get(&cpu)?);
    let d = |i: usize| b.get(i).copied().unwrap_or(0).saturating_sub(a.get(i).copied().unwrap_or(0));
    // guest and guest_nice (8, 9) are already inside user and nice.
    let total: u64 = (0..8).map(d).sum();
    if total == 0 {
        return None;
    }
    let idle = d(3) + d(4);
    Some(((total - idle) as f64 / total as f64, d(7) as f64 / total as f64))
}

/// The hypervisor (CPUID's vendor, through `host`), and the steal measured over the window.
pub fn checks(sys: &Sys, cpu: usize, before: &Snapshot, after: &Snapshot, seconds: f64) -> Vec<Check> {
    let cpuinfo = sys.read("/proc/cpuinfo").unwrap_or_default();
    let hv_flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    let mut out = Vec::new();
    if hv_flag {
        let vendor = crate::host::describe().hypervisor.unwrap_or_else(|| "unnamed".into());
        out.push(Check::warn(
            G,
            format!("virtual machine (hypervisor {vendor}): the host can take the CPU and exits cost more"),
            "measure on bare metal for figures to publish; here, compare rows of one run",
        ));
    } else {
        out.push(Check::ok(G, "no hypervisor flag: bare metal"));
    }
    out.push(steal(before, after, cpu, seconds));
    out
}

fn steal(before: &Snapshot, after: &Snapshot, cpu: usize, seconds: f64) -> Check {
    let Some((_, st)) = shares(before, after, cpu) else {
        return Check::warn(
            G,
            format!("steal on cpu {cpu}: unknown, /proc/stat unreadable"),
            "run where /proc is mounted",
        );
    };
    let pct = 100.0 * st;
    // /proc/stat counts in ticks (USER_HZ, 100 a second): a short window cannot show a small steal.
    let ticks = (seconds * 100.0).round().max(1.0);
    let floor = if ticks < 100.0 {
        format!("; {ticks:.0} ticks, so less than {:.0}% cannot show", 100.0 / ticks)
    } else {
        String::new()
    };
    let text = format!("steal {pct:.1}% of cpu {cpu} over {seconds:.2} s (/proc/stat{floor})");
    let matters = format!("steal {pct:.1}% during the check: expect stalls no event shows");
    if pct >= 5.0 {
        Check::bad(G, text, "the host is overcommitted: use a dedicated or pinned vCPU, or another host")
            .matters(matters)
    } else if pct > 0.1 {
        Check::warn(G, text, "the host runs other work on this vCPU's core: pin the vCPU or use a dedicated host")
            .matters(matters)
    } else {
        Check::ok(G, text)
    }
}
