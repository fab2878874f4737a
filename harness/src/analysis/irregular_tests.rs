//! Tests of `analysis::irregular` (kept apart so that irregular.rs stays short).
use super::*;
use crate::stats::rng::XorShift64Star;

fn part(its: Vec<Vec<u64>>, cost: f32) -> Part {
    let calls = its.iter().map(Vec::len).sum::<usize>();
    let path = CodePath {
        mode: Mode { first_bin: 0, end_bin: 1, zero: false, median: cost as f64, count: calls as u64, fraction: 0.0 },
        delta: cost as f64,
        calls: calls as u64,
        spacing: typical_spacing(&its).map(Into::into),
        clustered: None,
        keyed: None,
    };
    Part { path, its, costs: vec![cost; calls] }
}

/// One path's calls every `p` (a random phase per sequence, 5 % of them missing).
fn lattice(g: &mut XorShift64Star, seqs: usize, n: u64, p: u64) -> Vec<Vec<u64>> {
    (0..seqs)
        .map(|_| {
            let r = g.below(p);
            (0..n / p).map(|k| r + k * p).filter(|_| g.below(20) != 0).collect()
        })
        .collect()
}

/// Generated runs of three shapes. One path whose cost drifts through two to four modes (each
/// mode holds a stretch of the run, and calls alternate between neighbouring modes where the
/// cost crosses): said once. Two paths at one spacing and different phases, or at spacings
/// apart by more than a quarter: said twice.
#[test]
fn a_path_drifting_across_modes_is_one_and_two_paths_stay_two() {
    let mut g = XorShift64Star(0x5eed_1234);
    let (mut merged, mut apart) = (0, 0);
    for case in 0..600 {
        let seqs = 1 + g.below(5) as usize;
        let p = 8 + g.below(400);
        let n = p * (30 + g.below(170));
        let ext = vec![(0, n - 1); seqs];
        match case % 3 {
            0 => {
                let calls = lattice(&mut g, seqs, n, p);
                let modes = 2 + g.below(3) as usize;
                let mut parts: Vec<Vec<Vec<u64>>> = vec![vec![Vec::new(); seqs]; modes];
                for (s, c) in calls.iter().enumerate() {
                    for &it in c {
                        // The cost's level with a crossing zone a tenth of the run wide.
                        let level = (it as f64 / n as f64) * modes as f64 + (g.below(1000) as f64 / 1000.0 - 0.5) * 0.2;
                        parts[(level.max(0.0) as usize).min(modes - 1)][s].push(it);
                    }
                }
                let parts: Vec<Part> =
                    parts.into_iter().enumerate().map(|(k, its)| part(its, 100.0 * (k + 1) as f32)).collect();
                let out = one_path_per_spacing(parts, 0.0, &ext, n * seqs as u64);
                assert_eq!(out.len(), 1, "case {case}: one path every {p} in {modes} modes said {} times", out.len());
                assert_eq!(out[0].path.calls as usize, calls.iter().map(Vec::len).sum::<usize>(), "case {case}");
                merged += 1;
            }
            1 => {
                // Phases apart by more than a tenth of the spacing and one call either way.
                let lo = ((p as f64 * SPACING_TOLERANCE).ceil() as u64 + 2).min(p / 2);
                let d = lo + g.below(p - 2 * lo + 1);
                let a = lattice(&mut g, seqs, n, p);
                let b: Vec<Vec<u64>> =
                    a.iter().map(|s| s.iter().map(|&it| it + d).filter(|&x| x < n).collect()).collect();
                let out = one_path_per_spacing(vec![part(a, 100.0), part(b, 300.0)], 0.0, &ext, n * seqs as u64);
                assert_eq!(out.len(), 2, "case {case}: two paths every {p}, {d} apart, said as one");
                apart += 1;
            }
            _ => {
                let q = (p as f64 * (1.25 + g.below(300) as f64 / 100.0)) as u64;
                let a = lattice(&mut g, seqs, n, p);
                let b = lattice(&mut g, seqs, n, q);
                let out = one_path_per_spacing(vec![part(a, 100.0), part(b, 300.0)], 0.0, &ext, n * seqs as u64);
                assert_eq!(out.len(), 2, "case {case}: paths every {p} and {q} said as one");
                apart += 1;
            }
        }
    }
    assert_eq!((merged, apart), (200, 400));
}
