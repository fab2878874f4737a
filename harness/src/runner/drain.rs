//! The measuring thread's rows leave memory while it measures: the timed loop (`timed::run`)
//! fills a buffer of at most [`BLOCK`] kept calls, then, between two windows and never inside one,
//! this writes the block's kept calls, discards and sentinels to the thread's part files and
//! empties the buffers for the next block. Memory holds one block, whatever `-n` is.
//!
//! Each thread writes its own parts (no lock, no thread waits for another's I/O); the cell joins
//! them in thread order once every thread is done (`cell::write_rows`), so events.csv reads as it
//! always has: thread by thread, iterations rising.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::protocol::CellSpec;
use super::timed::{Buffers, STOP};
use crate::disturbance::Reason;
use crate::error::Error;
use crate::results::rows::{DiscardRow, DiscardsWriter, EventRow, EventsWriter, SentinelRow, SentinelsWriter};

/// Kept calls a thread holds before it writes them out: 16 MiB of 64-byte samples. Large enough
/// that a drain (a few tens of ms) and the re-entry windows after it come once in hundreds of
/// thousands of calls; small enough that memory does not grow with `-n`.
pub const BLOCK: usize = 1 << 18;

/// The cell's `t_ns` origin: the earliest first window of its threads. Each thread publishes its
/// own before its first drain and waits (outside any window) until every thread has, so that all
/// write on one origin, the one the rows have always had.
pub struct Origin {
    t0: AtomicU64,
    published: AtomicUsize,
    threads: usize,
}

impl Origin {
    pub fn new(threads: usize) -> Self {
        Origin { t0: AtomicU64::new(u64::MAX), published: AtomicUsize::new(0), threads }
    }

    fn settle(&self, first_t0: Option<u64>) -> u64 {
        if let Some(t) = first_t0 {
            self.t0.fetch_min(t, Ordering::SeqCst);
        }
        self.published.fetch_add(1, Ordering::SeqCst);
        // A thread that failed never publishes; Ctrl-C (STOP) ends the wait then.
        while self.published.load(Ordering::SeqCst) < self.threads && !STOP.load(Ordering::Relaxed) {
            std::thread::yield_now();
        }
        match self.t0.load(Ordering::SeqCst) {
            u64::MAX => first_t0.unwrap_or(0),
            t => t,
        }
    }
}

/// A thread's part of one of the cell's files: `DIR/t<thread>.<name>`.
pub fn part(dir: &Path, name: &str, thread: usize) -> PathBuf {
    dir.join(format!("t{thread}.{name}"))
}

/// One measuring thread's writers and what it has written.
pub struct Drain<'a> {
    spec: &'a CellSpec,
    thread: usize,
    cpu: u32,
    hz: f64,
    /// Where each of the run's counter columns is among this cell's counters.
    slot: Vec<Option<usize>>,
    values: Vec<Option<u64>>,
    ev: EventsWriter,
    ds: DiscardsWriter,
    sn: Option<SentinelsWriter>,
    shared: &'a Origin,
    origin: Option<u64>,
    pub kept: usize,
    pub discards: u64,
    pub sentinels: u64,
}

impl<'a> Drain<'a> {
    pub fn create(spec: &'a CellSpec, thread: usize, cpu: usize, origin: &'a Origin) -> Result<Self, Error> {
        let columns = if spec.columns.is_empty() { &spec.counters } else { &spec.columns };
        let slot = columns.iter().map(|c| spec.counters.iter().position(|x| x == c)).collect();
        let d = &spec.dir;
        let ev = EventsWriter::create(
            &part(d, crate::results::EVENTS_CSV, thread),
            columns,
            (spec.iterations * spec.threads) as u64,
        )?;
        let ds = DiscardsWriter::create(&part(d, crate::results::DISCARDED_CSV, thread))?;
        let sn = (spec.sentinel_every > 0)
            .then(|| SentinelsWriter::create(&part(d, crate::results::SENTINELS_CSV, thread)))
            .transpose()?;
        Ok(Drain {
            spec,
            thread,
            cpu: cpu as u32,
            hz: if spec.clock == crate::clock::ClockKind::Tsc { spec.tsc_hz } else { 1e9 },
            values: vec![None; columns.len()],
            slot,
            ev,
            ds,
            sn,
            shared: origin,
            origin: None,
            kept: 0,
            discards: 0,
            sentinels: 0,
        })
    }

    fn ns(&self, ticks: u64) -> f64 {
        ticks as f64 * 1e9 / self.hz
    }

    /// Writes the block `timed::run` just filled (`kept` samples, iterations counted from
    /// `first_iteration`) and empties its discards and sentinels. Called between windows only.
    pub fn block(&mut self, buf: &mut Buffers, kept: usize, first_iteration: u64) -> Result<(), Error> {
        let origin = match self.origin {
            Some(o) => o,
            None => *self.origin.insert(self.shared.settle(buf.first_t0)),
        };
        let (spec, cpu) = (self.spec, |c: u32, own: u32| if c == u32::MAX { own } else { c });
        for s in &buf.samples[..kept] {
            for (v, k) in self.values.iter_mut().zip(&self.slot) {
                *v = k.map(|k| s.counters[k]);
            }
            self.ev.row(&EventRow {
                tracer: &spec.label,
                threads: spec.threads,
                thread: self.thread,
                cpu: cpu(s.cpu, self.cpu),
                iteration: first_iteration + s.iteration,
                latency_ns: self.ns(s.ticks),
                counters: &self.values,
                repetition: spec.repetition,
                counter_set: spec.counter_set,
                t_ns: Some(self.ns(s.t0.saturating_sub(origin))),
            })?;
        }
        for d in &buf.discards {
            self.ds.row(&DiscardRow {
                tracer: &spec.label,
                threads: spec.threads,
                thread: self.thread,
                cpu: cpu(d.cpu, self.cpu),
                iteration: first_iteration + d.iteration,
                latency_ns: self.ns(d.ticks),
                reason: &Reason::names(d.mask),
                repetition: spec.repetition,
            })?;
        }
        if let Some(w) = self.sn.as_mut() {
            for s in &buf.sentinels {
                w.row(&SentinelRow {
                    tracer: &spec.label,
                    threads: spec.threads,
                    thread: self.thread,
                    cpu: cpu(s.cpu, self.cpu),
                    iteration: first_iteration + s.iteration,
                    t_ns: s.t0.saturating_sub(origin) as f64 * 1e9 / self.hz,
                    latency_ns: s.ticks as f64 * 1e9 / self.hz,
                    repetition: spec.repetition,
                })?;
            }
        }
        self.kept += kept;
        self.discards += buf.discards.len() as u64;
        self.sentinels += buf.sentinels.len() as u64;
        buf.discards.clear();
        buf.sentinels.clear();
        Ok(())
    }

    /// Commits the thread's parts.
    pub fn finish(self) -> Result<(), Error> {
        self.ev.commit()?;
        self.ds.commit()?;
        if let Some(w) = self.sn {
            w.commit()?;
        }
        Ok(())
    }
}
