//! The timed loop: survey Algorithm 1 in user space, per iteration.
//!
//! ```text
//! every K-th window (K = --sentinel-every; never when K = 0):
//!     target = the sentinel (the `none` tracer)      (chosen before the window; no branch in it;
//! else every R-th (R = --reference-every; 0: never):  a copy of the same inlined window code, so
//!     target = the reference loop                     each call site has one target only)
//! else
//!     target = the tracer
//! mfence                      (the harness's stores since the last window drain here, not in it)
//! head0 = detector head        (one load; outside the window)
//! counters -> c0               (lfence; rdpmc under each page's lock, or read() of the group)
//! t0 = clock start             (lfence; rdtsc)
//! target.fire(iteration)       (the only thing in the window, through the same &dyn Tracer call)
//! t1 = clock end               (lfence; rdtsc)
//! counters -> c1               (rdpmc only, counter numbers preloaded; or read() of the group)
//! head1 = detector head
//! delta = c1 - c0, valid only if every counter counted the whole call (see `counters`)
//! keep the sample only if head1 == head0 and the delta is valid
//! a tracer window: store (iteration, t0, t1 - t0, counters, cpu); iteration += 1
//! a sentinel window: store (the iteration it precedes, t0, t1 - t0, cpu) apart, or count it
//!     dropped; the iteration number does not move, so the tracer's periods (LTTng's sub-buffer
//!     switch every N calls) stay in the tracer's own call count
//! a reference window: add t1 - t0 to its histogram, or count it dropped (iteration unmoved)
//! ```
//! The clock's fences are described in `clock`; the counters' in `counters::rdpmc`.
//! Interrupts cannot be masked in user space, so instead every iteration that an interrupt,
//! softirq, NMI, context switch, migration or page fault touched is *seen* (see
//! `disturbance`) and discarded with its reason, per iteration (the survey's code checked NMIs
//! once per run). The loop is generic over the clock and the counter reader so that each
//! combination is compiled without a branch on the mode, and it writes only into buffers that
//! were allocated and touched before warm-up: no allocation, I/O or system call of ours enters
//! the window. Each sample is one cache line, aligned to one, written past the caches
//! (non-temporal stores on x86-64, see [`store`]), and the fence before each window drains the
//! harness's stores (the sample, the ring's data_tail) before the clock starts:
//! `lfence` does not wait for stores, and a sample store that missed (the first lines of each new
//! page of the sample buffer, where the hardware prefetcher stops) would otherwise commit inside
//! the next window, so slow calls would cluster on every 64th kept call (docs/method.md, "The
//! harness's footprint"). Sentinel windows (docs/method.md) time an empty call between the tracer's calls,
//! with the same window code ([`window`]), so they measure what the floor measures at the same
//! moment: the machine's speed over the run, beside the tracer's.
#[cfg(not(target_arch = "x86_64"))]
use std::sync::atomic::fence;
use std::sync::atomic::{compiler_fence, AtomicBool, Ordering};

use tracebench_tracers::Tracer;

use crate::clock::Clock;
use crate::counters::{CounterRead, Reading, MAX};
use crate::disturbance::{Detector, Reason};
use tracebench_tracers::reason::KEPT;

/// Set by SIGINT/SIGTERM in the measuring process; the loop stops at the next iteration so the
/// tracer's teardown runs and what was measured is written.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// `--sentinel-every`'s default: one window in 32 is a sentinel (about 3% more calls).
pub const DEFAULT_SENTINEL_EVERY: u64 = 32;

/// One kept call: one cache line, aligned to it, so that each call's store touches one line of
/// the sample buffer, never two (docs/method.md, "The harness's footprint").
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
pub struct Sample {
    pub iteration: u64,
    pub ticks: u64,
    pub counters: [u64; MAX],
    pub cpu: u32,
    /// Makes the line whole (no padding bytes): [`store`] writes it as eight 8-byte words.
    pub spare: u32,
    /// The clock's start read of the window (raw units; stored after the window closes).
    pub t0: u64,
}

// One cache line per sample, on a line of its own: the footprint the docs state (method.md).
const _: () = assert!(std::mem::size_of::<Sample>() == 64 && std::mem::align_of::<Sample>() == 64);

/// Kept calls per page of the sample buffer: the harness's cycle in the calls it measures.
pub fn samples_per_page() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (page.max(4096) as u64) / std::mem::size_of::<Sample>() as u64
}

