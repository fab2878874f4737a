//! Tests of how the analysis tells a speed phase of the machine from a path of the tracer's.
use crate::analysis::analyze_source;
use crate::analysis::calibration_battery::{events, latency_paths};
use crate::stats::rng::XorShift64Star;

/// Generated runs in which the machine moves between two speeds in stretches of 300 to 3000
/// calls (+20 to +50 %, 75 ns at least: a mode of its own, or one with the usual speed), and a path every P
/// calls costs about what the slower speed adds (0.8 to 1.25 times): at the usual speed the
/// path's calls cost what the phase's calls cost, and at the slower speed they cost more than
/// either. The path is found, at its period and phase, every time, and nothing else is said to
/// be periodic; the same runs without the path hold no periodic path.
#[test]
fn a_path_that_costs_what_a_speed_phase_adds_is_still_found() {
    let mut g = XorShift64Star(0x5eed_0f_5eed);
    let mut unit = move || (g.next() >> 11) as f64 / (1u64 << 53) as f64;
    for case in 0..12 {
        let reps = 3 + (unit() * 3.0) as usize;
        let n = 12_000 + (unit() * 12_000.0) as u64;
        let base = 10.0 * (10.0 + (unit() * 30.0).floor());
        let level = (base * (0.2 + 0.3 * unit())).max(75.0);
        let extra = level * (0.8 + 0.45 * unit());
        let period = (40.0 * 20f64.powf(unit())).round() as u64;
        let mut phases = Vec::new();
        let seqs: Vec<Vec<f64>> = (0..reps)
            .map(|_| {
                let phase = (unit() * period as f64) as u64;
                phases.push(phase);
                let (mut left, mut slower) = (0u64, false);
                (0..n)
                    .map(|i| {
                        if left == 0 {
                            slower = unit() < 0.5;
                            left = 300 + (unit() * 2700.0) as u64;
                        }
                        left -= 1;
                        let path = if i % period == phase { extra } else { 0.0 };
                        base + 10.0 * (unit() < 0.5) as u8 as f64 + if slower { level } else { 0.0 } + path
                    })
                    .collect()
            })
            .collect();
        let without: Vec<Vec<f64>> = seqs
            .iter()
            .zip(&phases)
            .map(|(s, &ph)| {
                s.iter().enumerate().map(|(i, &x)| x - if i as u64 % period == ph { extra } else { 0.0 }).collect()
            })
            .collect();
        let a = analyze_source(&events(&without), None, 0, 0).unwrap();
        let cp = a.code_paths.iter().find(|c| c.metric == "latency").unwrap();
        let said: Vec<u64> = cp.periodic.iter().map(|p| p.period).collect();
        assert!(said.is_empty(), "case {case} without its path: every {said:?} said");
        let (cp, said) = latency_paths(&seqs);
        let what = format!("case {case}: every {period} at {phases:?}, +{extra:.0} ns, phases +{level:.0} ns over {base} ns; said {said:?}");
        assert_eq!(cp.periodic.len(), 1, "{what}");
        let p = &cp.periodic[0];
        assert_eq!(p.period, period, "{what}");
        assert!(p.residues.len() == reps, "{what}");
        for r in &p.residues {
            assert!(phases.iter().any(|&ph| (r.residue + period - ph) % period <= 3), "{what}");
        }
    }
}

/// Generated short runs (3 to 5 repetitions of 400 to 1500 calls) with a path every P calls,
/// where a co-tenant arrives partway through the run: from then on every call costs +1 to +2
/// times the path's extra and one call in 20 to 40 meets a +2 us stall. Above the path's cut
/// every residue of a repetition it spans whole then fills, and the stalls made the costliest
/// one look like the path's phase. Each phase said is a planted one.
#[test]
fn a_repetition_that_turns_slower_keeps_its_path_phase() {
    let mut g = XorShift64Star(0x0c07_e4a4_7);
    let mut unit = move || (g.next() >> 11) as f64 / (1u64 << 53) as f64;
    let mut found = 0;
    for case in 0..24 {
        let reps = 3 + (unit() * 3.0) as usize;
        let n = 400 + (unit() * 1100.0) as u64;
        let base = 10.0 * (10.0 + (unit() * 30.0).floor());
        let extra = 60.0 + unit() * 240.0;
        let level = extra * (1.0 + unit());
        let period = (5.0 * 8f64.powf(unit())).round() as u64;
        let at = ((0.2 + 0.6 * unit()) * (reps as u64 * n) as f64) as u64;
        let stall = 1.0 / (20.0 + 20.0 * unit());
        let phases: Vec<u64> = (0..reps).map(|_| (unit() * period as f64) as u64).collect();
        let seqs: Vec<Vec<f64>> = (0..reps)
            .map(|r| {
                (0..n)
                    .map(|i| {
                        let path = if i % period == phases[r] { extra } else { 0.0 };
                        let after = r as u64 * n + i >= at;
                        let machine = if after { level + if unit() < stall { 2000.0 } else { 0.0 } } else { 0.0 };
                        base + 10.0 * (unit() < 0.5) as u8 as f64 + path + machine
                    })
                    .collect()
            })
            .collect();
        let a = analyze_source(&events(&seqs), None, 0, 0).unwrap();
        let cp = a.code_paths.iter().find(|c| c.metric == "latency").unwrap();
        let said: Vec<String> = cp.periodic.iter().map(|p| format!("every {} at {:?}", p.period, p.residues)).collect();
        let what = format!(
            "case {case}: every {period} at {phases:?}, +{extra:.0} ns; +{level:.0} ns from call {at} of {reps} x {n}; said {said:?}"
        );
        for p in cp.periodic.iter().filter(|p| p.period == period) {
            found += 1;
            for r in &p.residues {
                assert!(phases.iter().any(|&ph| (r.residue + period - ph) % period <= 3), "{what}");
            }
        }
    }
    assert!(found >= 20, "the path was said in {found} of 24 runs");
}
