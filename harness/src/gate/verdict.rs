//! The verdict on one tracer x thread count, from per-repetition values alone.
//!
//! The unit of replication is the repetition (one process), never the iteration: the iterations
//! of one process share its memory layout, its CPU placement and whatever burst of interference
//! it ran under, so they are not independent samples (Kalibera & Jones 2013). Each side gives
//! one value per repetition (e.g. the repetition's mean latency); the change is
//! `est(candidate) / est(baseline) - 1` and its interval is a percentile bootstrap over
//! repetitions (`stats::bootstrap::ratio_ci`). The decision rule is criterion.rs's
//! (`compare_to_threshold`): "regressed" only when the whole interval lies above `+threshold`,
//! "improved" only when it lies below `-threshold`. We add the symmetric "unchanged" (the whole
//! interval inside the band) and call everything else "inconclusive", with an estimate of the
//! repetitions that would settle it.
use serde::Serialize;

use crate::stats::{self, bootstrap};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Regressed,
    Improved,
    Unchanged,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unchanged => "unchanged",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The across-repetition estimator: which central value of the per-repetition values is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// Hodges-Lehmann: median of all pairwise ratios candidate/baseline of per-repetition
    /// values. Robust to bursts that slow a minority of repetitions, and its bootstrap interval
    /// stays tight when a resample draws several of them (the default).
    #[value(name = "hodges-lehmann", alias = "hl")]
    #[serde(rename = "hodges-lehmann")]
    HodgesLehmann,
    /// Ratio of the medians of the per-repetition values: a burst that slows a minority of repetitions by
    /// 25-50% barely moves it.
    Median,
    /// Ratio of the means of the per-repetition values: more efficient without bursts, but one slow repetition
    /// drags it.
    Mean,
}

impl Estimator {
    /// The central value of one side, for display (Hodges-Lehmann shows the median).
    pub fn center(self) -> fn(&[f64]) -> f64 {
        match self {
            Estimator::HodgesLehmann | Estimator::Median => stats::median,
            Estimator::Mean => stats::mean,
        }
    }
    /// The relative change `candidate vs baseline` this estimator reports.
    pub fn change(self, base: &[f64], cand: &[f64]) -> f64 {
        match self {
            Estimator::HodgesLehmann => bootstrap::hodges_lehmann_ratio(base, cand),
            e => (e.center())(cand) / (e.center())(base) - 1.0,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Estimator::HodgesLehmann => "hodges-lehmann",
            Estimator::Median => "median",
            Estimator::Mean => "mean",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Relative change that matters, e.g. 0.05.
    pub threshold: f64,
    /// Two-sided confidence of the interval, e.g. 0.99.
    pub confidence: f64,
    pub estimator: Estimator,
    pub resamples: usize,
    pub seed: u64,
    /// Compare repetition i of the baseline with repetition i of the candidate (they ran side by
    /// side in an interleaved gate): the change is the median of the per-pair ratios, and a
    /// burst that spans both runs of a pair cancels out.
    pub paired: bool,
    /// Fewer repetitions per side than this give "inconclusive" without an interval: a
    /// percentile bootstrap of a handful of values is far too narrow.
    pub min_repetitions: usize,
}

/// Repetitions per side that would settle an inconclusive verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Needed {
    /// About this many per side (an estimate from the current interval width).
    About(usize),
    /// At least this many per side: too few to estimate the noise at all.
    AtLeast(usize),
    /// No finite number: the change sits on the threshold.
    Unbounded,
}

#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    pub baseline: f64,
    pub candidate: f64,
    pub n_baseline: usize,
    pub n_candidate: usize,
    /// `candidate / baseline - 1` of the estimator.
    pub change: f64,
    /// Bootstrap interval of `change`; `None` with too few repetitions.
    pub ci: Option<(f64, f64)>,
    pub needed: Option<Needed>,
    /// One sentence explaining the verdict.
    pub why: String,
    /// Judged as exact counts (`judge_exact`): any change is the verdict, the threshold is not
    /// applied (the output says so).
    pub exact: bool,
    /// Paired: the median of the per-pair ratios candidate/baseline (1 + `change`), which need
    /// not lie near the ratio of the two sides' medians (`baseline`, `candidate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_ratio: Option<f64>,
}

