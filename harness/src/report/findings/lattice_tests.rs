//! One path per lattice: the passes that tidy the periodic paths (analysis/passes.rs) on paths
//! built from a real analysis.

/// Two paths of one lattice (the same period, phase and phases) are said once, with the calls
/// of the one that counts more; another phase of the same period stays a path of its own.
#[test]
fn one_lattice_is_one_path() {
    let mut rnd = crate::report::tests::xorshift();
    let seqs: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..5000u64).map(|i| 90.0 + (rnd() % 2) as f64 + if i % 810 == 100 { 900.0 } else { 0.0 }).collect())
        .collect();
    let found = crate::report::tests::analysis_of(&seqs).periodic;
    let one = found.first().expect("the planted path every 810").clone();
    let path = |phase: u64, taken: u64, extra: f64| crate::analysis::code_paths::PeriodicPath {
        period: 4096,
        phases: 1,
        phase,
        taken,
        extra,
        ..one.clone()
    };
    let mut v = vec![path(2530, 20, 51.0), path(2530, 30, 44.0), path(100, 5, 900.0)];
    crate::analysis::passes::dedup_same_lattice(&mut v);
    let got: Vec<(u64, u64)> = v.iter().map(|p| (p.phase, p.taken)).collect();
    assert_eq!(got, [(2530, 30), (100, 5)]);
}

/// Paths every 97 (phase 10) and every 1000 (phase 310) meet every 97000 calls at 87310: a
/// lattice there is their coincidence; one on another phase, or over one path only, stays.
#[test]
fn the_coincidence_of_two_paths_is_not_a_third() {
    let mut rnd = crate::report::tests::xorshift();
    let seqs: Vec<Vec<f64>> = (0..2)
        .map(|_| (0..5000u64).map(|i| 90.0 + (rnd() % 2) as f64 + if i % 810 == 100 { 900.0 } else { 0.0 }).collect())
        .collect();
    let one = crate::report::tests::analysis_of(&seqs).periodic.first().expect("the path every 810").clone();
    // Each sequence's residue agrees with the phase, as a found path's does.
    let path = |period: u64, phase: u64| crate::analysis::code_paths::PeriodicPath {
        period,
        phases: 1,
        phase,
        residues: one
            .residues
            .iter()
            .map(|r| crate::analysis::code_paths::Residue { seq: r.seq, residue: phase % period })
            .collect(),
        ..one.clone()
    };
    let mut v = vec![path(97, 10), path(1000, 310), path(97000, 87310)];
    crate::analysis::passes::drop_coincidences(&mut v);
    assert_eq!(v.iter().map(|p| p.period).collect::<Vec<_>>(), [97, 1000]);
    let mut v = vec![path(97, 10), path(1000, 310), path(97000, 87311), path(1940, 10)];
    crate::analysis::passes::drop_coincidences(&mut v);
    assert_eq!(v.iter().map(|p| p.period).collect::<Vec<_>>(), [97, 1000, 97000, 1940]);

    // A path every 24 (phase 17) meets the 8 calls after a path every 21 (phase 16: its stretch
    // covers the offsets 1 to 7, iterations 17 to 23 mod 21) on lattices of 168. Every phase of
    // 168 found by brute force: a lattice there is their coincidence exactly when it lies on the
    // path every 24 and on the path every 21 or in its stretch; without the stretch, only on
    // its lattice.
    let stretched = |stretch: bool| crate::analysis::code_paths::PeriodicPath {
        stretch: stretch.then_some(crate::analysis::stretch::Stretch { calls: 8, extra: 138.0 }),
        ..path(21, 16)
    };
    for stretch in [true, false] {
        for phase in 0..168u64 {
            let mut v = vec![path(24, 17), stretched(stretch), path(168, phase)];
            crate::analysis::passes::drop_coincidences(&mut v);
            let off = (phase + 21 - 16) % 21;
            let paid = phase % 24 == 17 && (off == 0 || stretch && (1..8).contains(&off));
            assert_eq!(v.len(), if paid { 2 } else { 3 }, "phase {phase}, stretch {stretch}");
        }
    }
}

