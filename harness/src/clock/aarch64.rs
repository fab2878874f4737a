//! arm64's fenced clock: the generic timer's virtual count, read as `isb; mrs CNTVCT_EL0`.
//!
//! CNTVCT_EL0 may be read speculatively, ahead of earlier instructions (Arm ARM, "Generic Timer
//! registers"): the `isb` before it makes the read wait until everything before it has completed,
//! as lfence does for rdtsc on x86-64. It is what the kernel's vDSO does too (`__arch_counter_get_cntvct`).
//! Linux keeps CNTKCTL_EL1.EL0VCTEN set, so user space reads it without a trap (except on a few
//! errata'd CPUs, where the kernel traps and emulates it: slow, but still right).
//!
//! Its frequency is architectural: CNTFRQ_EL0, set by firmware and constant (the counter does
//! not stop in idle states and does not scale with the CPU clock), so no calibration is needed.
//! Typical rates are low (24 MHz on Apple and many boards, 25 MHz on Graviton, 62.5 MHz under
//! QEMU; Armv8.6 fixes 1 GHz): the resolution, measured as on x86, is 16 to 40 ns, coarser than
//! the TSC, which single calls show as steps and the means of many calls average out.

use super::Clock;

/// Fenced generic-timer count (`--clock tsc` on arm64). Units: ticks of CNTFRQ_EL0.
pub struct Tsc;

impl Clock for Tsc {
    #[inline(always)]
    fn start(&self) -> u64 {
        isb_cntvct()
    }
    #[inline(always)]
    fn end(&self) -> u64 {
        isb_cntvct()
    }
}

#[inline(always)]
fn isb_cntvct() -> u64 {
    let v: u64;
    // SAFETY: isb and a read of CNTVCT_EL0, which Linux lets EL0 read (CNTKCTL_EL1.EL0VCTEN).
    unsafe { core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, preserves_flags)) };
    v
}

/// CNTFRQ_EL0: the counter's frequency in Hz.
fn cntfrq() -> u64 {
    let f: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 whenever CNTVCT_EL0 is.
    unsafe { core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack, preserves_flags)) };
    f
}

/// The generic timer runs at a fixed rate through frequency changes and idle states by
/// definition (the x86 "invariant TSC" question does not arise); a zero CNTFRQ_EL0 (firmware that
/// never set it) is the one case it cannot be used.
pub fn invariant_tsc() -> bool {
    cntfrq() != 0
}

/// The counter's frequency: CNTFRQ_EL0, or, when firmware left it at 0, measured against
/// CLOCK_MONOTONIC_RAW over a 30 ms busy window.
pub fn calibrate_tsc() -> f64 {
    match cntfrq() {
        0 => {
            let (m0, t0) = (super::Monotonic::now(), Tsc.start());
            let until = std::time::Instant::now() + std::time::Duration::from_millis(30);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
            let (m1, t1) = (super::Monotonic::now(), Tsc.end());
            (t1 - t0) as f64 * 1e9 / (m1 - m0) as f64
        }
        f => f as f64,
    }
}
