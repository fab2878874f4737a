//! x86-64: `rdpmc`, fenced with `lfence` at the start of a reading.
use super::Pmc;

/// The real instruction.
pub struct HwPmc;
impl Pmc for HwPmc {
    #[inline(always)]
    fn read(&self, ecx: u32) -> u64 {
        let (lo, hi): (u32, u32);
        // SAFETY: only called with an index the kernel published as readable (cap_user_rdpmc and
        // index != 0 under the page's lock). No `nomem`: the compiler must not move the page's
        // lock loads across it.
        unsafe {
            core::arch::asm!("rdpmc", in("ecx") ecx, out("eax") lo, out("edx") hi, options(nostack, preserves_flags))
        };
        ((hi as u64) << 32) | lo as u64
    }
}

/// Waits until every earlier instruction has completed.
#[inline(always)]
pub fn fence() {
    // SAFETY: lfence has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_mm_lfence() }
}

/// Nothing to ask on x86-64: rdpmc is allowed per mapped event (`/sys/devices/cpu/rdpmc`).
pub fn request_user_access(_attr: &mut perf_event_open_sys::bindings::perf_event_attr) {}
