//! `lw` and `lw-tsc`: the survey's LW-ust, the minimal lower bound of a userspace tracer
//! (survey section 7.2, Table 4 "LW-UST").
//!
//! Per call: read the clock, copy {id, ts, payload} into a per-CPU, cache-line-aligned ring, bump
//! the head. No reentrancy protection, no atomics, no formatting: anything a real tracer adds on
//! top of this is its own cost. `lw` reads CLOCK_MONOTONIC through the vDSO as the survey did;
//! `lw-tsc` reads the raw TSC, which shows how much of `lw` is the clock.
//!
//! With `--payload-size N` (N != 4) the ring holds variable-length records `{id, len, ts, N
//! bytes}` (padded to 8) instead, the bytes copied from the preallocated payload (payload.rs): the
//! copy is the only cost that grows with N, the lower bound of any tracer that records N bytes.
use std::cell::{Cell, UnsafeCell};

use crate::clock::{monotonic_ns, rdtsc};
use crate::payload::Payload;
use crate::{Tracer, TracerError};

/// Events per per-CPU ring: 1024 x 16 B = 16 KiB, the buffer size the survey gives every tracer
/// (section 6.2.3: LTTng 2 x 8 KiB sub-buffers, ftrace 16 KiB per CPU).
pub const RING_EVENTS: usize = 1024;
const EVENT_ID: u32 = 1;
/// The same ring as bytes, for variable-length records.
pub const RING_BYTES: usize = RING_EVENTS * std::mem::size_of::<Event>();
/// `{id u32, len u32, ts u64}` before a variable-length record's bytes.
const REC_HEADER: usize = 16;

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
    /// Events written; with variable-length records, bytes (the write offset).
    head: UnsafeCell<u64>,
    /// Variable-length records written (fixed records: `head` counts them).
    count: UnsafeCell<u64>,
    _pad: [u8; 48],
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
    /// `Some` with `--payload-size` other than 4: variable-length records of these bytes.
    payload: Option<Payload>,
}

impl Lw {
    pub fn new(name: &str, tsc: bool, payload_size: u32) -> Self {
        // SAFETY: sysconf has no preconditions.
        let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
        let rings = (0..ncpu)
            .map(|_| Ring {
                head: UnsafeCell::new(0),
                count: UnsafeCell::new(0),
                _pad: [0; 48],
                events: UnsafeCell::new([Event::default(); RING_EVENTS]),
            })
            .collect();
        Lw { name: name.to_string(), tsc, rings, payload: Payload::for_size(payload_size) }
    }

    /// Appends `{id, len, ts, bytes}` at the ring's write offset; a record that would cross the
    /// end starts again at 0 (the tail is left as it was, as a ring of variable-length records
    /// with a reader that skips to the start would).
    #[inline(always)]
    fn write_record(ring: &Ring, ts: u64, p: &Payload) {
        let len = p.len();
        let rec = REC_HEADER + len.next_multiple_of(8);
        // SAFETY: single writer per CPU ring; the record fits (rec <= RING_BYTES: the payload is
        // at most payload::MAX bytes), the bytes live as long as `p`.
        unsafe {
            let head = &mut *ring.head.get();
            let mut off = (*head as usize) & (RING_BYTES - 1);
            if off + rec > RING_BYTES {
                *head += (RING_BYTES - off) as u64;
                off = 0;
            }
            let base = (ring.events.get() as *mut u8).add(off);
            (base as *mut u32).write(EVENT_ID);
            (base.add(4) as *mut u32).write(len as u32);
            (base.add(8) as *mut u64).write(ts);
            std::ptr::copy_nonoverlapping(p.as_ptr(), base.add(REC_HEADER), len);
            *head += rec as u64;
            *ring.count.get() += 1;
        }
    }

    /// The newest variable-length record of `cpu`'s ring: (len field, bytes). For tests.
    pub fn last_record(&self, cpu: usize) -> Option<(u32, Vec<u8>)> {
        let p = self.payload.as_ref()?;
        let ring = self.rings.get(cpu)?;
        let rec = REC_HEADER + p.len().next_multiple_of(8);
        // SAFETY: measuring threads have finished; reads stay inside the ring.
        unsafe {
            if *ring.count.get() == 0 {
                return None;
            }
            // Every record has the same size and starts where the previous one ended (or at 0).
            let off = ((*ring.head.get() as usize).wrapping_sub(rec)) & (RING_BYTES - 1);
            let base = (ring.events.get() as *const u8).add(off);
            let len = (base.add(4) as *const u32).read();
            Some((len, std::slice::from_raw_parts(base.add(REC_HEADER), (len as usize).min(p.len())).to_vec()))
        }
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
            "event_bytes": match &self.payload {
                None => std::mem::size_of::<Event>(),
                Some(p) => REC_HEADER + p.len().next_multiple_of(8),
            },
            "record": match &self.payload {
                None => "{u32 id, u32 payload, u64 ts}".to_string(),
                Some(p) => format!("{{u32 id, u32 len, u64 ts, {} payload bytes}} padded to 8, copied in", p.len()),
            },
            "clock": if self.tsc { "rdtsc" } else { "clock_gettime(CLOCK_MONOTONIC)" },
        })
    }
    fn buffer_events(&self) -> u64 {
        match &self.payload {
            None => RING_EVENTS as u64,
            Some(p) => (RING_BYTES / (REC_HEADER + p.len().next_multiple_of(8))) as u64 + 1,
        }
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
        if let Some(p) = &self.payload {
            return Self::write_record(ring, ts, p);
        }
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
            .map(|r| unsafe {
                if self.payload.is_some() {
                    *r.count.get()
                } else {
                    *r.head.get()
                }
            })
            .collect();
        serde_json::json!({ "events_per_cpu": heads })
    }
}
