//! One test per sentence of the code-path line (path_line.rs), on findings built by hand: the words
//! the terminal, report.md and report.html say for each kind of finding.
use crate::report::findings::*;
use crate::report::render::path_line::{line, Markup};

fn metric(findings: Vec<Finding>) -> MetricFindings {
    MetricFindings { metric: "latency".into(), unit: "ns", calls: 10_000, findings }
}

fn fast(single: bool) -> Finding {
    Finding::FastPath(FastPath { share: 0.998, median: 70.12, single, level_step: None })
}

fn periodic(period: u64, extra: f64) -> PeriodicFinding {
    PeriodicFinding {
        period,
        evenly_spread: 1,
        mean_period: period as f64,
        phase: 120,
        calls: 6,
        slots: 6,
        share_taken: 1.0,
        extra,
        p_value: 0.000999,
        null_runs: 1000,
        followers: Vec::new(),
        stretch: None,
        expected: None,
        counted_in: Vec::new(),
    }
}

fn say(f: Vec<Finding>) -> String {
    line("t", &metric(f), Markup::Terminal)
}

#[test]
fn single_code_path() {
    assert_eq!(say(vec![fast(true)]), "t: single code path (99.8% of calls, median 70.1 ns)");
}

#[test]
fn periodic_paths_are_named_by_cost_with_their_evidence() {
    let mut slow = periodic(810, 990.0);
    slow.followers.push(Follower { offset: 1, extra: 300.0, calls: 6 });
    slow.stretch = Some(LockedStretch { calls: 300, extra: 148.0, attribution: Attribution::Tracer });
    slow.expected = Some(Expected { period: 810.0, how: "sub-buffer 8192 B / event 10.0 B = 810".into() });
    let l = say(vec![fast(false), Finding::PeriodicPath(periodic(97, 440.0)), Finding::PeriodicPath(slow)]);
    assert_eq!(
        l,
        "t: fast path 99.8% (median 70.1 ns), middle path every 97 events (from iteration 120; 6 calls, +440 ns; 6 of 6 \
         kept calls on that period take it, p < 0.001 over 1000 null reruns of the search), slow path every 810 events \
         (from iteration 120; 6 calls, +990 ns; 6 of 6 kept calls on that period take it, p < 0.001 over 1000 null \
         reruns of the search), and the ~300 calls after each cost +148 ns more (a slower stretch locked to this path's \
         phase: the tracer's, not the machine's), and the call just after it costs +300 ns too (6 calls) [expected: \
         sub-buffer 8192 B / event 10.0 B = 810]"
    );
}

#[test]
fn a_fractional_period_says_its_mean() {
    let mut p = periodic(113, 130.0);
    (p.evenly_spread, p.mean_period) = (2, 56.5);
    let l = say(vec![fast(false), Finding::PeriodicPath(p)]);
    assert!(l.contains("slow path every 56.5 events on average (2 times in every 113 calls, evenly spread: no whole period; from iteration 120;"), "{l}");
}

#[test]
fn irregular_paths_with_and_without_a_spacing() {
    let regular = IrregularPath {
        calls: 33,
        share: 0.0022,
        extra: 260.0,
        spacing: Some(Spacing { median: 431.0, near_share: 1.0 }),
        one_in: 454.5,
        whose: None,
        keyed: None,
    };
    let noise = IrregularPath {
        calls: 50,
        share: 0.005,
        extra: 2000.0,
        spacing: None,
        one_in: 200.0,
        whose: None,
        keyed: None,
    };
    let l = say(vec![fast(false), Finding::IrregularPath(regular), Finding::IrregularPath(noise)]);
    assert_eq!(
        l,
        "t: fast path 99.8% (median 70.1 ns), middle path 0.2% about every 431 events (no exact period; 100% of \
         spacings within 10% of that) (+260 ns), slow path 0.5% irregular, about 1 in 200 events (+2000 ns)"
    );
    let faster =
        IrregularPath { calls: 50, share: 0.005, extra: -20.0, spacing: None, one_in: 200.0, whose: None, keyed: None };
    assert!(say(vec![fast(false), Finding::IrregularPath(faster)]).contains("faster path 0.5% irregular"));
    // A rare path is never "0.0%".
    let rare = IrregularPath {
        calls: 4,
        share: 0.0001,
        extra: 1400.0,
        spacing: None,
        one_in: 10000.0,
        whose: None,
        keyed: None,
    };
    assert!(say(vec![fast(false), Finding::IrregularPath(rare)]).contains("slow path 0.01% irregular"), "rare");
}

