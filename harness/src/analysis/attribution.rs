//! Machine or tracer, population by population. A slow population of the tracer's
//! calls (an irregular path, a mode whose calls follow no spacing, the outliers on no path) is
//! held against the reference windows (runner/reference.rs: a loop as long as the tracer's fast
//! path, timed between its calls) at the same extra cost. The machine's stalls arrive in time,
//! not per call, so per nanosecond of window time they hit both alike: the population's rate per
//! ns against the reference's is a two-sample Poisson comparison (`stats::rates`).
//!
//! - The tracer's: its rate is higher than the reference's, one-sided p below ALPHA divided by
//!   the populations tested in the row (a memoryless path of the tracer: 1 in 300 calls at +1 us,
//!   none of the reference windows there).
//! - The machine's: the 99 % interval of the ratio of rates stays at or below MACHINE_RATIO (the
//!   reference's rate is at least half the tracer's: the machine's +2.3 us stalls).
//! - Undecided otherwise (too few reference windows to tell), with the numbers.
//!
//! An irregular path is claimed only when its population is the tracer's: a nearly fixed
//! spacing names no owner, for the machine's timers recur at a fixed spacing in time, and so at
//! a nearly fixed spacing among calls of like length. The report says the others as slow calls
//! that are no path, the machine's or not decided whose.
//!
//! A path with an exact period is the tracer's without this test: the machine cannot count the
//! tracer's calls.
//!
//! The reference band reaches one fast path above the population's. A stall of X ns adds X to a
//! call that works (as the reference loop does), but between X - T and X to a call of length T
//! that waits for a clock, for such a call ends at a set time and the stall eats part of its
//! wait: the `spin` backends, and any tracer with a timed wait. On the VM this was written on,
//! stalls of about +160 ns hit 0.1-1.8 % of the 114 ns reference windows of a run, and the same
//! runs' `spin:100` calls showed them as a band at +40..+100 ns at nearly the same rate, with no
//! reference window at that cost: held against the same band alone, they read as a memoryless
//! path of the tracer's. The wider band only adds reference windows, so it can turn a tracer's
//! population into an undecided or the machine's one, never the reverse.
use std::path::Path;

use serde::Serialize;

use crate::analysis::code_paths::{CodePath, CodePaths, MainSlowPath};
use crate::analysis::coincidence::{self, Meetings, Population};
use crate::analysis::dated::Attribution;
use crate::decisions::claims::{ALPHA, INTERVAL_CONFIDENCE};
use crate::decisions::tails::{BAND_DIP, BAND_FACTOR, BAND_MIN_CALLS, MACHINE_RATIO, MAX_BANDS, NEAR};
use crate::results::columns;
use crate::results::read::{col, csv_err, headers, num, ReadError};
use crate::results::REFERENCE_CSV;
use crate::stats::hist::LogHistogram;
use crate::stats::rates;

/// The reference windows of one row at one thread count: kept windows per latency bin.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// (lowest ns, highest ns, windows) per bin, by latency.
    pub bins: Vec<(f64, f64, u64)>,
    pub windows: u64,
    /// The median window (ns): the reference's own fast path.
    pub median: f64,
}

impl Reference {
    /// From bins in any order (several threads and repetitions add up).
    pub fn of(mut bins: Vec<(f64, f64, u64)>) -> Option<Self> {
        bins.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64, u64)> = Vec::new();
        for b in bins {
            match merged.last_mut() {
                Some(m) if (m.0 - b.0).abs() < 1e-6 => m.2 += b.2,
                _ => merged.push(b),
            }
        }
        let windows: u64 = merged.iter().map(|b| b.2).sum();
        if windows == 0 {
            return None;
        }
        let mut acc = 0;
        let mid = merged
            .iter()
            .find(|b| {
                acc += b.2;
                2 * acc >= windows
            })
            .map(|b| 0.5 * (b.0 + b.1))?;
        Some(Reference { bins: merged, windows, median: mid })
    }

    /// Windows whose extra over the median may lie in `lo..hi` (ns): every bin that overlaps it.
    pub fn windows_between(&self, lo: f64, hi: f64) -> u64 {
        self.bins.iter().filter(|b| b.1 - self.median > lo && b.0 - self.median < hi).map(|b| b.2).sum()
    }
}

