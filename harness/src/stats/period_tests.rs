//! Tests of `stats::period` (kept apart so that period.rs stays under 500 lines).
use super::*;
use crate::stats::residues::fast_rem;

#[test]
fn detect_period_scores_the_share_on_the_lattice() {
    // Ten calls every 10, one stray call between: period 10, 10 of 11 events on it.
    let mut s: Vec<u64> = (0..10).map(|k| 10 * k).collect();
    s.push(45);
    s.sort_unstable();
    let p = detect_period(&[s]).expect("period 10");
    assert_eq!((p.period, p.events), (10, 11));
    assert!((p.on_lattice - 10.0 / 11.0).abs() < 1e-12, "{p:?}");
    assert_eq!(detect_period(&[vec![0, 10, 20]]), None, "fewer than 4 events");
}

#[test]
fn lattice_slots_count_the_phase_inside_the_span() {
    // r = 3 mod 10 inside 5..=100: 13, 23, ..., 93.
    assert_eq!(lattice_slots(5, 100, 10, 3), 9);
    assert_eq!(lattice_slots(0, 9, 10, 3), 1);
    assert_eq!(lattice_slots(4, 9, 10, 3), 0);
    assert_eq!(lattice_slots(13, 13, 10, 3), 1);
}

#[test]
fn the_strongest_lattice_wins_over_a_weaker_divisor() {
    // A path every 100 (phase 7) and two slow calls half-way between two pairs of its calls:
    // 50 is a candidate (four differences of 50) whose lattice holds 32 of 60 slots and
    // passes the evidence bar, but the true period's 30 of 30 is stronger and must win.
    let mut calls: Vec<(u64, f32)> = (0..30).map(|k| (7 + 100 * k, 1000.0)).collect();
    calls.extend([(57, 1000.0), (357, 1000.0)]);
    calls.sort_by_key(|c| c.0);
    let seq = SlowSeq { first: 0, last: 2999, calls };
    let l = best_lattice(&[seq], 3000).expect("a lattice");
    assert_eq!((l.period, l.hits, l.slots), (100, 30, 30), "{l:?}");
    assert_eq!(l.residues, vec![Some(7)]);
    assert!(l.log10_chance < -3.0, "{l:?}");
}

#[test]
fn period_with_gaps_and_noise() {
    // Every 64th call (phase 17), two lost to discards, plus three noise events.
    let mut s: Vec<u64> = (0..200).map(|k| 17 + 64 * k).filter(|&i| i != 17 + 64 * 5 && i != 17 + 64 * 90).collect();
    s.extend([100, 2000, 5003]);
    s.sort_unstable();
    let p = detect_period(&[s.clone(), s.iter().map(|i| i + 3).collect()]).unwrap();
    assert_eq!(p.period, 64);
    assert!(p.on_lattice > 0.95);
}

#[test]
fn spacing_of_a_drifting_flush() {
    let mut s = vec![0u64];
    for k in 0..40u64 {
        // The formatted line grows and shrinks: the flush comes every 405..416 calls.
        s.push(s.last().unwrap() + 405 + (k * 7) % 12);
    }
    assert_eq!(detect_period(&[s.clone()]), None);
    let (med, near) = spacing(&[s]).unwrap();
    assert!((405.0..=416.0).contains(&med) && near > 0.9, "{med} {near}");
}

fn noisy(n: u64, p: u64, phase: u64, noise: usize, seed: u64) -> SlowSeq {
    let mut x = crate::stats::rng::XorShift64(seed);
    let mut calls: Vec<(u64, f32)> = (0..n).filter(|i| i % p == phase).map(|i| (i, 1000.0)).collect();
    for _ in 0..noise {
        calls.push((x.next() % n, 300.0));
    }
    calls.sort_by_key(|c| c.0);
    calls.dedup_by_key(|c| c.0);
    SlowSeq { first: 0, last: n - 1, calls }
}

#[test]
fn lattice_of_six_calls_among_noise() {
    // LTTng-UST at 8 KiB: 6 switches 810 apart (phase 120) in 5000 calls, with 40 outliers.
    let s = noisy(5000, 810, 120, 40, 7);
    let l = find_lattices(&[s], 5000, 4);
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!((l[0].period, l[0].residues[0]), (810, Some(120)));
    assert!(l[0].hits >= 6 && l[0].log10_chance < -6.0, "{:?}", l[0]);
}