/// One kept sentinel window (an empty call timed between the tracer's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SentinelSample {
    /// The tracer iteration this sentinel precedes (it consumes none of its own).
    pub iteration: u64,
    pub t0: u64,
    pub ticks: u64,
    pub cpu: u32,
}

/// One discarded call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard {
    pub iteration: u64,
    pub ticks: u64,
    pub mask: u16,
    pub cpu: u32,
}

/// Preallocated, pre-touched storage for one thread.
pub struct Buffers {
    pub samples: Vec<Sample>,
    pub discards: Vec<Discard>,
    /// Kept sentinel windows (capacity fixed before warm-up; full, later ones are only counted).
    pub sentinels: Vec<SentinelSample>,
    /// Sentinel windows the detector saw disturbed (dropped by the tracer's rule).
    pub sentinels_dropped: u64,
    /// Kept reference windows per histogram bin of their ticks (`reference::bin`), and those
    /// the detector saw disturbed.
    pub reference: Vec<u32>,
    pub reference_dropped: u64,
    /// Kept sentinel windows that found `sentinels` full.
    pub sentinels_unstored: u64,
    /// t0 of the first window of the last [`run`] (kept or not; None when none ran): the origin
    /// of `t_ns`.
    pub first_t0: Option<u64>,
    /// Discards per reason bit (counted even when `discards` is full).
    pub reason_counts: [u64; 16],
    /// Samples discarded because counter k did not count the whole call.
    pub counter_not_running: [u64; MAX],
    pub discarded: u64,
    /// Kept calls in which the thread went to sleep (`Reason::Blocked`: the tracer's cost), and
    /// their summed ticks.
    pub blocked: u64,
    pub blocked_ticks: u64,
}

/// Rows for the sentinels of `want` kept calls at one sentinel every `every` windows: one per
/// `every - 1` tracer windows, plus slack for a sentinel discard rate below the tracer's.
pub fn sentinel_rows(want: usize, every: u64) -> usize {
    if every < 2 {
        return 0;
    }
    want / (every as usize - 1) + want / 16 + 64
}

impl Buffers {
    pub fn new(kept: usize, discard_rows: usize, sentinel_rows: usize) -> Self {
        let mut samples = vec![Sample::default(); kept];
        let mut discards = Vec::with_capacity(discard_rows);
        let mut sentinels = Vec::with_capacity(sentinel_rows);
        // Touch every page now: a first-touch page fault inside the window would be the harness's
        // cost, not the tracer's (survey 6.2.4).
        for s in samples.iter_mut() {
            // SAFETY: s is a valid reference.
            unsafe { std::ptr::write_volatile(&mut s.ticks, 1) };
        }
        discards.resize(discard_rows, Discard::default());
        discards.clear();
        sentinels.resize(sentinel_rows, SentinelSample::default());
        sentinels.clear();
        let mut reference = vec![0u32; super::reference::BINS];
        for x in reference.iter_mut() {
            // SAFETY: x is a valid reference (touched now: a zeroed allocation is not yet mapped).
            unsafe { std::ptr::write_volatile(x, 0) };
        }
        Buffers {
            samples,
            discards,
            sentinels,
            sentinels_dropped: 0,
            reference,
            reference_dropped: 0,
            sentinels_unstored: 0,
            first_t0: None,
            reason_counts: [0; 16],
            counter_not_running: [0; MAX],
            discarded: 0,
            blocked: 0,
            blocked_ticks: 0,
        }
    }
}

/// What one call of [`run`] did.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    pub kept: usize,
    pub attempts: u64,
}

/// What the loop times between the tracer's calls: the sentinel, an empty call every `every`-th
/// window (0: never), and the reference loop of the tracer's length every `reference_every`-th
/// of the other windows (0: never; `runner::reference`).
#[derive(Clone, Copy)]
pub struct Sentinel<'a> {
    pub tracer: &'a dyn Tracer,
    pub every: u64,
    pub reference: &'a dyn Tracer,
    pub reference_every: u64,
}

impl<'a> Sentinel<'a> {
    /// Neither sentinels nor reference windows (`tracer` is never called).
    pub fn none(tracer: &'a dyn Tracer) -> Self {
        Sentinel { tracer, every: 0, reference: tracer, reference_every: 0 }
    }
}

/// What one window measured, before the detector's verdict.
struct Window {
    t0: u64,
    ticks: u64,
    cpu: u32,
    h0: u64,
    h1: u64,
    not_running: u8,
}

