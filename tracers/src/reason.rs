//! Why an iteration was discarded: one enum for both crates. The harness's disturbance detector
//! classifies iterations with it, and a backend names with it the disturbances it causes itself
//! on every call (`Tracer::intrinsic_disturbances`), which are then part of its cost, not noise.
//!
//! One bit is not a disturbance: [`Reason::Blocked`], the measuring thread went to sleep inside
//! the call (a voluntary context switch: a futex, a write(2) that waits, a full buffer in blocking
//! mode). That wait is the tracer's cost, so such a call is kept and counted ([`KEPT`]); only what
//! comes from outside the call (interrupts, NMIs, preemption, migration, faults) discards it.

/// Why an iteration was discarded. Bits of a mask: one iteration can have several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Reason {
    TimerIrq = 1 << 0,
    Ipi = 1 << 1,
    DeviceIrq = 1 << 2,
    Softirq = 1 << 3,
    Nmi = 1 << 4,
    ContextSwitch = 1 << 5,
    Migration = 1 << 6,
    PageFault = 1 << 7,
    OtherVector = 1 << 8,
    /// The detector's ring overflowed or was throttled: we cannot vouch for the iteration.
    Lost = 1 << 9,
    /// Not a disturbance the detector sees: a PMU counter of the sample was not counting for the
    /// whole call (not on the PMU, multiplexed out, reprogrammed; see `counters`). Its delta
    /// would not be the call's, so the sample is discarded rather than written as a number.
    CounterNotRunning = 1 << 10,
    /// The thread went to sleep inside the call (sched_switch with prev_state not TASK_RUNNING,
    /// or getrusage's voluntary switch count): the tracer's own cost, kept (see [`KEPT`]).
    Blocked = 1 << 11,
}

/// The bits that name what happened in a call without discarding it: the tracer blocked.
pub const KEPT: u16 = Reason::Blocked as u16;

pub const ALL_REASONS: [Reason; 12] = [
    Reason::TimerIrq,
    Reason::Ipi,
    Reason::DeviceIrq,
    Reason::Softirq,
    Reason::Nmi,
    Reason::ContextSwitch,
    Reason::Migration,
    Reason::PageFault,
    Reason::OtherVector,
    Reason::Lost,
    Reason::CounterNotRunning,
    Reason::Blocked,
];

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::TimerIrq => "timer-irq",
            Reason::Ipi => "ipi",
            Reason::DeviceIrq => "device-irq",
            Reason::Softirq => "softirq",
            Reason::Nmi => "nmi",
            Reason::ContextSwitch => "context-switch",
            Reason::Migration => "migration",
            Reason::PageFault => "page-fault",
            Reason::OtherVector => "other-vector",
            Reason::Lost => "detector-lost",
            Reason::CounterNotRunning => "counter-not-running",
            Reason::Blocked => "blocked",
        }
    }
    /// "timer-irq+softirq" for a mask.
    pub fn names(mask: u16) -> String {
        let v: Vec<&str> = ALL_REASONS.iter().filter(|r| mask & (**r as u16) != 0).map(|r| r.name()).collect();
        if v.is_empty() {
            "unknown".into()
        } else {
            v.join("+")
        }
    }
}