#[test]
fn lattice_among_hundreds_of_outliers() {
    // A noisy 16 KiB LTTng-UST run: 12 switches 1630 apart (+900..1100 ns) among 540
    // outliers of every cost from 100 ns to 10 us (log-uniform), ~45 between two switches.
    let mut x = crate::stats::rng::XorShift64(0x9E3779B97F4A7C15);
    let mut rnd = || x.next();
    let mut calls: Vec<(u64, f32)> =
        (0..20_000u64).filter(|i| i % 1630 == 920).map(|i| (i, 950.0 + (i % 7) as f32 * 25.0)).collect();
    for _ in 0..540 {
        let i = rnd() % 20_000;
        let v = 100.0 * 100f64.powf((rnd() % 1000) as f64 / 1000.0);
        calls.push((i, v as f32));
    }
    calls.sort_by_key(|c| c.0);
    calls.dedup_by_key(|c| c.0);
    let l = find_lattices(&[SlowSeq { first: 0, last: 19_999, calls }], 20_000, 4);
    assert!(l.iter().any(|l| l.period == 1630 && l.residues[0] == Some(920)), "{l:?}");
}

#[test]
fn two_lattices_and_none_in_noise() {
    let mut a = noisy(20_000, 1630, 920, 60, 3);
    a.calls.extend((0..20_000u64).filter(|i| i % 97 == 5).map(|i| (i, 400.0)));
    a.calls.sort_by_key(|c| c.0);
    a.calls.dedup_by_key(|c| c.0);
    let mut l = find_lattices(&[a], 20_000, 4);
    l.sort_by_key(|x| x.period);
    assert_eq!(l.iter().map(|x| x.period).collect::<Vec<_>>(), vec![97, 1630], "{l:?}");
    let r = noisy(20_000, 20_001, 0, 300, 11);
    assert!(find_lattices(&[r], 20_000, 4).is_empty());
}

#[test]
fn no_period_for_random_events() {
    let mut x = crate::stats::rng::XorShift64(88172645463325252);
    let mut s: Vec<u64> = (0..300).map(|_| x.next() % 100_000).collect();
    s.sort_unstable();
    s.dedup();
    assert_eq!(detect_period(&[s]), None);
    assert_eq!(detect_period(&[vec![1, 2]]), None);
}

/// The remainder by a multiply equals `%` over 32-bit values, the edges included.
#[test]
fn the_fast_remainder_is_the_remainder() {
    let mut g = crate::stats::rng::XorShift64Star(7);
    let edges = [1u64, 2, 3, 7, 810, 4096, 65_521, (1 << 31) + 1, u32::MAX as u64 - 1, u32::MAX as u64];
    let mut pairs: Vec<(u64, u64)> = edges.iter().flat_map(|&d| edges.iter().map(move |&a| (a, d))).collect();
    pairs.extend((0..200_000).map(|_| (g.next() >> 32, (g.next() >> (32 + g.below(32))).max(1))));
    for (a, d) in pairs {
        assert_eq!(fast_rem(a, d, (u64::MAX / d).wrapping_add(1)), a % d, "{a} % {d}");
    }
}

#[test]
fn a_path_with_a_slower_stretch_after_it_keeps_its_own_residue() {
    // A path every 51 at phase 42 (+2000 ns) and a slower stretch of its next 15 calls (+150 ns),
    // which wraps past the period's end: residues 43..=50 and 0..=6 are as full as 42, and 0 has
    // one more slot in 0..=999. The lattice is the path's: the best filled, then the costliest.
    let mut calls: Vec<(u64, f32)> = Vec::new();
    for i in 0..1000u64 {
        let off = (i + 51 - 42) % 51;
        if off == 0 {
            calls.push((i, 2000.0));
        } else if off <= 15 {
            calls.push((i, 150.0));
        }
    }
    let l = find_lattices(&[SlowSeq { first: 0, last: 999, calls }], 1000, 1);
    assert_eq!(l.first().map(|l| (l.period, l.residues[0])), Some((51, Some(42))), "{l:?}");
}

/// A cheap path every 21 calls (found first: it has the most calls) meets a costly path every 132
/// calls on 3 of the costly path's 20 slots (132 and 21 share the factor 3). The calls where they
/// meet cost the costly path's price, so they stay for the next search: the costly path keeps
/// all its slots at its own phase, and a slower stretch after it (the next 13 calls, all as
/// filled as the path) does not take its phase.
#[test]
fn a_costly_path_keeps_the_slots_a_cheaper_one_meets() {
    let (n, cheap, costly) = (2653u64, (21u64, 11u64), (132u64, 47u64));
    let calls: Vec<(u64, f32)> = (0..n)
        .filter_map(|i| {
            let since = (i + costly.0 - costly.1) % costly.0;
            if since == 0 {
                Some((i, 9000.0))
            } else if since <= 13 {
                Some((i, 320.0))
            } else {
                (i % cheap.0 == cheap.1).then_some((i, 250.0))
            }
        })
        .collect();
    let on_both = calls.iter().filter(|c| c.0 % cheap.0 == cheap.1 && c.0 % costly.0 == costly.1).count();
    assert!(on_both >= 3, "the paths meet: {on_both}");
    let l = find_lattices(&[SlowSeq { first: 0, last: n - 1, calls }], n, 4);
    assert!(l.iter().any(|x| x.period == costly.0 && x.residues[0] == Some(costly.1)), "{l:?}");
}