/// One timed window around `target.fire(arg)`: the same code for the tracer and the sentinel.
#[inline(always)]
fn window<C: Clock, R: CounterRead>(
    clock: &C,
    counters: &R,
    target: &dyn Tracer,
    arg: u32,
    det: &Detector,
    c: &mut (Reading, Reading),
    delta: &mut [u64; MAX],
) -> Window {
    // The harness's stores since the last window (the sample, the ring's data_tail) leave the
    // store buffer here, outside the window: a store that misses (a new sample line, the first
    // lines of a new page, where the prefetcher stops) would otherwise commit during the next
    // window and delay the tracer's own stores behind it. `lfence` in the clock read does not
    // wait for stores; a full fence does (docs/method.md, "The harness's footprint").
    drain_stores();
    let h0 = det.head();
    compiler_fence(Ordering::SeqCst);
    counters.start(&mut c.0);
    let t0 = clock.start();
    target.fire(arg);
    let (t1, cpu) = clock.end_cpu();
    counters.end(&c.0, &mut c.1);
    compiler_fence(Ordering::SeqCst);
    let h1 = det.head();
    let not_running = counters.delta(&c.0, &c.1, delta);
    Window { t0, ticks: t1.wrapping_sub(t0), cpu, h0, h1, not_running }
}

/// Fires the tracer until `want` undisturbed samples are in `buf.samples[..want]`, or `max_attempts`
/// calls of the tracer were made, or [`STOP`] is set; every `sentinel.every`-th window times the
/// sentinel instead (into `buf.sentinels`, not counted in the attempts). Iteration numbers start
/// at `first_iteration`.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn run<C: Clock, R: CounterRead>(
    clock: &C,
    counters: &R,
    tracer: &dyn Tracer,
    sentinel: Sentinel,
    det: &mut Detector,
    buf: &mut Buffers,
    want: usize,
    first_iteration: u64,
    max_attempts: u64,
    record_discards: bool,
    tolerated: u16,
) -> Outcome {
    let mut c = (Reading::default(), Reading::default());
    let mut delta = [0u64; MAX];
    let mut kept = 0usize;
    let mut it = first_iteration;
    let end = first_iteration + max_attempts;
    let ncount = counters.len();
    let mut first_t0 = None;
    // Windows since the last sentinel: the next is one when it reaches every - 1. every = 1
    // would time only sentinels (the plan refuses it); it means none here.
    let every = if sentinel.every > 1 { sentinel.every } else { u64::MAX };
    let mut since = 0u64;
    // Tracer windows since the last reference window, likewise.
    let ref_every = if sentinel.reference_every > 1 { sentinel.reference_every } else { u64::MAX };
    let mut ref_since = 0u64;
    while kept < want && it < end {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        // The choice is made before the window. The sentinel's window is its own inlined copy of
        // `window`, so its indirect call site only ever goes to `none` and the tracer's only to
        // the tracer: neither call pays a mispredicted target for the other's sake.
        if since + 1 == every {
            since = 0;
            let w = window(clock, counters, sentinel.tracer, it as u32, det, &mut c, &mut delta);
            let keep = verdict(det, &w) & !(tolerated | KEPT) == 0;
            keep_sentinel(
                buf,
                keep,
                SentinelSample { iteration: it - first_iteration, t0: w.t0, ticks: w.ticks, cpu: w.cpu },
            );
            continue;
        }
        if ref_since + 1 == ref_every {
            ref_since = 0;
            let w = window(clock, counters, sentinel.reference, it as u32, det, &mut c, &mut delta);
            if verdict(det, &w) & !(tolerated | KEPT) == 0 {
                buf.reference[super::reference::bin(w.ticks)] += 1;
            } else {
                buf.reference_dropped += 1;
            }
            continue;
        }
        let w = window(clock, counters, tracer, it as u32, det, &mut c, &mut delta);
        first_t0 = first_t0.or(Some(w.t0));
        let mask = verdict(det, &w);
        let keep = mask & !(tolerated | KEPT) == 0;
        since += 1;
        ref_since += 1;
        if w.not_running != 0 {
            for (k, n) in buf.counter_not_running.iter_mut().enumerate() {
                *n += u64::from(w.not_running >> k & 1);
            }
        }
        if keep {
            if mask & KEPT != 0 {
                buf.blocked += 1;
                buf.blocked_ticks += w.ticks;
            }
            let mut s =
                Sample { iteration: it - first_iteration, ticks: w.ticks, cpu: w.cpu, t0: w.t0, ..Sample::default() };
            s.counters[..ncount].copy_from_slice(&delta[..ncount]);
            store(&mut buf.samples[kept], &s);
            kept += 1;
        } else {
            buf.discarded += 1;
            for b in 0..16 {
                if mask & (1 << b) != 0 {
                    buf.reason_counts[b] += 1;
                }
            }
            if record_discards && buf.discards.len() < buf.discards.capacity() {
                buf.discards.push(Discard { iteration: it - first_iteration, ticks: w.ticks, mask, cpu: w.cpu });
            }
        }
        it += 1;
    }
    buf.first_t0 = first_t0;
    Outcome { kept, attempts: it - first_iteration }
}

