//! Two paths whose periods divide one another (every d calls and every k*d), drawn at random:
//! each is named at its own phase in every repetition, and no lattice of the longer period is
//! read on the shorter one's calls.

/// A path every d calls (d 8 to 20) whose cost drifts up over the run, beside a path every k*d
/// (k 3 to 9) of a jittered cost, each at its own random phase in each of 2 to 5 repetitions of 1500 to 3000 calls.
/// The shorter path's calls fill one residue of the longer period in every repetition, at the
/// longer path's cost or above it as the cost drifts, and the calls just before the longer
/// path's can be the shorter path's. Every claim must be one of the two paths, each of its
/// residues one of that path's planted phases (as the generative battery scores a claim), and
/// both must be named.
#[test]
fn a_path_on_a_multiple_of_another_keeps_its_own_phase() {
    let mut rnd = crate::report::tests::xorshift();
    let (mut wrong, mut missed) = (Vec::new(), Vec::new());
    for case in 0..12 {
        let reps = 2 + (rnd() % 4) as usize;
        let len = 1500 + rnd() % 1500;
        let d = 8 + rnd() % 13;
        let long = d * (3 + rnd() % 7);
        let (short_extra, drift) = (150.0 + (rnd() % 450) as f64, 2.0 + (rnd() % 10) as f64);
        let long_extra = 300.0 + (rnd() % 1200) as f64;
        let phases: Vec<(u64, u64)> = (0..reps)
            .map(|_| {
                let s = rnd() % d;
                // The longer path off the shorter one's lattice: where they meet, the meeting
                // is the longer path's call at the sum of the costs, which is no test of phase.
                let l = (0..).map(|_| rnd() % long).find(|l| l % d != s).unwrap();
                (s, l)
            })
            .collect();
        let total = (reps as u64 * len) as f64;
        let seqs: Vec<Vec<f64>> = phases
            .iter()
            .enumerate()
            .map(|(r, &(s, l))| {
                (0..len)
                    .map(|i| {
                        let at = (r as u64 * len + i) as f64 / total;
                        let mut v = 100.0 + (rnd() % 2) as f64 * 10.0;
                        if i % d == s {
                            v += short_extra * (1.0 + (drift - 1.0) * at);
                        }
                        if i % long == l {
                            v += long_extra * (0.8 + 0.4 * (rnd() % 1000) as f64 / 1000.0);
                        }
                        v
                    })
                    .collect()
            })
            .collect();
        let found = crate::report::tests::analysis_of(&seqs).periodic;
        let planted =
            |period: u64| -> Vec<u64> { phases.iter().map(|&(s, l)| if period == d { s } else { l }).collect() };
        for p in &found {
            let got: Vec<u64> = p.residues.iter().map(|r| r.residue).collect();
            if (p.period != d && p.period != long) || got.iter().any(|r| !planted(p.period).contains(r)) {
                wrong.push(format!("case {case}: d {d}, {long}, phases {phases:?}: claimed {} at {got:?}", p.period));
            }
        }
        for period in [d, long] {
            if !found.iter().any(|p| p.period == period) {
                missed.push(format!("case {case}: every {period} (d {d}, {long}, phases {phases:?})"));
            }
        }
    }
    assert!(wrong.is_empty(), "{} false claims:\n{}", wrong.len(), wrong.join("\n"));
    assert!(missed.len() <= 2, "{} of 24 paths missed:\n{}", missed.len(), missed.join("\n"));
}
