//! A periodic path too cheap to leave the fast path, tested at the one period the tracer's
//! geometry predicts (survey section 7.1): each sequence folded at that period.
//!
//! The periodic search looks at slow calls only, those above the slow threshold. A tracer whose
//! page switch costs less than the fast path's spread (ftrace's, +140 ns on a 2 us syscall) puts
//! no call above it, so the search cannot see the path, and "no periodic path found" would deny
//! what the data show: in every sequence, the calls of one phase of the period are slower than
//! the rest. The period is known before the data is read, so it is tested, not searched for.
//!
//! The test, per sequence: each call is marked when it lies above the median of its neighbours
//! (`NEIGHBOURS` calls either side), a reference that moves with the machine's level; the
//! calls of each phase (iteration mod P) are counted. Where the marks do not depend on the phase,
//! a phase's count of marked calls is hypergeometric over the sequence's calls, whose tail the
//! binomial at the sequence's own marked share bounds (calls of one phase are P apart, farther
//! than their neighbours reach). The phase with the smallest tail is the
//! sequence's best, its chance taken over every phase tried (Bonferroni). Time-correlated noise
//! (a slower stretch, a speed phase) reaches the phases of a period evenly once it is longer
//! than the period, and one call per phase when shorter: it moves no phase apart from the rest.
//! The row's claim counts the sequences whose best phase stands out (chance below
//! `decisions::folded::SEQUENCE_LEVEL`) against the binomial of that level over the sequences
//! tested, or the strongest sequence alone (over the sequences tested): whichever is stronger,
//! the chance doubled for the two and multiplied by the whole periods tried.
//!
//! Memory is one counter triple per phase per long enough sequence: sequences shorter than
//! `MIN_CYCLES` periods are not folded (too few calls per phase to tell).
use std::collections::HashMap;

use serde::Serialize;

use crate::analysis::code_paths::CodePaths;
use crate::decisions::claims::ALPHA;
use crate::decisions::folded::{MIN_CYCLES, NEIGHBOURS, PERIOD_SLACK, SEQUENCE_LEVEL};
use crate::results::read::{Event, Events, ReadError, Source};
use crate::stats::binomial::upper_tail;
use crate::stats::period::gcd;

/// One phase of a period slower than the rest, in most sequences: the path the geometry predicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FoldedPeriod {
    /// The whole period it holds at (the expected period, or one within `PERIOD_SLACK` calls).
    pub period: u64,
    /// Sequences long enough to fold, and those whose best phase stands out.
    pub sequences: u64,
    pub standing_out: u64,
    /// In the sequences that stand out: the share of their best phase's calls above their
    /// neighbours' median, and the share of their other calls.
    pub phase_above: f64,
    pub rest_above: f64,
    /// The median, over the sequences that stand out, of the best phase's mean excess over its
    /// neighbours less the other calls' (values capped, see `capped`), in the metric's unit.
    pub extra: f64,
    /// How far the slow threshold lies above the fast path's median: an `extra` below it keeps
    /// the phase's typical call under the threshold, where the search over slow calls does not
    /// look.
    pub threshold_above_median: f64,
    /// The chance of as strong a showing with no path at any phase (the test above).
    pub p_value: f64,
}

/// One sequence's counts at each period tried: per phase (calls, calls marked, sum of capped
/// excess over the local median), and the calls awaiting their later neighbours.
struct Folds {
    calls: u64,
    above: u64,
    sum: f64,
    by_period: Vec<Vec<(u32, u32, f64)>>,
    /// The last 2k+1 calls (iteration, cost), k the neighbours either side of a marked call.
    recent: std::collections::VecDeque<(u64, f64)>,
    neighbours: usize,
}

impl Folds {
    fn new(periods: &[u64]) -> Folds {
        // Neighbours either side, fewer than half the shortest period: a call's neighbours are
        // then never calls of its own phase.
        let shortest = periods.iter().copied().min().unwrap_or(2);
        Folds {
            calls: 0,
            above: 0,
            sum: 0.0,
            by_period: periods.iter().map(|&p| vec![(0, 0, 0.0); p as usize]).collect(),
            recent: Default::default(),
            neighbours: (NEIGHBOURS as u64).min((shortest - 1) / 2).max(1) as usize,
        }
    }

