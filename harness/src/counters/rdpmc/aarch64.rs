//! arm64: the counter read with `mrs` (Documentation/arch/arm64/perf.rst, "User access").
//!
//! The page's `index - 1` is the PMU counter: 31 is the cycle counter (PMCCNTR_EL0), 0..30 the
//! event counters (PMEVCNTR<n>_EL0). `mrs` takes the register as part of the instruction, so the
//! read is a jump on the preloaded number into one `mrs` per counter; the same few instructions
//! for every tracer, so `none` carries them as it carries the fence. The kernel lets EL0 read the
//! counters (PMUSERENR_EL0.ER/CR) only for a task whose events asked for it and only while
//! `kernel.perf_user_access` is 1; otherwise `cap_user_rdpmc` is 0 and read() is used.
use super::Pmc;

/// The real instructions.
pub struct HwPmc;

macro_rules! mrs {
    ($reg:literal) => {{
        let v: u64;
        // SAFETY: only reached for a counter the kernel published as readable (cap_user_rdpmc and
        // index != 0 under the page's lock). No `nomem`: the page's lock loads must stay around it.
        unsafe { core::arch::asm!(concat!("mrs {v}, ", $reg), v = out(reg) v, options(nostack, preserves_flags)) };
        v
    }};
}

impl Pmc for HwPmc {
    #[inline(always)]
    fn read(&self, n: u32) -> u64 {
        match n {
            0 => mrs!("pmevcntr0_el0"),
            1 => mrs!("pmevcntr1_el0"),
            2 => mrs!("pmevcntr2_el0"),
            3 => mrs!("pmevcntr3_el0"),
            4 => mrs!("pmevcntr4_el0"),
            5 => mrs!("pmevcntr5_el0"),
            6 => mrs!("pmevcntr6_el0"),
            7 => mrs!("pmevcntr7_el0"),
            8 => mrs!("pmevcntr8_el0"),
            9 => mrs!("pmevcntr9_el0"),
            10 => mrs!("pmevcntr10_el0"),
            11 => mrs!("pmevcntr11_el0"),
            12 => mrs!("pmevcntr12_el0"),
            13 => mrs!("pmevcntr13_el0"),
            14 => mrs!("pmevcntr14_el0"),
            15 => mrs!("pmevcntr15_el0"),
            16 => mrs!("pmevcntr16_el0"),
            17 => mrs!("pmevcntr17_el0"),
            18 => mrs!("pmevcntr18_el0"),
            19 => mrs!("pmevcntr19_el0"),
            20 => mrs!("pmevcntr20_el0"),
            21 => mrs!("pmevcntr21_el0"),
            22 => mrs!("pmevcntr22_el0"),
            23 => mrs!("pmevcntr23_el0"),
            24 => mrs!("pmevcntr24_el0"),
            25 => mrs!("pmevcntr25_el0"),
            26 => mrs!("pmevcntr26_el0"),
            27 => mrs!("pmevcntr27_el0"),
            28 => mrs!("pmevcntr28_el0"),
            29 => mrs!("pmevcntr29_el0"),
            30 => mrs!("pmevcntr30_el0"),
            31 => mrs!("pmccntr_el0"),
            // The kernel publishes no index above 32 (armv8pmu_user_event_idx).
            _ => 0,
        }
    }
}

/// Waits until every earlier instruction has completed (the counters, like CNTVCT_EL0, may be
/// read ahead of them otherwise).
#[inline(always)]
pub fn fence() {
    // SAFETY: isb has no preconditions.
    unsafe { core::arch::asm!("isb", options(nostack, preserves_flags)) };
}

/// Asks for user-space access to a hardware event: `config1` bit 1 (`rdpmc`) lets EL0 read it
/// once `kernel.perf_user_access` is 1, and bit 0 (`long`) makes it a 64-bit counter. 64 bits
/// matter: with a 32-bit counter the page's offset could be stale when the page was mapped after
/// a read() of the same fd (a reading can come out exactly 2^32 too high).
/// Software events and tracepoints ignore config1 and are read with read().
pub fn request_user_access(attr: &mut perf_event_open_sys::bindings::perf_event_attr) {
    use perf_event_open_sys::bindings::{PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW};
    if matches!(attr.type_, PERF_TYPE_HARDWARE | PERF_TYPE_HW_CACHE | PERF_TYPE_RAW) {
        attr.config1 |= 0x3;
    }
}