/// The reference windows of `dir/tracer_dir/reference.csv` at `threads` threads; None when the
/// run wrote none (`--reference-every 0`, the kernel lab, stepped runs, older results).
pub fn load(dir: &Path, tracer_dir: &str, threads: u32) -> Result<Option<Reference>, ReadError> {
    let path = dir.join(tracer_dir).join(REFERENCE_CSV);
    let f = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReadError::Io { path, source }),
    };
    let mut r = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(f);
    let h = headers(&mut r, &path)?;
    let (cth, clo, chi, cw) = (
        col(&h, "threads", &path)?,
        col(&h, "latency_lo_ns", &path)?,
        col(&h, "latency_hi_ns", &path)?,
        col(&h, "windows", &path)?,
    );
    debug_assert_eq!(columns::REFERENCE[1], "threads");
    let mut bins = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| csv_err(&path, e))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let get = |i: usize| rec.get(i).unwrap_or("").trim().to_string();
        if num::<u32>(&get(cth), "threads", &path, line)? != threads {
            continue;
        }
        bins.push((
            num(&get(clo), "latency_lo_ns", &path, line)?,
            num(&get(chi), "latency_hi_ns", &path, line)?,
            num(&get(cw), "windows", &path, line)?,
        ));
    }
    Ok(Reference::of(bins))
}

/// One population held against the reference windows at the same extra cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateTest {
    /// The extra cost band over each side's fast path (ns; `extra_hi` None: no upper bound).
    pub extra_lo: f64,
    pub extra_hi: Option<f64>,
    /// The population's calls among the row's calls, and the reference windows in the band
    /// among the reference windows.
    pub calls: u64,
    pub of_calls: u64,
    pub reference_hits: u64,
    pub reference_windows: u64,
    /// Events per microsecond of window time, each side.
    pub rate_per_us: f64,
    pub reference_rate_per_us: f64,
    /// The 99 % interval of the tracer's rate over the reference's (None for hi: unbounded).
    pub ratio_lo: f64,
    pub ratio_hi: Option<f64>,
    /// One-sided: the chance of a rate this much higher than the reference's if they were equal.
    pub p_more: f64,
    pub attribution: Attribution,
}

impl RateTest {
    /// The calls beyond what the reference's rate gives in the same time: the tracer's own.
    pub fn excess_calls(&self) -> f64 {
        let machine = self.reference_rate_per_us / self.rate_per_us.max(f64::MIN_POSITIVE) * self.calls as f64;
        (self.calls as f64 - machine).max(0.0)
    }
    pub fn share(&self) -> f64 {
        self.calls as f64 / self.of_calls.max(1) as f64
    }
    pub fn reference_share(&self) -> f64 {
        self.reference_hits as f64 / self.reference_windows.max(1) as f64
    }
}

/// Why a population stays undecided without reference windows.
pub const NO_REFERENCE: &str =
    "this run has no reference windows (--reference-every 0, or an older run), so the machine's slow calls cannot be told from the tracer's";
/// ... and with too few of them.
pub const TOO_FEW: &str = "too few reference windows to tell";

/// The row a population is tested in: its calls, its fast path and its mean call (ns).
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub rows: u64,
    pub base: f64,
    pub mean: f64,
}

