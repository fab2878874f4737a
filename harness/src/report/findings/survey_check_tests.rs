//! Tests of the survey check (survey_check.rs).
use super::*;

fn t(label: &str, reps: &[f64]) -> TracerReport {
    crate::report::tests::tracer_row(label, label, reps)
}

/// The survey's orderings read the one comparison: ten interleaved rounds that all agree decide
/// an order; three rounds decide nothing, and say how many would.
#[test]
fn an_order_is_decided_by_the_comparison() {
    let a = t("a", &[100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 100.8, 99.1, 100.0, 100.3]);
    let b = t("b", &[130.0, 131.0, 129.0, 130.5, 129.5, 130.2, 130.8, 129.1, 130.0, 130.3]);
    assert_eq!(comparison::judge(&a, &b, None).outcome, Outcome::ACheaper);
    assert_eq!(comparison::judge(&b, &a, None).outcome, Outcome::BCheaper);
    let c = comparison::judge(&t("a", &a.rep_means[..3]), &t("b", &b.rep_means[..3]), None);
    assert_eq!((c.outcome, c.rounds_needed), (Outcome::Undecided, Some(10)));
    let w = comparison::words("a", "b", &c);
    assert!(w.contains("about 10 rounds would decide"), "{w}");
}

fn reps(v: &[f64]) -> Vec<(u32, f64)> {
    v.iter().enumerate().map(|(i, &m)| (i as u32, m)).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Measured: lttng-ust's three 2-thread repetitions were 144.6, 145.6 and 96.1 ns (x1.30 over
/// the means): two above the contention line, one below even 1. Not decided.
#[test]
fn scaling_on_disagreeing_repetitions_is_not_decided() {
    let (one, two) = ([99.4, 98.9, 99.1], [144.6, 145.6, 96.1]);
    let g = growth(&reps(&one), &reps(&two), mean(&one), mean(&two));
    assert!((g.ratio - 1.30).abs() < 0.01, "{g:?}");
    let (lo, hi, n) = g.interval.unwrap();
    assert!(lo < 1.0 && hi > FLAT_MAX && n == 3, "{g:?}");
    let why = g.reading.unwrap_err();
    assert!(why.contains("3 repetition(s) do not decide") && why.contains("about 10 would"), "{why}");
}

/// Ten interleaved rounds on one side of the line decide; three do not, however far.
#[test]
fn scaling_is_decided_by_the_comparison() {
    let one: Vec<f64> = (0..10).map(|i| 100.0 + (i % 3) as f64).collect();
    let contended: Vec<f64> = one.iter().map(|l| 3.8 * l).collect();
    let flat: Vec<f64> = one.iter().map(|l| 1.02 * l).collect();
    let g = growth(&reps(&one), &reps(&contended), mean(&one), mean(&contended));
    assert_eq!(g.reading, Ok(survey_reference::Scaling::Contended));
    let g = growth(&reps(&one), &reps(&flat), mean(&one), mean(&flat));
    assert_eq!(g.reading, Ok(survey_reference::Scaling::Flat));
    assert!(growth(&reps(&one[..3]), &reps(&contended[..3]), 100.0, 380.0).reading.is_err());
    assert!(growth(&[], &[], 100.0, 140.0).reading.is_err());
}

/// Seeded: repetitions whose true growth is well inside one reading, with 10% noise per
/// repetition, are never read as the other; ones whose growth is centred on the line are decided
/// either way in at most the comparison's alpha of cases.
#[test]
fn scaling_never_decides_the_wrong_way_on_seeded_repetitions() {
    let mut x = crate::stats::rng::XorShift64(0x2545_f491_4f6c_dd1d);
    let mut unit = move || (x.next() >> 11) as f64 / (1u64 << 53) as f64;
    for (truth, growth_factor) in [(survey_reference::Scaling::Flat, 1.0), (survey_reference::Scaling::Contended, 2.0)]
    {
        for k in 0..200 {
            let n = [3, 10, 14, 20][k % 4];
            let one: Vec<f64> = (0..n).map(|_| 100.0 * (0.9 + 0.2 * unit())).collect();
            let two: Vec<f64> = one.iter().map(|l| l * growth_factor * (0.9 + 0.2 * unit())).collect();
            let g = growth(&reps(&one), &reps(&two), mean(&one), mean(&two));
            assert!(g.reading.as_ref().map_or(true, |r| *r == truth), "{g:?}");
        }
    }
    let mut decided = 0;
    for k in 0..400 {
        let n = [10, 14, 20, 28][k % 4];
        let one: Vec<f64> = (0..n).map(|_| 100.0 * (0.9 + 0.2 * unit())).collect();
        let two: Vec<f64> = one.iter().map(|l| l * 1.25 * (0.8 + 0.4 * unit())).collect();
        decided += usize::from(growth(&reps(&one), &reps(&two), mean(&one), mean(&two)).reading.is_ok());
    }
    assert!(decided <= 4, "growth centred on the line decided in {decided} of 400");
}

/// An LTTng row whose search over slow calls found no path: the survey's sub-buffer verdict
/// follows the fold of its expected period. Where one phase stands out it agrees and quotes the
/// fold; where none does it departs; a run too short for four sub-buffers decides nothing.
#[test]
fn a_folded_phase_of_the_sub_buffer_period_is_the_surveys_path() {
    let mut x = crate::stats::rng::XorShift64(0x9e37_79b9_7f4a_7c15);
    let mut report = |calls: usize, folded: Option<crate::analysis::folded_period::FoldedPeriod>| {
        let seqs: Vec<Vec<f64>> =
            (0..3).map(|_| (0..calls).map(|_| 100.0 + (x.next() % 3) as f64 * 10.0).collect()).collect();
        let mut row = t("lttng-ust", &[100.0, 100.0, 100.0]);
        row.analysis = Some(crate::report::tests::tracer_analysis_of(&seqs));
        let run = serde_json::json!({"tracers": [{"name": "lttng-ust", "cells": [{"after_run": {"geometry": {
            "subbuf_bytes": 8192, "event_bytes": 10.0, "header_bytes": 96, "events_per_subbuf": 810
        }}}]}]});
        let missing = super::super::Finding::MissingPeriod(super::super::MissingPeriod {
            expected: crate::analysis::code_paths::Expected { period: 810.0, how: "810 events per sub-buffer".into() },
            beside_other_periods: false,
            on_lattice: None,
            about_every: vec![],
            folded,
        });
        let findings = vec![super::super::TracerFindings {
            name: "lttng-ust".into(),
            label: "lttng-ust".into(),
            threads: 1,
            summary: None,
            metrics: vec![super::super::MetricFindings {
                metric: "latency".into(),
                unit: "ns",
                calls: 3 * calls as u64,
                findings: vec![missing],
            }],
        }];
        Report {
            dir: Default::default(),
            run,
            synthetic: false,
            kernel: false,
            tracers: vec![row],
            counters: vec![],
            findings,
            code_paths: vec![],
            survey_notes: vec![],
            survey_checks: vec![],
            notes: vec![],
            figures: vec![],
        }
    };
    let fold = crate::analysis::folded_period::FoldedPeriod {
        period: 810,
        sequences: 3,
        standing_out: 3,
        phase_above: 1.0,
        rest_above: 0.4,
        extra: 180.0,
        threshold_above_median: 400.0,
        p_value: 1e-9,
    };
    let sub_buffer = |r: &Report| {
        let c: Vec<SurveyCheck> =
            compare_with_survey(r).into_iter().filter(|c| c.topic == Topic::SubBufferPath).collect();
        assert_eq!(c.len(), 1, "{:?}", c.iter().map(|c| &c.text).collect::<Vec<_>>());
        (c[0].verdict, c[0].text.clone())
    };
    let (v, text) = sub_buffer(&report(8100, Some(fold.clone())));
    assert_eq!(v, SurveyVerdict::Agrees, "{text}");
    assert!(
        text.starts_with(
            "Agrees with the survey: one phase of every 810 events of lttng-ust is slower than its neighbours (+180 ns, \
             in 3 of 3 sequences), one per sub-buffer switch as in section 7.1"
        ),
        "{text}"
    );
    let (v, text) = sub_buffer(&report(8100, None));
    assert_eq!(v, SurveyVerdict::Departs, "{text}");
    assert!(text.contains("shows no periodic slow path"), "{text}");
    let (v, text) = sub_buffer(&report(2000, None));
    assert_eq!(v, SurveyVerdict::Undecided, "{text}");
}
