//! When measurement may start (survey section 6.2.4).
//!
//! The survey's criterion is that "the amount of trace data is equal to the size of the
//! tracers' internal buffers", so every buffer location has been touched and every code path
//! (including the sub-buffer switch) has run. We require that, and one more thing the survey
//! assumes but does not check: that the latency has stopped drifting (caches, TLB, branch
//! predictors, lazily initialised tracer state, frequency ramp-up).
//!
//! The criterion, in order:
//! 1. **Wrap.** `max(buffer_events + 1, MIN_CALLS)` untimed calls, so the buffer has wrapped at
//!    least once (the backend declares `buffer_events`).
//! 2. **Drift.** Then timed windows of `WINDOW` undisturbed calls (the same loop as the
//!    measurement, with disturbance discards). The state is steady when the last `STABLE`
//!    windows agree: their medians differ by at most `max(TOLERANCE x median, 1.5 x clock
//!    resolution)` and so do their 10%-trimmed means (the mean sees slow paths the median hides).
//! 3. **Bound.** After `MAX_WINDOWS` windows the run goes on anyway and run.json says
//!    `steady: false`, with the drift it saw, so no run hangs on a noisy machine.

/// Calls below which no warm-up stops, whatever the buffer size.
pub const MIN_CALLS: u64 = 1000;
/// Calls per drift window.
pub const WINDOW: usize = 500;
/// Consecutive agreeing windows.
pub const STABLE: usize = 3;
/// Relative tolerance between windows.
pub const TOLERANCE: f64 = 0.05;
/// Windows after which we give up waiting.
pub const MAX_WINDOWS: usize = 60;

/// Untimed calls needed for the buffer to wrap at least once.
pub fn wrap_calls(buffer_events: u64) -> u64 {
    buffer_events.saturating_add(1).max(MIN_CALLS)
}

/// One drift window's statistics, in ns.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct DriftWindow {
    pub median: f64,
    pub trimmed_mean: f64,
}

impl DriftWindow {
    /// From a window's latencies (sorted in place).
    pub fn of(lat: &mut [f64]) -> DriftWindow {
        lat.sort_by(|a, b| a.total_cmp(b));
        let n = lat.len();
        let trim = n / 10;
        let mid = &lat[..n - trim];
        DriftWindow {
            median: crate::stats::percentile_sorted(lat, 50.0),
            trimmed_mean: if mid.is_empty() { f64::NAN } else { crate::stats::mean(mid) },
        }
    }
}

/// Whether the last [`STABLE`] windows agree.
pub fn is_steady(windows: &[DriftWindow], resolution_ns: f64) -> bool {
    if windows.len() < STABLE {
        return false;
    }
    let last = &windows[windows.len() - STABLE..];
    let agree = |f: fn(&DriftWindow) -> f64| {
        let (lo, hi) = last.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
        let centre = (lo + hi) / 2.0;
        hi - lo <= (TOLERANCE * centre).max(1.5 * resolution_ns)
    };
    agree(|w| w.median) && agree(|w| w.trimmed_mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(m: f64) -> DriftWindow {
        DriftWindow { median: m, trimmed_mean: m }
    }

    #[test]
    fn wrap_covers_the_buffer() {
        assert_eq!(wrap_calls(0), MIN_CALLS);
        assert_eq!(wrap_calls(5000), 5001);
    }

    #[test]
    fn drifting_then_flat() {
        let ws = [w(300.0), w(200.0), w(150.0)];
        assert!(!is_steady(&ws, 10.0));
        let ws = [w(300.0), w(200.0), w(101.0), w(100.0), w(102.0)];
        assert!(is_steady(&ws, 10.0));
        assert!(!is_steady(&ws[..2], 10.0));
    }

    #[test]
    fn quantised_clock_is_tolerated() {
        // 20 vs 30 ns on a clock with 10 ns steps: one step is within 1.5 x resolution.
        assert!(is_steady(&[w(20.0), w(30.0), w(20.0)], 10.0));
        assert!(!is_steady(&[w(20.0), w(40.0), w(20.0)], 10.0));
    }

    #[test]
    fn trimmed_mean_ignores_the_top_decile() {
        let mut v: Vec<f64> = (0..100).map(|i| if i < 95 { 100.0 } else { 10_000.0 }).collect();
        let win = DriftWindow::of(&mut v);
        assert_eq!(win.median, 100.0);
        assert_eq!(win.trimmed_mean, 100.0);
    }
}
