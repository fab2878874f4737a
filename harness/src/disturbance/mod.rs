//! Which iterations something else touched (survey Algorithm 1: "if numberNMI ==
//! getNumberNMI()").
//!
//! In user space we cannot mask interrupts, so instead we *see* them. For the measuring thread
//! we open sampling perf events with period 1 on every way the kernel can take the CPU away:
//! the irq_vectors:*_entry tracepoints (local timer, IPIs, other APIC vectors), irq:irq_handler_entry
//! (device IRQs), irq:softirq_entry, nmi:nmi_handler, sched:sched_switch, and the software
//! page-fault and migration events. All of them write into ONE mmap'd ring
//! (PERF_EVENT_IOC_SET_OUTPUT). Any of them firing moves the ring's `data_head`, so comparing
//! `data_head` before and after the window is one load each (about 0.3 ns), and no system
//! call enters the loop. Only when the head moved do we parse the new records (outside the
//! window) to name the reasons.
//!
//! Unlike the survey's code, which read the NMI count once per run (so one NMI silently dropped
//! every later iteration), this check is per iteration.
//!
//! A user who may open none of these (not root, `kernel.perf_event_paranoid` >= 2, no
//! CAP_PERFMON) gets a weaker detector rather than none: `getrusage(RUSAGE_THREAD)` read just
//! before and just after each window (outside it, like the ring's head), whose voluntary and
//! involuntary context-switch and minor/major fault counts name `blocked`, `context-switch` and
//! `page-fault`. It cannot see an interrupt that does not switch the thread out (timer ticks, IPIs,
//! device IRQs, softirqs, NMIs), so their cost stays in the kept samples; `Sources::weak` says so
//! in run.json, the report and the terminal.
//!
//! A context switch is one of two things. The thread was preempted (sched_switch's prev_state is
//! TASK_RUNNING, or getrusage's involuntary count moved): something from outside took the CPU,
//! and the call is discarded as `context-switch`. Or the thread went to sleep inside the call
//! (prev_state not running, or the voluntary count moved: a futex, a write(2) that waits): that
//! wait is the tracer's cost, so the call is kept and counted as `blocked` (`reason::KEPT`).
//! The sched_switch tracepoint's raw record carries prev_state. Without it (no tracefs, as in
//! many containers), the kernel's own switch records tell them apart: an event with
//! `context_switch` set writes a PERF_RECORD_SWITCH at each switch of the thread, and marks a
//! switch-out PREEMPT when the thread was still runnable (Linux 4.17 and later). Only where
//! neither works is every switch discarded (`Sources::voluntary` says which). Found on a 16-core
//! machine without tracefs: printf at 16 threads had 166,000 of its lock waits discarded as
//! preemptions.
use std::os::fd::AsRawFd;
use std::sync::atomic::{fence, Ordering};

use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Counter, SampleFlag};
use serde::Serialize;

use crate::error::Error;

pub use tracebench_tracers::reason::{Reason, ALL_REASONS};

mod sources;
mod switch;
pub use sources::KeepAlive;
use sources::{tracefs_events, tracepoint_sources};
use switch::{parse_prev_state, rusage_head, rusage_reasons, switch_reason, PrevState};

/// What the detector watches, for run.json.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Sources {
    pub watched: Vec<String>,
    /// (source, why) for each that could not be opened.
    pub missing: Vec<(String, String)>,
    /// Set when the detector cannot see interrupts: what it misses and how to get the full one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weak: Option<String>,
    /// How a voluntary context switch (the thread slept inside the call: kept, `blocked`) is told
    /// from a preemption (discarded), or why it cannot be.
    #[serde(default)]
    pub voluntary: String,
}

/// Reasons only an interrupt source names: without one of them, interrupts go unseen.
const INTERRUPT_REASONS: [Reason; 5] = [Reason::TimerIrq, Reason::Ipi, Reason::DeviceIrq, Reason::Softirq, Reason::Nmi];

/// How to get the full detector, from the kernel's current setting.
fn how_to_get_full() -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").map(|s| s.trim().to_string());
    format!(
        "for the full detector run as root, or (kernel.perf_event_paranoid is {}) `sysctl kernel.perf_event_paranoid=1` \
         or CAP_PERFMON (`setcap cap_perfmon+ep tracebench`) plus read access to tracefs's events directory",
        paranoid.as_deref().unwrap_or("unreadable")
    )
}

