//! The raw TSC read that backends with a known cost (`spin`, `lw-tsc`) use.

/// Reads the TSC without fences: backends want the cheapest timestamp, like a tracer would.
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc is always available on x86_64 in user mode unless CR4.TSD is set, which
    // Linux does not do for ordinary tasks.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// CLOCK_MONOTONIC through the vDSO (no system call), as the survey's LW-ust reads it.
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
