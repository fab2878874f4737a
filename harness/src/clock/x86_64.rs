//! x86-64's fenced clock: the TSC read as `lfence; rdtsc` (why these fences: the parent module).
use std::time::{Duration, Instant};

use super::{Clock, Monotonic};

/// Fenced TSC. Units: ticks.
pub struct Tsc;

impl Clock for Tsc {
    #[inline(always)]
    fn start(&self) -> u64 {
        lfence_rdtsc()
    }
    #[inline(always)]
    fn end(&self) -> u64 {
        lfence_rdtsc()
    }
}

#[inline(always)]
fn lfence_rdtsc() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence and rdtsc have no preconditions on x86_64 (Linux does not set CR4.TSD).
    unsafe {
        _mm_lfence();
        _rdtsc()
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
