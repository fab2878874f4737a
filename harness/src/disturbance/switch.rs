//! Context switches, told apart: a sleep inside the call (the tracer's cost, kept as `blocked`)
//! against a preemption (discarded as `context-switch`), from sched_switch's `prev_state` or from
//! getrusage's voluntary and involuntary counts (the weak detector).
use super::Reason;

/// Where sched_switch's `prev_state` lies in its raw record, and its size (tracefs's format file).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PrevState {
    pub(super) offset: usize,
    pub(super) size: usize,
}

/// The task states that mean the thread went to sleep (S, D, T, t, X, Z, P). A preempted thread
/// reports TASK_RUNNING (0) or TASK_REPORT_MAX (0x80 or 0x100 by kernel version, printed "R+"),
/// neither of which has one of these bits.
const SLEEP_STATES: u64 = 0x7f;

/// `prev_state`'s place in a sched_switch format file, if it has one.
pub(super) fn parse_prev_state(format: &str) -> Option<PrevState> {
    let line = format.lines().find(|l| l.contains(" prev_state;"))?;
    let field = |k: &str| -> Option<usize> { line.split(k).nth(1)?.split(';').next()?.trim().parse().ok() };
    let (offset, size) = (field("offset:")?, field("size:")?);
    matches!(size, 4 | 8).then_some(PrevState { offset, size })
}

/// The reason of one sched_switch record of the measuring thread, from its `prev_state`.
pub(super) fn switch_reason(prev_state: u64) -> Reason {
    if prev_state & SLEEP_STATES != 0 {
        Reason::Blocked
    } else {
        Reason::ContextSwitch
    }
}

/// The calling thread's context switches and faults, 16 bits each, packed in one u64 so that it
/// compares like the ring's head: voluntary switches, involuntary switches, minor faults, major
/// faults (low to high). One window cannot take 65536 of any of them, so equality is exact.
#[inline(always)]
pub(super) fn rusage_head() -> u64 {
    // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_THREAD needs no privilege.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        ru
    };
    let f = |v: libc::c_long, shift: u32| ((v as u64) & 0xffff) << shift;
    f(ru.ru_nvcsw, 0) | f(ru.ru_nivcsw, 16) | f(ru.ru_minflt, 32) | f(ru.ru_majflt, 48)
}

/// The reasons between two [`rusage_head`] values.
/// A moved voluntary count is the thread sleeping in the call (kept), an involuntary one a
/// preemption (discarded).
pub(super) fn rusage_reasons(from: u64, to: u64) -> u16 {
    let field = |v: u64, k: u32| (v >> (16 * k)) & 0xffff;
    let mut mask = 0;
    if field(from, 0) != field(to, 0) {
        mask |= Reason::Blocked as u16;
    }
    if field(from, 1) != field(to, 1) {
        mask |= Reason::ContextSwitch as u16;
    }
    if field(from, 2) != field(to, 2) || field(from, 3) != field(to, 3) {
        mask |= Reason::PageFault as u16;
    }
    mask
}

/// PERF_RECORD_MISC_SWITCH_OUT and PERF_RECORD_MISC_SWITCH_OUT_PREEMPT (uapi perf_event.h).
const MISC_SWITCH_OUT: u16 = 1 << 13;
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;

/// The reason of one PERF_RECORD_SWITCH of the measuring thread, from its header's `misc`: a
/// switch-out marked PREEMPT (the thread was still runnable) is a preemption, one without the
/// mark is the thread going to sleep (blocked); a switch-in says nothing more.
pub(super) fn record_reason(misc: u16) -> u16 {
    match (misc & MISC_SWITCH_OUT != 0, misc & MISC_SWITCH_OUT_PREEMPT != 0) {
        (true, true) => Reason::ContextSwitch as u16,
        (true, false) => Reason::Blocked as u16,
        (false, _) => 0,
    }
}

/// A dummy software event of the calling thread that counts nothing and writes the kernel's
/// switch records (`context_switch`) into the detector's ring.
pub(super) fn records_event() -> perf_event::Builder<'static> {
    let mut b = perf_event::Builder::new(perf_event::events::Software::DUMMY);
    b.observe_self().any_cpu().include_kernel().context_switch(true).wakeup_events(0);
    b
}

/// Whether this kernel marks preempted switch-outs (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, Linux
/// 4.17): without the mark, every switch-out would read as a sleep and a preempted call be kept.
pub(super) fn records_tell_preemption() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut v = release.trim().split(|c: char| !c.is_ascii_digit()).filter_map(|x| x.parse::<u32>().ok());
    matches!((v.next(), v.next()), (Some(major), Some(minor)) if (major, minor) >= (4, 17))
}
