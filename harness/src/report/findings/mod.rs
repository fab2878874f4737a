//! What the code-path analysis claims, as typed findings with their evidence: per
//! tracer and metric, a fast path, periodic paths (survey section 7.1: "the slow path every
//! SUB-BUFFER_SIZE / EVENT_SIZE events"), irregular paths, speed levels and who they belong to,
//! the periods tried and refused, and the outliers. One renderer (path_line.rs) turns them into the
//! terminal, Markdown and HTML lines; report.json carries them for other tools (docs/output.md).
//! The analysis itself is `analyze` (its state: code_paths.rs); this file only reads it.
#[cfg(test)]
mod commensurate_tests;
pub mod comparison;
#[cfg(test)]
mod counted_once_tests;
mod dated_levels;
pub mod expected_period;
#[cfg(test)]
mod expected_tests;
#[cfg(test)]
mod lattice_tests;
#[cfg(test)]
mod ownership_tests;
#[cfg(test)]
mod quiet_sequences_tests;
pub mod ranking;
mod report;
mod slow_populations;
#[cfg(test)]
mod spacing_tests;
pub mod survey_check;
pub mod survey_reference;
mod tail_split;

pub use dated_levels::{DatedLevel, DatedLevels, MIXED_LEVELS, NO_DATED_LEVEL, UNDECIDED_LEVELS};
pub use report::Report;
pub use slow_populations::{IrregularPath, SlowCalls};

use tail_split::tail_split;
pub use tail_split::{TailPart, TailSplit, TailWho};

use serde::Serialize;

pub use crate::analysis::attribution::RateTest;
use crate::analysis::attribution::{Attributions, NO_REFERENCE};
use crate::analysis::code_paths::{self, CodePaths};
pub use crate::analysis::code_paths::{Expected, Follower, Spacing};
use crate::analysis::dated::SegmentReport;
use crate::report::load::SummaryRow;

/// Why levels are undecided in a run without sentinel windows: its events hold no
/// measure of the machine's speed beside the tracer's, so a level may be either's.
pub const NO_SENTINELS: &str =
    "this run has no sentinel windows, so the machine's levels cannot be told from the tracer's";

pub use crate::analysis::dated::Attribution;

impl Attribution {
    pub fn no_sentinels() -> Self {
        Attribution::Undecided { why: NO_SENTINELS.into() }
    }
}

/// The fast path: the dominant mode's calls at or below the slow threshold. `single`: nothing
/// else was found above or below it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FastPath {
    pub share: f64,
    pub median: f64,
    pub single: bool,
    /// Where the machine moved between two speed levels and each call was judged against its
    /// 64-call window's level: the higher level's step over the lower (the median is the
    /// lower's, and every cost of the line is over the call's own level).
    pub level_step: Option<f64>,
}

/// A slower stretch of calls right after a periodic path's call, in every period (stretch.rs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LockedStretch {
    pub calls: u64,
    pub extra: f64,
    /// Locked to the tracer's own path, so the tracer's.
    pub attribution: Attribution,
}

/// A path taken every `period` calls, or `evenly_spread` times in every `period` calls (a mean
/// period that is not a whole number, fractional.rs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodicFinding {
    pub period: u64,
    pub evenly_spread: u64,
    /// Calls between two calls of the path on average: `period / evenly_spread`.
    pub mean_period: f64,
    /// The first iteration on the path in the first sequence.
    pub phase: u64,
    /// Kept calls on the period that take the path, of `slots` kept calls on it.
    pub calls: u64,
    pub slots: u64,
    pub share_taken: f64,
    /// Median extra cost over the fast path's median.
    pub extra: f64,
    /// Calibrated p-value (permutation.rs) and the null reruns of the whole search it took.
    pub p_value: f64,
    pub null_runs: u32,
    pub followers: Vec<Follower>,
    pub stretch: Option<LockedStretch>,
    /// The period the tracer's geometry predicts, on the path closest to it.
    pub expected: Option<Expected>,
    /// The periods of the costlier paths on this path's lattice, whose calls are counted there.
    pub counted_in: Vec<u64>,
}

/// One level of the modes held in stretches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeLevel {
    pub share: f64,
    pub extra: f64,
    pub stretches: u64,
    /// The mean call count between its stretches' starts, when they start at a nearly fixed
    /// call count: then the tracer's (the machine cannot count its calls).
    pub start_every: Option<f64>,
}