    /// The next call of the sequence (iteration `it`, cost `v`), in iteration order. The call
    /// `neighbours` before it now has its neighbours either side: it is marked if it lies above
    /// their median, a reference that moves with the machine's level, so that a speed phase or
    /// a slower stretch marks no phase more than another. Its excess over that median, capped at
    /// `cap`, is summed for the path's cost.
    fn add(&mut self, it: u64, v: f64, cap: f64, periods: &[u64]) {
        let k = self.neighbours;
        self.recent.push_back((it, v));
        if self.recent.len() < 2 * k + 1 {
            return;
        }
        let (it, v) = self.recent[k];
        // The 2k neighbours, in a buffer on the stack: this runs once per call of the run.
        let mut buffer = [0.0f64; 2 * NEIGHBOURS];
        let around = &mut buffer[..2 * k];
        for (slot, (_, c)) in around.iter_mut().zip(self.recent.iter().enumerate().filter(|(i, _)| *i != k)) {
            *slot = c.1;
        }
        around.sort_by(f64::total_cmp);
        let local = 0.5 * (around[k - 1] + around[k]);
        self.recent.pop_front();
        let up = u32::from(v > local);
        let excess = v.min(cap) - local;
        self.calls += 1;
        self.above += u64::from(up);
        self.sum += excess;
        for (j, &p) in periods.iter().enumerate() {
            let c = &mut self.by_period[j][(it % p) as usize];
            c.0 += 1;
            c.1 += up;
            c.2 += excess;
        }
    }
}

/// The whole periods within `PERIOD_SLACK` of `expected` that the harness's own cycles (its
/// sample page, its sentinel windows: `harness_cycles`, in calls) leave apart. Work of the
/// harness every c calls that reached the next call would mark the phases of P that hold those
/// calls: all of one phase where c divides P, and a share gcd(P, c) / c of some phases
/// otherwise. A period that shares a quarter of a cycle or more with it is not folded: the data
/// could not tell the tracer's path from the harness's work.
pub(crate) fn periods_tried(expected: f64, harness_cycles: &[u64]) -> Vec<u64> {
    if !expected.is_finite() || expected < 2.0 {
        return Vec::new();
    }
    let centre = expected.round() as u64;
    (centre.saturating_sub(PERIOD_SLACK).max(2)..=centre + PERIOD_SLACK)
        .filter(|&p| !harness_cycles.iter().any(|&c| c > 1 && 4 * gcd(p, c) >= c))
        .collect()
}

/// Folds the row's latency at the periods tried around `expected` (`periods_tried`), and says
/// the one whose phase stands out in most sequences, if its chance is below ALPHA.
pub fn at_expected(
    path: &Source,
    threads: u32,
    cp: &CodePaths,
    expected: f64,
    harness_cycles: &[u64],
) -> Result<Option<FoldedPeriod>, ReadError> {
    let periods = periods_tried(expected, harness_cycles);
    if cp.col.is_some() || periods.is_empty() {
        return Ok(None);
    }
    let longest = *periods.last().expect("at least one period");
    let long_enough: HashMap<u64, ()> =
        cp.extents.iter().filter(|e| e.2.saturating_sub(e.1) + 1 >= MIN_CYCLES * longest).map(|e| (e.0, ())).collect();
    if long_enough.is_empty() {
        return Ok(None);
    }
    let cap = capped(cp);
    let mut folds: HashMap<u64, Folds> = HashMap::new();
    let mut ev = Events::from_source(path)?;
    let mut row = Event::default();
    while ev.next_into(&mut row)? {
        if row.threads != threads || !row.latency.is_finite() || !long_enough.contains_key(&row.seq) {
            continue;
        }
        // A path the search found is not this one: its calls would set their phases of any
        // period that divides or shares a factor with its own apart.
        if cp.periodic.iter().any(|p| p.on(row.seq, row.iteration)) {
            continue;
        }
        folds.entry(row.seq).or_insert_with(|| Folds::new(&periods)).add(row.iteration, row.latency, cap, &periods);
    }
    let mut folds: Vec<Folds> = folds.into_values().collect();
    folds.sort_by_key(|f| (f.calls, f.above));
    Ok(judge(&folds, &periods, cp.threshold - cp.dominant.median))
}

