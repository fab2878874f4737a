//! Two clusters in a side's per-repetition values: each repetition is one process, and
//! a process whose threads share a core, or that was placed differently (another CPU, another
//! NUMA node, a buffer that straddles a page or cache-set boundary), can measure at a level of its
//! own. Then the values form two clusters (~26 ns or ~100 ns), the interval spans both, and "more
//! repetitions" is not the fix: the gate says so, with the clusters' values and shares. Pure.
//!
//! The test: the best split of the sorted values into a lower and an upper cluster (the one that
//! minimises the within-cluster sum of squares, 1-D k-means with k = 2) is called two clusters
//! when each holds at least [`MIN_SHARE`] of the values (and at least [`MIN_EACH`]), and Ashman's
//! D = sqrt(2) |m1 - m2| / sqrt(s1² + s2²) is at least [`MIN_D`] (D > 2 is the textbook line for a
//! clean separation; the split of unimodal noise reaches about 4, so the line is higher), the
//! empty gap between them is at least [`MIN_GAP`] times the larger cluster's standard deviation,
//! and the upper cluster's mean is at least [`MIN_RATIO`] times the lower's. Calibrated on seeded null batteries
//! (normal and log-normal noise, 10 to 64 repetitions) in the tests below: at most 1 in 2000.
use super::verdict::{ChangeVerdict, Judgement};

/// Fewest values a side needs before clusters are looked for: the 10 repetitions the guide
/// advises for a gate (four in each cluster at least, and a null battery that never fires).
pub const MIN_N: usize = 10;
/// Smallest share of the values in each cluster.
pub const MIN_SHARE: f64 = 0.2;
/// Fewest values in each cluster.
pub const MIN_EACH: usize = 4;
/// Smallest Ashman's D between the clusters.
pub const MIN_D: f64 = 12.0;
/// Smallest empty gap between the clusters (the upper's least value minus the lower's greatest),
/// in units of the larger cluster's standard deviation.
pub const MIN_GAP: f64 = 5.0;
/// Smallest ratio of the upper cluster's mean to the lower's.
pub const MIN_RATIO: f64 = 1.15;

/// Two clusters of per-repetition values.
#[derive(Debug, Clone, PartialEq)]
pub struct Clusters {
    pub low_mean: f64,
    pub high_mean: f64,
    pub low_n: usize,
    pub high_n: usize,
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (m, v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64)
}

/// The two clusters of `values`, when they form two (see the module doc).
pub fn clusters(values: &[f64]) -> Option<Clusters> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < MIN_N {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let lo_min = MIN_EACH.max((MIN_SHARE * n as f64).ceil() as usize);
    if 2 * lo_min > n {
        return None;
    }
    let sse = |s: &[f64]| mean_var(s).1 * s.len() as f64;
    let k = (lo_min..=n - lo_min)
        .min_by(|&a, &b| (sse(&v[..a]) + sse(&v[a..])).total_cmp(&(sse(&v[..b]) + sse(&v[b..]))))?;
    let ((m1, v1), (m2, v2)) = (mean_var(&v[..k]), mean_var(&v[k..]));
    let spread = (v1 + v2).sqrt();
    let d = if spread > 0.0 {
        2f64.sqrt() * (m2 - m1) / spread
    } else if m2 > m1 {
        f64::INFINITY
    } else {
        0.0
    };
    let gap = v[k] - v[k - 1];
    let gap_ok = gap >= MIN_GAP * v1.sqrt().max(v2.sqrt());
    (d >= MIN_D && gap_ok && m1 > 0.0 && m2 >= MIN_RATIO * m1).then_some(Clusters {
        low_mean: m1,
        high_mean: m2,
        low_n: k,
        high_n: n - k,
    })
}

/// One side's clusters in words.
fn said(side: &str, c: &Clusters) -> String {
    let n = (c.low_n + c.high_n) as f64;
    format!(
        "the {side}'s repetitions form two clusters, {:.1} ({:.0}% of processes) and {:.1} ({:.0}%)",
        c.low_mean,
        100.0 * c.low_n as f64 / n,
        c.high_mean,
        100.0 * c.high_n as f64 / n
    )
}

