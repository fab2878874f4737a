//! A tracer's slower stretch locked to a periodic path: after LTTng's sub-buffer
//! switch the next few hundred calls find a cold buffer. The calls are folded on the path's
//! period, counted from the path's own call, and the mean cost of each stretch of the period is
//! compared with the period's typical one: a slower stretch right after the path, in every
//! period, comes with the path (the machine's speed does not keep time with the tracer's buffer).
//! Folding is pass 3 (passes.rs); this is the profile and its reading.
use crate::decisions::phases::{STRETCH_BINS, STRETCH_SE};

/// Sums of one period folded into bins (the path's own calls left out), twice: every other call
/// counted at most at the path's cut (`sum`: what a stretch costs, one as costly as the path
/// included), and at most at the slow threshold (`low`: where the stretch lies). An outlier
/// counted at the cut, a call of another path every hundred calls at +2 us, swells its bin's
/// variance so that a stretch of +80 ns fails its test part-way; at the threshold it weighs no
/// more than a stretch's call.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub sum: Vec<f64>,
    pub low: Vec<f64>,
    pub low2: Vec<f64>,
    pub n: Vec<u64>,
}

/// The stretch: calls after the path's, their extra cost over the rest of the period.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    pub calls: u64,
    pub extra: f64,
}

impl Profile {
    pub fn new(period: u64) -> Self {
        let b = STRETCH_BINS.min(period).max(1) as usize;
        Profile { sum: vec![0.0; b], low: vec![0.0; b], low2: vec![0.0; b], n: vec![0; b] }
    }
    /// A call `offset` calls after the path's own (0..period), counted at most at the path's
    /// cut (`at_cut`) and at most at the slow threshold (`at_threshold`).
    pub fn add(&mut self, offset: u64, period: u64, at_cut: f64, at_threshold: f64) {
        let b = (offset * self.n.len() as u64 / period.max(1)) as usize;
        self.sum[b] += at_cut;
        self.low[b] += at_threshold;
        self.low2[b] += at_threshold * at_threshold;
        self.n[b] += 1;
    }