#[test]
fn a_keyed_path_says_its_iterations_and_its_null() {
    let keyed = crate::analysis::keyed::Keyed { iterations: 29, repetitions: 3, p: 1.0 / 1001.0, null_runs: 1000 };
    let k = IrregularPath {
        calls: 87,
        share: 0.0014,
        extra: 2885.0,
        spacing: None,
        one_in: 700.0,
        whose: None,
        keyed: Some(keyed),
    };
    assert_eq!(
        say(vec![fast(false), Finding::IrregularPath(k)]),
        "t: fast path 99.8% (median 70.1 ns), slow path 0.1% on the same 29 iterations in each of 3 repetitions \
         (keyed to the call or its logged value, not chance: p = 9.99e-4 that the repetitions align as many when \
         shifted or reversed against each other; 1000 such moves tried) (+2885 ns)"
    );
}

#[test]
fn speed_levels_say_who_they_belong_to() {
    let undecided = Attribution::no_sentinels();
    let modes =
        LevelShape::Modes { levels: vec![ModeLevel { share: 0.37, extra: 148.0, stretches: 25, start_every: None }] };
    let l = say(vec![fast(false), Finding::SpeedLevels(SpeedLevels { shape: modes, attribution: undecided.clone() })]);
    assert!(l.ends_with(&format!("; two speed levels in stretches of calls, not single-call paths (37.0% of calls at +148 ns in 25 stretches; {NO_SENTINELS})")), "{l}");
    let come = LevelShape::ComeAndGo { share: 0.012, extra: 80.0, busiest_quarter_share: 0.9 };
    let l = say(vec![fast(false), Finding::SpeedLevels(SpeedLevels { shape: come, attribution: undecided.clone() })]);
    assert!(l.ends_with(&format!("; 1.2% of calls at +80.0 ns come and go over the run (90% of them in its busiest quarter): a phase, not a code path ({NO_SENTINELS})")), "{l}");
    let means = LevelShape::WindowMeans { window: 64, low: 30.9, high: 35.1, high_share: 0.33, stretches: 8 };
    let l = say(vec![fast(false), Finding::SpeedLevels(SpeedLevels { shape: means, attribution: undecided.clone() })]);
    assert!(l.ends_with(&format!("; two speed levels in stretches of calls, not single-call paths: its 64-call windows average 30.9 ns or 35.1 ns (33% of them at the higher, in 8 stretches; {NO_SENTINELS})")), "{l}");
    let off = LevelShape::OffPath { calls: 1, share: 0.0001, stretches: 1 };
    let l = say(vec![fast(false), Finding::SpeedLevels(SpeedLevels { shape: off, attribution: Attribution::Machine })]);
    assert!(l.ends_with("; 1 slow call (0.01%) on no path, most of them in 1 stretch of consecutive calls: a slower phase, not a code path (the machine's)"), "{l}");
}

#[test]
fn refused_periods_missing_period_and_outliers() {
    let refused = |period| RefusedPeriod { period, calls: 8, p_value: 0.25, null_runs: 40 };
    let r = RefusedPeriods { lattices: (1..=5).map(refused).collect() };
    let e = Expected { period: 810.0, how: "sub-buffer = 810".into() };
    let l = say(vec![
        fast(false),
        Finding::MissingPeriod(MissingPeriod {
            expected: e,
            beside_other_periods: false,
            on_lattice: None,
            about_every: vec![],
            folded: None,
        }),
        Finding::RefusedPeriods(r),
        Finding::Outliers(Outliers { count: 36, share: 0.00004, whose: None }),
    ]);
    assert_eq!(
        l,
        "t: fast path 99.8% (median 70.1 ns); no periodic path found [expected: sub-buffer = 810]; not claimed as \
         periods, as likely among these slow calls at random positions: every 1 (8 calls, p = 0.250 over 40 null \
         reruns of the search), every 2 (8 calls, p = 0.250 over 40 null reruns of the search), every 3 (8 calls, \
         p = 0.250 over 40 null reruns of the search) and 2 more; 36 outliers (0.004%) on no path"
    );
}