/// Tests `calls` slow calls with extra costs in `lo..hi` among the row's calls, one of `tests`
/// populations of the row.
pub fn test(calls: u64, row: Row, lo: f64, hi: Option<f64>, r: &Reference, tests: usize) -> RateTest {
    let Row { rows, base, mean } = row;
    // Up to one fast path above the band: the stalls a call that waits for a clock cuts short.
    let hits = r.windows_between(lo, hi.map_or(f64::INFINITY, |h| h + base.max(0.0)));
    // Exposure: each side's windows times its mean length (ns). The machine's stalls arrive in
    // time, so a row whose slow calls make its calls longer on average meets more of them than
    // its fast path alone would: counted at the fast path, a second mode's calls would lend
    // the stalls they meet to the tracer.
    let per_call = if mean.is_finite() { mean.max(base) } else { base };
    let (e1, e2) = (rows as f64 * per_call.max(1.0), r.windows as f64 * r.median.max(1.0));
    let c = rates::compare(calls, e1, hits, e2, INTERVAL_CONFIDENCE);
    let attribution = if c.p_more < ALPHA / tests.max(1) as f64 {
        Attribution::Tracer
    } else if c.hi <= MACHINE_RATIO {
        Attribution::Machine
    } else {
        Attribution::Undecided { why: TOO_FEW.into() }
    };
    RateTest {
        extra_lo: lo,
        extra_hi: hi,
        calls,
        of_calls: rows,
        reference_hits: hits,
        reference_windows: r.windows,
        rate_per_us: calls as f64 / e1 * 1e3,
        reference_rate_per_us: hits as f64 / e2 * 1e3,
        ratio_lo: c.lo,
        ratio_hi: c.hi.is_finite().then_some(c.hi),
        p_more: c.p_more,
        attribution,
    }
}

/// The attribution of each slow population of one metric's code paths (latency only: the
/// reference windows are timed, not counted).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attributions {
    /// One per `CodePaths::irregular`, in order (None: a phase, not tested).
    pub irregular: Vec<Option<RateTest>>,
    /// Cost bands of the outliers on no path that the reference windows told either way: the
    /// tracer's are memoryless paths, the machine's its stalls.
    pub bands: Vec<Band>,
    /// The outliers left (not in a band told either way), held against the reference windows
    /// as slow as they are.
    pub outliers: Option<RateTest>,
    pub outliers_left: u64,
}

/// A cost band of the outliers on no path: its calls and their median extra cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub calls: u64,
    pub extra: f64,
    pub test: RateTest,
}

impl Band {
    /// The band's calls beyond the machine's rate (`RateTest::excess_calls`).
    pub fn excess_calls(&self) -> f64 {
        self.test.excess_calls()
    }
}

/// The extra-cost band of a mode over the fast path.
fn band(p: &CodePath, base: f64) -> (f64, Option<f64>) {
    (LogHistogram::bin_lo(p.mode.first_bin) - base, Some(LogHistogram::bin_lo(p.mode.end_bin) - base))
}

/// The densest band of `x` (ascending extras): its index range, and the tests its choice stands
/// for: two per band width over the range of costs that hold a band (a scan over overlapping
/// windows is worth about twice the disjoint ones; the null battery checks it, `make calibrate`).
fn densest(x: &[f32]) -> Option<((usize, usize), usize)> {
    let (mut best, mut span, mut j) = ((0, 0), (f32::INFINITY, 0f32), 0);
    for i in 0..x.len() {
        if x[i] <= 0.0 {
            continue;
        }
        j = j.max(i);
        while j < x.len() && x[j] < x[i] * BAND_FACTOR {
            j += 1;
        }
        if j - i >= BAND_MIN_CALLS {
            span = (span.0.min(x[i]), span.1.max(x[j - 1]));
            if j - i > best.1 - best.0 {
                best = (i, j);
            }
        }
    }
    let widths = ((span.1 / span.0).max(1.0).ln() / BAND_FACTOR.ln()).ceil() as usize + 1;
    (best.1 > best.0).then_some((best, 2 * widths))
}

/// Whether a band's calls come in bursts (a slower stretch of calls, not calls one by one):
/// more of them have a neighbour of the band within NEAR calls than calls at random positions
/// would (binomial tail below ALPHA). A burst is no Poisson count, so it is not tested by rate.
fn bursty(calls: &[(f32, u64, u64)], rows: u64) -> bool {
    let mut at: Vec<(u64, u64)> = calls.iter().map(|c| (c.1, c.2)).collect();
    at.sort_unstable();
    let n = at.len();
    let near = (0..n)
        .filter(|&i| {
            let close = |j: usize| at[j].0 == at[i].0 && at[j].1.abs_diff(at[i].1) <= NEAR;
            (i > 0 && close(i - 1)) || (i + 1 < n && close(i + 1))
        })
        .count();
    // The chance that a call at a random position has another of the band within NEAR calls on
    // either side (not its first-order bound 2 NEAR n / rows, which reaches 1 for a band of a
    // sixteenth of the calls and then calls no burst a burst).
    let p = 1.0 - (1.0 - (n as f64 / rows.max(1) as f64).min(1.0)).powi(2 * NEAR as i32);
    crate::stats::binomial::upper_tail(n as u64, near as u64, p) < ALPHA
}