    /// The slower stretch that starts with the path, if any: bins from the first on whose mean
    /// stands above the typical bin's by STRETCH_SE standard errors, contiguous, ending at most a
    /// quarter of the way into the period's second half. The typical bin is the median of the
    /// second half's: a stretch takes up to half the period with the path's own call (so the
    /// median of every bin would be one of the stretch's), and one that reaches a quarter of the
    /// way into the second half still leaves that median among the bins after it.
    pub fn stretch(&self, period: u64) -> Option<Stretch> {
        let b = self.n.len();
        let typical_of = |sum: &[f64]| {
            let mut sorted: Vec<f64> =
                (b / 2..b).filter(|&i| self.n[i] > 1).map(|i| sum[i] / self.n[i] as f64).collect();
            sorted.sort_by(f64::total_cmp);
            (sorted.len() >= 4).then(|| sorted[sorted.len() / 2])
        };
        // Where the stretch lies, from the sums at the threshold.
        let mean: Vec<f64> = (0..b).map(|i| self.low[i] / self.n[i].max(1) as f64).collect();
        let typical = typical_of(&self.low)?;
        let up = |i: usize| {
            let n = self.n[i] as f64;
            if n < 2.0 {
                return false;
            }
            let var = (self.low2[i] - self.low[i] * self.low[i] / n) / (n - 1.0);
            mean[i] - typical > STRETCH_SE * (var.max(0.0) / n).sqrt() && mean[i] > typical
        };
        // The path's own bin holds the path's call (left out) and the first calls after it; on a
        // period of at most STRETCH_BINS calls a bin is one call, so the first holds nothing
        // below the cut and the stretch starts at the second.
        let start = usize::from(self.n[0] < 2);
        let run = (start..b).take_while(|&i| up(i)).count();
        if run == 0 || start + run > b / 2 + (b - b / 2) / 4 {
            return None;
        }
        let bins = start..start + run;
        let over = |sum: &[f64], typical: f64| {
            let (s, n) = bins.clone().fold((0.0, 0u64), |a, i| (a.0 + sum[i], a.1 + self.n[i]));
            s / n.max(1) as f64 - typical
        };
        let low_extra = over(&self.low, typical);
        // The stretch ends inside the bin after the run when that bin holds some of its calls:
        // its share of the bin is how far the bin's mean stands from the typical bin towards the
        // stretch's (a bin of several calls is half slow when the stretch ends half-way in it).
        let end = start + run;
        let part = if end < b && self.n[end] > 0 && low_extra > 0.0 {
            ((mean[end] - typical) / low_extra).clamp(0.0, 1.0)
        } else {
            0.0
        };
        // What it costs, from the sums at the cut.
        let extra = over(&self.sum, typical_of(&self.sum)?);
        // Bin k holds the offsets from ceil(k * period / b) on.
        let first_of = |k: usize| (k as u64 * period).div_ceil(b as u64);
        let calls = first_of(end) + (part * (first_of(end + 1) - first_of(end)) as f64).round() as u64;
        Some(Stretch { calls, extra })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path every 35 calls whose next 14 calls cost +80 ns: with bins of one call, the path's own
    /// bin holds nothing below its cut, and the stretch is still found from the next bin on.
    #[test]
    fn a_stretch_after_a_short_period_is_found() {
        let mut p = Profile::new(35);
        for k in 0..100u64 {
            for off in 1..35u64 {
                let v = if off <= 14 { 230.0 } else { 150.0 } + (k * 7 + off * 3) as f64 % 5.0;
                p.add(off, 35, v, v);
            }
        }
        let s = p.stretch(35).expect("a stretch");
        assert_eq!(s.calls, 15, "{s:?}");
        assert!((s.extra - 80.0).abs() < 3.0, "{s:?}");
    }

    /// A stretch over 49 of a period of 100 calls, the other calls' cost varying with their
    /// offset: the median of every bin would sit at the stretch's edge, among the costliest of
    /// the other bins, so the typical bin is read in the period's second half.
    #[test]
    fn a_stretch_over_nearly_half_the_period_is_found_to_its_call() {
        let mut p = Profile::new(100);
        for k in 0..60u64 {
            for off in 1..100u64 {
                let v = if off <= 49 { 230.0 } else { 150.0 + (off * 37 % 41) as f64 } + (k * 7) as f64 % 5.0;
                p.add(off, 100, v, v);
            }
        }
        let s = p.stretch(100).expect("a stretch");
        assert!((49..=51).contains(&s.calls), "{s:?}");
        assert!((s.extra - 60.0).abs() < 6.0, "{s:?}");
    }

    /// A generator of folds: a path every 27 to 40 calls whose next 5 or more calls (less than half
    /// the period, as a stretch is read) cost +60 to
    /// +100 ns, beside another path's calls at +2 us that land on 1 call in 30 to 1 in 80 at
    /// random (counted at the cut, +1.9 us, and at the slow threshold, +35 ns). The stretch is
    /// found to its end, not cut short where one of those calls swells a bin's variance.
    #[test]
    fn a_stretch_beside_another_path_s_costly_calls_is_found_whole() {
        let mut rng = crate::stats::rng::XorShift64Star(0x5EED_0F_57E7C4);
        let mut rnd = || rng.next();
        for run in 0..20 {
            let period = 27 + rnd() % 14;
            let len = 5 + rnd() % (period / 2 - 6);
            let extra = 60.0 + (rnd() % 40) as f64;
            let every = 30 + rnd() % 50;
            let mut p = Profile::new(period);
            for _ in 0..75 {
                for off in 1..period {
                    let v = 170.0 + (rnd() % 2) as f64 * 10.0 + if off <= len { extra } else { 0.0 };
                    let (cut, low) = if rnd() % every == 0 { (2070.0, 205.0) } else { (v, v.min(205.0)) };
                    p.add(off, period, cut, low);
                }
            }
            let s = p.stretch(period);
            assert!(
                s.as_ref().is_some_and(|s| s.calls.abs_diff(len + 1) <= 1),
                "run {run}: {len} calls at +{extra} after every {period}th, another path on 1 in {every}: {s:?}"
            );
        }
    }

    /// A generator of folds: a path every 20 to 64 calls (one call a bin) whose next P/4 to P/2
    /// calls cost +40 to +200 ns, so that with the path's own call the slower calls reach just
    /// past the period's first half. The stretch is found to its end.
    #[test]
    fn a_stretch_to_half_the_period_after_the_path_s_call_is_found() {
        let mut rng = crate::stats::rng::XorShift64Star(0x5EED_4A1F);
        let mut rnd = || rng.next();
        for run in 0..20 {
            let period = 20 + rnd() % 45;
            let len = period / 4 + rnd() % (period / 2 - period / 4 + 1);
            let extra = 40.0 + (rnd() % 160) as f64;
            let mut p = Profile::new(period);
            for _ in 0..40 {
                for off in 1..period {
                    let v = 200.0 + (rnd() % 20) as f64 + if off <= len { extra } else { 0.0 };
                    p.add(off, period, v, v);
                }
            }
            let s = p.stretch(period);
            assert!(
                s.as_ref().is_some_and(|s| s.calls.abs_diff(len + 1) <= 1),
                "run {run}: {len} calls at +{extra} after every {period}th: {s:?}"
            );
        }
    }
}