#[test]
fn the_three_outputs_differ_only_in_markup() {
    let mut p = periodic(64, 900.0);
    p.expected = Some(Expected { period: 64.0, how: "spin <planted> & \"64\"".into() });
    let m = metric(vec![fast(false), Finding::PeriodicPath(p)]);
    let t = line("a<b", &m, Markup::Terminal);
    assert!(line("a<b", &m, Markup::Markdown).starts_with("a&lt;b: fast path"), "a name is data in report.md too");
    assert_eq!(line("a<b", &m, Markup::Html), crate::report::render::path_line::esc(&t));
    assert!(line("a<b", &m, Markup::Html).starts_with("a&lt;b: fast path"));
}

#[test]
fn report_json_tags_each_finding_with_its_kind() {
    let m = metric(vec![
        fast(false),
        Finding::PeriodicPath(periodic(64, 900.0)),
        Finding::SpeedLevels(SpeedLevels {
            shape: LevelShape::OffPath { calls: 3, share: 0.0003, stretches: 1 },
            attribution: Attribution::no_sentinels(),
        }),
    ]);
    let j = serde_json::to_value(&m).unwrap();
    let f = &j["findings"];
    assert_eq!(f[0]["kind"], "fast_path");
    assert_eq!((f[1]["kind"].as_str(), f[1]["period"].as_u64()), (Some("periodic_path"), Some(64)));
    assert_eq!((f[2]["kind"].as_str(), f[2]["seen_as"].as_str()), (Some("speed_levels"), Some("off_path")));
    assert_eq!(f[2]["attribution"]["by"], "undecided");
    assert_eq!(f[2]["attribution"]["why"], NO_SENTINELS);
}

#[test]
fn dated_levels_say_whose_with_the_sentinels_evidence() {
    use crate::analysis::dated::{Interval, PathLock};
    let level = |rep, shift, sent: Option<(f64, f64, f64)>, attribution| DatedLevel {
        repetition: rep,
        thread: 0,
        above: shift > 0.0,
        segments: 4,
        windows: 40,
        tracer_shift: shift,
        sentinel_shift: sent.map(|(estimate, low, high)| Interval { estimate, low, high }),
        sentinels_in: 80,
        attribution,
        lock: None,
        outside: None,
    };
    let mut tracer = level(0, 0.30, Some((0.004, -0.02, 0.03)), Attribution::Tracer);
    tracer.lock = Some(PathLock { period: 810, lag_calls: 2, length_calls: 300, extra_ns: 150.4, segments: 5 });
    let d = DatedLevels {
        window_calls: 64,
        sequences: 3,
        levels: vec![
            tracer,
            level(1, 0.2, Some((0.19, 0.12, 0.25)), Attribution::Machine),
            level(1, 0.08, None, Attribution::Undecided { why: "too few sentinels".into() }),
        ],
    };
    assert_eq!(
        say(vec![fast(true), Finding::DatedLevels(d)]),
        "t: single code path (99.8% of calls, median 70.1 ns); 3 levels over time in 2 of 3 sequences (change points \
         on its 64-call window means, held against the sentinel windows of the same spans): 1 the tracer's, slower (median \
         +30% while their sentinels moved +0.4% (99% interval -2.0% to +3.0%)), 1 the machine's, slower (median +20% while \
         their sentinels moved +19% (99% interval +12% to +25%)), 1 undecided, slower (median +8.0%; too few sentinels); the \
         tracer's slower stretch keeps a path's phase: ~300 calls at +150 ns from 2 calls after each path's call, every \
         810 events"
    );
}

