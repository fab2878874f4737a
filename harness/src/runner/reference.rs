//! Reference windows: a loop as long as the tracer's fast path, timed with the same
//! window code every K-th window (`--reference-every K`), so that they feel what the tracer's calls
//! feel from the machine, at the same rate per nanosecond: stalls no guest event shows (on the
//! VM this was written on, +2 us about once per 70 us of window time, so a 150 ns call is hit ten
//! times as often as a 15 ns empty one), and speed phases (a dependent multiply chain slows with
//! the core, where a spin on the clock would not). The report holds each slow population of the
//! tracer against the reference windows at the same extra cost (`analysis::attribution`): more of
//! them than the machine gives is the tracer's; as many is the machine's.
//!
//! Kept windows go into a histogram (16 bins per octave of clock ticks), not rows: an increment
//! in a 4 KiB array that stays in L1, so the references add no store stream of their own to the
//! harness's footprint (docs/method.md). `reference.csv` holds the bins.
use std::sync::atomic::{AtomicU64, Ordering};

use tracebench_tracers::Tracer;

/// `--reference-every`'s default: every other window is a reference window. A population of 20
/// slow calls (0.1 % of 20,000) with none among as much reference time has a chance of 2^-20
/// under the machine's rate: enough to tell, at the cost of twice the windows (milliseconds
/// beside a run's fixed cost, docs/method.md).
pub const DEFAULT_REFERENCE_EVERY: u64 = 2;

pub use crate::stats::tick_bins::{bin, lo, BINS};

/// The reference loop: `iterations` steps of a dependent multiply-add chain. Set after warm-up
/// (`calibrate`) so that its window lasts what the tracer's fast path lasts.
#[derive(Default)]
pub struct ReferenceLoop {
    iterations: AtomicU64,
}

impl ReferenceLoop {
    pub fn iterations(&self) -> u64 {
        self.iterations.load(Ordering::Relaxed)
    }
    pub fn set(&self, n: u64) {
        self.iterations.store(n, Ordering::Relaxed);
    }
}

impl Tracer for ReferenceLoop {
    fn name(&self) -> &str {
        "reference"
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").into()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({"kind": "reference loop", "iterations": self.iterations()})
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        let n = self.iterations.load(Ordering::Relaxed);
        let mut x = payload as u64 | 1;
        for _ in 0..n {
            // One multiply and one add per step, each waiting for the last: a chain the core
            // cannot overlap, so its time follows the core's speed.
            x = core::hint::black_box(x.wrapping_mul(0x5851_F42D_4C95_7F2D).wrapping_add(0x1405_7B7E_F767_814F));
        }
        core::hint::black_box(x);
    }
}

/// The loop length that makes a reference window last `target` ticks, from the medians of
/// windows at 0 and at `probe` iterations (`time(n)`: the median ticks of windows at n).
pub fn calibrate(target: u64, reference: &ReferenceLoop, mut time: impl FnMut(u64) -> Option<u64>) -> u64 {
    const PROBE: u64 = 256;
    let (Some(t0), Some(t1)) = (time(0), time(PROBE)) else { return 0 };
    if target <= t0 || t1 <= t0 {
        reference.set(0);
        return 0;
    }
    let per = (t1 - t0) as f64 / PROBE as f64;
    let mut n = ((target - t0) as f64 / per).round().clamp(0.0, 1e8) as u64;
    // Once more at the estimate: the step's cost is not quite linear at small counts.
    if let Some(tn) = time(n).filter(|&tn| tn > t0 && n > 0) {
        n = (n as f64 * (target - t0) as f64 / (tn - t0) as f64).round().clamp(0.0, 1e8) as u64;
    }
    reference.set(n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_scales_the_loop_to_the_target() {
        let r = ReferenceLoop::default();
        // A loop of 2 ticks per step over a 40-tick window.
        let n = calibrate(440, &r, |n| Some(40 + 2 * n));
        assert_eq!(n, 200);
        assert_eq!(r.iterations(), 200);
        // A tracer no slower than the empty window: no loop.
        assert_eq!(calibrate(30, &r, |n| Some(40 + 2 * n)), 0);
    }
}
