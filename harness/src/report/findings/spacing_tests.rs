//! "About every N events" claims one call in about N: a path said so must take about one call in
//! N overall, not only within its bursts.
use crate::decisions::irregular::BURST_RATIO;
use crate::report::findings::{of, Finding};
use crate::report::tests::{analysis_of, xorshift};

/// A generator of runs: a fast path, a path in bursts (a few calls a fixed spacing apart, the
/// bursts far apart) and, in some runs, a steady path at its own spacing throughout. Every
/// irregular path said "about every N events" takes at least 1 call in BURST_RATIO x N overall;
/// a bursty path is said by its overall rate.
#[test]
fn a_spacing_is_said_only_at_the_paths_own_rate() {
    let mut rnd = xorshift();
    let mut bursty_said = 0;
    for run in 0..12 {
        let gap = 6 + rnd() % 20;
        let steady = (run % 2 == 1).then(|| 300 + rnd() % 400);
        let seqs: Vec<Vec<f64>> = (0..3)
            .map(|_| {
                let mut v: Vec<f64> = (0..20000).map(|_| 100.0 + (rnd() % 2) as f64 * 10.0).collect();
                for _ in 0..5 {
                    let start = rnd() % 19000;
                    for k in 0..12 {
                        v[(start + k * gap) as usize] += 700.0 + (rnd() % 40) as f64;
                    }
                }
                if let Some(s) = steady {
                    let mut i = rnd() % s;
                    while i < 20000 {
                        v[i as usize] += 2500.0 + (rnd() % 100) as f64;
                        i += s - 15 + rnd() % 31;
                    }
                }
                v
            })
            .collect();
        let cp = analysis_of(&seqs);
        for f in of(&cp, None, None, None, None).findings {
            if let Finding::IrregularPath(p) = f {
                if let Some(s) = &p.spacing {
                    assert!(
                        p.one_in <= BURST_RATIO * s.median,
                        "run {run}: about every {} but 1 in {}",
                        s.median,
                        p.one_in
                    );
                } else if (p.extra - 720.0).abs() < 100.0 {
                    bursty_said += 1;
                }
            }
        }
    }
    // The bursts are said (by their rate) in most runs: the test does not pass by saying nothing.
    assert!(bursty_said >= 6, "the bursty path was said in {bursty_said} of 12 runs");
}
