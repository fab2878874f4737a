//! Bootstrap confidence intervals, for the regression gate.
//!
//! Resampling is done over *repetitions* (one value per process run), never over the
//! iterations of one process: those are not independent (Kalibera & Jones 2013).

/// A small, fast, seedable PRNG (SplitMix64) so that a gate's verdict is reproducible.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
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
    let point = stat(b) / stat(a) - 1.0;
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
            stat(&rb) / stat(&ra) - 1.0
        })
        .collect();
    out.sort_by(|x, y| x.total_cmp(y));
    let alpha = (1.0 - confidence) / 2.0;
    (point, super::percentile_sorted(&out, alpha * 100.0), super::percentile_sorted(&out, (1.0 - alpha) * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

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
