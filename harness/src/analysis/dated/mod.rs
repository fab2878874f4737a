//! Dated segments: the stretches of a run in which the tracer's calls cost more (or
//! less), when they happened, and whose they are. Sentinel windows (an empty call timed through
//! the same dispatch every K-th window of the same loop, `sentinels.csv`) measure the machine's
//! floor at the same moments as the tracer's calls, so:
//! - a level that the sentinels share at the same time, in the same direction and by a
//!   comparable relative amount, is the machine's (a slower CPU slows the empty call too);
//! - a level they do not share (their interval holds no shift and excludes the tracer's) is the
//!   tracer's (a cold buffer after a sub-buffer switch does not slow the empty call);
//! - anything else is undecided, with the reason;
//! - a tracer level that starts at a fixed lag after a periodic path's calls is said with that
//!   path (LTTng-UST: ~300 slower calls after each switch, every 810 events).
//!
//! Per repetition and thread: the tracer's kept calls (the row's slow-path calls left out) are
//! averaged in windows of WINDOW iterations, `stats::changepoint` finds where the window means
//! move, and the sentinels falling in each segment's time span are compared with those in the
//! base level's spans. A run written before `t_ns` and sentinels existed gets [`Outcome::Untold`].
use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::bootstrap::SplitMix64;
use crate::stats::changepoint::{self, Options};

mod path_lock;
mod rows;
pub mod tracer_row;
mod windows;
pub use path_lock::PathLock;
#[cfg(test)]
pub use rows::load_calls;
pub use rows::{load_discards, load_sentinels, walk_calls};
pub use windows::{fold_call, CallSource, WindowMean, WindowScan};

use crate::decisions::claims::INTERVAL_CONFIDENCE;
use crate::decisions::dated::{LEVEL_Z, MACHINE_SHARE, MAX_WINDOWS, MIN_SENTINELS, RESAMPLES, SENTINEL_STALL};
use crate::decisions::phases::WINDOW;

/// A sequence of calls: one repetition of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeqKey {
    pub repetition: u32,
    pub thread: u32,
}

/// One tracer call: when its window started (ns from the cell's first timed iteration), its
/// iteration and its latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    pub t_ns: u64,
    pub iteration: u64,
    pub latency: f64,
}

/// One sentinel window (a row of sentinels.csv): `iteration` is the tracer iteration it precedes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sentinel {
    pub key: SeqKey,
    pub t_ns: u64,
    pub iteration: u64,
    pub latency: f64,
}

/// A periodic path found by the analysis: its period and, per sequence, the residue of its
/// calls' iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedPath {
    pub period: u64,
    pub residues: BTreeMap<SeqKey, u64>,
}

/// Everything [`segments`] needs for one tracer row at one thread count. `calls` is None when
/// events.csv has no `t_ns`, `sentinels` None when there is no sentinels.csv (old data).
#[derive(Debug, Clone)]
pub struct SegmentInput<C = BTreeMap<SeqKey, Vec<Call>>> {
    pub tracer: String,
    pub threads: u32,
    /// Calls above this latency are the row's slow paths, left out of the window means.
    pub slow_threshold: f64,
    pub calls: Option<C>,
    pub sentinels: Option<Vec<Sentinel>>,
    pub paths: Vec<LocatedPath>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentReport {
    pub tracer: String,
    pub threads: u32,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// Old data: nothing in the run measures the machine beside the tracer.
    Untold {
        reason: String,
    },
    Dated {
        sequences: Vec<SequenceSegments>,
    },
}

/// Why a run cannot tell machine levels from the tracer's.
pub const UNTOLD: &str = "this run has no sentinel windows, so the machine's levels cannot be told from the tracer's";

/// The segments of one sequence and its levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequenceSegments {
    pub key: SeqKey,
    pub windows: usize,
    /// Iterations per window the change points were searched on: WINDOW, or a multiple of it
    /// where a long sequence's windows were merged (MAX_WINDOWS).
    pub window_calls: u64,
    pub sentinels: usize,
    /// Mean of the base level's window means (ns).
    pub base_mean_ns: f64,
    pub segments: Vec<DatedSegment>,
    pub levels: Vec<SideLevel>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Base,
    Above,
    Below,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatedSegment {
    /// From the segment's first window's start to the next segment's (the last: its last call).
    pub start_t_ns: u64,
    pub end_t_ns: u64,
    /// Iterations `start_iteration..end_iteration`.
    pub start_iteration: u64,
    pub end_iteration: u64,
    pub windows: usize,
    pub mean_ns: f64,
    pub side: Side,
}

/// A relative shift and its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// Whose a level or a slower stretch is: the one type the analysis decides and report.json says
/// (`{"by": "tracer"}`, `{"by": "machine"}`, `{"by": "undecided", "why": ...}`). Only `Undecided`
/// can be said of a run without sentinel windows; the sentinel-based attribution decides
/// the other two.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Attribution {
    Tracer,
    Machine,
    Undecided { why: String },
}

