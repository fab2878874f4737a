//! The two ends of the window every time-dependent check (busy CPUs, steal, interrupts) is
//! measured over: per-CPU /proc/stat and per-CPU /proc/interrupts counts, and the share of each
//! CPU's time that went where between them.
use std::collections::BTreeMap;
use std::time::Instant;

use super::Sys;

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

/// Where one CPU's time went between two snapshots, as shares of it (0 to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuShare {
    /// Not idle: user, nice, system, interrupts and steal.
    pub busy: f64,
    /// Runnable, but the host ran something else.
    pub steal: f64,
}

/// Every CPU's [`CpuShare`] between two snapshots; a CPU without both readings, or with no time
/// counted between them, is left out.
pub fn cpu_shares(before: &Snapshot, after: &Snapshot) -> BTreeMap<usize, CpuShare> {
    let mut out = BTreeMap::new();
    for (&cpu, a) in &before.stat {
        let Some(b) = after.stat.get(&cpu) else { continue };
        let d = |i: usize| b.get(i).copied().unwrap_or(0).saturating_sub(a.get(i).copied().unwrap_or(0));
        // guest and guest_nice (8, 9) are already inside user and nice.
        let total: u64 = (0..8).map(d).sum();
        if total == 0 {
            continue;
        }
        let idle = d(3) + d(4);
        out.insert(cpu, CpuShare { busy: (total - idle) as f64 / total as f64, steal: d(7) as f64 / total as f64 });
    }
    out
}
