//! A tracer level locked to a periodic path's phase: its segments start at a fixed lag after
//! the path's calls, and the calls folded on the path's period show how many calls it lasts.
use serde::Serialize;

use super::{DatedSegment, Side};
use crate::analysis::stretch::Profile;
use crate::decisions::dated::{LOCKED_SHARE, MIN_SEGMENTS};
use crate::decisions::phases::WINDOW;

/// "~300 slower calls after each switch, every 810 events".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PathLock {
    pub period: u64,
    /// Calls from the path's call to the level's first.
    pub lag_calls: u64,
    /// Calls the level lasts in each period.
    pub length_calls: u64,
    /// Its mean cost over the rest of the period's (ns).
    pub extra_ns: f64,
    /// The level's segments that start at that phase.
    pub segments: usize,
}

/// The first path whose phase the `side` segments keep, with the lag and length of the level
/// read from the calls folded on its period.
pub(super) fn find(
    side: Side,
    segs: &[DatedSegment],
    fold_calls: impl Fn(u64, u64) -> Profile,
    base: f64,
    level: f64,
    paths: &[(u64, u64)],
) -> Option<PathLock> {
    let starts: Vec<u64> = segs.iter().filter(|s| s.side == side).map(|s| s.start_iteration).collect();
    if starts.len() < MIN_SEGMENTS {
        return None;
    }
    paths.iter().find_map(|&(period, residue)| {
        if period < 4 * WINDOW {
            return None;
        }
        // Signed lag of each start after the path's call; window edges blur it by a window.
        let near = starts
            .iter()
            .filter(|&&s| {
                let lag = (s + period - residue % period) % period;
                lag <= 2 * WINDOW || lag + 2 * WINDOW >= period
            })
            .count();
        if (near as f64) < LOCKED_SHARE * starts.len() as f64 {
            return None;
        }
        let (lag, length, extra) = fold(&fold_calls(period, residue), period, side, 0.5 * (level - base))?;
        Some(PathLock { period, lag_calls: lag, length_calls: length, extra_ns: extra, segments: near })
    })
}

/// Calls folded on the period from the path's call (the periodic path's own fold, pass 3's
/// `Profile`: the same bins, read here for a level): the first run of bins, starting in the
/// first eighth of the period, whose mean is past half the level's shift from the typical bin.
fn fold(profile: &Profile, period: u64, side: Side, half: f64) -> Option<(u64, u64, f64)> {
    let (sum, n, b) = (&profile.sum, &profile.n, profile.n.len());
    let mean: Vec<f64> = (0..b).map(|k| if n[k] > 0 { sum[k] / n[k] as f64 } else { f64::NAN }).collect();
    let typical = crate::stats::median(&mean.iter().copied().filter(|m| m.is_finite()).collect::<Vec<_>>());
    let past = |k: usize| match side {
        Side::Below => mean[k] < typical + half,
        _ => mean[k] > typical + half,
    };
    let first = (0..b.div_ceil(8)).find(|&k| past(k))?;
    let run = (first..b).take_while(|&k| past(k)).count();
    let (s, c) = (first..first + run).fold((0.0, 0u64), |a, k| (a.0 + sum[k], a.1 + n[k]));
    let calls_of = |bins: usize| (bins as u64 * period).div_ceil(b as u64);
    Some((calls_of(first), calls_of(run), s / c.max(1) as f64 - typical))
}