const RING_DATA_PAGES: usize = 16;
const PAGE: usize = 4096;
const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_THROTTLE: u32 = 5;
const PERF_RECORD_SAMPLE: u32 = 9;
const PERF_RECORD_SWITCH: u32 = 14;

/// The header of the mmap'd ring (struct perf_event_mmap_page): data_head is at byte 1024.
const DATA_HEAD_OFFSET: usize = 1024;
const DATA_TAIL_OFFSET: usize = 1032;

/// A per-thread disturbance detector. Create it on the measuring thread, after pinning.
pub struct Detector {
    _events: Vec<Counter>,
    ids: Vec<(u64, Reason)>,
    /// sched_switch's sample id and where its prev_state lies, when its raw record is sampled.
    switch: Option<(u64, PrevState)>,
    /// Whether switches come as PERF_RECORD_SWITCH records (no prev_state to read).
    switch_records: bool,
    base: *mut u8,
    len: usize,
    /// The fallback: the head is packed getrusage counts (see [`rusage_head`]), not the ring's.
    rusage: bool,
    /// What was last written to data_tail: the ring is read up to here.
    tail: u64,
    pub sources: Sources,
}

// SAFETY: the detector is created, used and dropped by one measuring thread.
unsafe impl Send for Detector {}

impl Detector {
    /// Opens every source it can. Fails only if none can be opened at all.
    pub fn open() -> Result<Self, Error> {
        Self::open_ignoring(0)
    }

    /// Like [`Detector::open`], but does not watch the reasons in the mask `ignore`: those the
    /// tracer causes itself on every call (`Tracer::intrinsic_disturbances`). Watching them
    /// would not discard anything and would add the cost of writing a sample to every call
    /// (about 5 us per strace call for the two context-switch sources).
    pub fn open_ignoring(ignore: u16) -> Result<Self, Error> {
        let prev_state = tracefs_events()
            .and_then(|ev| std::fs::read_to_string(ev.join("sched/sched_switch/format")).ok())
            .and_then(|f| parse_prev_state(&f));
        Self::open_with(ignore, prev_state)
    }

