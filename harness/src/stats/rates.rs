//! Two event rates per unit of exposure (events per nanosecond of window time): the test of
//! whether the first is higher, and an interval for their ratio. Conditional on the total
//! count n = n1 + n2, two Poisson counts split as Binomial(n, e1 R / (e1 R + e2)) with R the
//! ratio of the rates; the one-sided p-value and the Clopper-Pearson interval of that binomial
//! give both (exact, however small the counts).
use crate::stats::binomial::{at_most, upper_tail};

/// The comparison of `n1` events in exposure `e1` with `n2` in `e2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateRatio {
    /// P(at least n1 of the n events fall on the first side) when the rates are equal.
    pub p_more: f64,
    /// The interval of rate1 / rate2 at the confidence asked (hi is infinite when n2 = 0).
    pub lo: f64,
    pub hi: f64,
}

/// The p at which `f(p)` (increasing in p) crosses `target`, by bisection on (0, 1).
fn solve(target: f64, f: impl Fn(f64) -> f64) -> f64 {
    let (mut a, mut b) = (0.0f64, 1.0f64);
    for _ in 0..80 {
        let m = 0.5 * (a + b);
        if f(m) < target {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

/// `n1` events in exposure `e1` against `n2` in `e2` (both exposures positive), at confidence
/// `conf` (two-sided).
pub fn compare(n1: u64, e1: f64, n2: u64, e2: f64, conf: f64) -> RateRatio {
    let n = n1 + n2;
    if n == 0 || e1 <= 0.0 || e2 <= 0.0 {
        return RateRatio { p_more: 1.0, lo: 0.0, hi: f64::INFINITY };
    }
    let p0 = e1 / (e1 + e2);
    let p_more = upper_tail(n, n1, p0);
    let a = (1.0 - conf) / 2.0;
    // Clopper-Pearson: the share of the events on the first side.
    let s_lo = if n1 == 0 { 0.0 } else { solve(a, |p| upper_tail(n, n1, p)) };
    let s_hi = if n1 == n { 1.0 } else { solve(1.0 - a, |p| 1.0 - at_most(n, n1, p)) };
    let ratio = |s: f64| if s >= 1.0 { f64::INFINITY } else { s / (1.0 - s) * e2 / e1 };
    RateRatio { p_more, lo: ratio(s_lo), hi: ratio(s_hi) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::XorShift64 as Rng;

    /// A Poisson draw by counting exponential gaps (means here are small).
    fn poisson(rng: &mut Rng, mean: f64) -> u64 {
        let (mut t, mut k) = (0.0, 0u64);
        loop {
            t += -(1.0 - rng.unit()).ln();
            if t > mean {
                return k;
            }
            k += 1;
        }
    }

    #[test]
    fn equal_rates_are_called_higher_at_most_at_the_level_asked() {
        // A seeded null battery: equal rates, exposures 1:1 and 2:1, means 5 and 40.
        let mut rng = Rng(7);
        for (m1, m2) in [(5.0, 5.0), (40.0, 20.0), (2.0, 1.0)] {
            let runs = 4000;
            let mut below_01 = 0;
            let mut covered = 0;
            for _ in 0..runs {
                let (n1, n2) = (poisson(&mut rng, m1), poisson(&mut rng, m2));
                let r = compare(n1, m1, n2, m2, 0.99);
                below_01 += (r.p_more < 0.01) as u32;
                covered += (r.lo <= 1.0 && 1.0 <= r.hi) as u32;
            }
            assert!(
                below_01 as f64 <= 0.01 * runs as f64 * 1.3 + 5.0,
                "means {m1}/{m2}: {below_01} of {runs} below 0.01"
            );
            assert!(
                covered as f64 >= 0.99 * runs as f64 - 15.0,
                "means {m1}/{m2}: 99% interval covered {covered} of {runs}"
            );
        }
    }

    #[test]
    fn a_rate_ten_times_higher_is_told() {
        // 60 events against an expected 6 on the other side, none seen there.
        let r = compare(60, 1.0, 0, 1.0, 0.99);
        assert!(r.p_more < 1e-15, "{r:?}");
        assert!(r.lo > 5.0 && r.hi.is_infinite(), "{r:?}");
        // Equal counts in equal exposure: the interval holds 1 and is bounded.
        let r = compare(50, 1.0, 50, 1.0, 0.99);
        assert!(r.lo < 1.0 && r.hi > 1.0 && r.hi < 2.0, "{r:?}");
        assert!((0.4..0.6).contains(&r.p_more), "{r:?}");
    }
}
