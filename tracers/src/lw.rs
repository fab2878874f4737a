//! `lw` and `lw-tsc`: the survey's LW-ust, the minimal lower bound of a userspace tracer
//! (survey section 7.2, Table 4 "LW-UST").
//!
//! Per call: read the clock, copy {id, ts, payload} into a per-CPU, cache-line-aligned ring, bump
//! the head. No reentrancy protection, no atomics, no formatting: anything a real tracer adds on
//! top of this is its own cost. `lw` reads CLOCK_MONOTONIC through the vDSO as the survey did;
//! `lw-tsc` reads the raw TSC, which shows how much of `lw` is the clock.
use std::cell::{Cell, UnsafeCell};

use crate::clock::{monotonic_ns, rdtsc};
use crate::{Tracer, TracerError};

/// Events per per-CPU ring: 1024 x 16 B = 16 KiB, the buffer size the survey gives every tracer
/// (section 6.2.3: LTTng 2 x 8 KiB sub-buffers, ftrace 16 KiB per CPU).
pub const RING_EVENTS: usize = 1024;
const EVENT_ID: u32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Event {
    id: u32,
    payload: u32,
    ts: u64,
}

/// One CPU's ring. The head sits on its own cache line so that neighbouring CPUs' rings never
/// share a line (no false sharing in `tracebench scale`).
#[repr(C, align(64))]
struct Ring {
    head: UnsafeCell<u64>,
    _pad: [u8; 56],
    events: UnsafeCell<[Event; RING_EVENTS]>,
}

// SAFETY: each ring is written only by the one thread pinned to its CPU (see `thread_init`).
unsafe impl Sync for Ring {}

thread_local! {
    static SLOT: Cell<usize> = const { Cell::new(0) };
}

pub struct Lw {
    name: String,
    tsc: bool,
    rings: Box<[Ring]>,
}

impl Lw {
    pub fn new(name: &str, tsc: bool) -> Self {
        // SAFETY: sysconf has no preconditions.
        let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
        let rings = (0..ncpu)
            .map(|_| Ring {
                head: UnsafeCell::new(0),
                _pad: [0; 56],
                events: UnsafeCell::new([Event::default(); RING_EVENTS]),
            })
            .collect();
        Lw { name: name.to_string(), tsc, rings }
    }
}

impl Tracer for Lw {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").into()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "ring": "per-CPU, cache-line aligned",
            "ring_events": RING_EVENTS,
            "event_bytes": std::mem::size_of::<Event>(),
            "clock": if self.tsc { "rdtsc" } else { "clock_gettime(CLOCK_MONOTONIC)" },
        })
    }
    fn buffer_events(&self) -> u64 {
        RING_EVENTS as u64
    }
    fn thread_init(&self, cpu: usize) -> Result<(), TracerError> {
        if cpu >= self.rings.len() {
            return Err(TracerError::Setup { name: self.name.clone(), why: format!("cpu {cpu} out of range") });
        }
        SLOT.with(|s| s.set(cpu));
        // Touch the whole ring now so that no page fault lands in the timed window.
        let ring = &self.rings[cpu];
        // SAFETY: this thread is the only writer of this CPU's ring.
        unsafe {
            for e in (*ring.events.get()).iter_mut() {
                std::ptr::write_volatile(e, Event::default());
            }
        }
        Ok(())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        let ts = if self.tsc { rdtsc() } else { monotonic_ns() };
        let ring = &self.rings[SLOT.with(|s| s.get())];
        // SAFETY: single writer per CPU ring, no reentrancy (the survey's LW-ust makes the same
        // trade-off).
        unsafe {
            let head = &mut *ring.head.get();
            let slot = (*head as usize) & (RING_EVENTS - 1);
            (*ring.events.get())[slot] = Event { id: EVENT_ID, payload, ts };
            *head += 1;
        }
    }
    fn after_run(&self) -> serde_json::Value {
        let heads: Vec<u64> = self
            .rings
            .iter()
            // SAFETY: measuring threads have finished.
            .map(|r| unsafe { *r.head.get() })
            .collect();
        serde_json::json!({ "events_per_cpu": heads })
    }
}
