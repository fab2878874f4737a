//! The calls of a row's sequences as the dated segments read them: window means, and folds on a
//! path's period.
use std::collections::BTreeMap;

use super::{Call, SeqKey};
use crate::analysis::stretch::Profile;
// Iterations per window, and the share of them kept for a window to have a mean: the speed
// phases' windows (64 calls average out the clock's 10 ns steps), so a level and a phase are
// seen through the same windows.
use crate::decisions::phases::{WINDOW, WINDOW_KEPT};

/// The calls of a row's sequences as the segments read them: their window means, and their
/// calls folded on a path's period. In memory (a map of calls), or streamed from events.csv
/// once for the windows and again only for a fold (tracer_row.rs), so that a long run is dated
/// in memory that does not grow with its calls.
pub trait CallSource {
    fn keys(&self) -> Vec<SeqKey>;
    /// The sequence's window means of its calls at or below `threshold`, and its last call's time.
    fn windows(&self, key: SeqKey, threshold: f64) -> (Vec<WindowMean>, u64);
    /// Its calls at or below `threshold`, folded on `period` from the path's call at `residue`.
    fn fold(&self, key: SeqKey, threshold: f64, period: u64, residue: u64) -> Profile;
}

impl CallSource for BTreeMap<SeqKey, Vec<Call>> {
    fn keys(&self) -> Vec<SeqKey> {
        self.keys().copied().collect()
    }
    fn windows(&self, key: SeqKey, threshold: f64) -> (Vec<WindowMean>, u64) {
        let calls = self.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let mut w = WindowScan::new(threshold);
        calls.iter().for_each(|c| w.add(c));
        (w.finish(), calls.last().map(|c| c.t_ns).unwrap_or(0))
    }
    fn fold(&self, key: SeqKey, threshold: f64, period: u64, residue: u64) -> Profile {
        let mut profile = Profile::new(period);
        for c in self.get(&key).into_iter().flatten() {
            fold_call(&mut profile, c, threshold, period, residue);
        }
        profile
    }
}

/// One call into a fold on `period` from `residue` (only the calls at or below the threshold).
pub fn fold_call(profile: &mut Profile, c: &Call, threshold: f64, period: u64, residue: u64) {
    if c.latency <= threshold {
        profile.add((c.iteration + period - residue % period) % period, period, c.latency, c.latency);
    }
}

/// One window mean: its first call's time and the iterations it covers.
#[derive(Debug, Clone, Copy)]
pub struct WindowMean {
    pub t_ns: u64,
    pub first: u64,
    pub end: u64,
    pub mean: f64,
}

/// Means of WINDOW-iteration windows with enough kept calls, from calls handed one by one in
/// iteration order.
pub struct WindowScan {
    threshold: f64,
    open: Option<(u64, WindowMean, f64, u64)>,
    out: Vec<WindowMean>,
}

impl WindowScan {
    pub fn new(threshold: f64) -> Self {
        WindowScan { threshold, open: None, out: Vec::new() }
    }

    pub fn add(&mut self, c: &Call) {
        // (NaN stays out, as a call above the threshold.)
        if !(c.latency <= self.threshold) {
            return;
        }
        let k = c.iteration / WINDOW;
        if self.open.as_ref().map(|o| o.0) != Some(k) {
            self.close();
            let w = WindowMean { t_ns: c.t_ns, first: c.iteration, end: c.iteration + 1, mean: 0.0 };
            self.open = Some((k, w, 0.0, 0));
        }
        if let Some(o) = self.open.as_mut() {
            o.1.end = c.iteration + 1;
            o.2 += c.latency;
            o.3 += 1;
        }
    }

    fn close(&mut self) {
        if let Some((_, w, sum, n)) = self.open.take().filter(|o| o.3 as f64 >= WINDOW_KEPT * WINDOW as f64) {
            self.out.push(WindowMean { mean: sum / n as f64, ..w });
        }
    }

    pub fn finish(mut self) -> Vec<WindowMean> {
        self.close();
        self.out
    }
}
