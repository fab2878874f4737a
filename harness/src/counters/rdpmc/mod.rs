//! Counters read in user space with `rdpmc`, under the mmap page's sequence lock
//! (include/uapi/linux/perf_event.h, "struct perf_event_mmap_page").
//!
//! The window of counter k must hold the tracer and nothing of ours (survey Algorithm 1). So the
//! two ends are not symmetric:
//!
//! ```text
//! start: lfence; for each k { seq_k = lock; idx_k = index; width_k = pmc_width;
//!                             v0_k = rdpmc(idx_k - 1); retry while lock changed }
//! ...clock start, tracer, clock end...
//! end:   for each k { v1_k = rdpmc(idx_k - 1) }            (ecx preloaded: rdpmc only)
//! check: for each k { lock still seq_k }                   (after the last rdpmc)
//! delta_k = (v1_k - v0_k) mod 2^width_k
//! ```
//! The page's `offset` is not needed for a delta while the lock is unchanged: the kernel bumps
//! the lock whenever it reprograms the counter (schedules it in or out, rotates a multiplexed
//! group, handles an overflow), so an unchanged lock means the same hardware counter counted the
//! whole call and `offset` did not move. A counter that was not on the PMU at the start
//! (`index == 0`), or whose lock moved during the call, is not a zero: the sample is discarded as
//! `counter-not-running` and counted for that counter.
//!
//! On arm64 the same protocol holds with `isb` for the fence and `mrs` for the read (the kernel's
//! Documentation/arch/arm64/perf.rst; it needs `kernel.perf_user_access=1` and the event opened
//! with `config1` bit 1, which `counters` sets, together with bit 0 for a 64-bit counter).
//!
//! The arithmetic sits behind [`Pmc`] so that unit tests drive it with a fake page and a fake
//! counter (48-bit wrap, offset change, index 0, lock bump) on machines without a PMU.
use std::ptr::{addr_of, read_volatile};
use std::sync::atomic::{compiler_fence, Ordering};

use super::{Reading, MAX};

/// The start of `struct perf_event_mmap_page`, the part the rdpmc protocol needs. The layout is
/// a stable kernel ABI (checked at compile time below).
#[repr(C)]
#[derive(Debug, Default)]
pub struct MmapPage {
    pub version: u32,
    pub compat_version: u32,
    pub lock: u32,
    pub index: u32,
    pub offset: i64,
    pub time_enabled: u64,
    pub time_running: u64,
    pub capabilities: u64,
    pub pmc_width: u16,
}
const _: () = assert!(std::mem::offset_of!(MmapPage, lock) == 8);
const _: () = assert!(std::mem::offset_of!(MmapPage, index) == 12);
const _: () = assert!(std::mem::offset_of!(MmapPage, offset) == 16);
const _: () = assert!(std::mem::offset_of!(MmapPage, capabilities) == 40);
const _: () = assert!(std::mem::offset_of!(MmapPage, pmc_width) == 48);

/// `cap_user_rdpmc` in `capabilities`.
pub const CAP_USER_RDPMC: u64 = 1 << 2;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
pub use aarch64::{fence, request_user_access, HwPmc};
#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use x86_64::{fence, request_user_access, HwPmc};

/// Reads hardware counter `ecx` (the page's `index - 1`): `rdpmc` on x86-64, `mrs` of
/// PMEVCNTR<n>_EL0 or PMCCNTR_EL0 on arm64 (one module per architecture).
pub trait Pmc {
    fn read(&self, ecx: u32) -> u64;
}

/// Up to [`MAX`] counters read with rdpmc. The page pointers live in a fixed array inside the
/// struct: no Vec to chase between the tracer and the reads.
pub struct Rdpmc<P: Pmc = HwPmc> {
    pages: [*const MmapPage; MAX],
    len: usize,
    pmc: P,
}