/// Values are capped at the slow threshold plus twice the fast path's spread above its median:
/// a rare interrupt of tens of microseconds on one phase would otherwise outweigh the path's
/// extra cost in that phase's mean. The mark (above the neighbours' median or not) uses no cap.
fn capped(cp: &CodePaths) -> f64 {
    cp.threshold + 2.0 * (cp.threshold - cp.dominant.median).max(0.0)
}

/// One sequence's best phase at one period: its chance over every phase, and its figures.
struct Best {
    p: f64,
    phase_calls: u64,
    phase_above: u64,
    extra: f64,
}

fn best_phase(f: &Folds, cells: &[(u32, u32, f64)]) -> Option<Best> {
    if f.calls == 0 {
        return None;
    }
    let q = f.above as f64 / f.calls as f64;
    let mut best: Option<Best> = None;
    for &(n, k, sum) in cells {
        if n == 0 || (n as u64) >= f.calls {
            continue;
        }
        let tail = upper_tail(n as u64, k as u64, q);
        if best.as_ref().is_none_or(|b| tail < b.p) {
            let rest = (f.sum - sum) / (f.calls - n as u64) as f64;
            best = Some(Best { p: tail, phase_calls: n as u64, phase_above: k as u64, extra: sum / n as f64 - rest });
        }
    }
    best.map(|b| Best { p: (b.p * cells.len() as f64).min(1.0), ..b })
}

/// The row's verdict from its folded sequences (see the module doc for the test).
fn judge(folds: &[Folds], periods: &[u64], spread: f64) -> Option<FoldedPeriod> {
    let s = folds.len() as u64;
    let mut out: Option<FoldedPeriod> = None;
    for (k, &period) in periods.iter().enumerate() {
        let bests: Vec<(Best, &Folds)> =
            folds.iter().filter_map(|f| best_phase(f, &f.by_period[k]).map(|b| (b, f))).collect();
        let strong: Vec<&(Best, &Folds)> = bests.iter().filter(|(b, _)| b.p < SEQUENCE_LEVEL).collect();
        let counted = upper_tail(s, strong.len() as u64, SEQUENCE_LEVEL);
        let strongest = bests.iter().map(|(b, _)| b.p).fold(1.0, f64::min) * s as f64;
        let p = (2.0 * periods.len() as f64 * counted.min(strongest)).min(1.0);
        if p >= ALPHA || strong.is_empty() || out.as_ref().is_some_and(|o| o.p_value <= p) {
            continue;
        }
        let (phase_calls, phase_above) =
            strong.iter().fold((0, 0), |a, (b, _)| (a.0 + b.phase_calls, a.1 + b.phase_above));
        let (rest_calls, rest_above) =
            strong.iter().fold((0, 0), |a, (b, f)| (a.0 + f.calls - b.phase_calls, a.1 + f.above - b.phase_above));
        let mut extras: Vec<f64> = strong.iter().map(|(b, _)| b.extra).collect();
        extras.sort_by(f64::total_cmp);
        let extra = extras[extras.len() / 2];
        out = Some(FoldedPeriod {
            period,
            sequences: s,
            standing_out: strong.len() as u64,
            phase_above: phase_above as f64 / phase_calls.max(1) as f64,
            rest_above: rest_above as f64 / rest_calls.max(1) as f64,
            extra,
            threshold_above_median: spread,
            p_value: p,
        });
    }
    out
}

#[cfg(test)]
#[path = "folded_period_tests.rs"]
mod tests;
