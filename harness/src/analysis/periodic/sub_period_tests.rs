//! The coarser lattice a chance progression is judged on, where no path was claimed on it:
//! generated runs with a path hidden inside a random second mode must show it, and runs whose
//! slow calls fall anywhere must not.
use super::gathered;
use crate::analysis::periodic::search::{Call, Space, Thresholds};
use crate::stats::period::Lattice;
use crate::stats::rng::SplitMix64;

fn space(len: u64) -> Space {
    Space {
        extents: vec![(0, len - 1)],
        rows: len,
        base: 100.0,
        bw: (0.05, 5.0),
        th: Thresholds { slow: 140.0, low: 130.0, tight: 120.0, keep_above: 110.0 },
    }
}

fn child(period: u64, residue: u64) -> Lattice {
    Lattice { period, residues: vec![Some(residue)], hits: 0, calls: Vec::new(), slots: 0, log10_chance: 0.0 }
}

/// A cheap path every `d` (all its slots at +c1) inside a second mode that a share of all calls
/// take (+c2, the path's slots too): the calls above the mode's cost gather on the path's
/// lattice, and a progression of them on a multiple is the child. The lattice shown is the
/// path's own, not a divisor of it whose slots hold the path's (every 14 for a path every 42),
/// even where the runs are long enough for both tails to underflow.
#[test]
fn a_path_hidden_in_a_second_mode_shows_as_the_coarser_lattice() {
    let mut rng = SplitMix64(0x5eed_0001);
    // Cases 24 to 35 run 20 times as long.
    for case in 0..36 {
        let d = 8 + rng.below(120) as u64;
        let k = 3 + rng.below(10) as u64;
        let len = d * k * (4 + rng.below(5) as u64) * if case >= 24 { 20 } else { 1 };
        let r = rng.below(d as usize) as u64;
        let share = 0.1 + 0.3 * rng.unit();
        let (c1, c2) = (60.0 + 300.0 * rng.unit(), 60.0 + 300.0 * rng.unit());
        let calls: Vec<Call> = (0..len)
            .filter_map(|it| {
                let v = 100.0 + if it % d == r { c1 } else { 0.0 } + if rng.unit() < share { c2 } else { 0.0 };
                (v > 110.0).then_some(Call { it, v: v as f32, phase: false })
            })
            .collect();
        let j = rng.below(k as usize) as u64;
        let got = gathered(&space(len), &[calls], &child(d * k, r + j * d), &[]);
        let p = got.map(|g| g.period);
        assert!(
            p == Some(d),
            "case {case}: a path every {d} (+{c1:.0}) in a mode of {share:.2} (+{c2:.0}), child every {}: gathered {p:?}",
            d * k
        );
    }
}

/// Slow calls that fall anywhere (a random share, random costs) gather on no coarser lattice of a
/// random child's, whatever its period's divisors: the trigger fires at most at GATHERED_P per
/// child, so none of these should.
#[test]
fn calls_that_fall_anywhere_gather_on_no_coarser_lattice() {
    let mut rng = SplitMix64(0x5eed_0002);
    let mut fired = Vec::new();
    for case in 0..200 {
        let big = [12u64, 30, 64, 96, 210, 360, 512, 1024, 2310][rng.below(9)];
        let len = big * (4 + rng.below(40) as u64);
        let share = 0.01 + 0.4 * rng.unit();
        let calls: Vec<Call> = (0..len)
            .filter_map(|it| {
                (rng.unit() < share).then(|| Call { it, v: (110.0 + 400.0 * rng.unit().powi(2)) as f32, phase: false })
            })
            .collect();
        let r = rng.below(big as usize) as u64;
        if let Some(g) = gathered(&space(len), &[calls], &child(big, r), &[]) {
            fired.push((case, big, g.period));
        }
    }
    assert!(fired.is_empty(), "coarser lattices found where calls fall anywhere: {fired:?}");
}

/// A path of one period at two phases half a period apart (two claimed lattices): each phase's
/// calls sit on the other's coarser lattice, but they are a claimed path's, so neither is held
/// against a hidden one; left unclaimed, the second phase would show.
#[test]
fn calls_of_a_claimed_lattice_are_no_hidden_path() {
    let mut rng = SplitMix64(0x5eed_0003);
    for case in 0..12 {
        let half = 8 + rng.below(200) as u64;
        let big = 2 * half;
        let len = big * (5 + rng.below(20) as u64);
        let r = rng.below(half as usize) as u64;
        let calls: Vec<Call> = (0..len)
            .filter(|it| it % half == r)
            .map(|it| Call { it, v: if it % big == r { 600.0 } else { 500.0 }, phase: false })
            .collect();
        let seqs = [calls];
        let sibling = child(big, r + half);
        assert!(gathered(&space(len), &seqs, &child(big, r), &[&sibling]).is_none(), "case {case}: claimed sibling");
        assert!(gathered(&space(len), &seqs, &child(big, r), &[]).is_some(), "case {case}: unclaimed sibling");
    }
}
