//! Bootstrap confidence intervals, for the regression gate.
//!
//! Resampling is done over *repetitions* (one value per process run), never over the
//! iterations of one process: those are not independent (Kalibera & Jones 2013).

/// The resamples' generator (in `stats::rng`, with the others), so that a gate's verdict is reproducible.
pub use super::rng::SplitMix64;

/// Percentile bootstrap interval of a two-sample statistic `stat(a, b)`, where `a` and `b` are
/// per-repetition values, each resampled with replacement independently. Returns (point
/// estimate, low, high).
pub fn two_sample_ci(
    a: &[f64],
    b: &[f64],
    stat: &dyn Fn(&[f64], &[f64]) -> f64,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64, f64) {
    let point = stat(a, b);
    let mut rng = SplitMix64(seed);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut out: Vec<f64> = (0..resamples)
        .map(|_| {
            for v in ra.iter_mut() {
                *v = a[rng.below(a.len())];
            }
            for v in rb.iter_mut() {
                *v = b[rng.below(b.len())];
            }
            stat(&ra, &rb)
        })
        .collect();
    out.sort_by(|x, y| x.total_cmp(y));
    let alpha = (1.0 - confidence) / 2.0;
    (point, super::percentile_sorted(&out, alpha * 100.0), super::percentile_sorted(&out, (1.0 - alpha) * 100.0))
}

/// Percentile bootstrap interval of a one-sample statistic (e.g. the median of paired ratios).
/// Returns (point estimate, low, high).
pub fn one_sample_ci(
    x: &[f64],
    stat: fn(&[f64]) -> f64,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64, f64) {
    two_sample_ci(x, &[], &|a, _| stat(a), confidence, resamples, seed)
}

/// Percentile bootstrap interval of `stat(b) / stat(a) - 1` where `a` and `b` are per-repetition
/// values, each resampled with replacement. Returns (point estimate, low, high).
pub fn ratio_ci(
    a: &[f64],
    b: &[f64],
    stat: fn(&[f64]) -> f64,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64, f64) {
    two_sample_ci(a, b, &|a, b| stat(b) / stat(a) - 1.0, confidence, resamples, seed)
}

/// Hodges-Lehmann estimate of the relative change from `a` to `b`: `exp(median(ln b_j - ln a_i))
/// - 1` over all pairs (i, j). A robust two-sample shift estimator (breakdown point about 29%)
/// that, unlike the ratio of two medians, moves smoothly when a resample happens to draw several
/// burst-slowed repetitions, so its bootstrap interval stays tight under burst noise.
pub fn hodges_lehmann_ratio(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return f64::NAN;
    }
    let mut d: Vec<f64> = Vec::with_capacity(a.len() * b.len());
    for &y in b {
        for &x in a {
            d.push(y.ln() - x.ln());
        }
    }
    d.sort_by(|x, y| x.total_cmp(y));
    super::percentile_sorted(&d, 50.0).exp() - 1.0
}

/// How many repetitions per side would shrink an interval side of width `width_now`, measured
/// with `n` repetitions per side, to `width_wanted`, assuming the usual `1/sqrt(n)` shrinkage of
/// a bootstrap interval. `None` when no finite number would do (`width_wanted <= 0`: the point
/// estimate sits on the boundary). This is the experiment-dimensioning step that Kalibera &
/// Jones (2013) recommend instead of guessing a repetition count: it is an estimate, good
/// to within the noise of the current interval, so callers should round it up generously.
pub fn repetitions_for_width(n: usize, width_now: f64, width_wanted: f64) -> Option<usize> {
    if !(width_wanted > 0.0) || !width_now.is_finite() || n == 0 {
        return None;
    }
    let k = n as f64 * (width_now / width_wanted).powi(2);
    (k.is_finite() && k < 1e9).then(|| (k.ceil() as usize).max(n + 1))
}

#[cfg(test)]
mod tests {
    #[test]
    fn splitmix64_is_the_reference_generator() {
        // The published SplitMix64 outputs for seed 0 (Steele, Lea & Flood 2014; Vigna's C code).
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn repetitions_for_width_follows_one_over_sqrt_n_and_gives_up_when_absurd() {
        // Halving an interval side takes four times the repetitions.
        assert_eq!(repetitions_for_width(10, 0.2, 0.1), Some(40));
        // Already narrow enough: still one more than now.
        assert_eq!(repetitions_for_width(10, 0.05, 0.1), Some(11));
        // A billion repetitions or more is no answer.
        assert_eq!(repetitions_for_width(10, 1.0, 1e-6), None);
        assert_eq!(repetitions_for_width(10, 1.0, 0.0), None);
        assert_eq!(repetitions_for_width(10, f64::INFINITY, 0.1), None);
        assert_eq!(repetitions_for_width(0, 0.2, 0.1), None);
    }

    use super::*;

    #[test]
    fn hodges_lehmann_of_a_pure_scale_change() {
        let a = [100.0, 102.0, 98.0, 101.0];
        let b: Vec<f64> = a.iter().map(|v| v * 1.07).collect();
        assert!((hodges_lehmann_ratio(&a, &b) - 0.07).abs() < 1e-12);
        assert!(hodges_lehmann_ratio(&[], &b).is_nan());
        // One wild value on one side barely moves it.
        let mut c = b.clone();
        c[0] *= 1.5;
        assert!((hodges_lehmann_ratio(&a, &c) - 0.07).abs() < 0.02);
    }

    #[test]
    fn repetitions_scale_with_the_square_of_the_width() {
        // Halving the width needs four times the repetitions.
        assert_eq!(repetitions_for_width(10, 0.04, 0.02), Some(40));
        // Always at least one more than now, since the interval did not settle with n.
        assert_eq!(repetitions_for_width(10, 0.01, 0.02), Some(11));
        assert_eq!(repetitions_for_width(10, 0.04, 0.0), None);
        assert_eq!(repetitions_for_width(10, 0.04, -0.01), None);
    }

    #[test]
    fn identical_samples_give_a_zero_ratio() {
        let a = [10.0, 11.0, 9.0, 10.5, 10.2];
        let (p, lo, hi) = ratio_ci(&a, &a, crate::stats::median, 0.99, 2000, 1);
        assert_eq!(p, 0.0);
        assert!(lo < 0.0 && hi > 0.0);
    }

    #[test]
    fn a_clear_shift_excludes_zero() {
        let a = [100.0, 101.0, 99.0, 100.5, 100.2, 99.8, 100.1, 100.4];
        let b: Vec<f64> = a.iter().map(|v| v * 1.10).collect();
        let (p, lo, hi) = ratio_ci(&a, &b, crate::stats::median, 0.99, 2000, 7);
        assert!((p - 0.10).abs() < 1e-9);
        assert!(lo > 0.08 && hi < 0.12, "{lo} {hi}");
    }
}
