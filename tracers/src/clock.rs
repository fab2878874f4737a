//! The raw TSC read that backends with a known cost (`spin`, `lw-tsc`) use. On arm64 the "TSC"
//! is the generic timer's virtual count (CNTVCT_EL0), as in the harness's clock.

/// Reads the TSC without fences: backends want the cheapest timestamp, like a tracer would.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc is always available on x86_64 in user mode unless CR4.TSD is set, which
    // Linux does not do for ordinary tasks.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// `lfence; rdtsc`, as the harness reads its clock around every call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn fenced_rdtsc() -> u64 {
    // SAFETY: lfence and rdtsc have no preconditions on x86_64 (Linux does not set CR4.TSD).
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

/// CNTVCT_EL0 without a barrier (what LTTng-UST's arm64 clock reads through the vDSO, minus the call).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    let v: u64;
    // SAFETY: Linux lets EL0 read CNTVCT_EL0 (CNTKCTL_EL1.EL0VCTEN).
    unsafe { core::arch::asm!("mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, preserves_flags)) };
    v
}

/// `isb; mrs CNTVCT_EL0`, as the harness reads its clock around every call.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub fn fenced_rdtsc() -> u64 {
    let v: u64;
    // SAFETY: as `rdtsc`; isb has no preconditions.
    unsafe { core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, preserves_flags)) };
    v
}

/// CLOCK_MONOTONIC through the vDSO (no system call), as the survey's LW-ust reads it.
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
