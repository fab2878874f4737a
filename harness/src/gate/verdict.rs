//! The verdict on one tracer x thread count, from per-repetition values alone.
//!
//! The unit of replication is the repetition (one process), never the iteration: the iterations
//! of one process share its memory layout, its CPU placement and whatever burst of interference
//! it ran under, so they are not independent samples (Kalibera & Jones 2013). Each side gives
//! one value per repetition (e.g. the repetition's median of block means).
//!
//! The difference and its interval come from the one comparison every part of tracebench uses
//! (`stats::compare`): paired by repetition when the sides ran interleaved (the median of the
//! differences, with the sign test's interval, which holds for any distribution of them), else
//! the Hodges-Lehmann shift with the Mann-Whitney interval. The change is relative to the cheaper
//! side's cost (net of the baseline's `none` row with `--net`), so a change and its revert read
//! the same size. The decision rule is criterion.rs's (`compare_to_threshold`): "regressed" only
//! when the whole interval lies above `+threshold`, "improved" only when it lies below
//! `-threshold`. We add the symmetric "unchanged" (the whole interval inside the band) and call
//! everything else "inconclusive", with an estimate of the repetitions that would settle it.
use serde::Serialize;

use crate::stats::compare::{self, Looks};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeVerdict {
    Regressed,
    Improved,
    Unchanged,
    Inconclusive,
}

impl ChangeVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeVerdict::Regressed => "regressed",
            ChangeVerdict::Improved => "improved",
            ChangeVerdict::Unchanged => "unchanged",
            ChangeVerdict::Inconclusive => "inconclusive",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Relative change that matters, e.g. 0.05.
    pub threshold: f64,
    /// Two-sided confidence of the interval, e.g. 0.99.
    pub confidence: f64,
    /// Compare repetition i of the baseline with repetition i of the candidate (they ran side by
    /// side in an interleaved gate): a burst that spans both runs of a pair cancels out.
    pub paired: bool,
    /// Fewer repetitions per side than this give "inconclusive" without an interval.
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
    pub verdict: ChangeVerdict,
    pub baseline: f64,
    pub candidate: f64,
    pub n_baseline: usize,
    pub n_candidate: usize,
    /// Candidate minus baseline, relative to `reference`: the median of the paired differences,
    /// or the Hodges-Lehmann shift unpaired.
    pub change: f64,
    /// The interval of `change` at the confidence asked; `None` with too few repetitions.
    pub ci: Option<(f64, f64)>,
    pub needed: Option<Needed>,
    /// One sentence explaining the verdict.
    pub why: String,
    /// Judged as exact counts (`judge_exact`): any change is the verdict, the threshold is not
    /// applied (the output says so).
    pub exact: bool,
    /// The cost the change is relative to (the cheaper side's median, or its median net of the
    /// floor), and whether it is net of the floor.
    pub reference: f64,
    pub net: bool,
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

