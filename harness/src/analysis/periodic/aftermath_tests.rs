//! Tests of moving a lattice to the head of the slow run it is part of (aftermath.rs).
use std::collections::HashMap;

use super::at_heads;
use crate::analysis::code_paths::{PeriodicPath, Residue, SlowCall};

/// Runs of `n` calls, one per sequence, at 600 ns; `slow(seq, it)` gives a call's extra cost
/// (0: fast, not among the slow calls). The path every `p` at `residues`, costing `x`.
fn heads_of(
    p: u64,
    residues: &[u64],
    x: f64,
    n: u64,
    slow: impl Fn(u64, u64) -> f64,
) -> (Vec<PeriodicPath>, Vec<u64>, f64) {
    let mut entries = Vec::new();
    let mut ranges = HashMap::new();
    for seq in 0..residues.len() as u64 {
        ranges.insert(seq, (0, n - 1));
        for it in 0..n {
            let extra = slow(seq, it);
            if extra > 0.0 {
                entries.push(SlowCall { seq, it, v: (600.0 + extra) as f32, mode: None });
            }
        }
    }
    let path = PeriodicPath {
        period: p,
        phases: 1,
        hits: 0,
        slots: 0,
        extra: x,
        taken: 0,
        cut: 600.0 + 0.5 * x,
        log10_chance: -10.0,
        p_value: 0.001,
        null_runs: 1000,
        phase: residues[0],
        residues: residues.iter().enumerate().map(|(s, &r)| Residue { seq: s as u64, residue: r }).collect(),
        followers: vec![],
        profile: None,
        stretch: None,
        counted_in: vec![],
        slots_at: vec![],
    };
    let out = at_heads(vec![path], &entries, &ranges);
    let said = out[0].residues.iter().map(|r| r.residue).collect();
    let extra = out[0].extra;
    (out, said, extra)
}

/// Generated cases: a path every P (40 to 200 calls, +X of 100 to 400 ns) at its own residue in
/// each of 6 to 14 sequences, found by the search on its third slow call (two slow calls
/// before it, at 0.8 X): it is moved to the first, in every sequence. Where one to three of the
/// sequences are slow throughout (a slower phase: every call +0.6 X to +2 X), the calls before
/// the path's are slow there for half a period and more, which says nothing of where the path
/// starts: the lattice is left where the search found it, and its cost as it was.
#[test]
fn a_lattice_moves_to_its_run_s_head_only_where_the_run_is_the_path_s() {
    let mut x64 = crate::stats::rng::XorShift64(0x2545_f491_4f6c_dd1d);
    let mut rnd = move || x64.next();
    for case in 0..60 {
        let p = 40 + rnd() % 161;
        let seqs = 6 + rnd() % 9;
        let x = 100.0 + (rnd() % 300) as f64;
        let heads: Vec<u64> = (0..seqs).map(|_| rnd() % p).collect();
        let found: Vec<u64> = heads.iter().map(|h| (h + 2) % p).collect();
        let before = |h: u64, it: u64| -> f64 {
            match (it + p - h) % p {
                0 | 1 => 0.8 * x,
                2 => x,
                _ => 0.0,
            }
        };
        let (_, said, extra) = heads_of(p, &found, x, 4000, |s, it| before(heads[s as usize], it));
        assert_eq!(said, heads, "case {case}: every {p}, moved to the run's first call");
        assert!(extra < x, "case {case}: the head's calls cost less than the third's");

        let slower = 1 + rnd() % 3;
        let level = x * (0.6 + 1.4 * (rnd() % 100) as f64 / 100.0);
        let (_, said, extra) = heads_of(p, &found, x, 4000, |s, it| {
            let own = before(heads[s as usize], it);
            if s < slower {
                level + own
            } else {
                own
            }
        });
        assert_eq!(said, found, "case {case}: every {p}, {slower} of {seqs} sequences slower by {level:.0}");
        assert_eq!(extra, x, "case {case}");
    }
}
