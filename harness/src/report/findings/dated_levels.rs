//! Levels dated over time, as findings: each sequence's levels held against the
//! sentinel windows of the same spans, and whose the row's level shapes are by them.
use serde::Serialize;

use crate::analysis::dated::{Attribution, Interval, Outcome, Outside, PathLock, SegmentReport, Side};
use crate::decisions::phases::WINDOW;

/// One level of one sequence, dated by change points on the window means over `t_ns` and said
/// the tracer's or the machine's by the sentinel windows in the same time spans (dated/mod.rs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatedLevel {
    pub repetition: u32,
    pub thread: u32,
    /// Above the sequence's base level (slower), or below it.
    pub above: bool,
    pub segments: usize,
    pub windows: usize,
    /// The tracer's mean in the level over its mean in the base, minus 1.
    pub tracer_shift: f64,
    /// The same for the sentinels, with its 99 % bootstrap interval (None: too few sentinels).
    pub sentinel_shift: Option<Interval>,
    pub sentinels_in: usize,
    pub attribution: Attribution,
    /// A tracer level that keeps a periodic path's phase ("~300 slower calls after each switch").
    pub lock: Option<PathLock>,
    /// Calls disturbed from outside in the level's spans and in the base's.
    pub outside: Option<Outside>,
}

/// The levels found over time in a run with sentinel windows. `sequences`: how many sequences
/// (repetition x thread) were searched; none of them has a level when `levels` is empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatedLevels {
    pub sequences: usize,
    /// Iterations per window the change points were searched on (the most over the sequences):
    /// more than the usual 64 only in a sequence long enough for its windows to be merged.
    #[serde(skip_serializing_if = "is_usual_window")]
    pub window_calls: u64,
    pub levels: Vec<DatedLevel>,
}

fn is_usual_window(calls: &u64) -> bool {
    *calls == WINDOW
}

impl DatedLevels {
    /// The findings' view of a segments result; None for a run without sentinels or times.
    pub fn of(r: &SegmentReport) -> Option<Self> {
        let Outcome::Dated { sequences } = &r.outcome else { return None };
        let levels = sequences
            .iter()
            .flat_map(|s| {
                s.levels.iter().map(|l| DatedLevel {
                    repetition: s.key.repetition,
                    thread: s.key.thread,
                    above: l.side != Side::Below,
                    segments: l.segments,
                    windows: l.windows,
                    tracer_shift: l.tracer_shift,
                    sentinel_shift: l.sentinel_shift,
                    sentinels_in: l.sentinels_in,
                    attribution: l.attribution.clone(),
                    lock: l.lock,
                    outside: l.outside,
                })
            })
            .collect();
        let window_calls = sequences.iter().map(|s| s.window_calls).max().unwrap_or(WINDOW);
        Some(DatedLevels { sequences: sequences.len(), window_calls, levels })
    }

    /// Whose the levels the window shapes show are, as far as the dated levels decide it: one
    /// owner when every dated level has that owner, else undecided with the reason.
    pub fn owner(&self) -> Attribution {
        let all = |a: &Attribution| !self.levels.is_empty() && self.levels.iter().all(|l| &l.attribution == a);
        if all(&Attribution::Tracer) {
            Attribution::Tracer
        } else if all(&Attribution::Machine) {
            Attribution::Machine
        } else if self.levels.is_empty() {
            Attribution::Undecided { why: NO_DATED_LEVEL.into() }
        } else if self.levels.iter().all(|l| matches!(l.attribution, Attribution::Undecided { .. })) {
            Attribution::Undecided { why: UNDECIDED_LEVELS.into() }
        } else {
            Attribution::Undecided { why: MIXED_LEVELS.into() }
        }
    }
}

/// Why a level shape stays undecided when the change points over time find no lasting level.
pub const NO_DATED_LEVEL: &str =
    "whose: not decided, the change points over time find no lasting level in any sequence to hold against the \
     sentinel windows";
/// ... when every dated level is itself undecided.
pub const UNDECIDED_LEVELS: &str = "whose: not decided, nor are the dated levels (below)";
/// ... and when the dated levels are not all one owner's.
pub const MIXED_LEVELS: &str = "whose: not decided here, the dated levels differ (below)";