/// Whether a band of `calls` outliers from `lo` (extra ns) up stands as a mode of its own, not
/// a stretch of one tail or the shoulder of another population: the slow calls per ns in the
/// band's width just below it (the part of it above `floor`, the slow threshold's extra, where
/// slow calls are seen, and at least half of it) are at most BAND_DIP of the band's own. Those
/// calls are the outliers and the calls an irregular path explains (`explained`, ascending): a
/// band on the upper shoulder of an irregular path's mode is that mode's edge. A tail that falls
/// from the fast path on (a Pareto excess) is densest next to it, so every band of it has as many
/// calls per ns below it as in it; a band whose lower neighbour lies wholly under the threshold
/// cannot be told from such a tail. A band of a few dozen calls shows such a dip by chance (the
/// densest of the windows scanned is picked), so the dip must also be one that equal densities
/// give with a chance below ALPHA over the row's `tests` (binomial: of the calls in the band and
/// its neighbour, as few in the neighbour as seen, each there with the share of the width it holds).
fn separate(outliers: &[(f32, u64, u64)], explained: &[f32], calls: u64, lo: f64, floor: f64, tests: usize) -> bool {
    let below = (lo / BAND_FACTOR as f64).max(floor);
    // Half the lower neighbour seen at least: a sliver above the threshold holds too few calls
    // to tell a dip from a tail.
    if lo - below < 0.5 * (lo - lo / BAND_FACTOR as f64) {
        return false;
    }
    let within = |x: f32| (x as f64) >= below && (x as f64) < lo;
    let n = outliers.iter().filter(|c| within(c.0)).count() + explained.iter().filter(|&&x| within(x)).count();
    let band_width = lo * (BAND_FACTOR as f64 - 1.0);
    let share_below = (lo - below) / (lo - below + band_width);
    n as f64 / (lo - below) <= BAND_DIP * calls as f64 / band_width
        && crate::stats::binomial::at_most(n as u64 + calls, n as u64, share_below) < ALPHA / tests.max(1) as f64
}

