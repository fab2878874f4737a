//! Step judging: pairing by repetition, the floor of the cheaper value, and reading a sweep's
//! directories.
use super::*;
use crate::stats::compare::Outcome;

fn reps(v: &[f64]) -> Reps {
    v.iter().enumerate().map(|(i, x)| (i as u32, *x)).collect()
}

#[test]
fn a_step_pairs_repetitions_by_index_whatever_the_file_order() {
    // A drift shared by both values within a round: only the pairing sees the +10% step.
    let a = reps(&[100.0, 150.0, 90.0, 200.0, 120.0, 110.0, 170.0, 95.0, 130.0, 160.0]);
    let b: Reps = a.iter().rev().map(|(r, x)| (*r, x * 1.1)).collect();
    let c = judge_step(&a, &b, None, None).unwrap();
    assert!(c.paired && c.rounds == 10, "{c:?}");
    assert_eq!(c.outcome, Outcome::ACheaper, "{c:?}");
    // A repetition missing at one value: compared unpaired, and the drift hides the step.
    let c = judge_step(&a, &b[1..].to_vec(), None, None).unwrap();
    assert!(!c.paired, "{c:?}");
    assert_eq!(c.outcome, Outcome::Undecided, "{c:?}");
    assert!(judge_step(&a, &Vec::new(), None, None).is_none());
    assert!(judge_step(&a, &reps(&[f64::NAN]), None, None).is_none(), "an empty row's mean is no repetition");
}

#[test]
fn the_floor_is_the_cheaper_values_none_row() {
    let a = reps(&[60.0; 10]);
    let b = reps(&[66.0; 10]);
    // Net of a 30 ns floor at A (the cheaper): +6 over 30 net is +20%.
    let c = judge_step(&a, &b, Some(&reps(&[30.0; 10])), Some(&reps(&[50.0; 10]))).unwrap();
    assert!(c.net && (c.estimate - 0.2).abs() < 1e-9, "{c:?}");
    // B cheaper: its floor is used.
    let c = judge_step(&b, &a, Some(&reps(&[30.0; 10])), Some(&reps(&[50.0; 10]))).unwrap();
    assert!(c.net && (c.estimate + 0.6).abs() < 1e-9, "{c:?}");
    // No floor: raw.
    let c = judge_step(&a, &b, None, None).unwrap();
    assert!(!c.net && (c.estimate - 0.1).abs() < 1e-9, "{c:?}");
    let steps = judge_curve(&[a.clone(), b.clone(), a], &[None, None, None]);
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].as_ref().unwrap().outcome, Outcome::ACheaper);
    assert_eq!(steps[1].as_ref().unwrap().outcome, Outcome::BCheaper);
}

fn write_reps(dir: &Path, rows: &[(&str, u32, u32, f64)]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut s = super::super::rows::summary_header(&[], true) + "\n";
    for (t, threads, rep, mean) in rows {
        s += &format!("{t},{threads},{rep},100,0,{mean},1,{mean},{mean},{mean},{mean},{mean},{mean},0,\n");
    }
    std::fs::write(dir.join(REPETITIONS_CSV), s).unwrap();
}

#[test]
fn a_sweep_is_judged_from_each_values_repetitions() {
    let d = tempfile::tempdir().unwrap();
    let rows = |lw: f64| -> Vec<(&str, u32, u32, f64)> {
        (0..10u32).flat_map(|r| [("none", 1, r, 20.0 + r as f64), ("lw", 1, r, lw + r as f64)]).collect()
    };
    write_reps(&d.path().join("payload-size=4"), &rows(40.0));
    write_reps(&d.path().join("payload-size=256"), &rows(50.0));
    // 1024 has no repetitions.csv (a sweep stopped before it).
    let key = |t: &str, v: &str| SweepKey { tracer: t.into(), value: v.into(), threads: 1 };
    let keys = [key("lw", "4"), key("none", "4"), key("lw", "256"), key("none", "256"), key("lw", "1024")];
    let j = judge_sweep(d.path(), "payload-size", &keys);
    assert_eq!(j.len(), 5);
    assert!(j[0].is_none() && j[1].is_none(), "a curve's first value has no step");
    let lw = j[2].as_ref().unwrap();
    // +10 ns over lw's 20 ns net of none at 4.
    assert!(lw.net && lw.paired && lw.outcome == Outcome::ACheaper && (lw.estimate - 0.5).abs() < 1e-9, "{lw:?}");
    assert_eq!(j[3].as_ref().unwrap().outcome, Outcome::Same, "none against none");
    assert!(j[4].is_none(), "no repetitions at 1024");

    // Sweeping threads: one curve per tracer across thread counts.
    write_reps(&d.path().join("threads=1"), &[("lw", 1, 0, 40.0), ("lw", 1, 1, 41.0)]);
    write_reps(&d.path().join("threads=2"), &[("lw", 2, 0, 80.0), ("lw", 2, 1, 82.0)]);
    let keys = [
        SweepKey { tracer: "lw".into(), value: "1".into(), threads: 1 },
        SweepKey { tracer: "lw".into(), value: "2".into(), threads: 2 },
    ];
    let j = judge_sweep(d.path(), "threads", &keys);
    assert!(j[0].is_none() && j[1].as_ref().is_some_and(|c| c.rounds == 2 && c.paired), "{j:?}");
}