/// "the interval [-3.1%, +7.2%] crosses +5.0%": why a row is inconclusive, before what would
/// settle it (`modes::annotate` says it again when more repetitions would not).
pub(super) fn crossing(lo: f64, hi: f64, t: f64) -> String {
    let crossed = match (lo < -t, hi > t) {
        (true, true) => format!("both -{:.1}% and +{:.1}%", t * 100.0, t * 100.0),
        (true, false) => format!("-{:.1}%", t * 100.0),
        _ => format!("+{:.1}%", t * 100.0),
    };
    format!("the interval [{}, {}] crosses {crossed}", pct(lo), pct(hi))
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Judges per-repetition values given as (repetition, value). When `cfg.paired`, repetitions
/// are matched by index and only matched ones are used.
pub fn judge(base: &[(u64, f64)], cand: &[(u64, f64)], cfg: &Config) -> Judgement {
    if cfg.paired {
        let pairs: Vec<(f64, f64)> =
            base.iter().filter_map(|&(i, b)| cand.iter().find(|&&(j, _)| j == i).map(|&(_, c)| (b, c))).collect();
        let (b, c): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        judge_values(&b, &c, cfg)
    } else {
        let v = |x: &[(u64, f64)]| x.iter().map(|p| p.1).collect::<Vec<_>>();
        judge_values(&v(base), &v(cand), cfg)
    }
}

/// Why exact counts were not judged as exact: the distinct values of each side whose
/// repetitions disagree ("baseline 117, 122"). Said before the statistical verdict.
pub fn not_exact(base: &[(u64, f64)], cand: &[(u64, f64)]) -> String {
    let distinct = |v: &[(u64, f64)]| {
        let mut d: Vec<f64> = v.iter().map(|p| p.1).collect();
        d.sort_by(f64::total_cmp);
        d.dedup();
        d
    };
    let sides: Vec<String> = [("baseline", base), ("candidate", cand)]
        .iter()
        .map(|(n, v)| (n, distinct(v)))
        .filter(|(_, d)| d.len() > 1)
        .map(|(n, d)| format!("{n} {}", d.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(", ")))
        .collect();
    format!(
        "counts differ between repetitions ({}), so they are not exact here; judged as a noisy metric",
        sides.join("; ")
    )
}

/// Exact counts (`user_instructions` of a stepped run): when every repetition of each
/// side gives the same value, no noise is left to estimate, so one repetition per side suffices
/// and any difference larger than `tolerance` instructions per call (`--count-threshold`, default
/// 0: one instruction included) is the verdict. None when a side's repetitions disagree: then it
/// is judged like any other metric.
pub fn judge_exact(base: &[(u64, f64)], cand: &[(u64, f64)], tolerance: f64) -> Option<Judgement> {
    let one = |v: &[(u64, f64)]| match v.first() {
        Some(&(_, x)) if v.iter().all(|p| p.1 == x) => Some(x),
        _ => None,
    };
    let (b, c) = (one(base)?, one(cand)?);
    let (verdict, why) = if c == b {
        (Verdict::Unchanged, format!("exact counts: {b} on every repetition of both sides"))
    } else if (c - b).abs() <= tolerance {
        (
            Verdict::Unchanged,
            format!(
                "exact counts: {b} -> {c}, within --count-threshold {tolerance} instructions per call, identical on                  every repetition"
            ),
        )
    } else {
        let (v, word) = if c > b { (Verdict::Regressed, "more") } else { (Verdict::Improved, "fewer") };
        (
            v,
            format!(
                "exact counts: {} instructions {word} per call ({b} -> {c}), identical on every repetition",
                (c - b).abs()
            ),
        )
    };
    Some(Judgement {
        verdict,
        baseline: b,
        candidate: c,
        n_baseline: base.len(),
        n_candidate: cand.len(),
        change: c / b - 1.0,
        ci: Some((c / b - 1.0, c / b - 1.0)),
        needed: None,
        why,
        exact: true,
        pair_ratio: None,
    })
}

/// Median of the paired ratios, minus one.
fn median_ratio(r: &[f64]) -> f64 {
    stats::median(r) - 1.0
}

fn judge_values(base: &[f64], cand: &[f64], cfg: &Config) -> Judgement {
    let center = cfg.estimator.center();
    let t = cfg.threshold;
    let (b, c) = (center(base), center(cand));
    let mut j = Judgement {
        verdict: Verdict::Inconclusive,
        baseline: b,
        candidate: c,
        n_baseline: base.len(),
        n_candidate: cand.len(),
        change: if cfg.paired {
            median_ratio(&base.iter().zip(cand).map(|(b, c)| c / b).collect::<Vec<_>>())
        } else {
            cfg.estimator.change(base, cand)
        },
        ci: None,
        needed: None,
        why: String::new(),
        exact: false,
        pair_ratio: None,
    };
    if cfg.paired {
        j.pair_ratio = Some(j.change + 1.0);
    }
    let n = base.len().min(cand.len());
    if n < cfg.min_repetitions {
        j.needed = Some(Needed::AtLeast(cfg.min_repetitions));
        j.why = format!(
            "{} repetition(s) per side is too few to estimate run-to-run noise (the iterations of one \
             process are not independent samples); run at least {} per side (--repeats)",
            n, cfg.min_repetitions
        );
        return j;
    }
    let est = cfg.estimator;
    let (p, lo, hi) = if cfg.paired {
        let ratios: Vec<f64> = base.iter().zip(cand).map(|(b, c)| c / b).collect();
        bootstrap::one_sample_ci(&ratios, median_ratio, cfg.confidence, cfg.resamples, cfg.seed)
    } else {
        bootstrap::two_sample_ci(base, cand, &|a, b| est.change(a, b), cfg.confidence, cfg.resamples, cfg.seed)
    };
    j.change = p;
    j.ci = Some((lo, hi));
    if cfg.paired {
        j.pair_ratio = Some(p + 1.0);
    }
    let band = format!("±{:.1}%", t * 100.0);
    if lo > t {
        j.verdict = Verdict::Regressed;
        j.why = format!("the whole interval lies above +{:.1}%", t * 100.0);
    } else if hi < -t {
        j.verdict = Verdict::Improved;
        j.why = format!("the whole interval lies below -{:.1}%", t * 100.0);
    } else if lo >= -t && hi <= t {
        j.verdict = Verdict::Unchanged;
        j.why = format!("the whole interval lies inside {band}");
    } else {
        // Which boundary must the interval clear? Each side of the interval shrinks like
        // 1/sqrt(n); the side facing the boundary must end up shorter than the gap between the
        // point estimate and that boundary.
        let need = |width_now: f64, gap: f64| bootstrap::repetitions_for_width(n, width_now, gap);
        let needed = if p > t {
            need(p - lo, p - t)
        } else if p < -t {
            need(hi - p, -t - p)
        } else {
            match (need(p - lo, p + t), need(hi - p, t - p)) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            }
        };
        j.needed = Some(needed.map_or(Needed::Unbounded, Needed::About));
        let crossing = crossing(lo, hi, t);
        j.why = match needed {
            Some(k) => format!("{crossing}; about {k} repetitions per side would settle it (have {n})"),
            None => format!("{crossing} and the change sits on the threshold; no number of repetitions will settle it"),
        };
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_differ_between_repetitions_are_said_not_exact() {
        let base = [(0, 117.0), (1, 122.0)];
        let cand = [(0, 117.0), (1, 117.0)];
        assert!(judge_exact(&base, &cand, 0.0).is_none());
        let why = not_exact(&base, &cand);
        assert!(why.contains("baseline 117, 122") && !why.contains("candidate"), "{why}");
    }

    fn cfg() -> Config {
        Config {
            threshold: 0.05,
            confidence: 0.99,
            estimator: Estimator::HodgesLehmann,
            resamples: 4000,
            seed: 42,
            paired: false,
            min_repetitions: 5,
        }
    }

    /// Deterministic "noise": a low-discrepancy sequence in [-1, 1).
    fn jitter(i: usize) -> f64 {
        ((i as f64 * 0.618_033_988_75).fract()) * 2.0 - 1.0
    }

    fn side(center: f64, rel_noise: f64, n: usize, phase: usize) -> Vec<f64> {
        (0..n).map(|i| center * (1.0 + rel_noise * jitter(i + phase))).collect()
    }

    #[test]
    fn same_distribution_is_unchanged() {
        let j = judge_values(&side(215.0, 0.01, 10, 0), &side(215.0, 0.01, 10, 3), &cfg());
        assert_eq!(j.verdict, Verdict::Unchanged, "{j:?}");
    }

    #[test]
    fn ten_percent_slower_is_regressed() {
        let j = judge_values(&side(215.0, 0.01, 10, 0), &side(236.5, 0.01, 10, 3), &cfg());
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        let (lo, hi) = j.ci.unwrap();
        assert!(lo > 0.05 && hi < 0.15 && (j.change - 0.10).abs() < 0.02, "{j:?}");
    }

    #[test]
    fn ten_percent_faster_is_improved() {
        let j = judge_values(&side(236.5, 0.01, 10, 0), &side(215.0, 0.01, 10, 3), &cfg());
        assert_eq!(j.verdict, Verdict::Improved, "{j:?}");
    }

    #[test]
    fn three_percent_is_not_a_regression_at_five() {
        let j = judge_values(&side(215.0, 0.01, 10, 0), &side(221.5, 0.01, 10, 3), &cfg());
        assert_eq!(j.verdict, Verdict::Unchanged, "{j:?}");
    }

    #[test]
    fn one_repetition_is_inconclusive_never_pseudo_replicated() {
        let j = judge_values(&[215.0], &[300.0], &cfg());
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert_eq!(j.needed, Some(Needed::AtLeast(5)));
        assert!(j.ci.is_none());
        assert!((j.change - (300.0 / 215.0 - 1.0)).abs() < 1e-12);
    }

    #[test]
    fn wide_noise_is_inconclusive_and_says_how_many_would_settle_it() {
        // +6% with 8% run-to-run noise and 6 repetitions: the interval straddles +5%.
        let j = judge_values(&side(100.0, 0.08, 6, 0), &side(106.0, 0.08, 6, 2), &cfg());
        assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
        match j.needed {
            Some(Needed::About(k)) => assert!(k > 6, "{j:?}"),
            Some(Needed::Unbounded) => {}
            other => panic!("{other:?}"),
        }
        assert!(j.why.contains("crosses"), "{}", j.why);
    }

    fn burst(mut v: Vec<f64>, hit: &[(usize, f64)]) -> Vec<f64> {
        for &(i, f) in hit {
            v[i] *= f;
        }
        v
    }

    /// Burst noise: whole repetitions run 25-50% slower. One repetition in twelve on each side is
    /// hit. The default (unpaired Hodges-Lehmann) must neither call a regression on identical
    /// code nor miss a real +10%.
    #[test]
    fn burst_noise_unpaired_neither_false_alarm_nor_miss() {
        let base = burst(side(215.0, 0.005, 12, 0), &[(6, 1.45)]);
        let same = burst(side(215.0, 0.005, 12, 5), &[(2, 1.30)]);
        let slower = burst(side(236.5, 0.005, 12, 5), &[(2, 1.30)]);
        let j = judge_values(&base, &same, &cfg());
        assert_eq!(j.verdict, Verdict::Unchanged, "{j:?}");
        let j = judge_values(&base, &slower, &cfg());
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
    }

    /// Heavier bursts, as an interleaved ABBA gate sees them: a burst lasts longer than one
    /// pair of runs, so it slows both runs of a pair (pairs 1, 6, 7), and one burst ends between
    /// the runs of pair 10. Paired comparison cancels the bursts; unpaired estimators see a
    /// quarter of each side slowed, and at 99% their intervals cannot settle (safe, but no power).
    #[test]
    fn burst_noise_paired_cancels_bursts_spanning_a_pair() {
        let hits = [(1, 1.30), (6, 1.45), (7, 1.25)];
        let base = burst(side(215.0, 0.005, 12, 0), &[(1, 1.30), (6, 1.45), (7, 1.25), (10, 1.4)]);
        let same = burst(side(215.0, 0.005, 12, 5), &hits);
        let slower = burst(side(236.5, 0.005, 12, 5), &hits);
        let idx = |v: &[f64]| v.iter().enumerate().map(|(i, &x)| (i as u64, x)).collect::<Vec<_>>();
        let paired = Config { paired: true, ..cfg() };
        let j = judge(&idx(&base), &idx(&same), &paired);
        assert_eq!(j.verdict, Verdict::Unchanged, "{j:?}");
        let j = judge(&idx(&base), &idx(&slower), &paired);
        assert_eq!(j.verdict, Verdict::Regressed, "{j:?}");
        let (pl, ph) = j.ci.unwrap();
        assert!(pl > 0.08 && ph < 0.12, "{j:?}");
        for e in [Estimator::HodgesLehmann, Estimator::Median, Estimator::Mean] {
            let m = judge(&idx(&base), &idx(&slower), &Config { estimator: e, ..cfg() });
            let (ml, mh) = m.ci.unwrap();
            assert!(mh - ml > 3.0 * (ph - pl), "{e:?} {m:?} vs paired {j:?}");
            assert_ne!(m.verdict, Verdict::Regressed, "{m:?}");
        }
    }

    /// Pairing uses matched repetitions only.
    #[test]
    fn paired_matches_by_repetition_index() {
        let base: Vec<(u64, f64)> = (0..6).map(|i| (i, 100.0 + i as f64)).collect();
        let cand: Vec<(u64, f64)> = (0..6).rev().map(|i| (i, 1.1 * (100.0 + i as f64))).collect();
        let j = judge(&base, &cand, &Config { paired: true, ..cfg() });
        assert!((j.change - 0.10).abs() < 1e-9, "{j:?}");
        let j = judge(&base[..3], &cand, &Config { paired: true, ..cfg() });
        assert_eq!((j.n_baseline, j.verdict), (3, Verdict::Inconclusive));
    }

    /// A quarter of each side hit independently by bursts (what separate A-then-B runs
    /// can suffer): whatever the estimator, never "regressed" on identical code.
    #[test]
    fn heavy_one_sided_bursts_never_a_false_alarm() {
        let base = burst(side(215.0, 0.005, 12, 0), &[(1, 1.30), (6, 1.45), (7, 1.25)]);
        let same = burst(side(215.0, 0.005, 12, 5), &[(2, 1.50), (3, 1.35), (10, 1.25)]);
        for e in [Estimator::HodgesLehmann, Estimator::Median, Estimator::Mean] {
            let j = judge_values(&base, &same, &Config { estimator: e, ..cfg() });
            assert_ne!(j.verdict, Verdict::Regressed, "{e:?} {j:?}");
        }
    }

    /// Bursts that hit only one side (what a non-interleaved A-then-B run can suffer) must not
    /// produce "regressed" when fewer than half the repetitions are hit.
    #[test]
    fn one_sided_burst_minority_is_not_a_regression() {
        let base = side(215.0, 0.005, 10, 0);
        let mut cand = side(215.0, 0.005, 10, 4);
        for i in [0, 3, 8] {
            cand[i] *= 1.4;
        }
        let j = judge_values(&base, &cand, &cfg());
        assert_ne!(j.verdict, Verdict::Regressed, "{j:?}");
    }

    #[test]
    fn verdict_is_reproducible() {
        let a = side(100.0, 0.05, 8, 0);
        let b = side(104.0, 0.05, 8, 1);
        let (x, y) = (judge_values(&a, &b, &cfg()), judge_values(&a, &b, &cfg()));
        assert_eq!(x.ci, y.ci);
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod more_tests;