    /// [`Detector::open_ignoring`] with sched_switch's `prev_state` place given: `None` makes the
    /// detector tell a sleep from a preemption by the kernel's switch records instead (as it does
    /// where tracefs cannot be read; tests force it).
    fn open_with(ignore: u16, prev_state: Option<PrevState>) -> Result<Self, Error> {
        if ignore & (Reason::ContextSwitch as u16) != 0 {
            // Every per-thread perf event is switched out and in with the thread, so any source
            // at all taxes a tracer that context-switches on each call: measured here, a dozen
            // of them add 5 to 10 us to each strace call (scripts/indep: TB_INDEP_WATCH_IRQS).
            return Self::disabled(
                "not watched: the tracer context-switches on every call, and per-thread perf events \
                 would add their own switching cost to each call",
            );
        }
        let mut sources = Sources::default();
        let mut wanted: Vec<(String, Option<u64>, Reason)> = match tracepoint_sources() {
            Some(tps) => tps.into_iter().map(|(name, r)| (name, Some(0), r)).collect(),
            None => {
                // Mounted but closed to this user (tracefs is root's, mode 0700) is not "not mounted".
                let mounted = std::fs::read_to_string("/proc/mounts").is_ok_and(|m| m.contains(" tracefs "));
                let why = if mounted {
                    "tracefs's events cannot be read by this user, so interrupts cannot be seen (fix: run as root)"
                } else {
                    "tracefs is not mounted, so interrupts cannot be seen (fix: mount -t tracefs nodev /sys/kernel/tracing)"
                };
                sources.missing.push(("tracepoints".into(), why.into()));
                Vec::new()
            }
        };
        wanted.push(("software:page-faults".into(), None, Reason::PageFault));
        wanted.push(("software:cpu-migrations".into(), None, Reason::Migration));
        wanted.push(("software:context-switches".into(), None, Reason::ContextSwitch));

        wanted.retain(|(_, _, r)| ignore & (*r as u16) == 0);
        // Without prev_state, the kernel's switch records tell a sleep from a preemption
        // (`switch_records`); sched_switch's samples would then only say "a switch".
        let by_records = prev_state.is_none() && switch::records_tell_preemption();
        if by_records {
            wanted.retain(|(n, _, _)| n != "sched:sched_switch");
        }
        let mut events: Vec<Counter> = Vec::new();
        let mut ids = Vec::new();
        let mut switch = None;
        let mut switch_records = false;
        for (name, tp, reason) in wanted {
            // sched_switch's records already name every switch, and tell a sleep from a preemption.
            if name == "software:context-switches" && switch.is_some() {
                continue;
            }
            if name == "software:context-switches" && by_records {
                match switch::records_event().build() {
                    Ok(c) => {
                        switch_records = true;
                        sources.watched.push(format!("{name} (PERF_RECORD_SWITCH records)"));
                        events.push(c);
                        continue;
                    }
                    // The sampled software event below, which cannot tell the two apart.
                    Err(e) => sources.missing.push(("PERF_RECORD_SWITCH".into(), e.to_string())),
                }
            }
            let raw = if name == "sched:sched_switch" { prev_state } else { None };
            let mut b = if tp.is_some() {
                match crate::counters::tracepoint_id(&name) {
                    Some(id) => Builder::new(Tracepoint::with_id(id)),
                    None => {
                        sources.missing.push((name, "no such tracepoint on this kernel".into()));
                        continue;
                    }
                }
            } else if name.ends_with("page-faults") {
                Builder::new(Software::PAGE_FAULTS)
            } else if name.ends_with("cpu-migrations") {
                Builder::new(Software::CPU_MIGRATIONS)
            } else {
                Builder::new(Software::CONTEXT_SWITCHES)
            };
            // Kernel-side events of this thread: the interrupt handlers run in its context.
            b.observe_self()
                .any_cpu()
                .include_kernel()
                .sample_period(1)
                .sample(SampleFlag::IDENTIFIER)
                .wakeup_events(0);
            if raw.is_some() {
                // The record then holds the tracepoint's fields after the id: prev_state among them.
                b.sample(SampleFlag::RAW);
            }
            match b.build() {
                Ok(c) => {
                    if let Some(ps) = raw {
                        switch = Some((c.id(), ps));
                    }
                    ids.push((c.id(), reason));
                    sources.watched.push(name);
                    events.push(c);
                }
                Err(e) => sources.missing.push((name, e.to_string())),
            }
        }
        if events.is_empty() {
            return Self::rusage(sources);
        }
        sources.voluntary = if switch.is_some() {
            "sched:sched_switch's prev_state: a thread that went to sleep inside the call (not TASK_RUNNING) \
             is kept as the tracer's cost and counted as blocked; a preempted one is discarded as context-switch"
                .into()
        } else if switch_records {
            "the kernel's switch records (PERF_RECORD_SWITCH; sched_switch's prev_state cannot be read here): a \
             switch-out the kernel marks as a preemption is discarded as context-switch; one without that mark, \
             the thread going to sleep inside the call, is kept as the tracer's cost and counted as blocked"
                .into()
        } else {
            "not told apart (sched:sched_switch's prev_state could not be read): every context switch, a sleep \
             inside the tracer included, is discarded as context-switch"
                .into()
        };
        let wanted_irqs = INTERRUPT_REASONS.iter().any(|r| ignore & (*r as u16) == 0);
        if wanted_irqs && !INTERRUPT_REASONS.iter().any(|r| ids.iter().any(|(_, x)| x == r)) {
            sources.weak = Some(format!(
                "WEAK disturbance detector: no interrupt source could be opened, so only {} are seen; interrupts \
                 (timer ticks, IPIs, device IRQs, softirqs, NMIs) are not, and their cost stays in the kept samples; {}",
                sources.watched.join(", "),
                how_to_get_full()
            ));
        }
        let len = PAGE * (1 + RING_DATA_PAGES);
        // SAFETY: mapping a perf event's ring; read-write so that we own data_tail and the kernel
        // never overwrites records we have not parsed.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                events[0].as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Error::Disturbance(format!("mmap of the detector ring: {}", std::io::Error::last_os_error())));
        }
        for c in &events[1..] {
            // SAFETY: PERF_EVENT_IOC_SET_OUTPUT redirects c's samples into events[0]'s ring.
            let rc = unsafe {
                libc::ioctl(c.as_raw_fd(), 0x2405 /* PERF_EVENT_IOC_SET_OUTPUT */, events[0].as_raw_fd())
            };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                // SAFETY: mapped above.
                unsafe { libc::munmap(base, len) };
                return Err(Error::Disturbance(format!("PERF_EVENT_IOC_SET_OUTPUT: {e}")));
            }
        }
        for c in events.iter_mut() {
            c.enable().map_err(|e| Error::Disturbance(format!("enable: {e}")))?;
        }
        Ok(Detector {
            _events: events,
            ids,
            switch,
            switch_records,
            base: base as *mut u8,
            len,
            rusage: false,
            tail: 0,
            sources,
        })
    }

    /// The fallback when no perf source can be opened: getrusage(RUSAGE_THREAD) around each
    /// window. `missing` keeps why each perf source failed; `weak` says what this one cannot see.
    fn rusage(mut sources: Sources) -> Result<Self, Error> {
        let mut det = Self::disabled("")?;
        sources.watched = vec!["getrusage(RUSAGE_THREAD): nvcsw, nivcsw, minflt, majflt".into()];
        sources.voluntary = "getrusage's counts: a voluntary switch (ru_nvcsw: the thread slept inside the call) \
             is kept as the tracer's cost and counted as blocked; an involuntary one (ru_nivcsw) is discarded"
            .into();
        let first = sources.missing.iter().rev().map(|(n, e)| format!("{n}: {e}")).next().unwrap_or_default();
        sources.weak = Some(format!(
            "WEAK disturbance detector: no perf event could be opened ({first}), so \
             context switches (a migration of the pinned thread among them) and page faults are seen through \
             getrusage(RUSAGE_THREAD), called just before and \
             after each timed window (outside it); interrupts that do not switch the thread out (timer ticks, IPIs, \
             device IRQs, softirqs, NMIs) are not seen, and their cost stays in the kept samples; {}",
            how_to_get_full()
        ));
        det.sources = sources;
        det.rusage = true;
        Ok(det)
    }

    /// Whether this is the getrusage fallback.
    pub fn is_rusage(&self) -> bool {
        self.rusage
    }

    /// A detector that watches nothing: its head never moves, so no iteration is discarded.
    /// run.json's `detector.missing` says why.
    pub fn disabled(why: &str) -> Result<Self, Error> {
        let len = PAGE * (1 + RING_DATA_PAGES);
        // SAFETY: an anonymous zeroed mapping standing in for the ring (data_head stays 0).
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Error::Disturbance(format!("mmap: {}", std::io::Error::last_os_error())));
        }
        let sources = Sources {
            watched: Vec::new(),
            missing: vec![("all".into(), why.into())],
            weak: None,
            voluntary: "not watched".into(),
        };
        Ok(Detector {
            _events: Vec::new(),
            ids: Vec::new(),
            switch: None,
            switch_records: false,
            base: base as *mut u8,
            len,
            rusage: false,
            tail: 0,
            sources,
        })
    }

    /// The ring's data_head: one load (or, for the getrusage fallback, one system call). Compare
    /// it before and after the window. The branch is outside the window and always goes one way.
    #[inline(always)]
    pub fn head(&self) -> u64 {
        if self.rusage {
            return rusage_head();
        }
        // SAFETY: base maps the ring's control page; data_head is a u64 at a fixed offset that
        // the kernel updates.
        unsafe { std::ptr::read_volatile(self.base.add(DATA_HEAD_OFFSET) as *const u64) }
    }

    /// `n` (at most 8) bytes at ring position `pos`, little-endian, across the ring's end if
    /// need be (a raw field is not 8-byte aligned).
    fn data_le(&self, pos: u64, n: usize) -> u64 {
        let size = (RING_DATA_PAGES * PAGE) as u64;
        (0..n as u64).fold(0u64, |v, i| {
            let off = PAGE + ((pos + i) % size) as usize;
            // SAFETY: off is within the data area.
            let byte = unsafe { std::ptr::read_volatile(self.base.add(off)) };
            v | u64::from(byte) << (8 * i)
        })
    }

    /// The reason of a sample with this id at `pos`: a sched_switch record is a sleep or a
    /// preemption by its prev_state.
    fn sample_reason(&self, pos: u64, id: u64) -> u16 {
        if let Some((sid, ps)) = self.switch {
            if sid == id {
                // header (8), id (8), raw size (4), then the tracepoint's fields.
                let raw_size = self.data_le(pos + 16, 4) as usize;
                if ps.offset + ps.size > raw_size {
                    return Reason::ContextSwitch as u16;
                }
                return switch_reason(self.data_le(pos + 20 + ps.offset as u64, ps.size)) as u16;
            }
        }
        self.ids.iter().find(|(i, _)| *i == id).map(|(_, r)| *r as u16).unwrap_or(Reason::Lost as u16)
    }

    fn data_u64(&self, pos: u64) -> u64 {
        let size = (RING_DATA_PAGES * PAGE) as u64;
        let off = PAGE + (pos % size) as usize;
        // SAFETY: off is within the data area; records are 8-byte aligned.
        unsafe { std::ptr::read_volatile(self.base.add(off) as *const u64) }
    }

    /// Tests only: where the head lives, so a fake tracer can move it by one empty record as a
    /// disturbance would (`classify` then names it `Lost`, and the window is discarded).
    #[cfg(test)]
    pub(crate) fn tail_for_test(&self) -> u64 {
        // SAFETY: data_tail is a u64 at a fixed offset of the control page.
        unsafe { std::ptr::read_volatile(self.base.add(DATA_TAIL_OFFSET) as *const u64) }
    }

    #[cfg(test)]
    pub(crate) fn head_ptr_for_test(&self) -> *mut u64 {
        // SAFETY: as in `head`; a test's detector is `disabled`, an anonymous private mapping.
        unsafe { self.base.add(DATA_HEAD_OFFSET) as *mut u64 }
    }

    /// Names what moved the head from `from` to `to`, and consumes those records. Call it outside
    /// the timed window, only when the head moved.
    pub fn classify(&mut self, from: u64, to: u64) -> u16 {
        if self.rusage {
            return rusage_reasons(from, to);
        }
        fence(Ordering::Acquire);
        let mut mask = 0u16;
        let size = (RING_DATA_PAGES * PAGE) as u64;
        if to.wrapping_sub(from) > size {
            mask |= Reason::Lost as u16;
        } else {
            let mut pos = from;
            while pos < to {
                let hdr = self.data_u64(pos);
                let (ty, sz) = (hdr as u32, ((hdr >> 48) & 0xffff));
                if sz < 8 {
                    mask |= Reason::Lost as u16;
                    break;
                }
                match ty {
                    PERF_RECORD_SAMPLE => {
                        let id = self.data_u64(pos + 8);
                        mask |= self.sample_reason(pos, id);
                    }
                    PERF_RECORD_LOST | PERF_RECORD_THROTTLE => mask |= Reason::Lost as u16,
                    PERF_RECORD_SWITCH if self.switch_records => mask |= switch::record_reason((hdr >> 32) as u16),
                    _ => {}
                }
                pos += sz;
            }
        }
        self.consume(to);
        mask
    }

    /// Frees the ring up to `to` after an undisturbed window: records that came between two
    /// windows (a timer tick while the loop stores a sample, a switch between iterations) are
    /// never classified, and left unread they would fill the ring. A full ring stops moving its
    /// head, so every later disturbance inside a window would go unseen: a 200,000-call run with
    /// a CPU hog on the measuring core kept a 4.1 ms preempted call and discarded nothing.
    /// Outside the window; one compare when nothing came.
    #[inline(always)]
    pub fn release(&mut self, to: u64) {
        if to != self.tail {
            self.consume(to);
        }
    }

    /// Marks everything up to `to` as read, so the kernel can reuse the space.
    pub fn consume(&mut self, to: u64) {
        if self.rusage {
            return;
        }
        self.tail = to;
        fence(Ordering::Release);
        // SAFETY: data_tail is ours to write in a read-write mapping.
        unsafe { std::ptr::write_volatile(self.base.add(DATA_TAIL_OFFSET) as *mut u64, to) };
    }
}

impl Drop for Detector {
    fn drop(&mut self) {
        // SAFETY: mapped in open().
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests;