/// An inconclusive row whose side forms two clusters says so, with their values and shares and
/// the common causes, in place of only "more repetitions".
pub fn annotate(mut j: Judgement, base: &[(u64, f64)], cand: &[(u64, f64)], threshold: f64) -> Judgement {
    if j.verdict != ChangeVerdict::Inconclusive {
        return j;
    }
    let vals = |s: &[(u64, f64)]| s.iter().map(|p| p.1).collect::<Vec<_>>();
    let found: Vec<String> = [("baseline", clusters(&vals(base))), ("candidate", clusters(&vals(cand)))]
        .iter()
        .filter_map(|(side, c)| c.as_ref().map(|c| said(side, c)))
        .collect();
    if !found.is_empty() {
        // The count of repetitions that "would settle it" assumes one level per side; with two it
        // would only repeat the mix, so the reason is the interval alone.
        let interval = j.ci.map_or_else(|| j.why.clone(), |(lo, hi)| super::verdict::crossing(lo, hi, threshold));
        j.why = format!(
            "{}; {}: each process measured at one of two levels, so the result follows the mix of levels each side drew and more repetitions may only repeat it. Common \
             causes: threads sharing a core (SMT siblings, or more threads than free CPUs), placement that differs \
             per process (another CPU or NUMA node, a buffer at a different alignment); pin with --cpu, quiet the \
             CPUs (tracebench system tune), and check `tracebench system show --cpus LIST`",
            interval,
            found.join("; ")
        );
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*, uniform in (0, 1).
    struct Rng(crate::stats::rng::XorShift64Star);
    impl Rng {
        fn unit(&mut self) -> f64 {
            ((self.0.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            (-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
        }
    }

    /// Unimodal noise almost never fires: 2000 seeded batteries per shape and size, normal noise
    /// of 1% to 30% and log-normal (right-skewed, heavy-tailed) noise of sigma 0.1 to 0.5. At 10
    /// values, six near 80 and four near 140 drawn from one normal of 30% spread do happen (1 in
    /// 2000 here) and look like two levels to any test; the bound is at most 1 in 2000 per shape.
    #[test]
    fn null_batteries_of_unimodal_noise_never_fire() {
        let mut fired = Vec::new();
        for n in [10usize, 12, 16, 24, 32, 64] {
            for (shape, cv) in
                [("normal", 0.01), ("normal", 0.1), ("normal", 0.3), ("lognormal", 0.1), ("lognormal", 0.5)]
            {
                let mut r = Rng(crate::stats::rng::XorShift64Star(
                    0x9e37_79b9_7f4a_7c15 ^ (n as u64 * 1_000_003) ^ (cv * 1e6) as u64,
                ));
                let mut hits = 0;
                for _ in 0..2000 {
                    let v: Vec<f64> = (0..n)
                        .map(|_| {
                            if shape == "normal" {
                                100.0 * (1.0 + cv * r.normal()).max(0.01)
                            } else {
                                100.0 * (cv * r.normal()).exp()
                            }
                        })
                        .collect();
                    hits += usize::from(clusters(&v).is_some());
                }
                if hits > 0 {
                    fired.push((hits, format!("{shape} cv {cv} n {n}: {hits} of 2000")));
                }
            }
        }
        eprintln!("the cluster test on unimodal noise fired in: {:?}", fired.iter().map(|f| &f.1).collect::<Vec<_>>());
        assert!(fired.iter().all(|f| f.0 <= 1), "more than 1 in 2000: {fired:?}");
    }

    /// A bimodal row: half the processes at ~26 ns, half at ~100 ns (5% noise each).
    #[test]
    fn two_levels_per_process_are_found_with_their_shares() {
        let mut r = Rng(crate::stats::rng::XorShift64Star(7));
        for n in [10usize, 12, 16, 40] {
            let v: Vec<f64> =
                (0..n).map(|i| if i % 2 == 0 { 26.0 } else { 100.0 } * (1.0 + 0.05 * r.normal())).collect();
            let c = clusters(&v).unwrap_or_else(|| panic!("n {n}: {v:?}"));
            assert!((c.low_mean - 26.0).abs() < 3.0 && (c.high_mean - 100.0).abs() < 8.0, "{c:?}");
            assert_eq!((c.low_n, c.high_n), (n / 2, n / 2));
        }
        // Fewer than MIN_N values, or one value off on its own, are not two clusters.
        assert!(clusters(&[26.0, 100.0, 26.0, 100.0]).is_none());
        assert!(clusters(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 300.0]).is_none());
    }

    #[test]
    fn an_inconclusive_bimodal_row_says_clusters_and_causes() {
        let base: Vec<(u64, f64)> =
            (0..12).map(|i| (i, if i % 2 == 0 { 26.0 } else { 100.0 } + i as f64 * 0.1)).collect();
        let cand = base.clone();
        let cfg =
            super::super::verdict::Config { threshold: 0.05, confidence: 0.99, paired: false, min_repetitions: 3 };
        let j = annotate(super::super::verdict::judge(&base, &cand, None, &cfg), &base, &cand, cfg.threshold);
        assert_eq!(j.verdict, ChangeVerdict::Inconclusive, "{j:?}");
        assert!(
            j.why.contains("the baseline's repetitions form two clusters, 26.5 (50% of processes) and 100.6 (50%)"),
            "{}",
            j.why
        );
        assert!(j.why.contains("threads sharing a core") && j.why.contains("placement that differs"), "{}", j.why);
    }
}