/// A relative change in percent with its sign and one decimal: "+2.1%", "-0.8%".
pub(super) fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Judges per-repetition values given as (repetition, value). When `cfg.paired`, repetitions
/// are matched by index and only matched ones are used. `floor`: the baseline's `none` row, by
/// repetition, when the change is to be relative to the tracer's own cost (`--net`).
pub fn judge(base: &[(u64, f64)], cand: &[(u64, f64)], floor: Option<&[(u64, f64)]>, cfg: &Config) -> Judgement {
    let at = |v: &[(u64, f64)], i: u64| v.iter().find(|p| p.0 == i).map(|p| p.1);
    if cfg.paired {
        let mut b = Vec::new();
        let mut c = Vec::new();
        let mut f = Vec::new();
        for &(i, x) in base {
            if let Some(y) = at(cand, i) {
                b.push(x);
                c.push(y);
                if let Some(z) = floor.and_then(|fl| at(fl, i)) {
                    f.push(z);
                }
            }
        }
        let f = floor.map(|_| f);
        judge_values(&b, &c, f.as_deref(), cfg)
    } else {
        let v = |x: &[(u64, f64)]| x.iter().map(|p| p.1).collect::<Vec<_>>();
        let f = floor.map(v);
        judge_values(&v(base), &v(cand), f.as_deref(), cfg)
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
        (ChangeVerdict::Unchanged, format!("exact counts: {b} on every repetition of both sides"))
    } else if (c - b).abs() <= tolerance {
        (
            ChangeVerdict::Unchanged,
            format!(
                "exact counts: {b} -> {c}, within --count-threshold {tolerance} instructions per call, identical on                  every repetition"
            ),
        )
    } else {
        let (v, word) = if c > b { (ChangeVerdict::Regressed, "more") } else { (ChangeVerdict::Improved, "fewer") };
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
        change: (c - b) / b.min(c),
        ci: Some(((c - b) / b.min(c), (c - b) / b.min(c))),
        needed: None,
        why,
        exact: true,
        reference: b.min(c),
        net: false,
    })
}