#[test]
fn an_expected_period_longer_than_the_run_is_not_called_a_miss() {
    // otf2's flush every 17476 calls cannot show in 10000: the line says so and how long a run
    // would, rather than "no periodic path found".
    let e = Expected { period: 17476.0, how: "buffer 262144 B / record 15 B = 17476".into() };
    let l = say(vec![
        fast(true),
        Finding::MissingPeriod(MissingPeriod {
            expected: e,
            beside_other_periods: false,
            on_lattice: None,
            about_every: vec![],
            folded: None,
        }),
    ]);
    assert!(l.contains("too few calls to show the expected period [expected: buffer 262144 B / record 15 B = 17476; -n 100000 would]"), "{l}");
    assert!(!l.contains("no periodic path found"), "{l}");
}

#[test]
fn a_missing_period_says_the_outliers_that_lie_on_it() {
    // LTTng-tracef: its switch every 579 calls holds from iteration 1542 on only (a byte more per
    // event once the payload has four digits); the line says what the outliers show there.
    let e = Expected { period: 579.0, how: "sub-buffer = 579".into() };
    let on_lattice = Some(crate::report::findings::expected_period::OnLattice {
        period: 579,
        calls: 6,
        first: 1542,
        last: 4437,
        slots: 8,
        extra: (1282.0, 2103.0),
    });
    let l = say_missing(e, on_lattice);
    assert!(
        l.contains(
            "no periodic path found [expected: sub-buffer = 579]; 6 outliers lie exactly 579 calls apart, iterations \
             1542 to 4437 (+1282 ns to +2103 ns), 6 of the 8 slots of that phase in the run: a period over part of \
             the run (e.g. from a change of event size) is not claimed, as an exact period needs at least 80% of \
             its slots"
        ),
        "{l}"
    );
    // At or above the threshold (20 of 25 is 80%), the sentence does not say the share is short.
    let e = Expected { period: 810.0, how: "sub-buffer = 810".into() };
    let on_lattice = Some(crate::report::findings::expected_period::OnLattice {
        period: 810,
        calls: 20,
        first: 436,
        last: 19876,
        slots: 25,
        extra: (64.0, 5503.0),
    });
    let l = say_missing(e, on_lattice);
    assert!(l.contains("20 of the 25 slots of that phase in the run: they fill at least 80% of the slots"), "{l}");
    assert!(!l.contains("needs at least"), "{l}");
}

/// The line of a fast path and a missing expected period, with `on_lattice` its outliers on that
/// period's phase.
fn say_missing(e: Expected, on_lattice: Option<crate::report::findings::expected_period::OnLattice>) -> String {
    say(vec![
        fast(true),
        Finding::MissingPeriod(MissingPeriod {
            expected: e,
            beside_other_periods: false,
            on_lattice,
            about_every: vec![],
            folded: None,
        }),
    ])
}

/// A path at the expected period too cheap to be slow: the line says the search's "none" of the
/// slow calls only, then what the fold shows, and whether the phase's cost is within the fast
/// path's spread.
#[test]
fn a_folded_phase_is_said_beside_the_searchs_none() {
    let folded = |extra: f64, threshold_above_median: f64| crate::analysis::folded_period::FoldedPeriod {
        period: 51,
        sequences: 36,
        standing_out: 35,
        phase_above: 0.996,
        rest_above: 0.38,
        extra,
        threshold_above_median,
        p_value: 1e-30,
    };
    let line = |f| {
        say(vec![
            fast(false),
            Finding::MissingPeriod(MissingPeriod {
                expected: Expected { period: 51.0, how: "one page every 51.0 calls".into() },
                beside_other_periods: false,
                on_lattice: None,
                about_every: vec![],
                folded: Some(f),
            }),
        ])
    };
    let l = line(folded(152.0, 400.0));
    assert!(
        l.contains(
            "no periodic path found among the slow calls [expected: one page every 51.0 calls]; yet one phase of \
             every 51 calls is slower than its neighbours in 35 of the 36 sequences folded at that period (99.6% of \
             its calls lie above their neighbours' median, 38% of the others; +152 ns on average; p < 1e-12 with no \
             path at any phase): the path the geometry predicts, its typical call under the slow threshold (+400 ns \
             above the fast path's median), where the search does not look"
        ),
        "{l}"
    );
    let l = line(folded(184.0, 150.0));
    assert!(l.contains("which the search over slow calls did not claim"), "{l}");
    assert!(!l.contains("under the slow threshold"), "{l}");
}
