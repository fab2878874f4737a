//! A long period is searched in whole sequences: where some repetitions ran in a slower speed
//! phase (most of their calls above the slow threshold), the search takes the quietest
//! repetitions whole, not the first part of every one, which holds too few of a long period's
//! calls (LTTng's switch every 810 calls in repetitions of 5000).
use crate::report::tests::{analysis_of, xorshift};

/// A generator of runs: 6 to 10 repetitions of 5000 calls with a path every P (500 to 1200) at
/// +1.5 to +3 us, each repetition at its own phase; about half of them slower throughout (every
/// call up to +80 ns more, as in a slower speed phase). The path is found at its period.
#[test]
fn a_long_period_is_found_beside_repetitions_in_a_slower_phase() {
    let mut rnd = xorshift();
    for run in 0..6 {
        let reps = 6 + (rnd() % 5) as usize;
        let p = 500 + rnd() % 700;
        let extra = 1500.0 + (rnd() % 1500) as f64;
        let mut noisy = 0;
        let seqs: Vec<Vec<f64>> = (0..reps)
            .map(|r| {
                let slow = r < 2 || rnd() % 2 == 0;
                noisy += slow as usize;
                let phase = rnd() % p;
                (0..5000u64)
                    .map(|i| {
                        let mut v = 100.0 + (rnd() % 2) as f64 * 10.0;
                        if slow {
                            v += (rnd() % 80) as f64;
                        }
                        if i % p == phase {
                            v += extra;
                        }
                        v
                    })
                    .collect()
            })
            .collect();
        let cp = analysis_of(&seqs);
        let said: Vec<(u64, u64)> = cp.periodic.iter().map(|x| (x.period, x.taken)).collect();
        assert!(
            cp.periodic.iter().any(|x| x.period == p),
            "run {run}: {reps} repetitions ({noisy} slower), a path every {p} at +{extra}: said {said:?}"
        );
    }
}

/// 100 000 calls of a fast path at 100 or 110 ns, in stretches of 2000 calls that run slower at
/// random (every call up to +80 ns more), each call `plant(iteration, a random draw)` ns dearer.
fn with_slower_stretches(rnd: &mut impl FnMut() -> u64, mut plant: impl FnMut(u64, u64) -> f64) -> Vec<f64> {
    let mut slow = false;
    (0..100_000u64)
        .map(|i| {
            if i % 2000 == 0 {
                slow = rnd() % 2 == 0;
            }
            let mut v = 100.0 + (rnd() % 2) as f64 * 10.0;
            if slow {
                v += (rnd() % 80) as f64;
            }
            v + plant(i, rnd())
        })
        .collect()
}

/// A generator of single long runs: 100 000 calls, stretches of 2000 of them slower at random
/// (every call up to +80 ns more), and a rare costly path every P (3000 to 9000) at +5 to +15 us.
/// No two whole sequences fit the search's bound, and the first share of the run holds at most
/// one of the path's calls: the rest of the run, read above a cost floor, holds them all.
#[test]
fn a_long_period_is_found_in_one_run_with_a_slower_phase() {
    let mut rnd = xorshift();
    for run in 0..4 {
        let p = 3000 + rnd() % 6000;
        let extra = 5000.0 + (rnd() % 10000) as f64;
        let phase = rnd() % p;
        let calls = with_slower_stretches(&mut rnd, |i, _| if i % p == phase { extra } else { 0.0 });
        let cp = analysis_of(&[calls]);
        let said: Vec<(u64, u64)> = cp.periodic.iter().map(|x| (x.period, x.taken)).collect();
        assert!(cp.periodic.iter().any(|x| x.period == p), "run {run}: a path every {p} at +{extra}: said {said:?}");
    }
}

/// A generator of single long runs that the search reads in two parts: 100 000 calls, stretches
/// of 2000 of them slower at random, and a path every P calls (300 to 900) in the first 3000 to
/// 6000 calls only. The whole run refuses the lattice the first part holds; its calls are then
/// outliers on no path again, so that what sets p99 gives the outliers no more calls than the
/// outliers hold.
#[test]
fn calls_of_a_lattice_the_whole_run_refuses_are_outliers_again() {
    use crate::analysis::code_paths::TailClass;
    let mut rnd = xorshift();
    for run in 0..6 {
        let p = 300 + rnd() % 600;
        let extra = 1500.0 + (rnd() % 1500) as f64;
        let mut next = rnd() % p;
        let stop = 6000 + rnd() % 3000;
        // A fifth of the calls at +100 to +600 ns, at random: more slow calls than the search's
        // bound, so the first part is short and the path fills its lattice there.
        let calls = with_slower_stretches(&mut rnd, |i, r| {
            let mut v = if r % 5 == 0 { 100.0 + ((r >> 8) % 500) as f64 } else { 0.0 };
            if i == next && i < stop {
                v += extra;
                next += p;
            }
            v
        });
        let cp = analysis_of(&[calls]);
        for t in &cp.tails {
            let said = t.members.iter().filter(|m| matches!(m.0, TailClass::Outlier)).count();
            let edge = (t.above - cp.dominant.median) as f32;
            let held = cp.outlier_calls.iter().filter(|c| c.0 >= edge).count();
            assert!(
                said <= held,
                "run {run}: a path every {p} up to call {stop}: the tail above p{} gives {said} calls to outliers, which hold {held} that costly",
                t.quantile * 100.0,
            );
        }
    }
}
