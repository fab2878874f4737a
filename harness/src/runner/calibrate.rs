//! The clock's own cost, measured before the cells run: the empty window (the floor every
//! latency includes; survey 6.2.2) and the clock's resolution, on the first measuring CPU.
pub use crate::clock::Floor;
use crate::clock::{self, Clock, ClockInfo, ClockKind, Monotonic, Tsc};
use crate::disturbance::Detector;
use crate::error::Error;
use crate::stats;

fn empty_windows<C: Clock>(clock: &C, det: &Detector, n: usize, hz: f64) -> (Vec<f64>, usize) {
    let mut v = Vec::with_capacity(n);
    let mut discarded = 0;
    for _ in 0..n * 4 {
        if v.len() == n {
            break;
        }
        let h0 = det.head();
        let t0 = clock.start();
        let t1 = clock.end();
        if det.head() == h0 {
            v.push(t1.wrapping_sub(t0) as f64 * 1e9 / hz);
        } else {
            discarded += 1;
        }
    }
    (v, discarded)
}

/// Calibrates the clock and measures its floor on `cpu`, in a thread of its own so that the
/// parent's own affinity (which children inherit) is untouched.
pub fn measure_clock(kind: ClockKind, cpu: usize) -> Result<(ClockInfo, Floor), Error> {
    std::thread::spawn(move || {
        super::affinity::pin(cpu)?;
        let info = clock::describe(kind);
        let mut det = Detector::open()?;
        let (mut v, discarded) = match kind {
            ClockKind::Tsc => empty_windows(&Tsc, &det, 20_000, info.hz),
            ClockKind::Monotonic => empty_windows(&Monotonic, &det, 20_000, info.hz),
        };
        let h = det.head();
        det.consume(h);
        let s = stats::summarize(&mut v);
        let weak = det.sources.weak.clone();
        Ok((
            info,
            Floor { samples: s.n, discarded, median_ns: s.p50, mean_ns: s.mean, std_ns: s.std, min_ns: s.min, weak },
        ))
    })
    .join()
    .map_err(|_| Error::Measurement("clock calibration thread panicked".into()))?
}
