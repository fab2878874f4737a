//! Tests of a path followed by a slower stretch, in runs too short for a lattice to leave it.
use crate::analysis::calibration_battery::latency_paths;
use crate::stats::rng::XorShift64Star;

/// Generated short runs (3 to 5 repetitions of 6 to 14 slots of a path every P, P from 30 to 400
/// calls, at +X) in which each call of the path is followed by a stretch of 20 to 50 % of P
/// calls at +S. A lattice one or a few calls shorter than P slides through the stretch by that
/// many calls a slot, so in a repetition this short it sits on a slow call in every slot, as
/// the path's own lattice does. Every period said is P, at the path's phase or inside the
/// stretch after it; where the path costs well above its stretch (X at least 1.5 S) it is said
/// at its phase in nearly every run.
#[test]
fn a_path_with_a_slower_stretch_after_it_keeps_its_period() {
    let mut g = XorShift64Star(0x57e7_c4af_7e2);
    let mut unit = move || (g.next() >> 11) as f64 / (1u64 << 53) as f64;
    let (mut above, mut named) = (0, 0);
    let mut wrong = Vec::new();
    for case in 0..40 {
        let reps = 3 + (unit() * 3.0) as usize;
        let period = (30.0 * (400.0f64 / 30.0).powf(unit())).round() as u64;
        let n = period * (6 + (unit() * 9.0) as u64) + (unit() * period as f64) as u64;
        let base = 10.0 * (10.0 + (unit() * 30.0).floor());
        let s_cost = 30.0 * (200.0f64 / 30.0).powf(unit());
        let extra = s_cost * 0.5 * 20f64.powf(unit());
        let len = ((0.2 + 0.3 * unit()) * period as f64) as u64;
        let phases: Vec<u64> = (0..reps).map(|_| (unit() * period as f64) as u64).collect();
        let seqs: Vec<Vec<f64>> = (0..reps)
            .map(|r| {
                (0..n)
                    .map(|i| {
                        let since = (i + period - phases[r]) % period;
                        let path = match since {
                            0 => extra * (0.95 + 0.1 * unit()),
                            s if s <= len => s_cost,
                            _ => 0.0,
                        };
                        base + 10.0 * (unit() < 0.5) as u8 as f64 + path
                    })
                    .collect()
            })
            .collect();
        let (cp, said) = latency_paths(&seqs);
        let what = format!(
            "case {case}: every {period} at {phases:?}, +{extra:.0} ns, {len} calls at +{s_cost:.0} ns after it, {reps} x {n}; said {said:?}"
        );
        let inside = |p: u64, r: u64| p == period && phases.iter().any(|&ph| (r + period - ph) % period <= len);
        if !cp.periodic.iter().all(|p| p.residues.iter().all(|r| inside(p.period, r.residue))) {
            wrong.push(what.clone());
        }
        if extra >= 1.5 * s_cost {
            above += 1;
            let at_phase = |p: &&crate::analysis::code_paths::PeriodicPath| {
                p.period == period
                    && p.residues.iter().all(|r| phases.iter().any(|&ph| (r.residue + period - ph) % period <= 3))
            };
            named += cp.periodic.iter().any(|p| at_phase(&p)) as usize;
            if !cp.periodic.iter().any(|p| at_phase(&p)) {
                eprintln!("not named: {what}");
            }
        }
    }
    assert!(wrong.is_empty(), "{} runs said a period or phase not planted:\n{}", wrong.len(), wrong.join("\n"));
    assert!(named as f64 >= 0.9 * above as f64, "the path said at its phase in {named} of {above} runs");
}
