//! The checker on seeded generated runs of many shapes: a synthetic results directory whose rows
//! carry the calibration battery's runs (every kind: periods, drifting flushes, memoryless paths,
//! stalls, speed levels), an LTTng row whose geometry predicts one of several periods (so the
//! survey agrees, departs or cannot tell, and a missing period is said), and repetitions spread
//! so that pairs come out cheaper, the same or undecided. Every report must be free of
//! contradictions: a contradiction is the renderer's bug, whatever the data.
use std::fmt::Write as _;
use std::path::Path;

use crate::analysis::calibration_battery::{composed_sequences, sequences, Kind, NULL_KINDS, PLANTED_KINDS};
use crate::report::side::synthetic;
use crate::stats::rng::SplitMix64;

/// Rows of the synthetic directory that get a battery run (its `none` row stays the floor).
const ROWS: [&str; 4] = ["lw", "printf", "spin:100@64:1000", "lttng-ust"];

fn write_battery_row(dir: &Path, name: &str, (seqs, reference): (Vec<Vec<f64>>, Vec<f64>)) {
    let d = dir.join(crate::report::load::dir_name(name));
    let mut ev = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
    for (r, v) in seqs.iter().enumerate() {
        for (i, x) in v.iter().enumerate() {
            let _ = writeln!(ev, "{name},1,0,0,{i},{x:.1},{r},0");
        }
    }
    std::fs::write(d.join("events.csv"), ev).unwrap();
    let mut bins = std::collections::BTreeMap::new();
    for &v in &reference {
        *bins.entry(crate::stats::tick_bins::bin((v * 10.0) as u64)).or_insert(0u64) += 1;
    }
    let lo = |b: usize| crate::stats::tick_bins::lo(b) as f64 / 10.0;
    let mut rf = crate::results::columns::REFERENCE.join(",") + "\n";
    for (b, n) in bins {
        let _ = writeln!(rf, "{name},1,0,0,100,{},{},{n}", lo(b), lo(b + 1));
    }
    std::fs::write(d.join("reference.csv"), rf).unwrap();
}

/// Repetition means around each row's mean, `reps` of them at relative spread `sd`, and the
/// summary's mean set to theirs (as a run's pooled mean is).
fn write_repetitions(dir: &Path, rng: &mut SplitMix64, reps: usize, sd: f64) {
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let head = lines.next().unwrap().to_string();
    let (mut s_out, mut r_out) = (head.clone() + "\n", String::new());
    r_out.push_str(&head.replacen("tracer,threads,", "tracer,threads,repetition,", 1));
    r_out.push('\n');
    // Two rows drawn close (within 1%) so that some pair is the same within the margin.
    let close = rng.below(ROWS.len());
    for l in lines {
        let mut f: Vec<String> = l.split(',').map(String::from).collect();
        let mut mean: f64 = f[4].parse().unwrap();
        if f[0] == ROWS[close] {
            mean = 62.0 * 1.005;
        }
        let means: Vec<f64> = (0..reps)
            .map(|_| mean * (1.0 + sd * (2.0 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 1.0)))
            .collect();
        f[4] = format!("{:.2}", means.iter().sum::<f64>() / reps as f64);
        s_out.push_str(&(f.join(",") + "\n"));
        for (k, m) in means.iter().enumerate() {
            let mut g = f.clone();
            g[4] = format!("{m:.2}");
            g.insert(2, k.to_string());
            r_out.push_str(&(g.join(",") + "\n"));
        }
    }
    std::fs::write(dir.join("summary.csv"), s_out).unwrap();
    std::fs::write(dir.join("repetitions.csv"), r_out).unwrap();
}

/// The LTTng row's end-of-run geometry: a sub-buffer of 8 KiB holding `per` events.
fn set_geometry(dir: &Path, per: u64) {
    let p = dir.join("run.json");
    let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let ev = (8192.0 - 84.0) / per as f64;
    for t in run["tracers"].as_array_mut().unwrap() {
        if t["spec"] == "lttng-ust" {
            t["cells"] = serde_json::json!([{"after_run": {"geometry": {
                "subbuf_bytes": 8192, "header_bytes": 84, "event_bytes": ev, "events_per_subbuf": per
            }}}]);
        }
    }
    std::fs::write(&p, serde_json::to_string_pretty(&run).unwrap()).unwrap();
}