/// Tests every slow population of `cp` against `reference`; None without reference windows.
pub fn attribute(cp: &CodePaths, reference: Option<&Reference>) -> Option<Attributions> {
    let r = reference?;
    if cp.col.is_some() {
        return None;
    }
    let base = cp.dominant.median;
    // Outliers that come in stretches are a phase (said as one), not events that arrive one by
    // one: their count is no Poisson count, so their bands are not tested.
    let mut left: Vec<(f32, u64, u64)> =
        if cp.outliers_in_stretches.is_some() { Vec::new() } else { cp.outlier_calls.clone() };
    let extras = |v: &[(f32, u64, u64)]| v.iter().map(|c| c.0).collect::<Vec<f32>>();
    // Bonferroni over every population the row could test: its irregular paths, the band start
    // positions of the outliers (the densest is chosen among them), the outliers left.
    let tried = densest(&extras(&left)).map_or(0, |d| d.1);
    let tests = cp.irregular.iter().filter(|p| !p.is_phase()).count() + tried + 1;
    let row = Row { rows: cp.rows, base, mean: cp.mean };
    let t = |calls: u64, (lo, hi): (f64, Option<f64>)| test(calls, row, lo, hi, r, tests);
    let stalls_per_ns =
        |from: f64, to: f64| r.windows_between(from, to) as f64 / (r.windows as f64 * r.median.max(1.0));
    let meet =
        coincidence::Row { rows: cp.rows, base, floor: cp.threshold - base, stalls_per_ns: Some(&stalls_per_ns) };
    let mut bands = Vec::new();
    // The extras of the calls left among the outliers so far, untested.
    let mut passed: Vec<f32> = Vec::new();
    for _ in 0..MAX_BANDS {
        let Some(((i, j0), _)) = densest(&extras(&left)) else { break };
        if bursty(&left[i..j0], cp.rows) {
            // Left among the outliers, untested: a stretch, not a rate.
            passed.extend(left.drain(i..j0).map(|c| c.0));
            continue;
        }
        // The band's edges as `densest` drew them, in f32: a call at the upper edge is on the
        // same side in the band's count and wherever the band is matched by cost. A band is
        // matched by cost (the tails give it every outlier in its range), so it ends below the
        // cheapest call left among the outliers before that its range would hold (on a 10 ns
        // clock step many calls share one extra, and a window left there may start inside it).
        let lo = left[i].0 as f64;
        let hi = passed.iter().map(|&d| d as f64).filter(|&d| d >= lo).fold((left[i].0 * BAND_FACTOR) as f64, f64::min);
        let j = i + left[i..j0].partition_point(|c| (c.0 as f64) < hi);
        if j - i < BAND_MIN_CALLS {
            passed.extend(left.drain(i..j0).map(|c| c.0));
            continue;
        }
        // A band that overlaps one already said is the rest of that band's mode, cut by the
        // window's edge: one mode is one band.
        let overlaps =
            bands.iter().any(|b: &Band| lo < b.test.extra_hi.unwrap_or(f64::INFINITY) && b.test.extra_lo < hi);
        if overlaps
            || !separate(&cp.outlier_calls, &cp.explained_extras, (j - i) as u64, lo, cp.threshold - base, tests)
        {
            // Part of one tail that falls from the fast path on, or of a mode already said:
            // left among the outliers.
            passed.extend(left.drain(i..j).map(|c| c.0));
            continue;
        }
        // Where the paths already said meet by chance, or meet the machine's stalls: their
        // coincidence, no mode of its own.
        let mu = coincidence::expected(&populations(cp, &bands), &meet, lo, hi, Meetings::All);
        if coincidence::accounts_for((j - i) as u64, mu, cp.rows) {
            passed.extend(left.drain(i..j).map(|c| c.0));
            continue;
        }
        let test = t((j - i) as u64, (lo, Some(hi)));
        if matches!(test.attribution, Attribution::Undecided { .. }) {
            break;
        }
        bands.push(Band { calls: (j - i) as u64, extra: left[(i + j) / 2].0 as f64, test });
        left.drain(i..j);
    }
    // An irregular path that the other populations' chance meetings (the bands' among them)
    // account for is no path of its own, however regular its spacing: two paths' coincidences recur as the two do. (Only two
    // distinct populations meet at a regular spacing: a mode's own halves, or a path and the
    // stalls, meet at random and thin a spacing out.)
    let irregular = cp
        .irregular
        .iter()
        .map(|p| {
            // A keyed population is the tracer's as an exact period is (keyed.rs): not tested.
            (!p.is_phase() && p.keyed.is_none()).then(|| {
                let (lo, hi) = band(p, base);
                let others: Vec<Population> = populations(cp, &bands)
                    .into_iter()
                    .filter(|o| !(o.calls == p.calls && o.extra == p.delta))
                    .collect();
                let mu = coincidence::expected(&others, &meet, lo, hi.unwrap_or(f64::INFINITY), Meetings::Regular);
                let mut test = t(p.calls, (lo, hi));
                if coincidence::accounts_for(p.calls, mu, cp.rows) {
                    test.attribution = Attribution::Undecided { why: coincidence::why(mu) };
                }
                test
            })
        })
        .collect::<Vec<_>>();
    let told: usize = bands.iter().map(|b: &Band| b.calls as usize).sum();
    let outliers_left = (cp.outliers as usize).saturating_sub(told) as u64;
    // The outliers left are tested only where they come one by one (a burst is no rate).
    let rest: Vec<(f32, u64, u64)> = if cp.outliers_in_stretches.is_some() {
        Vec::new()
    } else {
        let in_band = |c: &(f32, u64, u64)| {
            bands
                .iter()
                .any(|b: &Band| c.0 as f64 >= b.test.extra_lo && b.test.extra_hi.is_none_or(|h| (c.0 as f64) < h))
        };
        cp.outlier_calls.iter().filter(|c| !in_band(c)).copied().collect()
    };
    let outliers = (outliers_left > 0 && !rest.is_empty() && !bursty(&rest, cp.rows))
        .then(|| t(outliers_left, (cp.threshold - base, None)));
    Some(Attributions { irregular, bands, outliers, outliers_left })
}