/// A cheap path every 40 calls (+60 ns, phase 7) whose next 12 calls cost +200 ns: the stretch's
/// calls fill lattices of the same period a few calls after the path, each as exact as the path.
/// They are its aftermath, one path; a second path of the period whose neighbours are fast (+900
/// ns at phase 27) stays a path of its own.
#[test]
fn a_stretch_after_a_path_is_the_path_s() {
    let mut rnd = crate::report::tests::xorshift();
    let seqs: Vec<Vec<f64>> = (0..2)
        .map(|_| {
            (0..4000u64)
                .map(|i| {
                    let since = (i + 40 - 7) % 40;
                    let extra = match since {
                        0 => 60.0,
                        1..=12 => 200.0,
                        20 => 900.0,
                        _ => 0.0,
                    };
                    90.0 + (rnd() % 2) as f64 * 10.0 + extra
                })
                .collect()
        })
        .collect();
    let found = crate::report::tests::analysis_of(&seqs).periodic;
    let of_40: Vec<(u64, u64)> = found.iter().filter(|p| p.period == 40).map(|p| (p.phase, p.phases)).collect();
    assert_eq!(of_40.len(), 2, "{found:?}");
    assert!(of_40.iter().any(|&(ph, _)| (7..=10).contains(&ph)), "{found:?}");
    assert!(of_40.iter().any(|&(ph, _)| ph == 27), "{found:?}");
}

