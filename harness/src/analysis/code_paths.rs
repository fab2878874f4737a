//! What the code-path analysis finds (survey section 7.1: the fast path, a middle path every
//! PAGE_SIZE / EVENT_SIZE events, the slow path every SUB-BUFFER_SIZE / EVENT_SIZE events), and
//! how one tracer's paths are said in one line. The finding itself is `analysis/mod.rs`.
use crate::analysis::running::{Reservoir, Running};
use crate::stats::hist::{LogHistogram, Mode};

/// One frequent but irregular code path of one metric (a mode of the histogram whose calls
/// follow no period, such as a printf flush whose spacing drifts with the formatted length).
#[derive(Debug, Clone)]
pub struct CodePath {
    pub mode: Mode,
    /// Median difference to the dominant path's median (ns, or counter units).
    pub delta: f64,
    /// Calls of the mode on no periodic path.
    pub calls: u64,
    /// How regularly consecutive calls on this path are spaced.
    pub spacing: Option<Spacing>,
    /// The share of its calls in the busiest quarter of the run (phases.rs), when the run is long
    /// enough to tell; at or above CLUSTERED_SHARE it is a phase of the machine, not a path.
    pub clustered: Option<f64>,
    /// Some when its calls are slow on the same iterations in every repetition (keyed.rs): the
    /// tracer's without the reference windows' test.
    pub keyed: Option<crate::analysis::keyed::Keyed>,
}

impl CodePath {
    pub fn is_phase(&self) -> bool {
        self.clustered.is_some_and(|c| c >= crate::decisions::phases::CLUSTERED_SHARE)
    }
}

/// The median spacing of consecutive calls on a path and the share of spacings within 10 % of it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spacing {
    pub median: f64,
    pub near_share: f64,
}

impl From<(f64, f64)> for Spacing {
    fn from((median, near_share): (f64, f64)) -> Self {
        Spacing { median, near_share }
    }
}

/// A call just after a periodic path's, on the same period and also slow (the call after
/// LTTng's sub-buffer switch): said with the path, not as a path of its own.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Follower {
    /// Calls after the path's own call (1: the next one).
    pub offset: u64,
    /// Median extra cost over the fast path's median, and the calls.
    pub extra: f64,
    pub calls: u64,
}

/// A call above the fast path (or in a non-dominant mode), as pass 2 keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SlowCall {
    /// Sequence (thread, repetition, counter set), iteration, value of the metric, and the
    /// histogram mode holding it (None: in no mode).
    pub seq: u64,
    pub it: u64,
    pub v: f32,
    pub mode: Option<usize>,
}

/// A periodic path's calls in one sequence: the iterations `residue + k * period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Residue {
    pub seq: u64,
    pub residue: u64,
}

/// The main slow path of a metric: its mean spacing in calls, its extra cost, and the share of
/// calls that take it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MainSlowPath {
    pub mean_period: f64,
    pub extra: f64,
    pub share: f64,
}

/// A path taken every `period` calls (survey section 7.1), or `phases` times in every `period`
/// calls at evenly spread phases: a mean period of `period / phases` that is not a whole number
/// (fractional.rs).
#[derive(Debug, Clone)]
pub struct PeriodicPath {
    pub period: u64,
    pub phases: u64,
    /// Slow calls on the lattice.
    pub hits: u64,
    /// Kept calls on the lattice (pass 3): `hits` of them were slow.
    pub slots: u64,
    /// Median extra cost of the slow calls on the lattice over the dominant path's median.
    pub extra: f64,
    /// Kept calls on the lattice above `cut` (half-way to the path's cost): those taking it.
    pub taken: u64,
    pub cut: f64,
    /// The search's evidence for the lattice (its statistic: log10 of a fixed-lattice chance,
    /// not a probability; permutation.rs calibrates it).
    pub log10_chance: f64,
    /// Calibrated p-value: (1 + null reruns of the whole search as strong) / (1 + reruns).
    pub p_value: f64,
    pub null_runs: u32,
    /// First iteration on the lattice in the first sequence (the phase).
    pub phase: u64,
    /// The residue of each sequence holding the lattice.
    pub(crate) residues: Vec<Residue>,
    /// Calls just after this path's, on the same period and also slow, such as the call after
    /// LTTng's sub-buffer switch. One path, not two.
    pub followers: Vec<Follower>,
    /// The calls of each period folded from the path's own call on (pass 3), and the slower
    /// stretch they show right after it, if any (stretch.rs): the tracer's, with this path.
    pub(crate) profile: Option<crate::analysis::stretch::Profile>,
    pub stretch: Option<crate::analysis::stretch::Stretch>,
    /// The periods of the costlier paths said on this path's lattice (every kP events at one of
    /// its phases), whose calls and slots are counted there, not here (sub_lattices.rs).
    pub counted_in: Vec<u64>,
    /// Pass 3's kept calls on the lattice, as (sequence, iteration, above the cut), while there
    /// are at most `decisions::periodic::SLOTS_KEPT` of them: a lattice that crosses a costlier
    /// path's footprint is judged on its own calls outside it (passes.rs).
    pub(crate) slots_at: Vec<(u64, u64, bool)>,
}

