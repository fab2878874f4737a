//! Virtualization: the hypervisor, and the steal time it took from the measuring CPU over the
//! check's window (/proc/stat's 8th field: time the vCPU was runnable but the host ran something
//! else). A stolen stretch inside a timed call shows in no event the detector sees.
use std::collections::BTreeMap;

use super::snapshot::CpuShare;
use super::{Check, Sys};

const G: &str = "virtualization";

/// The hypervisor (CPUID's vendor, through `host`), and the steal measured over the window.
pub fn checks(sys: &Sys, cpu: usize, shares: &BTreeMap<usize, CpuShare>, seconds: f64) -> Vec<Check> {
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
    out.push(steal(shares.get(&cpu), cpu, seconds));
    out
}

fn steal(share: Option<&CpuShare>, cpu: usize, seconds: f64) -> Check {
    let Some(st) = share.map(|s| s.steal) else {
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