impl<P: Pmc> Rdpmc<P> {
    /// # Safety
    /// Each of `pages` must point to a live, mapped perf_event_mmap_page (or a test's fake) for
    /// as long as the reader is used.
    pub unsafe fn new(pages: &[*const MmapPage], pmc: P) -> Self {
        let mut p = [std::ptr::null(); MAX];
        p[..pages.len()].copy_from_slice(pages);
        Rdpmc { pages: p, len: pages.len(), pmc }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Start reading: fenced so that nothing of the previous iteration is still executing, then
    /// per counter one consistent (lock, index, width, value) under the sequence lock.
    #[inline(always)]
    pub fn start(&self, r: &mut Reading) {
        fence();
        r.ok = true;
        for k in 0..self.len {
            let page = self.pages[k];
            loop {
                // SAFETY: see `new`.
                unsafe {
                    let seq = read_volatile(addr_of!((*page).lock));
                    compiler_fence(Ordering::SeqCst);
                    let idx = read_volatile(addr_of!((*page).index));
                    let caps = read_volatile(addr_of!((*page).capabilities));
                    let width = read_volatile(addr_of!((*page).pmc_width)) as u32;
                    let usable = idx != 0 && caps & CAP_USER_RDPMC != 0 && (1..=64).contains(&width);
                    let v = if usable { self.pmc.read(idx - 1) } else { 0 };
                    compiler_fence(Ordering::SeqCst);
                    if read_volatile(addr_of!((*page).lock)) == seq {
                        r.seq[k] = seq;
                        r.ecx[k] = idx.wrapping_sub(1);
                        r.width[k] = width;
                        r.values[k] = v;
                        r.ok &= usable;
                        break;
                    }
                }
            }
        }
    }

    /// End reading: nothing but rdpmc with the counter numbers read at the start. A start that
    /// was not usable skips the reads (rdpmc of index -1 would fault); that sample is discarded.
    #[inline(always)]
    pub fn end(&self, start: &Reading, r: &mut Reading) {
        if start.ok {
            for k in 0..self.len {
                r.values[k] = self.pmc.read(start.ecx[k]);
            }
        }
    }

    /// Deltas, after both readings. Returns a mask of the counters that did not count the whole
    /// call (0: all good).
    #[inline(always)]
    pub fn delta(&self, c0: &Reading, c1: &Reading, out: &mut [u64; MAX]) -> u8 {
        let mut bad = 0u8;
        for k in 0..self.len {
            // SAFETY: see `new`.
            let seq_now = unsafe { read_volatile(addr_of!((*self.pages[k]).lock)) };
            if !c0.ok || seq_now != c0.seq[k] {
                bad |= 1 << k;
                out[k] = 0;
                continue;
            }
            out[k] = wrap_delta(c0.values[k], c1.values[k], c0.width[k]);
        }
        bad
    }
}

/// `(v1 - v0) mod 2^width`: a hardware counter is `width` bits wide (48 on most x86) and wraps.
#[inline(always)]
pub fn wrap_delta(v0: u64, v1: u64, width: u32) -> u64 {
    let d = v1.wrapping_sub(v0);
    if width >= 64 {
        d
    } else {
        d & ((1u64 << width) - 1)
    }
}

#[cfg(test)]
mod tests {
    //! The fake page and counter: each test changes the page between readings as the kernel
    //! would (perf_event_update_userpage bumps `lock` around every change).
    use std::cell::{Cell, RefCell};

    use super::*;

    struct FakePmc {
        values: RefCell<[u64; MAX]>,
        /// Called on every read: lets a test change the page "concurrently".
        on_read: Cell<Option<fn(&FakePmc)>>,
        page: Cell<*mut MmapPage>,
        reads: Cell<u32>,
    }
    impl Pmc for &FakePmc {
        fn read(&self, ecx: u32) -> u64 {
            self.reads.set(self.reads.get() + 1);
            if let Some(f) = self.on_read.take() {
                f(self);
            }
            self.values.borrow()[ecx as usize]
        }
    }

    fn page(index: u32) -> Box<MmapPage> {
        Box::new(MmapPage { lock: 2, index, capabilities: CAP_USER_RDPMC, pmc_width: 48, ..Default::default() })
    }
    fn fake() -> FakePmc {
        FakePmc {
            values: RefCell::new([0; MAX]),
            on_read: Cell::new(None),
            page: Cell::new(std::ptr::null_mut()),
            reads: Cell::new(0),
        }
    }

    fn measure(r: &Rdpmc<&FakePmc>, between: impl FnOnce()) -> (u8, [u64; MAX]) {
        let (mut c0, mut c1, mut d) = (Reading::default(), Reading::default(), [0; MAX]);
        r.start(&mut c0);
        between();
        r.end(&c0, &mut c1);
        let bad = r.delta(&c0, &c1, &mut d);
        (bad, d)
    }

    #[test]
    fn plain_delta() {
        let p = page(1);
        let f = fake();
        f.values.borrow_mut()[0] = 1000;
        let r = unsafe { Rdpmc::new(&[&*p as *const _], &f) };
        let (bad, d) = measure(&r, || f.values.borrow_mut()[0] = 1750);
        assert_eq!((bad, d[0]), (0, 750));
    }