impl PeriodicPath {
    /// Whether iteration `it` of sequence `seq` is on this path's lattice.
    pub(crate) fn on(&self, seq: u64, it: u64) -> bool {
        self.residues.iter().any(|x| x.seq == seq && it % self.period == x.residue)
    }

    /// Whether this path's lattice lies on the lattice of `p`, a path of a shorter period: its
    /// period a multiple of p's, and each of its residues on one of p's in the same sequence
    /// (a path every kP at one of the phases of a path every P).
    pub(crate) fn lies_on(&self, p: &PeriodicPath) -> bool {
        self.each_residue_of(p, |x, y| x.residue % p.period == y.residue)
    }

    /// Whether every call of this path's lattice is also a call of `p`, a path of a shorter period
    /// dividing this one's: on p's lattice ([`lies_on`](Self::lies_on)) or in the slower stretch
    /// after p's call, which p's line counts with it. The period divides, so each residue is
    /// the same offset from p's call all along the lattice.
    pub(crate) fn within_footprint_of(&self, p: &PeriodicPath) -> bool {
        self.each_residue_of(p, |x, y| x.residue % p.period == y.residue || p.in_stretch(x.seq, x.residue))
    }

    /// Whether this path's period is a multiple of p's (both single-phase) and each of its
    /// residues meets `holds` with p's residue in the same sequence.
    fn each_residue_of(&self, p: &PeriodicPath, holds: impl Fn(&Residue, &Residue) -> bool) -> bool {
        p.phases <= 1
            && self.phases <= 1
            && self.period > p.period
            && self.period % p.period == 0
            && self.residues.iter().all(|x| p.residues.iter().any(|y| y.seq == x.seq && holds(x, y)))
    }

    /// Whether iteration `it` of sequence `seq` lies in the slower stretch after this path's call
    /// (pass 3 finds the stretch): a call the path's line counts with it, not an outlier.
    pub(crate) fn in_stretch(&self, seq: u64, it: u64) -> bool {
        let Some(s) = &self.stretch else { return false };
        self.residues.iter().any(|x| {
            x.seq == seq && {
                let off = (it + self.period - x.residue % self.period) % self.period;
                off >= 1 && off < s.calls
            }
        })
    }

    /// Calls between two calls of the path, on average.
    pub fn mean_period(&self) -> f64 {
        self.period as f64 / self.phases.max(1) as f64
    }

    /// The period as the report says it: `810`, or `56.5` where it is not a whole number.
    pub fn period_text(&self) -> String {
        if self.phases <= 1 {
            self.period.to_string()
        } else {
            format!("{:.1}", self.mean_period())
        }
    }
}

/// Where one of a tail's calls comes from ("what sets the tail").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailClass {
    /// On periodic path i (its own call, or a follower's).
    Periodic(usize),
    /// On periodic path i's lattice and slow, but below its cut: a call on its period that does
    /// not take it (the path's line counts it among its kept calls, not among those taking it).
    OnPeriod(usize),
    /// In the slower stretch after periodic path i's call, and slow.
    Stretch(usize),
    /// Irregular path i.
    Irregular(usize),
    /// In a speed phase's mode.
    Phase,
    /// On no path: held against the reference windows' bands (attribution.rs) by its extra cost.
    Outlier,
    /// Within the fast path (above the quantile, below the slow threshold): its own spread.
    FastPath,
}

/// The calls above a high quantile of the latency, each with its population.
#[derive(Debug, Clone)]
pub struct Tail {
    pub quantile: f64,
    /// The calls counted are those above this (the upper edge of the quantile's histogram bin).
    pub above: f64,
    /// (population, extra cost over the fast path's median) of each call above it.
    pub members: Vec<(TailClass, f32)>,
}

/// A lattice the search found but the permutation null did not confirm (permutation.rs): said, so the
/// reader knows it was tried, but not claimed as a path.
#[derive(Debug, Clone)]
pub struct RejectedLattice {
    pub period: u64,
    pub hits: u64,
    pub p: f64,
    pub null_runs: u32,
}

/// A speed phase of the machine: a mode whose calls come in long contiguous stretches of
/// iterations (the VM drifts between speeds over seconds). Not a code path.
#[derive(Debug, Clone)]
pub struct SpeedPhase {
    pub mode: Mode,
    pub delta: f64,
    /// Maximal runs of windows where this mode holds the majority.
    pub stretches: u64,
    /// The mean call count between the starts of its stretches, when they start at a nearly
    /// fixed call count (analysis/stretch_starts.rs): the tracer's, since the machine cannot
    /// count the tracer's calls.
    pub start_every: Option<f64>,
}

