//! The binomial distribution's upper tail, for tests of counts against a known rate.

/// P(X >= k) for X ~ Binomial(n, p): the terms from k up, each from the last by the ratio
/// (n - j) / (j + 1) * p / (1 - p), the first one in log space (no overflow at large n).
pub fn upper_tail(n: u64, k: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    // At or below the mean the upper tail is 1 minus the lower one, whose terms fall from k - 1
    // down (summed from the top, a first term that underflows cannot hide the tail's mass).
    if (k as f64) <= n as f64 * p {
        return (1.0 - lower_tail(n, k - 1, p)).clamp(0.0, 1.0);
    }
    let (ln_first, relative) = above_mean(n, k, p);
    (ln_first.exp() * relative).min(1.0)
}

/// ln P(X >= k) for X ~ Binomial(n, p), finite where [`upper_tail`] underflows to 0 (far
/// beyond the mean, at large n): tails compared with each other keep their order there.
pub fn ln_upper_tail(n: u64, k: u64, p: f64) -> f64 {
    if k == 0 || p >= 1.0 {
        return 0.0;
    }
    if k > n || p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if (k as f64) <= n as f64 * p {
        return upper_tail(n, k, p).ln();
    }
    let (ln_first, relative) = above_mean(n, k, p);
    (ln_first + relative.ln()).min(0.0)
}

/// The upper tail from k, k above the mean n p, as ln of its first term P(X = k) and the sum
/// of the terms relative to that first one: the terms fall from k up, so the sum is summed from
/// its largest term, and kept apart from the first term's scale, which underflows far out.
fn above_mean(n: u64, k: u64, p: f64) -> (f64, f64) {
    let ln_first: f64 = (1..=k).map(|i| ((n - k + i) as f64).ln() - (i as f64).ln()).sum::<f64>()
        + k as f64 * p.ln()
        + (n - k) as f64 * (1.0 - p).ln();
    let (mut term, mut sum) = (1.0f64, 0.0f64);
    let odds = p / (1.0 - p);
    for j in k..=n {
        sum += term;
        // Past the mode the terms fall at least geometrically: stop once they no longer count.
        if term < sum * 1e-17 && (j as f64) > n as f64 * p {
            break;
        }
        term *= (n - j) as f64 / (j + 1) as f64 * odds;
    }
    (ln_first, sum)
}

/// P(X <= k) for X ~ Binomial(n, p), any k: one minus the upper tail above it.
pub fn at_most(n: u64, k: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    1.0 - upper_tail(n, k + 1, p)
}

/// P(X <= m) for X ~ Binomial(n, p), m at or below the mean: the terms from m down.
fn lower_tail(n: u64, m: u64, p: f64) -> f64 {
    let ln_first: f64 = (1..=m).map(|i| ((n - m + i) as f64).ln() - (i as f64).ln()).sum::<f64>()
        + m as f64 * p.ln()
        + (n - m) as f64 * (1.0 - p).ln();
    let (mut term, mut sum) = (ln_first.exp(), 0.0);
    let odds = (1.0 - p) / p;
    for j in (0..=m).rev() {
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
        // P(X = j - 1) from P(X = j).
        term *= j as f64 / (n - j + 1) as f64 * odds;
    }
    sum.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::upper_tail;

    #[test]
    fn a_tail_from_below_the_mean_is_near_one_at_large_n() {
        // The first term, P(X = 20) of Binomial(2907, 0.5), underflows: the tail is still ~1.
        assert!(upper_tail(2907, 20, 0.5) > 0.999_999);
        assert!((upper_tail(100, 50, 0.5) - 0.539_794_618).abs() < 1e-6);
    }

    #[test]
    fn matches_exact_values() {
        // P(X >= 2), n = 3, p = 0.5: (3 + 1) / 8.
        assert!((upper_tail(3, 2, 0.5) - 0.5).abs() < 1e-12);
        // P(X >= 1) = 1 - (1 - p)^n.
        assert!((upper_tail(10, 1, 0.1) - (1.0 - 0.9f64.powi(10))).abs() < 1e-12);
        assert_eq!(upper_tail(10, 0, 0.3), 1.0);
        assert_eq!(upper_tail(10, 11, 0.3), 0.0);
        // Large n: P(X >= 60) for Binomial(1000, 0.047) is well below 1e-2 and above 1e-4.
        let t = upper_tail(1000, 75, 0.047);
        assert!(t > 1e-6 && t < 1e-2, "{t}");
    }

    #[test]
    fn sums_to_one_with_the_lower_part() {
        let (n, p) = (200u64, 0.03);
        let pmf = |j: u64| upper_tail(n, j, p) - upper_tail(n, j + 1, p);
        let total: f64 = (0..=n).map(pmf).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
    }
}