/// Writes one sample past the caches: on x86-64 as eight non-temporal 8-byte stores, which fill
/// one write-combining buffer and go to memory without reading the line, without evicting a line
/// of the tracer's from L1 and without training the prefetcher to walk the sample buffer into its
/// next page (a plain store stream left a few slow calls on a fixed residue of each page, 8
/// lines before its end, even with the fence). The fence before the next window drains the
/// write-combining buffer, so its cost stays outside the windows (docs/method.md).
#[inline(always)]
fn store(dst: &mut Sample, s: &Sample) {
    #[cfg(target_arch = "x86_64")]
    {
        let src = s as *const Sample as *const i64;
        let d = dst as *mut Sample as *mut i64;
        for i in 0..8 {
            // SAFETY: Sample is 64 bytes of u64/u32 fields without padding (asserted above), so
            // both pointers cover eight aligned i64 words; SSE2 is part of x86-64.
            unsafe { std::arch::x86_64::_mm_stream_si64(d.add(i), *src.add(i)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = *s;
    }
}

/// Waits for the harness's stores, non-temporal ones included, before a window opens.
#[inline(always)]
fn drain_stores() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: mfence has no preconditions; SSE2 is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_mfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    fence(Ordering::SeqCst);
}

/// The detector's reasons for a window, and `CounterNotRunning` when a counter missed part of
/// it. Reasons the tracer causes itself (`Tracer::intrinsic_disturbances`, in `tolerated`) do not
/// discard, nor does a sleep inside the call (`reason::KEPT`): both are the tracer's cost.
#[inline(always)]
fn verdict(det: &mut Detector, w: &Window) -> u16 {
    let mut mask = if w.h1 == w.h0 {
        det.release(w.h1);
        0
    } else {
        det.classify(w.h0, w.h1)
    };
    if w.not_running != 0 {
        mask |= Reason::CounterNotRunning as u16;
    }
    mask
}

/// A sentinel window's verdict: kept into the preallocated buffer (never past its capacity), or
/// counted.
#[inline(always)]
fn keep_sentinel(buf: &mut Buffers, keep: bool, s: SentinelSample) {
    if !keep {
        buf.sentinels_dropped += 1;
    } else if buf.sentinels.len() < buf.sentinels.capacity() {
        buf.sentinels.push(s);
    } else {
        buf.sentinels_unstored += 1;
    }
}

/// The median ticks of `n` windows of `target` alone, undisturbed ones only (None: none was):
/// the reference loop's calibration (`reference::calibrate`), outside the measurement. `scratch`
/// holds the ticks (its capacity is kept).
pub fn median_window<C: Clock, R: CounterRead>(
    clock: &C,
    counters: &R,
    target: &dyn Tracer,
    det: &mut Detector,
    n: usize,
    scratch: &mut Vec<u64>,
) -> Option<u64> {
    let mut c = (Reading::default(), Reading::default());
    let mut delta = [0u64; MAX];
    scratch.clear();
    for i in 0..n {
        let w = window(clock, counters, target, i as u32, det, &mut c, &mut delta);
        if verdict(det, &w) == 0 {
            scratch.push(w.ticks);
        }
    }
    scratch.sort_unstable();
    scratch.get(scratch.len() / 2).copied()
}

/// The untimed part of warm-up: `n` plain calls, so the tracer's buffer wraps (survey 6.2.4).
#[inline(never)]
pub fn fire_untimed(tracer: &dyn Tracer, n: u64) {
    for i in 0..n {
        if STOP.load(Ordering::Relaxed) {
            return;
        }
        tracer.fire(i as u32);
    }
}

#[cfg(test)]
#[path = "timed_tests.rs"]
mod tests;
