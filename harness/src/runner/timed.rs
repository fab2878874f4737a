//! The timed loop: survey Algorithm 1 in user space, per iteration.
//!
//! ```text
//! head0 = detector head        (one load; outside the window)
//! counters -> c0               (lfence; rdpmc under each page's lock, or read() of the group)
//! t0 = clock start             (lfence; rdtsc)
//! tracer.fire(iteration)       (the only thing in the window)
//! t1 = clock end               (lfence; rdtsc)
//! counters -> c1               (rdpmc only, counter numbers preloaded; or read() of the group)
//! head1 = detector head
//! delta = c1 - c0, valid only if every counter counted the whole call (see `counters`)
//! keep the sample only if head1 == head0 and the delta is valid
//! ```
//! The clock's fences are described in `clock`; the counters' in `counters::rdpmc`.
//! Interrupts cannot be masked in user space, so instead every iteration that an interrupt,
//! softirq, NMI, context switch, migration or page fault touched is *seen* (see
//! `disturbance`) and discarded with its reason, per iteration (the survey's code checked NMIs
//! once per run). The loop is generic over the clock and the counter reader so that each
//! combination is compiled without a branch on the mode, and it writes only into buffers that
//! were allocated and touched before warm-up: no allocation, I/O or system call of ours enters
//! the window.
use std::sync::atomic::{compiler_fence, AtomicBool, Ordering};

use tracebench_tracers::Tracer;

use crate::clock::Clock;
use crate::counters::{CounterRead, Reading, MAX};
use crate::disturbance::{Detector, Reason};
use tracebench_tracers::reason::KEPT;

/// Set by SIGINT/SIGTERM in the measuring process; the loop stops at the next iteration so the
/// tracer's teardown runs and what was measured is written.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// One kept call.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Sample {
    pub iteration: u64,
    pub ticks: u64,
    pub counters: [u64; MAX],
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

impl Buffers {
    pub fn new(kept: usize, discard_rows: usize) -> Self {
        let mut samples = vec![Sample::default(); kept];
        let mut discards = Vec::with_capacity(discard_rows);
        // Touch every page now: a first-touch page fault inside the window would be the harness's
        // cost, not the tracer's (survey 6.2.4).
        for s in samples.iter_mut() {
            // SAFETY: s is a valid reference.
            unsafe { std::ptr::write_volatile(&mut s.ticks, 1) };
        }
        discards.resize(discard_rows, Discard::default());
        discards.clear();
        Buffers {
            samples,
            discards,
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

/// Fires the tracer until `want` undisturbed samples are in `buf.samples[..want]`, or `max_attempts`
/// calls were made, or [`STOP`] is set. Iteration numbers start at `first_iteration`.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn run<C: Clock, R: CounterRead>(
    clock: &C,
    counters: &R,
    tracer: &dyn Tracer,
    det: &mut Detector,
    buf: &mut Buffers,
    want: usize,
    first_iteration: u64,
    max_attempts: u64,
    record_discards: bool,
    tolerated: u16,
) -> Outcome {
    let mut c0 = Reading::default();
    let mut c1 = Reading::default();
    let mut delta = [0u64; MAX];
    let mut kept = 0usize;
    let mut it = first_iteration;
    let end = first_iteration + max_attempts;
    let ncount = counters.len();
    while kept < want && it < end {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        let h0 = det.head();
        compiler_fence(Ordering::SeqCst);
        counters.start(&mut c0);
        let t0 = clock.start();
        tracer.fire(it as u32);
        let (t1, cpu) = clock.end_cpu();
        counters.end(&c0, &mut c1);
        compiler_fence(Ordering::SeqCst);
        let h1 = det.head();
        let ticks = t1.wrapping_sub(t0);
        let not_running = counters.delta(&c0, &c1, &mut delta);
        // Reasons the tracer causes itself (`Tracer::intrinsic_disturbances`) do not discard, nor
        // does a sleep inside the call (`reason::KEPT`): both are the tracer's cost.
        let mut mask = if h1 == h0 { 0 } else { det.classify(h0, h1) };
        if not_running != 0 {
            mask |= Reason::CounterNotRunning as u16;
            for (k, n) in buf.counter_not_running.iter_mut().enumerate() {
                *n += u64::from(not_running >> k & 1);
            }
        }
        if mask & !(tolerated | KEPT) == 0 {
            if mask & KEPT != 0 {
                buf.blocked += 1;
                buf.blocked_ticks += ticks;
            }
            let s = &mut buf.samples[kept];
            s.iteration = it - first_iteration;
            s.ticks = ticks;
            s.cpu = cpu;
            s.counters[..ncount].copy_from_slice(&delta[..ncount]);
            kept += 1;
        } else {
            buf.discarded += 1;
            for b in 0..16 {
                if mask & (1 << b) != 0 {
                    buf.reason_counts[b] += 1;
                }
            }
            if record_discards && buf.discards.len() < buf.discards.capacity() {
                buf.discards.push(Discard { iteration: it - first_iteration, ticks, mask, cpu });
            }
        }
        it += 1;
    }
    Outcome { kept, attempts: it - first_iteration }
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
