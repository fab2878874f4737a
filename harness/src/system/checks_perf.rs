//! perf's limits (paranoia, sample rate, the disturbance detector), the PMU (hardware events, the
//! survey's four as one pinned group, user-space reads) and the tracers `list` finds.
use super::{Check, Sys};
use crate::counters;

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";
pub const MAX_RATE: &str = "/proc/sys/kernel/perf_event_max_sample_rate";
/// arm64 only: lets user space read the PMU's counters.
pub const USER_ACCESS: &str = "/proc/sys/kernel/perf_user_access";
pub const RDPMC: &str = "/sys/bus/event_source/devices/cpu/rdpmc";

pub fn perf(sys: &Sys, cpu: usize) -> Vec<Check> {
    const G: &str = "perf";
    let mut out = Vec::new();
    let root = super::is_root();
    out.push(match sys.get(PARANOID).and_then(|s| s.parse::<i32>().ok()) {
        None => Check::unreadable(G, "perf_event_paranoid", &sys.path(PARANOID)),
        Some(p) if root || p <= 1 => {
            Check::ok(G, format!("perf_event_paranoid {p}{}", if root { " (root is exempt)" } else { "" }))
        }
        Some(p) => Check::warn(
            G,
            format!("perf_event_paranoid {p}: this user may not watch kernel events"),
            "sysctl kernel.perf_event_paranoid=1, or run as root",
        ),
    });
    out.push(match sys.get(MAX_RATE) {
        None => Check::unreadable(G, "perf_event_max_sample_rate", &sys.path(MAX_RATE)),
        Some(r) if r == "1" => Check::ok(G, "perf_event_max_sample_rate 1"),
        Some(r) => Check::warn(
            G,
            format!(
                "perf_event_max_sample_rate {r}: a sampling profiler may interrupt the calls up to {r} times a second"
            ),
            "tracebench system tune (as root) lowers it to 1 (the detector's period-1 events are not throttled)",
        ),
    });
    out.push(detector(cpu));
    if sys.exists(USER_ACCESS) {
        out.push(match sys.get(USER_ACCESS).as_deref() {
            Some("1") => Check::ok(G, "perf_user_access 1: counters are read in user space"),
            Some(v) => Check::warn(
                G,
                format!("perf_user_access {v}: counters are read with read() (~1 us each, outside the window)"),
                "tracebench system tune (as root) sets it to 1",
            ),
            None => Check::unreadable(G, "perf_user_access", &sys.path(USER_ACCESS)),
        });
    }
    out
}

/// Opens the disturbance detector as a run would, on a thread pinned to the measuring CPU.
fn detector(cpu: usize) -> Check {
    const G: &str = "perf";
    let opened = std::thread::spawn(move || {
        pin(cpu);
        crate::disturbance::Detector::open().map(|d| (d.sources.watched.len(), d.sources.weak.clone()))
    })
    .join();
    match opened {
        Ok(Ok((n, None))) => Check::ok(G, format!("full disturbance detector opens ({n} event sources)")),
        Ok(Ok((n, Some(_)))) => {
            let text = format!(
                "WEAK disturbance detector ({n} source{}, no interrupt among them): timer ticks, IPIs, device IRQs, \
                 softirqs and NMIs are not seen, and their cost stays in the kept calls",
                if n == 1 { "" } else { "s" }
            );
            Check::warn(G, text, "run as root, or sysctl kernel.perf_event_paranoid=1 plus read access to tracefs")
        }
        Ok(Err(e)) => Check::bad(G, format!("disturbance detector cannot open: {e}"), "run as root")
            .matters("no disturbance detector"),
        Err(_) => Check::bad(G, "disturbance detector: its thread panicked", "report a bug"),
    }
}

/// Pins the calling thread to `cpu` (best effort: an unpinned check still says what it found).
pub fn pin(cpu: usize) {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds for cpu < CPU_SETSIZE.
    unsafe {
        if cpu < libc::CPU_SETSIZE as usize {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

pub fn counters(sys: &Sys) -> Vec<Check> {
    const G: &str = "counters";
    let mut out = Vec::new();
    let one = counters::probe(&["cycles".to_string()]);
    let hw = matches!(&one, Ok(a) if !a.available.is_empty());
    out.push(match &one {
        Ok(a) if hw => Check::ok(G, format!("hardware events open ({})", a.available.join(", "))),
        Ok(a) if a.unsupported.iter().any(|u| u.1.starts_with("permission denied")) => Check::warn(
            G,
            "hardware events: unknown, this user may not open perf events",
            "run as root, or sysctl kernel.perf_event_paranoid=1",
        ),
        Ok(a) => Check::warn(
            G,
            format!("no hardware events: {}", a.unsupported.first().map(|u| u.1.as_str()).unwrap_or("cycles does not open")),
            "run on bare metal or a VM with a virtual PMU (KVM: -cpu host); --instructions singlestep counts instructions without one",
        ),
        Err(e) => Check::warn(G, format!("hardware events: {e}"), "run as root"),
    });
    if hw {
        let set: Vec<String> = counters::SET1.iter().map(|s| s.to_string()).collect();
        out.push(match counters::probe(&set) {
            Ok(a) if a.available.len() == set.len() => Check::ok(G, format!("the survey's four ({}) fit as one pinned group", set.join(", "))),
            Ok(a) => Check::warn(
                G,
                format!("the survey's four do not fit as one group: {} cut", a.unsupported.iter().map(|u| u.0.as_str()).collect::<Vec<_>>().join(", ")),
                "free PMU counters: echo 0 > /proc/sys/kernel/nmi_watchdog, stop other perf users; or use --counter-sets 2",
            ),
            Err(e) => Check::warn(G, format!("the survey's four: {e}"), "run as root"),
        });
    }
    out.push(rdpmc(sys));
    out
}

/// Whether user space may read the counters (x86's rdpmc; arm64 says it in perf_user_access).
fn rdpmc(sys: &Sys) -> Check {
    const G: &str = "counters";
    match sys.get(RDPMC).as_deref() {
        Some("0") => Check::warn(
            G,
            format!("rdpmc not allowed ({RDPMC} is 0): counters are read with read()"),
            format!("echo 1 > {RDPMC}"),
        ),
        Some(v) => Check::ok(G, format!("rdpmc allowed ({RDPMC} is {v})")),
        None if sys.exists(USER_ACCESS) => Check::ok(G, "user-space counter reads: see perf_user_access"),
        None if sys.denied(RDPMC) => Check::unreadable(G, "rdpmc", &sys.path(RDPMC)),
        None => Check::warn(
            G,
            format!("rdpmc: no {RDPMC} (no CPU PMU device)"),
            "needs a PMU (bare metal, or a VM with a virtual PMU)",
        ),
    }
}

/// One line: how many tracers `tracebench list` finds available, and which are not.
pub fn tracers() -> Check {
    let known = tracebench_tracers::known();
    let down: Vec<&str> = known.iter().filter(|i| i.availability.is_err()).map(|i| i.name).collect();
    let text = format!("{} of {} tracers available here", known.len() - down.len(), known.len());
    if down.is_empty() {
        Check::ok("tracers", text)
    } else {
        Check::ok(
            "tracers",
            format!("{text}; unavailable: {} (`tracebench list` says why and how to fix)", down.join(", ")),
        )
    }
}
