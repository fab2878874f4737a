//! More unit tests of the verdict (verdict.rs is near the file-size limit): the exact-count
//! verdict's numbers, the paired change, and how many repetitions an inconclusive verdict asks
//! for. Written against the mutants cargo-mutants left alive (docs/testing.md).
use super::*;

fn cfg(paired: bool) -> Config {
    Config {
        threshold: 0.05,
        confidence: 0.99,
        estimator: Estimator::HodgesLehmann,
        resamples: 4000,
        seed: 42,
        paired,
        min_repetitions: 5,
    }
}

#[test]
fn verdicts_have_their_names() {
    let names: Vec<&str> = [Verdict::Regressed, Verdict::Improved, Verdict::Unchanged, Verdict::Inconclusive]
        .map(Verdict::as_str)
        .to_vec();
    assert_eq!(names, ["regressed", "improved", "unchanged", "inconclusive"]);
}

#[test]
fn exact_counts_give_the_exact_change() {
    let same = judge_exact(&[(0, 941.0), (1, 941.0)], &[(0, 941.0)], 0.0).unwrap();
    assert_eq!((same.verdict, same.change, same.ci), (Verdict::Unchanged, 0.0, Some((0.0, 0.0))));
    assert_eq!((same.n_baseline, same.n_candidate), (2, 1));
    let more = judge_exact(&[(0, 100.0)], &[(0, 110.0), (1, 110.0)], 0.0).unwrap();
    assert_eq!(more.verdict, Verdict::Regressed);
    assert!((more.change - 0.1).abs() < 1e-12 && more.ci == Some((more.change, more.change)), "{more:?}");
    assert!(more.why.contains("10 instructions more per call (100 -> 110)"), "{}", more.why);
    // --count-threshold 10: ten more is still unchanged, eleven is not.
    let within = judge_exact(&[(0, 100.0)], &[(0, 110.0)], 10.0).unwrap();
    assert_eq!(within.verdict, Verdict::Unchanged, "{within:?}");
    assert!(within.why.contains("within --count-threshold 10"), "{}", within.why);
    assert_eq!(judge_exact(&[(0, 100.0)], &[(0, 111.0)], 10.0).unwrap().verdict, Verdict::Regressed);
    // The default, 0: one instruction more fails.
    assert_eq!(judge_exact(&[(0, 100.0)], &[(0, 101.0)], 0.0).unwrap().verdict, Verdict::Regressed);
    let fewer = judge_exact(&[(0, 100.0)], &[(0, 90.0)], 0.0).unwrap();
    assert_eq!(fewer.verdict, Verdict::Improved);
    assert!((fewer.change + 0.1).abs() < 1e-12, "{fewer:?}");
    assert!(fewer.why.contains("10 instructions fewer per call (100 -> 90)"), "{}", fewer.why);
}

#[test]
fn too_few_pairs_still_say_the_median_paired_change() {
    let j = judge(&[(0, 100.0), (1, 100.0), (2, 100.0)], &[(0, 110.0), (1, 120.0), (2, 130.0)], &cfg(true));
    assert_eq!(j.verdict, Verdict::Inconclusive);
    assert_eq!(j.needed, Some(Needed::AtLeast(5)));
    assert!((j.change - 0.2).abs() < 1e-12, "median of 1.1, 1.2, 1.3, minus one: {j:?}");
}

/// What an inconclusive verdict asks for, from its own interval: the side of the interval that
/// faces the boundary the point estimate must clear has to shrink below the gap to it.
fn expected_needed(j: &Judgement, n: usize, t: f64) -> Option<Needed> {
    let (p, (lo, hi)) = (j.change, j.ci.unwrap());
    let need = |w: f64, gap: f64| bootstrap::repetitions_for_width(n, w, gap);
    let k = if p > t {
        need(p - lo, p - t)
    } else if p < -t {
        need(hi - p, -t - p)
    } else {
        match (need(p - lo, p + t), need(hi - p, t - p)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        }
    };
    Some(k.map_or(Needed::Unbounded, Needed::About))
}

#[test]
fn an_inconclusive_improvement_asks_for_enough_repetitions() {
    // About 7% faster with noisy candidates on 6 repetitions: the interval reaches above -5%.
    let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
    let j = judge_values(&base, &[92.0, 99.0, 85.0, 93.0, 90.0, 97.0], &cfg(false));
    let (lo, hi) = j.ci.unwrap();
    assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
    assert!(j.change < -0.05 && lo < -0.05 && hi > -0.05 && hi <= 0.05, "this case's premise: {j:?}");
    assert_eq!(j.needed, expected_needed(&j, 6, 0.05), "{j:?}");
    assert!(matches!(j.needed, Some(Needed::About(k)) if k > 6), "{j:?}");
    assert!(j.why.contains("crosses -5.0%;"), "{}", j.why);
}

#[test]
fn an_interval_across_the_whole_band_asks_for_both_sides() {
    // No change, but candidates spread by +-20%: the interval crosses both -5% and +5%.
    let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
    let j = judge_values(&base, &[80.0, 120.0, 95.0, 105.0, 90.0, 110.0], &cfg(false));
    let (lo, hi) = j.ci.unwrap();
    assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
    assert!(j.change.abs() <= 0.05 && lo < -0.05 && hi > 0.05, "this case's premise: {j:?}");
    assert_eq!(j.needed, expected_needed(&j, 6, 0.05), "{j:?}");
    assert!(j.why.contains("crosses both -5.0% and +5.0%"), "{}", j.why);
}

#[test]
fn inside_the_band_the_side_nearer_its_boundary_sets_the_count() {
    // About +3%: the upper side of the interval, 2 points from +5%, must shrink the most.
    let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
    let j = judge_values(&base, &[83.0, 123.0, 98.0, 108.0, 93.0, 113.0], &cfg(false));
    let (lo, hi) = j.ci.unwrap();
    assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
    assert!(j.change > 0.01 && j.change <= 0.05 && lo < -0.05 && hi > 0.05, "this case's premise: {j:?}");
    assert_eq!(j.needed, expected_needed(&j, 6, 0.05), "{j:?}");
    let upper = bootstrap::repetitions_for_width(6, hi - j.change, 0.05 - j.change).unwrap();
    assert_eq!(j.needed, Some(Needed::About(upper)), "{j:?}");
}