/// The row's slow populations said so far: its periodic paths and the stretches after them, its
/// irregular paths (not the phases) and the bands told either way.
fn populations(cp: &CodePaths, bands: &[Band]) -> Vec<Population> {
    let periodic = cp.periodic.iter().flat_map(|p| {
        // The slower stretch after a path: its calls after the path's own, on each slot.
        let stretch =
            p.stretch.as_ref().map(|s| Population { calls: s.calls.saturating_sub(1) * p.hits, extra: s.extra });
        std::iter::once(Population { calls: p.hits, extra: p.extra }).chain(stretch)
    });
    let irregular =
        cp.irregular.iter().filter(|p| !p.is_phase()).map(|p| Population { calls: p.calls, extra: p.delta });
    periodic.chain(irregular).chain(bands.iter().map(|b| Population { calls: b.calls, extra: b.extra })).collect()
}

impl Attributions {
    /// Whether irregular path `i` is the machine's.
    pub fn machine_path(&self, i: usize) -> bool {
        self.irregular.get(i).and_then(Option::as_ref).is_some_and(|t| t.attribution == Attribution::Machine)
    }

    /// Whether irregular path `i` is no path of the tracer's: the reference windows give it to
    /// the machine, or meet its cost too often to tell. A regular spacing alone names no owner:
    /// the machine's timers recur at a fixed spacing in time, so at a nearly fixed spacing in
    /// calls of like length, and are met in the reference windows at the same rate.
    pub fn not_tracers(&self, i: usize) -> bool {
        self.irregular.get(i).and_then(Option::as_ref).is_some_and(|t| t.attribution != Attribution::Tracer)
    }
}

/// The tracer's own main slow path (the sweep's slow_period and slow_share): the
/// costliest periodic path that lies on no other path's lattice, else the costliest irregular path with a spacing that the reference
/// windows give to the tracer (or that no reference windows test), else the costliest memoryless path of the tracer.
pub fn main_slow_path(cp: &CodePaths, attr: Option<&Attributions>) -> Option<MainSlowPath> {
    // A costlier path on another's lattice (every 18th sub-buffer switch dearer than the rest)
    // is that path's calls on some of its slots: the tracer's period is the other's.
    let own = |p: &&crate::analysis::code_paths::PeriodicPath| !cp.periodic.iter().any(|q| p.lies_on(q));
    if let Some(p) = cp.periodic.iter().filter(own).max_by(|x, y| x.extra.total_cmp(&y.extra)) {
        let share = p.taken as f64 / cp.rows.max(1) as f64;
        return Some(MainSlowPath { mean_period: p.mean_period(), extra: p.extra, share });
    }
    let irregular = cp
        .irregular
        .iter()
        .enumerate()
        .filter(|(i, p)| !p.is_phase() && p.delta > 0.0 && !attr.is_some_and(|a| a.not_tracers(*i)))
        .filter_map(|(_, p)| {
            p.spacing.map(|s| MainSlowPath {
                mean_period: s.median,
                extra: p.delta,
                share: p.calls as f64 / cp.rows.max(1) as f64,
            })
        })
        .max_by(|x, y| x.extra.total_cmp(&y.extra));
    irregular.or_else(|| {
        attr?
            .bands
            .iter()
            .filter(|b| b.test.attribution == Attribution::Tracer)
            .map(|b| MainSlowPath {
                mean_period: cp.rows as f64 / b.calls.max(1) as f64,
                extra: b.extra,
                share: b.calls as f64 / cp.rows.max(1) as f64,
            })
            .max_by(|x, y| x.extra.total_cmp(&y.extra))
    })
}