/// How a speed level showed in the data (phases.rs).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "seen_as", rename_all = "snake_case")]
pub enum LevelShape {
    /// Latency modes whose calls hold the majority of their windows: the levels above the fast one.
    Modes { levels: Vec<ModeLevel> },
    /// A mode whose calls crowd into the busiest quarter of the run.
    ComeAndGo { share: f64, extra: f64, busiest_quarter_share: f64 },
    /// Two levels of the means of `window`-call windows, too close to form modes.
    WindowMeans { window: u64, low: f64, high: f64, high_share: f64, stretches: u64 },
    /// Slow calls on no path, most of them in stretches of consecutive calls.
    OffPath { calls: u64, share: f64, stretches: u64 },
}

/// Calls at another speed in stretches, not single-call paths: the tracer's, the machine's, or
/// undecided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedLevels {
    #[serde(flatten)]
    pub shape: LevelShape,
    pub attribution: Attribution,
}

/// A lattice the search found and the null refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefusedPeriod {
    pub period: u64,
    pub calls: u64,
    pub p_value: f64,
    pub null_runs: u32,
}

/// Lattices tried and not claimed as periods.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefusedPeriods {
    pub lattices: Vec<RefusedPeriod>,
}

/// The tracer's geometry predicts a period, and no periodic path was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissingPeriod {
    pub expected: Expected,
    /// Periodic paths were found, none at the expected period ("no periodic path at the expected
    /// period" rather than "no periodic path found").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub beside_other_periods: bool,
    /// The outliers that lie exactly the expected period apart, if at least three do: a period
    /// that holds over part of the run only, which the search does not claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_lattice: Option<expected_period::OnLattice>,
    /// The spacings of the paths about every N calls (no exact period; the table's "~N").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub about_every: Vec<f64>,
    /// One phase of the expected period slower than the rest in most sequences: the path, too
    /// cheap for the search over slow calls to see (analysis::folded_period).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folded: Option<crate::analysis::folded_period::FoldedPeriod>,
}

/// Slow calls on no path, scattered (interrupts and other noise).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outliers {
    pub count: u64,
    pub share: f64,
    /// Their rate against the reference windows' above the same threshold (None: no reference
    /// windows).
    pub whose: Option<RateTest>,
}

/// One claim with its evidence; `kind` names it in report.json.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    FastPath(FastPath),
    PeriodicPath(PeriodicFinding),
    IrregularPath(IrregularPath),
    /// A path the tracer takes at random, 1 call in N (each call alike): told from the
    /// machine's stalls by the reference windows.
    MemorylessPath(SlowCalls),
    /// Slow calls the reference windows meet as often: the machine's, not a path.
    MachineSlowCalls(SlowCalls),
    /// Slow calls at a nearly fixed spacing whose cost the reference windows meet too often to
    /// give them to the tracer, and too rarely to give them to the machine: no path is claimed.
    UndecidedSlowCalls(SlowCalls),
    SpeedLevels(SpeedLevels),
    RefusedPeriods(RefusedPeriods),
    MissingPeriod(MissingPeriod),
    Outliers(Outliers),
    DatedLevels(DatedLevels),
    /// Slow calls on the harness's own cycle (analysis/footprint.rs).
    HarnessCycle(crate::analysis::footprint::HarnessCycle),
    /// What sets p99 and p99.9.
    TailSplit(TailSplit),
    /// One path of a stepped run, per function (analysis/function_profile.rs).
    FunctionProfile(crate::analysis::function_profile::FunctionProfile),
}

impl Finding {
    /// The extra cost of a path over the fast path's median (None: not a path).
    pub fn path_extra(&self) -> Option<f64> {
        match self {
            Finding::PeriodicPath(p) => Some(p.extra),
            Finding::IrregularPath(p) => Some(p.extra),
            Finding::MemorylessPath(p) => Some(p.extra),
            _ => None,
        }
    }
}

/// The findings of one metric, in the order the line says them: the fast path, the paths by
/// extra cost (cheapest first), then the rest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricFindings {
    pub metric: String,
    pub unit: &'static str,
    /// Calls analysed.
    pub calls: u64,
    pub findings: Vec<Finding>,
}

/// summary.csv's figures of the thread count analysed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryFigures {
    pub kept: u64,
    pub discarded: u64,
    pub mean_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
}

impl SummaryFigures {
    pub fn of(s: &SummaryRow) -> Self {
        SummaryFigures {
            kept: s.kept,
            discarded: s.discarded,
            mean_ns: s.mean,
            p50_ns: s.p50,
            p90_ns: s.p90,
            p99_ns: s.p99,
            min_ns: s.min,
            max_ns: s.max,
        }
    }
}