/// The segments of one side of the base in one sequence, taken together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideLevel {
    pub side: Side,
    pub segments: usize,
    pub windows: usize,
    pub mean_ns: f64,
    /// The tracer's mean in the level over its mean in the base, minus 1.
    pub tracer_shift: f64,
    /// The same for the sentinels in the level's and the base's time spans.
    pub sentinel_shift: Option<Interval>,
    pub sentinels_in: usize,
    pub sentinels_base: usize,
    pub attribution: Attribution,
    pub lock: Option<PathLock>,
    /// Calls disturbed from outside (discarded.csv) in the level's spans and in the base's, when
    /// the run has them (report/analysis/dated/tracer_row.rs).
    pub outside: Option<Outside>,
}

/// Calls the detector discarded (an interrupt, a preemption, ... from outside the tracer) in a
/// level's spans and in its base's, and the chance of at least that many in the level if both
/// had the same rate (one-sided binomial, given their sum).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Outside {
    pub level: u64,
    pub level_calls: u64,
    pub base: u64,
    pub base_calls: u64,
    pub p: f64,
}

/// Levels of a row by attribution (what a sentence about the row rests on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LevelsByCause {
    pub tracer: usize,
    pub machine: usize,
    pub undecided: usize,
    pub locked: usize,
}

impl SegmentReport {
    pub fn tally(&self) -> LevelsByCause {
        let mut t = LevelsByCause::default();
        if let Outcome::Dated { sequences } = &self.outcome {
            for l in sequences.iter().flat_map(|s| &s.levels) {
                match l.attribution {
                    Attribution::Tracer => t.tracer += 1,
                    Attribution::Machine => t.machine += 1,
                    Attribution::Undecided { .. } => t.undecided += 1,
                }
                t.locked += l.lock.is_some() as usize;
            }
        }
        t
    }
}

/// The dated segments of one tracer row at one thread count.
pub fn segments<C: CallSource>(input: &SegmentInput<C>) -> SegmentReport {
    let report = |outcome| SegmentReport { tracer: input.tracer.clone(), threads: input.threads, outcome };
    let (Some(calls), Some(sentinels)) = (&input.calls, &input.sentinels) else {
        return report(Outcome::Untold { reason: UNTOLD.into() });
    };
    let mut by_seq: BTreeMap<SeqKey, Vec<&Sentinel>> = BTreeMap::new();
    for s in sentinels {
        by_seq.entry(s.key).or_default().push(s);
    }
    let keys = calls.keys();
    let windows: usize = keys.iter().map(|k| calls.windows(*k, input.slow_threshold).0.len()).sum();
    let opts = Options { penalty_n: Some(windows), ..Options::default() };
    let sequences = keys
        .iter()
        .map(|key| {
            let paths: Vec<(u64, u64)> =
                input.paths.iter().filter_map(|p| Some((p.period, *p.residues.get(key)?))).collect();
            let sent = by_seq.get(key).map(Vec::as_slice).unwrap_or(&[]);
            sequence(*key, calls, sent, input.slow_threshold, &paths, &opts)
        })
        .collect();
    report(Outcome::Dated { sequences })
}

