//! What run.json says about the machine: the survey (section 6.2.3) shows that frequency
//! scaling, SMT and C-states change single-call latencies, so they are recorded, not assumed.
//! The load of the other cores is recorded too: cross-process tracers (strace) depend on it.
use std::collections::BTreeMap;
use std::fs;

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub cpu_model: String,
    pub kernel: String,
    pub hostname: String,
    pub online_cpus: Vec<usize>,
    pub clocksource: Option<String>,
    pub smt_active: Option<String>,
    pub governor: Option<String>,
    pub loadavg: Option<String>,
    pub virtualized: Option<String>,
    /// The hypervisor's CPUID vendor string (leaf 0x40000000), e.g. `KVMKVMKVM` or `TCGTCGTCGTCG`.
    pub hypervisor: Option<String>,
    /// True under an emulated CPU (qemu TCG), whose timings say nothing about a tracer's cost:
    /// `tracebench report` then makes no timing comparison with the survey.
    pub emulated: bool,
}

/// The hypervisor vendor from CPUID leaf 0x40000000 (only meaningful with the hypervisor flag).
fn hypervisor_vendor() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        // cpuid exists on every x86_64 CPU; leaf 0x40000000 is reserved for hypervisors and
        // reads as zeros (or another leaf's data) without one, hence the filter.
        let r = core::arch::x86_64::__cpuid(0x4000_0000);
        let b: Vec<u8> = [r.ebx, r.ecx, r.edx].iter().flat_map(|x| x.to_le_bytes()).collect();
        let s: String = b.iter().take_while(|c| **c != 0).map(|&c| c as char).collect();
        Some(s).filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic()))
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

fn read_trim(p: &str) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn uname() -> (String, String) {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return ("unknown".into(), "unknown".into());
    }
    let s = |f: &[libc::c_char]| {
        // SAFETY: uname NUL-terminates every field.
        unsafe { std::ffi::CStr::from_ptr(f.as_ptr()) }.to_string_lossy().into_owned()
    };
    (format!("{} {} {}", s(&u.sysname), s(&u.release), s(&u.machine)), s(&u.nodename))
}

/// Parses a kernel CPU list such as `0-3,5`.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    v.extend(a..=b);
                }
            }
            None => v.extend(part.parse::<usize>().ok()),
        }
    }
    v
}

/// The CPUs a run measures on, in the order its threads take them: `first` (the last online CPU
/// unless `--cpu` says), then the other online CPUs from the highest down. `run --threads N` and
/// `scale` use the first N; `system tune --threads N` keeps the same N quiet.
pub fn measuring_order(online: &[usize], first: usize) -> Vec<usize> {
    let mut cpus = vec![first];
    cpus.extend(online.iter().rev().copied().filter(|c| *c != first));
    cpus
}

pub fn online_cpus() -> Vec<usize> {
    read_trim("/sys/devices/system/cpu/online").map(|s| parse_cpu_list(&s)).unwrap_or_else(|| {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        (0..n).collect()
    })
}

pub fn describe() -> Host {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        info.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string())
    };
    let flags = field("flags").unwrap_or_default();
    let hv = flags.split_whitespace().any(|f| f == "hypervisor");
    let hypervisor = if hv { hypervisor_vendor() } else { None };
    let (kernel, hostname) = uname();
    Host {
        cpu_model: field("model name").unwrap_or_else(|| "unknown".into()),
        kernel,
        hostname,
        online_cpus: online_cpus(),
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        smt_active: read_trim("/sys/devices/system/cpu/smt/active"),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        loadavg: read_trim("/proc/loadavg"),
        virtualized: hv.then(|| "hypervisor flag set".into()),
        emulated: std::env::var("TRACEBENCH_EMULATED").is_ok_and(|v| v == "1")
            || hypervisor.as_deref().is_some_and(|v| v.starts_with("TCG")),
        hypervisor,
    }
}

/// Per-CPU busy time from /proc/stat, to report how loaded each core was during the run.
#[derive(Debug, Clone, Default)]
pub struct CpuTimes(BTreeMap<String, (u64, u64)>);

impl CpuTimes {
    pub fn now() -> Self {
        let text = fs::read_to_string("/proc/stat").unwrap_or_default();
        let mut m = BTreeMap::new();
        for l in text.lines().filter(|l| l.starts_with("cpu")) {
            let mut it = l.split_whitespace();
            let name = it.next().unwrap_or("").to_string();
            let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
            if v.len() >= 5 {
                let idle = v[3] + v[4];
                m.insert(name, (v.iter().sum::<u64>(), idle));
            }
        }
        CpuTimes(m)
    }

    /// Busy and total ticks of `cpus` together between `self` and `later` (USER_HZ ticks).
    pub fn ticks_since(&self, later: &CpuTimes, cpus: &[usize]) -> (u64, u64) {
        cpus.iter().fold((0, 0), |(busy, total), c| {
            let k = format!("cpu{c}");
            match (self.0.get(&k), later.0.get(&k)) {
                (Some((t0, i0)), Some((t1, i1))) => {
                    let dt = t1.saturating_sub(*t0);
                    (busy + dt.saturating_sub(i1.saturating_sub(*i0)), total + dt)
                }
                _ => (busy, total),
            }
        })
    }

    /// Busy fraction per CPU between `self` and `later`.
    pub fn busy_since(&self, later: &CpuTimes) -> BTreeMap<String, f64> {
        later
            .0
            .iter()
            .filter_map(|(k, (t1, i1))| {
                let (t0, i0) = self.0.get(k)?;
                let dt = t1.saturating_sub(*t0);
                (dt > 0).then(|| (k.clone(), 1.0 - i1.saturating_sub(*i0) as f64 / dt as f64))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,5\n"), vec![0, 1, 2, 3, 5]);
        assert_eq!(parse_cpu_list("1"), vec![1]);
        assert!(parse_cpu_list("").is_empty());
    }
}