/// Code paths of one metric (latency, or instructions when a PMU exists).
#[derive(Debug, Clone)]
pub struct CodePaths {
    pub metric: String,
    pub unit: &'static str,
    /// The dominant (most frequent) mode and the share of calls in it at or below `threshold`.
    pub dominant: Mode,
    pub fast_fraction: f64,
    /// Calls above this value count as slow (candidates for a periodic path).
    pub threshold: f64,
    pub periodic: Vec<PeriodicPath>,
    /// Lattices the search found and the null refused.
    pub rejected: Vec<RejectedLattice>,
    pub irregular: Vec<CodePath>,
    pub phases: Vec<SpeedPhase>,
    /// Slow calls on no path (interrupts and other noise), and the calls analysed.
    pub outliers: u64,
    /// The outliers' (extra cost over the fast path's median, sequence, iteration), by extra
    /// cost ascending (their cost bands are held against the reference windows, attribution.rs).
    pub outlier_calls: Vec<(f32, u64, u64)>,
    /// The extra costs of the slow calls off every periodic path that an irregular path
    /// explains, ascending: a band of outliers on such a path's shoulder is that path's edge,
    /// not a mode of its own (attribution.rs).
    pub explained_extras: Vec<f32>,
    /// The calls above p99 and p99.9 by population (latency only; empty otherwise).
    pub tails: Vec<Tail>,
    /// When most calls in no mode hold the majority of their 64-call windows: the number of
    /// stretches they come in (a speed phase too broad to form one mode).
    pub outliers_in_stretches: Option<u64>,
    /// Two speed levels of the machine in the means of 64-call windows (phases.rs), when they are
    /// too close to form latency modes of their own.
    pub levels: Option<crate::analysis::phases::Levels>,
    /// The windows at the higher of those levels.
    pub(crate) slower_level: Option<crate::analysis::phases::SlowerLevel>,
    /// Where the machine moved between two such levels and the latency paths were searched with
    /// each call judged against its own window's level: the windows and the shift taken off the
    /// calls in the higher ones. Every cost of this metric (fast path, paths, cuts) is then of
    /// calls so judged, and pass 3 reads the calls the same way.
    pub(crate) levelled: Option<crate::analysis::phases::SlowerLevel>,
    pub rows: u64,
    /// The metric's mean over every call (ns for latency): the row's time per call, the
    /// exposure a stall that arrives in time meets (attribution.rs).
    pub mean: f64,
    /// Calls per sequence (the shortest sequence's extent, in iterations).
    pub seq_len: u64,
    /// Sequences (thread, repetition, counter set) the calls came in: each restarts the
    /// iteration index, so a lattice is searched once per sequence.
    pub sequences: u64,
    /// Each sequence's (id, first iteration, last iteration) in the analysed calls: sequences
    /// end at different iterations, so a count of slots in one uses its own extent.
    pub extents: Vec<(u64, u64, u64)>,
    /// The metric's column (None: latency).
    pub(crate) col: Option<usize>,
}

impl CodePaths {
    /// Whether a slow call (`v`, at iteration `it` of sequence `seq`) lies in a window at the
    /// machine's slower level and stands no further above that level than the slow threshold:
    /// the level's own spread, not an outlier.
    pub(crate) fn in_slower_level(&self, seq: u64, it: u64, v: f64) -> bool {
        self.slower_level.as_ref().is_some_and(|l| l.holds(seq, it) && v - l.shift <= self.threshold)
    }
}

#[derive(Debug, Clone)]
pub struct CounterStats {
    pub name: String,
    pub running: Running,
    pub hist: LogHistogram,
    /// (counter value, latency ns) pairs for the Figure 3/4/7 scatter.
    pub sample: Reservoir<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct TracerAnalysis {
    /// Thread count analysed (the smallest in the file: code paths are a single-thread matter).
    pub threads: u32,
    pub rows: u64,
    pub latency: LogHistogram,
    pub latency_running: Running,
    pub counters: Vec<CounterStats>,
    /// The first iterations of the first sequence (thread, repetition, counter set).
    pub first_iterations: Vec<(u64, f64)>,
    pub code_paths: Vec<CodePaths>,
}

/// The period a tracer's own geometry predicts for its slow path (survey section 7.1: "the slow
/// path every SUB-BUFFER_SIZE / EVENT_SIZE events"), and how it was computed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Expected {
    pub period: f64,
    /// e.g. "sub-buffer 8192 B (84 B header) / event 10.0 B = 810".
    pub how: String,
}