/// One generated directory, reported, and its contradictions.
fn generated(seed: u64) -> Vec<String> {
    let kinds: Vec<Kind> = NULL_KINDS.iter().chain(&PLANTED_KINDS).copied().collect();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    synthetic::write(&dir, &synthetic::Options { tracers: 5, rows: 2000, threads: vec![1], counters: false }).unwrap();
    let mut rng = SplitMix64(seed);
    for (j, name) in ROWS.iter().enumerate() {
        let kind = kinds[(seed as usize * ROWS.len() + j) % kinds.len()];
        write_battery_row(&dir, name, sequences(kind, seed * 16 + j as u64));
    }
    let reps = 1 + rng.below(5);
    let sd = [0.001, 0.02, 0.3][rng.below(3)];
    write_repetitions(&dir, &mut rng, reps, sd);
    set_geometry(&dir, [810, 400, 1000, 6545, 64][rng.below(5)]);
    crate::report::build(&dir, 200, 200).unwrap();
    super::check_dir(&dir).unwrap().iter().map(|c| format!("seed {seed}: {c}")).collect()
}

/// Every kind of the battery in some row (18 kinds over 4 rows of 12 directories), and no
/// contradiction in any report.
#[test]
fn seeded_generated_reports_hold_no_contradiction() {
    let found: Vec<String> = (1..=12).flat_map(generated).collect();
    assert!(found.is_empty(), "{} contradiction(s):\n{}", found.len(), found.join("\n"));
}

/// The contradictions of one reported directory whose four rows carry `row(seed)`'s runs, each
/// line named by `what` and the seed.
fn contradictions_of(what: &str, seed: u64, row: fn(u64) -> (Vec<Vec<f64>>, Vec<f64>)) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    synthetic::write(&dir, &synthetic::Options { tracers: 5, rows: 2000, threads: vec![1], counters: false }).unwrap();
    for (j, name) in ROWS.iter().enumerate() {
        write_battery_row(&dir, name, row(seed * 16 + j as u64));
    }
    crate::report::build(&dir, 200, 200).unwrap();
    super::check_dir(&dir).unwrap().iter().map(|c| format!("{what} seed {seed}: {c}")).collect()
}

/// Runs composed at random by the generative battery's grammar (periodic paths of fixed, jittered
/// or drifting cost and period, stretches, second modes, memoryless and keyed paths, stalls,
/// timers, speed phases), as a 10 ns clock records them, so that bands and tails meet on shared
/// values as they do on this VM's TSC.
fn composed(seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
    composed_sequences(seed, 60_000, 10.0)
}

/// Reports of composed runs, 4 rows in each of 6 directories, hold no contradiction.
#[test]
fn reports_of_composed_runs_hold_no_contradiction() {
    let found: Vec<String> = (1..=6).flat_map(|s| contradictions_of("composed", s, composed)).collect();
    assert!(found.is_empty(), "{} contradiction(s):\n{}", found.len(), found.join("\n"));
}

/// A tracer's band of slow calls (one by one, at random) beside slower stretches of a few calls
/// whose costs start inside the band's range, all on a 10 ns clock: the stretches are left among
/// the outliers untested, and the band said must not take their calls too.
fn band_beside_stretches(seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut rng = SplitMix64(seed);
    let q = |x: f64| (x / 10.0).round() * 10.0;
    let base = 10.0 * (6 + rng.below(5)) as f64;
    let fast = |rng: &mut SplitMix64| base + 10.0 * rng.below(2) as f64;
    let band = 80.0 + 220.0 * rng.unit();
    let rate = 0.002 + 0.006 * rng.unit();
    let from = band * (1.05 + 0.4 * rng.unit());
    let n = 40_000;
    let mut v: Vec<f64> = (0..n).map(|_| fast(&mut rng)).collect();
    for x in v.iter_mut() {
        if rng.unit() < rate {
            *x += band * (1.0 + 0.45 * rng.unit());
        }
    }
    for _ in 0..10 + rng.below(40) {
        let at = rng.below(n - 10);
        for x in &mut v[at..at + 3 + rng.below(6)] {
            *x = fast(&mut rng) + from * (1.0 + 0.45 * rng.unit());
        }
    }
    let reference = (0..20_000).map(|_| q(fast(&mut rng))).collect();
    (vec![v.into_iter().map(q).collect()], reference)
}

/// A band said by its range takes no call of a stretch left among the outliers (100 generated
/// rows; a band that ends at its window's edge takes them, and then this test fails).
#[test]
fn reports_of_a_band_beside_stretches_hold_no_contradiction() {
    let found: Vec<String> = (1..=25).flat_map(|s| contradictions_of("stretches", s, band_beside_stretches)).collect();
    assert!(found.is_empty(), "{} contradiction(s):\n{}", found.len(), found.join("\n"));
}