fn judge_values(base: &[f64], cand: &[f64], floor: Option<&[f64]>, cfg: &Config) -> Judgement {
    let t = cfg.threshold;
    let level = 1.0 - cfg.confidence;
    let looks = Looks::Once { level };
    let c = compare::compare_with(base, cand, floor, cfg.paired, t, looks);
    let mut j = Judgement {
        verdict: ChangeVerdict::Inconclusive,
        baseline: crate::stats::median(base),
        candidate: crate::stats::median(cand),
        n_baseline: base.len(),
        n_candidate: cand.len(),
        change: c.estimate,
        ci: None,
        needed: None,
        why: String::new(),
        exact: false,
        reference: c.reference,
        net: c.net,
    };
    let n = base.len().min(cand.len());
    let fewest = cfg.min_repetitions.max(compare::fewest_rounds(c.paired, level));
    let Some((lo, hi)) = c.interval.filter(|_| n >= cfg.min_repetitions) else {
        j.needed = Some(Needed::AtLeast(fewest));
        j.why = format!(
            "{} repetition(s) per side is too few for a {:.0}% interval of the run-to-run noise (the iterations \
             of one process are not independent samples); run at least {} per side (--repeats)",
            n,
            100.0 * cfg.confidence,
            fewest
        );
        return j;
    };
    j.ci = Some((lo, hi));
    let band = format!("±{:.1}%", t * 100.0);
    if c.b_beyond_margin() {
        j.verdict = ChangeVerdict::Regressed;
        j.why = format!("the whole interval lies above +{:.1}%", t * 100.0);
    } else if hi < -t {
        j.verdict = ChangeVerdict::Improved;
        j.why = format!("the whole interval lies below -{:.1}%", t * 100.0);
    } else if lo >= -t && hi <= t {
        j.verdict = ChangeVerdict::Unchanged;
        j.why = format!("the whole interval lies inside {band}");
    } else {
        // Settled once the interval clears both boundaries: then it lies beyond one or inside
        // the band.
        let clear = |m: f64, half: f64| half < (m - t).abs() && half < (m + t).abs();
        let needed = compare::rounds_until(base, cand, c.paired, c.reference, looks, clear);
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
        Config { threshold: 0.05, confidence: 0.99, paired: false, min_repetitions: 5 }
    }

    /// Deterministic "noise": a low-discrepancy sequence in [-1, 1).
    fn jitter(i: usize) -> f64 {
        ((i as f64 * 0.618_033_988_75).fract()) * 2.0 - 1.0
    }

    fn side(center: f64, rel_noise: f64, n: usize, phase: usize) -> Vec<f64> {
        (0..n).map(|i| center * (1.0 + rel_noise * jitter(i + phase))).collect()
    }

    fn unpaired(a: &[f64], b: &[f64]) -> Judgement {
        judge_values(a, b, None, &cfg())
    }

    #[test]
    fn same_distribution_is_unchanged() {
        let j = unpaired(&side(215.0, 0.01, 10, 0), &side(215.0, 0.01, 10, 3));
        assert_eq!(j.verdict, ChangeVerdict::Unchanged, "{j:?}");
    }

    #[test]
    fn ten_percent_slower_is_regressed() {
        let j = unpaired(&side(215.0, 0.01, 10, 0), &side(236.5, 0.01, 10, 3));
        assert_eq!(j.verdict, ChangeVerdict::Regressed, "{j:?}");
        let (lo, hi) = j.ci.unwrap();
        assert!(lo > 0.05 && hi < 0.15 && (j.change - 0.10).abs() < 0.02, "{j:?}");
    }

    /// Relative to the cheaper side: undoing a +10% change reads -10%, not -9.1%.
    #[test]
    fn ten_percent_faster_is_improved_by_the_same_ten_percent() {
        let j = unpaired(&side(236.5, 0.01, 10, 0), &side(215.0, 0.01, 10, 3));
        assert_eq!(j.verdict, ChangeVerdict::Improved, "{j:?}");
        assert!((j.change + 0.10).abs() < 0.02, "{j:?}");
    }

    #[test]
    fn three_percent_is_not_a_regression_at_five() {
        let j = unpaired(&side(215.0, 0.01, 10, 0), &side(221.5, 0.01, 10, 3));
        assert_eq!(j.verdict, ChangeVerdict::Unchanged, "{j:?}");
    }

    /// Two repetitions a side give no 99% interval at all: inconclusive, with the fewest that do.
    #[test]
    fn too_few_repetitions_are_inconclusive_never_pseudo_replicated() {
        let j = unpaired(&[215.0, 216.0], &[300.0, 301.0]);
        assert_eq!(j.verdict, ChangeVerdict::Inconclusive);
        let fewest = compare::fewest_rounds(false, 0.01);
        assert!(fewest >= 5, "{fewest}");
        assert_eq!(j.needed, Some(Needed::AtLeast(fewest)));
        assert!(j.ci.is_none() && j.why.contains(&format!("at least {fewest} per side")), "{j:?}");
        assert!((j.change - 85.0 / 215.5).abs() < 0.01, "{j:?}");
    }

    #[test]
    fn wide_noise_is_inconclusive_and_says_how_many_would_settle_it() {
        // +6% with 8% run-to-run noise and 8 repetitions: the interval straddles +5%.
        let j = unpaired(&side(100.0, 0.08, 8, 0), &side(106.0, 0.08, 8, 2));
        assert_eq!(j.verdict, ChangeVerdict::Inconclusive, "{j:?}");
        match j.needed {
            Some(Needed::About(k)) => assert!(k > 8, "{j:?}"),
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
    /// hit. Unpaired, the rank interval must neither call a regression on identical code nor miss
    /// a real +10%.
    #[test]
    fn burst_noise_unpaired_neither_false_alarm_nor_miss() {
        let base = burst(side(215.0, 0.005, 12, 0), &[(6, 1.45)]);
        let same = burst(side(215.0, 0.005, 12, 5), &[(2, 1.30)]);
        let slower = burst(side(236.5, 0.005, 12, 5), &[(2, 1.30)]);
        assert_eq!(unpaired(&base, &same).verdict, ChangeVerdict::Unchanged);
        assert_eq!(unpaired(&base, &slower).verdict, ChangeVerdict::Regressed);
    }

    /// Heavier bursts, as an interleaved ABBA gate sees them: a burst lasts longer than one
    /// pair of runs, so it slows both runs of a pair (pairs 1, 6, 7), and one burst ends between
    /// the runs of pair 10. Pairing cancels the bursts' effect on the sign of each difference.
    #[test]
    fn burst_noise_paired_cancels_bursts_spanning_a_pair() {
        let hits = [(1, 1.30), (6, 1.45), (7, 1.25)];
        let base = burst(side(215.0, 0.005, 12, 0), &[(1, 1.30), (6, 1.45), (7, 1.25), (10, 1.4)]);
        let same = burst(side(215.0, 0.005, 12, 5), &hits);
        let slower = burst(side(236.5, 0.005, 12, 5), &hits);
        let idx = |v: &[f64]| v.iter().enumerate().map(|(i, &x)| (i as u64, x)).collect::<Vec<_>>();
        let paired = Config { paired: true, ..cfg() };
        let j = judge(&idx(&base), &idx(&same), None, &paired);
        assert_eq!(j.verdict, ChangeVerdict::Unchanged, "{j:?}");
        let j = judge(&idx(&base), &idx(&slower), None, &paired);
        assert_eq!(j.verdict, ChangeVerdict::Regressed, "{j:?}");
        let (pl, ph) = j.ci.unwrap();
        assert!(pl > 0.08 && ph < 0.15, "{j:?}");
    }

    /// Pairing uses matched repetitions only.
    #[test]
    fn paired_matches_by_repetition_index() {
        let base: Vec<(u64, f64)> = (0..6).map(|i| (i, 100.0 + i as f64)).collect();
        let cand: Vec<(u64, f64)> = (0..6).rev().map(|i| (i, 1.1 * (100.0 + i as f64))).collect();
        let j = judge(&base, &cand, None, &Config { paired: true, ..cfg() });
        assert!((j.change - 0.10).abs() < 1e-9, "{j:?}");
        let j = judge(&base[..3], &cand, None, &Config { paired: true, ..cfg() });
        assert_eq!((j.n_baseline, j.verdict), (3, ChangeVerdict::Inconclusive));
    }

    /// A quarter of each side hit independently by bursts (what separate A-then-B runs
    /// can suffer): never "regressed" on identical code.
    #[test]
    fn heavy_one_sided_bursts_never_a_false_alarm() {
        let base = burst(side(215.0, 0.005, 12, 0), &[(1, 1.30), (6, 1.45), (7, 1.25)]);
        let same = burst(side(215.0, 0.005, 12, 5), &[(2, 1.50), (3, 1.35), (10, 1.25)]);
        assert_ne!(unpaired(&base, &same).verdict, ChangeVerdict::Regressed);
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
        assert_ne!(unpaired(&base, &cand).verdict, ChangeVerdict::Regressed);
    }

    /// With the baseline's `none` row, the change is relative to the tracer's own cost: 18 ns over
    /// a 25 ns floor, +2 ns is +11%, where raw it is +4.7%.
    #[test]
    fn net_of_the_floor_judges_the_tracers_own_cost() {
        let floor = side(25.0, 0.002, 12, 1);
        let base: Vec<f64> = floor.iter().zip(side(18.0, 0.002, 12, 0)).map(|(f, t)| f + t).collect();
        let cand: Vec<f64> = base.iter().map(|b| b + 2.0).collect();
        let idx = |v: &[f64]| v.iter().enumerate().map(|(i, &x)| (i as u64, x)).collect::<Vec<_>>();
        let paired = Config { paired: true, ..cfg() };
        let raw = judge(&idx(&base), &idx(&cand), None, &paired);
        assert_eq!(raw.verdict, ChangeVerdict::Unchanged, "{raw:?}");
        assert!(!raw.net && (raw.change - 2.0 / 43.0).abs() < 0.005, "{raw:?}");
        let net = judge(&idx(&base), &idx(&cand), Some(&idx(&floor)), &paired);
        assert_eq!(net.verdict, ChangeVerdict::Regressed, "{net:?}");
        assert!(net.net && (net.change - 2.0 / 18.0).abs() < 0.01 && (net.reference - 18.0).abs() < 0.2, "{net:?}");
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod more_tests;