/// One tracer row of report.json.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TracerFindings {
    /// The row's name in the results, and as the report labels it (ftrace rows get their clock).
    pub name: String,
    pub label: String,
    pub threads: u32,
    pub summary: Option<SummaryFigures>,
    pub metrics: Vec<MetricFindings>,
}

/// report.json's schema: bumped when a field changes meaning or goes; fields are only ever added
/// otherwise (docs/output.md).
pub const REPORT_JSON_SCHEMA: u32 = 1;

/// report.json: what the report claims, for other tools.
#[derive(Debug, Clone, Serialize)]
pub struct ReportJson<'a> {
    /// REPORT_JSON_SCHEMA.
    pub schema: u32,
    pub tracers: &'a [TracerFindings],
    /// The survey check, typed: each sentence's topic, verdict and tracer rows (added in
    /// schema 1; older files lack it).
    pub survey_check: &'a [survey_check::SurveyCheck],
}

/// The findings of one metric's code paths. `expected`: the period the tracer's geometry predicts.
/// `dated`: the row's dated levels (latency only; None for old data). `attr`: each slow
/// population held against the reference windows (None: none in the run, or not latency).
/// `folded`: one phase of the expected period slower than the rest, where the search found no
/// path there.
pub fn of(
    cp: &CodePaths,
    expected: Option<&Expected>,
    dated: Option<&SegmentReport>,
    attr: Option<&Attributions>,
    folded: Option<&crate::analysis::folded_period::FoldedPeriod>,
) -> MetricFindings {
    let mut paths: Vec<Finding> = periodic(cp, expected).into_iter().map(Finding::PeriodicPath).collect();
    let mut machine = Vec::new();
    slow_populations::irregular_paths(cp, attr, &mut paths, &mut machine);
    for b in attr.map_or(&[][..], |a| &a.bands) {
        let calls = SlowCalls {
            calls: b.calls,
            share: share(b.calls, cp.rows),
            extra: b.extra,
            one_in: cp.rows as f64 / b.calls.max(1) as f64,
            spacing: None,
            evidence: b.test.clone(),
        };
        match b.test.attribution {
            Attribution::Tracer => paths.push(Finding::MemorylessPath(calls)),
            _ => machine.push(Finding::MachineSlowCalls(calls)),
        }
    }
    paths.sort_by(|a, b| a.path_extra().unwrap_or(0.0).total_cmp(&b.path_extra().unwrap_or(0.0)));
    let said = paths.iter().any(|x| matches!(x, Finding::PeriodicPath(p) if p.expected.is_some()));
    let folded = folded.filter(|_| expected.is_some() && !said);
    let fast = FastPath {
        share: cp.fast_fraction,
        median: cp.dominant.median,
        single: paths.is_empty() && folded.is_none(),
        level_step: cp.levelled.as_ref().map(|l| l.shift),
    };
    let mut f = vec![Finding::FastPath(fast)];
    f.extend(paths);
    if let Some(e) = expected.filter(|_| !said) {
        let on_lattice = expected_period::on_lattice(&cp.outlier_calls, e.period, &cp.extents);
        let beside_other_periods = !cp.periodic.is_empty();
        let about_every = expected_period::about_every(&f);
        f.push(Finding::MissingPeriod(MissingPeriod {
            expected: e.clone(),
            beside_other_periods,
            on_lattice,
            about_every,
            folded: folded.cloned(),
        }));
    }
    let dated = dated.and_then(DatedLevels::of);
    let owner = dated.as_ref().map_or_else(Attribution::no_sentinels, DatedLevels::owner);
    f.extend(levels(cp).into_iter().map(|l| Finding::SpeedLevels(SpeedLevels { attribution: owner.clone(), ..l })));
    if !cp.rejected.is_empty() {
        let lattices = cp
            .rejected
            .iter()
            .map(|r| RefusedPeriod { period: r.period, calls: r.hits, p_value: r.p, null_runs: r.null_runs })
            .collect();
        f.push(Finding::RefusedPeriods(RefusedPeriods { lattices }));
    }
    f.extend(machine);
    f.extend(outliers(cp, attr).map(|o| match o {
        Finding::SpeedLevels(l) => Finding::SpeedLevels(SpeedLevels { attribution: owner.clone(), ..l }),
        o => o,
    }));
    f.extend(dated.filter(|d| !d.levels.is_empty()).map(Finding::DatedLevels));
    f.extend(cp.tails.iter().map(|t| Finding::TailSplit(tail_split(cp, t, attr))));
    MetricFindings { metric: cp.metric.clone(), unit: cp.unit, calls: cp.rows, findings: f }
}