/// Segments, sides and levels of one sequence.
fn sequence(
    key: SeqKey,
    calls: &impl CallSource,
    sent: &[&Sentinel],
    threshold: f64,
    paths: &[(u64, u64)],
    opts: &Options,
) -> SequenceSegments {
    let (w, last_t) = calls.windows(key, threshold);
    let (w, window_calls) = merged(w);
    let x: Vec<f64> = w.iter().map(|w| w.mean).collect();
    let mut seg = changepoint::segment(&x, opts);
    // A sequence with no window that kept enough calls (a row whose calls were mostly discarded)
    // has no level to date: its one segment would be empty.
    seg.segments.retain(|s| s.end > s.start);
    let sides = sides(&seg, &x);
    let base: Vec<f64> = sides
        .iter()
        .zip(&seg.segments)
        .filter(|s| *s.0 == Side::Base)
        .flat_map(|s| x[s.1.start..s.1.end].to_vec())
        .collect();
    let base_mean = crate::stats::mean(&base);
    let segments: Vec<DatedSegment> = seg
        .segments
        .iter()
        .zip(&sides)
        .enumerate()
        .map(|(i, (s, side))| DatedSegment {
            start_t_ns: w[s.start].t_ns,
            end_t_ns: seg.segments.get(i + 1).map(|n| w[n.start].t_ns).unwrap_or(last_t),
            start_iteration: w[s.start].first,
            end_iteration: w[s.end - 1].end,
            windows: s.len(),
            mean_ns: s.mean,
            side: *side,
        })
        .collect();
    let sentinels = clean_sentinels(sent);
    let levels = [Side::Above, Side::Below]
        .into_iter()
        .filter(|side| segments.iter().any(|s| s.side == *side))
        .map(|side| {
            let mut l = level(side, &segments, &x, &seg.segments, base_mean, &sentinels);
            let fold = |period, residue| calls.fold(key, threshold, period, residue);
            l.lock = path_lock::find(side, &segments, fold, base_mean, l.mean_ns, paths);
            l
        })
        .collect();
    SequenceSegments {
        key,
        windows: w.len(),
        window_calls,
        sentinels: sent.len(),
        base_mean_ns: base_mean,
        segments,
        levels,
    }
}

/// The windows of a sequence, merged k at a time when there are more than MAX_WINDOWS of them,
/// and the iterations each stands for: a merged window spans its first window's start to its last
/// one's end, and its mean is their means' mean (each holds WINDOW iterations).
fn merged(w: Vec<WindowMean>) -> (Vec<WindowMean>, u64) {
    let k = w.len().div_ceil(MAX_WINDOWS).max(1);
    if k == 1 {
        return (w, WINDOW);
    }
    let out = w
        .chunks(k)
        .map(|c| WindowMean {
            t_ns: c[0].t_ns,
            first: c[0].first,
            end: c[c.len() - 1].end,
            mean: c.iter().map(|w| w.mean).sum::<f64>() / c.len() as f64,
        })
        .collect();
    (out, WINDOW * k as u64)
}

/// Each segment's side of the base. Segments whose means stand within LEVEL_Z standard errors
/// of each other form one level (in order of mean, each joining the level before it or opening
/// a new one); the level holding the most windows is the base, and a segment is above or below
/// it by its level's mean. The standard error comes from the windows' spread within their own
/// segments, tails included (the search's clipped scale is narrower than a segment mean's noise).
fn sides(seg: &changepoint::Segmentation, x: &[f64]) -> Vec<Side> {
    let s = &seg.segments;
    let resid: Vec<f64> = s.iter().flat_map(|g| x[g.start..g.end].iter().map(move |v| (v - g.mean).powi(2))).collect();
    let sd = crate::stats::mean(&resid).sqrt().max(seg.sigma).max(1e-12);
    let mut order: Vec<usize> = (0..s.len()).collect();
    order.sort_by(|&a, &b| s[a].mean.total_cmp(&s[b].mean));
    // Levels as (sum of window means, windows), and each segment's level.
    let (mut levels, mut of) = (Vec::<(f64, usize)>::new(), vec![0usize; s.len()]);
    for i in order {
        let g = &s[i];
        let joins = levels.last().is_some_and(|&(sum, n)| {
            (g.mean - sum / n as f64).abs() < LEVEL_Z * sd * (1.0 / g.len() as f64 + 1.0 / n as f64).sqrt()
        });
        if !joins {
            levels.push((0.0, 0));
        }
        let l = levels.len() - 1;
        levels[l].0 += g.mean * g.len() as f64;
        levels[l].1 += g.len();
        of[i] = l;
    }
    let base = (0..levels.len()).max_by_key(|&l| levels[l].1).unwrap_or(0);
    of.iter()
        .map(|&l| match l.cmp(&base) {
            std::cmp::Ordering::Greater => Side::Above,
            std::cmp::Ordering::Less => Side::Below,
            std::cmp::Ordering::Equal => Side::Base,
        })
        .collect()
}