    #[test]
    fn a_48_bit_counter_that_wraps_mid_call() {
        let p = page(1);
        let f = fake();
        f.values.borrow_mut()[0] = (1 << 48) - 10;
        let r = unsafe { Rdpmc::new(&[&*p as *const _], &f) };
        // rdpmc returns the raw 48-bit value; after the wrap it reads 5.
        let (bad, d) = measure(&r, || f.values.borrow_mut()[0] = 5);
        assert_eq!((bad, d[0]), (0, 15));
        // A sign-extended raw value (some CPUs return the upper bits set) wraps the same way.
        f.values.borrow_mut()[0] = 0xFFFF_FFFF_FFF0_u64 | 0xFFFF_0000_0000_0000;
        let (bad, d) = measure(&r, || f.values.borrow_mut()[0] = 0x10);
        assert_eq!((bad, d[0]), (0, 0x20));
    }

    #[test]
    fn offset_change_during_the_call_discards() {
        let mut p = page(1);
        let f = fake();
        let pp: *mut MmapPage = &mut *p;
        let r = unsafe { Rdpmc::new(&[pp as *const _], &f) };
        // The kernel reprograms the counter: new offset, lock bumped twice (odd while writing).
        let (bad, _) = measure(&r, || unsafe {
            (*pp).lock += 1;
            (*pp).offset += 1 << 40;
            (*pp).lock += 1;
        });
        assert_eq!(bad, 1);
    }

    #[test]
    fn index_zero_at_start_or_mid_run_is_not_a_zero() {
        // Not on the PMU at the start: no rdpmc at all (it would fault), the sample is bad.
        let mut p = page(0);
        let f = fake();
        let pp: *mut MmapPage = &mut *p;
        let r = unsafe { Rdpmc::new(&[pp as *const _], &f) };
        let (bad, _) = measure(&r, || ());
        assert_eq!(bad, 1);
        assert_eq!(f.reads.get(), 0, "no rdpmc with index 0");
        // On the PMU at the start, descheduled during the call (index 0, lock bumped).
        unsafe { (*pp).index = 1 };
        let (bad, _) = measure(&r, || unsafe {
            (*pp).lock += 2;
            (*pp).index = 0;
        });
        assert_eq!(bad, 1);
        // And with the capability withdrawn (cap_user_rdpmc cleared under the lock).
        unsafe {
            (*pp).index = 1;
            (*pp).capabilities = 0;
        }
        let (bad, _) = measure(&r, || ());
        assert_eq!(bad, 1);
    }

    #[test]
    fn lock_bump_while_starting_retries_and_second_counter_is_independent() {
        let mut p0 = page(1);
        let mut p1 = page(2);
        let f = fake();
        let pp0: *mut MmapPage = &mut *p0;
        f.page.set(pp0);
        f.values.borrow_mut()[0] = 100;
        f.values.borrow_mut()[1] = 7;
        // The first rdpmc races with an update of page 0: the reader must retry, not keep a torn
        // reading.
        f.on_read.set(Some(|f: &FakePmc| unsafe {
            (*f.page.get()).lock += 2;
            f.values.borrow_mut()[0] = 200;
        }));
        let r = unsafe { Rdpmc::new(&[pp0 as *const _, &mut *p1 as *mut MmapPage as *const _], &f) };
        let (mut c0, mut c1, mut d) = (Reading::default(), Reading::default(), [0; MAX]);
        r.start(&mut c0);
        assert_eq!(c0.values[0], 200, "retried after the lock moved");
        assert_eq!(c0.seq[0], 4);
        f.values.borrow_mut()[0] = 260;
        f.values.borrow_mut()[1] = 10;
        // Counter 1's page changes: only counter 1 is bad.
        unsafe { (*(&mut *p1 as *mut MmapPage)).lock += 2 };
        r.end(&c0, &mut c1);
        let bad = r.delta(&c0, &c1, &mut d);
        assert_eq!(bad, 0b10);
        assert_eq!(d[0], 60);
    }

    #[test]
    fn wrap_delta_widths() {
        assert_eq!(wrap_delta(5, 3, 64), u64::MAX - 1);
        assert_eq!(wrap_delta(5, 3, 48), (1 << 48) - 2);
        assert_eq!(wrap_delta(3, 5, 32), 2);
    }
}