/// A generator of runs: a path every P (20 to 60 calls) at its own phase in each of 3 to 5
/// repetitions, +X (150 to 1500 ns, varying by up to 15 %), and a slower stretch of 2 to P/3
/// calls after it at 0.5X to 1.2X, over a fast path with noise. The search picks each lattice's
/// residue per repetition, so it may split the path and its stretch between lattices
/// differently in each one; the report says one path of period P, at the path's own phase in
/// every repetition.
#[test]
fn a_path_and_its_stretch_split_between_lattices_are_one_path() {
    let mut rnd = crate::report::tests::xorshift();
    let mut wrong = Vec::new();
    for run in 0..12 {
        let p = 20 + rnd() % 41;
        let reps = 3 + rnd() % 3;
        let x = 150.0 + (rnd() % 1350) as f64;
        let k = 2 + rnd() % (p / 3 - 1);
        let y = x * (0.5 + (rnd() % 70) as f64 / 100.0);
        let mut phases: Vec<u64> = (0..reps).map(|_| rnd() % p).collect();
        let seqs: Vec<Vec<f64>> = phases
            .iter()
            .map(|&ph| {
                (0..2000u64)
                    .map(|i| {
                        let o = (i + p - ph) % p;
                        let path = match o {
                            0 => x * (0.85 + (rnd() % 30) as f64 / 100.0),
                            o if o <= k => y,
                            _ => 0.0,
                        };
                        200.0 + (rnd() % 20) as f64 + path
                    })
                    .collect()
            })
            .collect();
        let cp = crate::report::tests::analysis_of(&seqs);
        let of_p: Vec<&crate::analysis::code_paths::PeriodicPath> =
            cp.periodic.iter().filter(|q| q.period == p).collect();
        let mut said: Vec<u64> = of_p.iter().flat_map(|q| q.residues.iter().map(|r| r.residue)).collect();
        said.sort_unstable();
        phases.sort_unstable();
        if of_p.len() != 1 || said != phases {
            wrong.push(format!(
                "run {run}: every {p} at {phases:?} (+{x:.0}, {k} calls at +{y:.0} after): said {said:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A generator of runs: a path every P calls (15 to 40, +X of 300 to 1500 ns, its cost drifting
/// up to threefold over the run) and a stretch of one to three calls after it (+Y, 100 to
/// 250 ns), over a fast path with a second random mode (10 % to 30 % of the calls, +50 to
/// +90 ns), in two to four repetitions. The stretch recurs at the path's spacing; once pass 3
/// finds it, its calls are the path's, not an irregular path said beside it.
#[test]
fn a_short_stretch_after_a_path_is_no_irregular_path_of_its_own() {
    let mut rnd = crate::report::tests::xorshift();
    let mut wrong = Vec::new();
    for run in 0..10 {
        let p = 15 + rnd() % 26;
        let reps = 2 + rnd() % 3;
        let n = 800 + rnd() % 1200;
        let x = 300.0 + (rnd() % 1200) as f64;
        let drift = 1.0 + (rnd() % 200) as f64 / 100.0;
        let k = 1 + rnd() % 3;
        let y = 100.0 + (rnd() % 150) as f64;
        let (share, second) = (10 + rnd() % 21, 50.0 + (rnd() % 40) as f64);
        let seqs: Vec<Vec<f64>> = (0..reps)
            .map(|_| {
                let ph = rnd() % p;
                path_and_stretch(
                    &mut rnd,
                    (p, ph, n),
                    |i| x * (1.0 + (drift - 1.0) * i as f64 / n as f64),
                    (k, y),
                    (share, second),
                )
            })
            .collect();
        let cp = crate::report::tests::analysis_of(&seqs);
        if !cp.irregular.is_empty() {
            let said: Vec<String> =
                cp.irregular.iter().map(|q| format!("+{:.0} ({} calls)", q.delta, q.calls)).collect();
            wrong.push(format!(
                "run {run}: every {p} (+{x:.0} to +{:.0}), {k} calls at +{y:.0} after, {share}% at +{second:.0}: irregular {said:?}",
                x * drift
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A generator of runs: a path every P calls (40 to 200, +X of 100 to 2000 ns) and a long
/// stretch after it (an eighth to a third of the period at 0.3X to X), over a fast path
/// with a second random mode (10 % to 25 % of the calls, +50 to +150 ns) in one to three
/// repetitions of 1,500 to 6,000 calls. A lattice of a nearby period stays inside the stretch for
/// many periods, and the second mode fills some of its slots outside it: no lattice of another
/// period is said beside the path (a multiple of P at its phase is the sub-period null's to judge,
/// `analysis::periodic::sub_period`).
#[test]
fn a_lattice_that_slides_through_a_long_stretch_is_no_path() {
    let mut rnd = crate::report::tests::xorshift();
    let mut wrong = Vec::new();
    for run in 0..16 {
        let p = 40 + rnd() % 161;
        let s = p / 8 + rnd() % (p / 3 - p / 8 + 1);
        let reps = 1 + rnd() % 3;
        let n = 1500 + rnd() % 4500;
        let x = 100.0 + (rnd() % 1900) as f64;
        let y = x * (0.3 + (rnd() % 70) as f64 / 100.0);
        let (share, second) = (10 + rnd() % 16, 50.0 + (rnd() % 100) as f64);
        let seqs: Vec<Vec<f64>> = (0..reps)
            .map(|_| {
                let ph = rnd() % p;
                path_and_stretch(&mut rnd, (p, ph, n), |_| x, (s, y), (share, second))
            })
            .collect();
        let cp = crate::report::tests::analysis_of(&seqs);
        let beside: Vec<String> = cp
            .periodic
            .iter()
            .filter(|q| q.period % p != 0)
            .map(|q| format!("every {} +{:.0}", q.period, q.extra))
            .collect();
        if !beside.is_empty() {
            wrong.push(format!(
                "run {run}: every {p} (+{x:.0}), {s} calls at +{y:.0} after, {share}% at +{second:.0}: also {beside:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// One repetition of `n` calls over a fast path of 200 to 220 ns: a path every `p` calls at phase
/// `ph` costing `cost(i)` more at call i, the `k` calls after it `y` more, and a second random
/// mode (`share` % of the calls, `second` more).
fn path_and_stretch(
    rnd: &mut impl FnMut() -> u64,
    (p, ph, n): (u64, u64, u64),
    cost: impl Fn(u64) -> f64,
    (k, y): (u64, f64),
    (share, second): (u64, f64),
) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let o = (i + p - ph) % p;
            let path = match o {
                0 => cost(i),
                o if o <= k => y,
                _ => 0.0,
            };
            let mode = if rnd() % 100 < share { second } else { 0.0 };
            200.0 + (rnd() % 20) as f64 + mode + path
        })
        .collect()
}