fn share(calls: u64, rows: u64) -> f64 {
    calls as f64 / rows.max(1) as f64
}

/// The periodic paths, the expected period on the one closest to it: a path taken once every
/// exactly that many calls first, else the nearest mean period. (A run can also show every other
/// switch as a path of its own, 2 x P, and with two phases its mean period ties P's.) Of equally
/// near ones, the costliest: the geometry predicts the slow path (survey section 7.1), and LTTng
/// can show a cheap path on the same period too (810@146 beside the switch's 810@436).
fn periodic(cp: &CodePaths, expected: Option<&Expected>) -> Vec<PeriodicFinding> {
    let closest = expected.and_then(|e| {
        let off = |p: &code_paths::PeriodicPath| {
            let exact = p.phases <= 1 && p.period as f64 == e.period.round();
            (!exact, (p.mean_period() - e.period).abs())
        };
        // Only a path near the expected period is the one it predicts.
        let near = |i: &usize| expected_period::near_expected(cp.periodic[*i].mean_period(), e.period);
        (0..cp.periodic.len()).filter(near).min_by(|&a, &b| {
            let (pa, pb) = (&cp.periodic[a], &cp.periodic[b]);
            let ((xa, da), (xb, db)) = (off(pa), off(pb));
            xa.cmp(&xb).then(da.total_cmp(&db)).then(pb.extra.total_cmp(&pa.extra))
        })
    });
    cp.periodic
        .iter()
        .enumerate()
        .map(|(i, p)| PeriodicFinding {
            period: p.period,
            evenly_spread: p.phases.max(1),
            mean_period: p.mean_period(),
            phase: p.phase,
            calls: p.taken,
            slots: p.slots,
            share_taken: share(p.taken, p.slots),
            extra: p.extra,
            p_value: p.p_value,
            null_runs: p.null_runs,
            followers: p.followers.clone(),
            stretch: p.stretch.as_ref().map(|s| LockedStretch {
                calls: s.calls,
                extra: s.extra,
                attribution: Attribution::Tracer,
            }),
            expected: expected.filter(|_| closest == Some(i)).cloned(),
            counted_in: p.counted_in.clone(),
        })
        .collect()
}

/// The speed levels: phase modes, modes that come and go, and two levels of window means (said
/// only when neither phase modes nor off-path stretches say them already).
fn levels(cp: &CodePaths) -> Vec<SpeedLevels> {
    let undecided = |shape| SpeedLevels { shape, attribution: Attribution::no_sentinels() };
    let mut out = Vec::new();
    if !cp.phases.is_empty() {
        let levels = cp
            .phases
            .iter()
            .map(|p| ModeLevel {
                share: p.mode.fraction,
                extra: p.delta,
                stretches: p.stretches,
                start_every: p.start_every,
            })
            .collect();
        out.push(undecided(LevelShape::Modes { levels }));
    }
    for p in cp.irregular.iter().filter(|p| p.is_phase()) {
        out.push(undecided(LevelShape::ComeAndGo {
            share: share(p.calls, cp.rows),
            extra: p.delta,
            busiest_quarter_share: p.clustered.unwrap_or(0.0),
        }));
    }
    if let Some(l) = cp.levels.as_ref().filter(|_| cp.phases.is_empty() && cp.outliers_in_stretches.is_none()) {
        out.push(undecided(LevelShape::WindowMeans {
            window: crate::decisions::phases::WINDOW,
            low: l.low,
            high: l.high,
            high_share: l.high_share,
            stretches: l.stretches,
        }));
    }
    out
}

/// The slow calls on no path: scattered outliers (less the modes the reference windows told
/// either way), or a slower phase in stretches.
fn outliers(cp: &CodePaths, attr: Option<&Attributions>) -> Option<Finding> {
    if cp.outliers == 0 {
        return None;
    }
    let s = share(cp.outliers, cp.rows);
    Some(match cp.outliers_in_stretches {
        Some(stretches) => Finding::SpeedLevels(SpeedLevels {
            shape: LevelShape::OffPath { calls: cp.outliers, share: s, stretches },
            attribution: Attribution::no_sentinels(),
        }),
        None => {
            let count = attr.map_or(cp.outliers, |a| a.outliers_left);
            if count == 0 {
                return None;
            }
            let whose = attr.and_then(|a| a.outliers.clone());
            Finding::Outliers(Outliers { count, share: share(count, cp.rows), whose })
        }
    })
}

/// Why slow populations are undecided in a run without reference windows.
pub fn no_reference() -> Attribution {
    Attribution::Undecided { why: NO_REFERENCE.into() }
}
