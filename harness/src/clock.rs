//! The clock of the timed window (survey Algorithm 1: `start_time = gettime()` /
//! `end_time = gettime()`).
//!
//! The default is the TSC read with fences, which is what the survey's "nanosecond granularity"
//! needs: `lfence; rdtsc; lfence` opens the window so that no earlier instruction is still in
//! flight and the call cannot start before the read; `rdtscp; lfence` closes it so that the call
//! has retired before the read and nothing after it starts early (Intel, "How to Benchmark Code
//! Execution Times", 2010, with lfence in place of the costlier cpuid). `--clock monotonic`
//! uses CLOCK_MONOTONIC_RAW through the vDSO instead, for machines without an invariant TSC.
use std::time::{Duration, Instant};

use serde::Serialize;

/// A clock as the timed loop sees it: two reads in raw units, converted to ns afterwards.
pub trait Clock: Send + Sync {
    fn start(&self) -> u64;
    fn end(&self) -> u64;
}

/// Fenced TSC. Units: ticks.
pub struct Tsc;

impl Clock for Tsc {
    #[inline(always)]
    fn start(&self) -> u64 {
        use core::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc have no preconditions on x86_64.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[inline(always)]
    fn end(&self) -> u64 {
        use core::arch::x86_64::{__rdtscp, _mm_lfence};
        let mut aux = 0u32;
        // SAFETY: rdtscp is present on every x86_64 CPU this tool targets (checked in `tsc_usable`).
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }
}

/// CLOCK_MONOTONIC_RAW through the vDSO (no system call). Units: ns.
pub struct Monotonic;

impl Monotonic {
    #[inline(always)]
    fn now() -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

impl Clock for Monotonic {
    #[inline(always)]
    fn start(&self) -> u64 {
        Self::now()
    }
    #[inline(always)]
    fn end(&self) -> u64 {
        Self::now()
    }
}

/// Which clock the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    Tsc,
    Monotonic,
}

/// What run.json says about the clock.
#[derive(Debug, Clone, Serialize)]
pub struct ClockInfo {
    pub kind: ClockKind,
    /// Raw units per second (TSC Hz, or 1e9 for monotonic).
    pub hz: f64,
    pub tsc_hz: f64,
    pub invariant_tsc: bool,
    /// Smallest non-zero step between two back-to-back reads, in ns.
    pub resolution_ns: f64,
    /// Share of back-to-back reads that returned the same value.
    pub zero_step_fraction: f64,
}

impl ClockInfo {
    pub fn to_ns(&self, units: u64) -> f64 {
        units as f64 * 1e9 / self.hz
    }
}

/// Whether the TSC is invariant (constant_tsc and nonstop_tsc), as /proc/cpuinfo says.
pub fn invariant_tsc() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    flags.split_whitespace().any(|f| f == "constant_tsc") && flags.split_whitespace().any(|f| f == "nonstop_tsc")
}

/// Calibrates the TSC against CLOCK_MONOTONIC_RAW: three 30 ms busy windows, median frequency.
/// Busy rather than sleeping, so that an idle state or a descheduling cannot stretch one side.
pub fn calibrate_tsc() -> f64 {
    let mut est: Vec<f64> = (0..3)
        .map(|_| {
            let (m0, t0) = (Monotonic::now(), Tsc.start());
            let until = Instant::now() + Duration::from_millis(30);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            let (m1, t1) = (Monotonic::now(), Tsc.end());
            (t1 - t0) as f64 * 1e9 / (m1 - m0) as f64
        })
        .collect();
    est.sort_by(|a, b| a.total_cmp(b));
    est[1]
}

/// Measures the clock's resolution: the smallest non-zero difference between back-to-back
/// reads, and how often two reads return the same value. On a VM whose TSC moves in ~10 ns steps
/// this reads ~10 ns, and every single-call latency is a multiple of it.
pub fn resolution<C: Clock>(clock: &C, hz: f64) -> (f64, f64) {
    const N: usize = 20_000;
    let mut min_step = u64::MAX;
    let mut zeros = 0usize;
    let mut prev = clock.start();
    for _ in 0..N {
        let t = clock.start();
        let d = t.wrapping_sub(prev);
        if d == 0 {
            zeros += 1;
        } else if d < min_step {
            min_step = d;
        }
        prev = t;
    }
    (min_step as f64 * 1e9 / hz, zeros as f64 / N as f64)
}

/// Builds the clock description for a run.
pub fn describe(kind: ClockKind) -> ClockInfo {
    let tsc_hz = calibrate_tsc();
    let (hz, (res, zero)) = match kind {
        ClockKind::Tsc => (tsc_hz, resolution(&Tsc, tsc_hz)),
        ClockKind::Monotonic => (1e9, resolution(&Monotonic, 1e9)),
    };
    ClockInfo { kind, hz, tsc_hz, invariant_tsc: invariant_tsc(), resolution_ns: res, zero_step_fraction: zero }
}