/// Sentinels (time, latency) without stalls, in time order.
fn clean_sentinels(sent: &[&Sentinel]) -> Vec<(u64, f64)> {
    let lat: Vec<f64> = sent.iter().map(|s| s.latency).collect();
    let cut = SENTINEL_STALL * crate::stats::median(&lat);
    let mut v: Vec<(u64, f64)> = sent.iter().filter(|s| s.latency <= cut).map(|s| (s.t_ns, s.latency)).collect();
    v.sort_by_key(|s| s.0);
    v
}

/// One side's level: the tracer's shift, the sentinels' in the same spans, and the verdict.
fn level(
    side: Side,
    segs: &[DatedSegment],
    x: &[f64],
    raw: &[changepoint::Segment],
    base: f64,
    sent: &[(u64, f64)],
) -> SideLevel {
    let mine: Vec<f64> =
        segs.iter().zip(raw).filter(|s| s.0.side == side).flat_map(|s| x[s.1.start..s.1.end].to_vec()).collect();
    let mean = crate::stats::mean(&mine);
    let tracer_shift = mean / base - 1.0;
    // The segment each sentinel falls in (before the first window: the first segment).
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for &(t, v) in sent {
        let k = segs.partition_point(|s| s.start_t_ns <= t).saturating_sub(1);
        match segs[k].side {
            s if s == side => inside.push(v),
            Side::Base => outside.push(v),
            _ => {}
        }
    }
    let shift = (inside.len() >= MIN_SENTINELS && outside.len() >= MIN_SENTINELS)
        .then(|| ratio_interval(&inside, &outside, segs.len() as u64 ^ inside.len() as u64));
    SideLevel {
        side,
        segments: segs.iter().filter(|s| s.side == side).count(),
        windows: mine.len(),
        mean_ns: mean,
        tracer_shift,
        sentinel_shift: shift,
        sentinels_in: inside.len(),
        sentinels_base: outside.len(),
        attribution: attribute(tracer_shift, shift, inside.len().min(outside.len())),
        lock: None,
        outside: None,
    }
}

/// mean(a) / mean(b) - 1 with a percentile bootstrap interval at INTERVAL_CONFIDENCE (seeded: a report
/// reads the same twice).
fn ratio_interval(a: &[f64], b: &[f64], seed: u64) -> Interval {
    let mut rng = SplitMix64(0x5E97_1AE1 ^ seed);
    let mut draw = |v: &[f64]| (0..v.len()).map(|_| v[rng.below(v.len())]).sum::<f64>() / v.len() as f64;
    let mut r: Vec<f64> = (0..RESAMPLES).map(|_| draw(a) / draw(b) - 1.0).collect();
    r.sort_by(f64::total_cmp);
    let tail = 100.0 * (1.0 - INTERVAL_CONFIDENCE) / 2.0;
    Interval {
        estimate: crate::stats::mean(a) / crate::stats::mean(b) - 1.0,
        low: crate::stats::percentile_sorted(&r, tail),
        high: crate::stats::percentile_sorted(&r, 100.0 - tail),
    }
}

/// Machine, tracer or undecided, from the tracer's relative shift and the sentinels' interval.
fn attribute(tracer: f64, sentinels: Option<Interval>, fewest: usize) -> Attribution {
    let pct = |v: f64| format!("{:+.1} %", 100.0 * v);
    let Some(i) = sentinels else {
        return Attribution::Undecided {
            why: format!(
                "only {fewest} sentinel windows fell in the level's or the base's time ({MIN_SENTINELS} needed)"
            ),
        };
    };
    // In the tracer's direction.
    let s = tracer.signum();
    let (lo, hi) = if s >= 0.0 { (i.low, i.high) } else { (-i.high, -i.low) };
    let t = tracer.abs();
    let range = format!("{} to {}", pct(i.low), pct(i.high));
    if lo > 0.0 && hi >= MACHINE_SHARE * t {
        Attribution::Machine
    } else if lo > 0.0 {
        Attribution::Undecided {
            why: format!("the sentinels moved too ({range}), but by less than half the tracer's {}", pct(tracer)),
        }
    } else if hi < 0.0 {
        Attribution::Undecided { why: format!("the sentinels moved the other way ({range})") }
    } else if hi < t {
        Attribution::Tracer
    } else {
        Attribution::Undecided {
            why: format!("the sentinels' interval ({range}) holds both no shift and the tracer's {}", pct(tracer)),
        }
    }
}

#[cfg(test)]
mod tests;
