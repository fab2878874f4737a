//! Report tests on synthetic results directories (see side/synthetic.rs).
use super::*;
use crate::analysis::calibration_battery;
use crate::analysis::code_paths;

fn synth(dir: &Path, tracers: usize, rows: usize, threads: Vec<u32>, counters: bool) {
    synthetic::write(dir, &synthetic::Options { tracers, rows, threads, counters }).unwrap();
}

#[test]
fn finds_period_64_on_spin_and_writes_everything() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 5, 20_000, vec![1], false);
    let r = build(d.path(), 500, 1000).unwrap();
    let spin = r.code_paths.iter().find(|l| l.starts_with("spin:100@64:1000")).unwrap();
    assert!(spin.contains("slow path") && spin.contains("every 64 events"), "{spin}");
    let lttng = r.code_paths.iter().find(|l| l.starts_with("lttng-ust")).unwrap();
    assert!(lttng.contains("every 256 events"), "{lttng}");
    let none = r.code_paths.iter().find(|l| l.starts_with("none")).unwrap();
    assert!(none.contains("single code path"), "{none}");
    for f in [
        "report.html",
        "report.md",
        "figures/latency_cdf.png",
        "figures/latency_cdf.svg",
        "figures/latency_vs_iteration.png",
    ] {
        assert!(d.path().join(f).exists(), "{f} missing");
    }
    // No counters: no Figure 3/4/7 and no Table 6; one thread count: no scalability figure.
    assert!(!d.path().join("figures/latency_vs_counters.png").exists());
    assert!(!d.path().join("figures/scalability.png").exists());
    let html = std::fs::read_to_string(d.path().join("report.html")).unwrap();
    assert!(html.contains("SYNTHETIC DATA"));
    assert!(!html.contains("src=\"figures/"), "report.html must embed its figures");
    assert!(r.survey_notes.iter().any(|l| l.contains("planted slow path every 64 calls is found")));
    // report.json's survey check says the same sentence typed.
    use findings::survey_check::{SurveyVerdict, Topic};
    assert!(r.survey_checks.iter().any(|c| c.topic == Topic::PlantedPath
        && c.verdict == SurveyVerdict::Found
        && c.text.contains("every 64 calls")));
}

#[test]
fn counters_and_scaling_paths() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 8, 14_000, vec![1, 2, 4], true);
    let r = build(d.path(), 300, 500).unwrap();
    for f in ["latency_vs_counters", "scalability", "scalability_ftrace_clocks"] {
        assert!(d.path().join(format!("figures/{f}.png")).exists(), "{f}");
        assert!(d.path().join(format!("figures/{f}.svg")).exists(), "{f}");
    }
    // Instruction-count code paths (survey Fig. 3(d)).
    assert!(r
        .code_paths
        .iter()
        .any(|l| l.starts_with("spin:100@64:1000 [instructions]") && l.contains("every 64 events")));
    let md = std::fs::read_to_string(d.path().join("report.md")).unwrap();
    assert!(md.contains("as survey Table 6"));
    assert!(md.contains("ftrace (clock=global)"));
    // One repetition decides no scaling, however far printf's synthetic growth lies from the
    // line: a comparison needs rounds, and the line says how many.
    for t in ["lw", "printf"] {
        assert!(
            r.survey_notes.iter().any(|l| l.starts_with(&format!("Scaling not decided: {t}:"))
                && l.contains("1 repetition(s) do not decide")
                && l.contains("about 10 would")),
            "{t}: {:?}",
            r.survey_notes
        );
    }
}

#[test]
fn departure_is_reported() {
    // Make printf flat across threads: the report must say it departs from the survey.
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 3, 3000, vec![1, 2], false);
    let p = d.path().join("summary.csv");
    let text = std::fs::read_to_string(&p).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    let one = rows.iter().find(|l| l.starts_with("printf,1,")).unwrap().to_string();
    let fixed: Vec<String> = rows
        .iter()
        .map(|l| if l.starts_with("printf,2,") { one.replacen("printf,1,", "printf,2,", 1) } else { l.to_string() })
        .collect();
    std::fs::write(&p, fixed.join("\n") + "\n").unwrap();
    // Ten interleaved repetitions at 1.0x decide it flat (below the x1.25 line); fewer rounds
    // than the comparison's first look decide nothing.
    let rp = d.path().join("repetitions.csv");
    let reps = std::fs::read_to_string(&rp).unwrap();
    let one_rep = one.replacen("printf,1,", "printf,1,0,", 1);
    let mut kept: Vec<String> = reps.lines().filter(|l| !l.starts_with("printf,")).map(String::from).collect();
    for t in [1, 2] {
        for rep in 0..10 {
            kept.push(one_rep.replacen("printf,1,0,", &format!("printf,{t},{rep},"), 1));
        }
    }
    std::fs::write(&rp, kept.join("\n") + "\n").unwrap();
    let r = build(d.path(), 100, 100).unwrap();
    assert!(r.survey_notes.iter().any(|l| l.starts_with("Departs from the survey: printf")), "{:?}", r.survey_notes);
}

#[test]
fn bad_input_says_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let e = build(d.path(), 10, 10).err().unwrap().to_string();
    assert!(e.contains("run.json is missing"), "{e}");
    synth(d.path(), 1, 200, vec![1], false);
    std::fs::write(d.path().join("summary.csv"), "tracer,threads\nnone,1\n").unwrap();
    let e = build(d.path(), 10, 10).err().unwrap().to_string();
    assert!(e.contains("column 'kept' is missing"), "{e}");
    synth(&d.path().join("x"), 1, 200, vec![1], false);
    let ev = d.path().join("x/none/events.csv");
    let t = std::fs::read_to_string(&ev).unwrap();
    std::fs::write(&ev, t.replacen("\nnone,1,0,0,0,", "\nnone,1,0,0,zero,", 1)).unwrap();
    let e = build(&d.path().join("x"), 10, 10).err().unwrap().to_string();
    assert!(e.contains("iteration") && e.contains("'zero' is not a number"), "{e}");
}

/// A deterministic pseudo-random sequence for synthetic latencies.
pub(in crate::report) fn xorshift() -> impl FnMut() -> u64 {
    let mut x = crate::stats::rng::XorShift64(0x2545F4914F6CDD1D);
    move || x.next()
}

/// The code-path line of a synthetic `none` run of `n` calls whose latencies `lat(iteration, rnd)`
/// gives (`rnd`: a deterministic pseudo-random source).
fn none_line(n: u64, mut lat: impl FnMut(u64, &mut dyn FnMut() -> u64) -> f64) -> String {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 1, 200, vec![1], false);
    let mut ev = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
    let mut rnd = xorshift();
    for i in 0..n {
        ev.push_str(&format!("none,1,0,1,{i},{:.2},0,0\n", lat(i, &mut rnd)));
    }
    std::fs::write(d.path().join("none/events.csv"), ev).unwrap();
    let r = build(d.path(), 100, 100).unwrap();
    r.code_paths.iter().find(|l| l.starts_with("none:")).unwrap().clone()
}

/// The code-path line of a 5000-call `none` run of a tight fast path (1262 ns, one clock step
/// of jitter) with `extra` ns every `period` calls (at iterations 35 + j * period, rounded down),
/// and interrupt-like outliers.
fn tight_fast_path_line(extra: f64, period: f64) -> String {
    let slow: std::collections::HashSet<u64> =
        (0..).map(|j| (35.0 + j as f64 * period) as u64).take_while(|&i| i < 5000).collect();
    none_line(5000, |i, rnd| {
        let mut lat = 1261.88 + rnd().is_multiple_of(8) as u64 as f64 * 10.0;
        if slow.contains(&i) {
            lat += extra;
        }
        if rnd().is_multiple_of(500) {
            lat += 100.0 + (rnd() % 3000) as f64;
        }
        lat
    })
}

#[test]
fn a_cheap_periodic_path_on_a_tight_fast_path_is_found() {
    // ftrace-open in `make bench`: +130 ns on 1262 ns every 51 calls, inside the fast path's
    // kernel widths (5 %), was "no periodic path found".
    let line = tight_fast_path_line(130.0, 51.0);
    assert!(line.contains("slow path every 51 events"), "{line}");
    let none = tight_fast_path_line(0.0, 51.0);
    assert!(none.contains("single code path") && !none.contains("every 51"), "{none}");
}

#[test]
fn a_period_that_is_not_a_whole_number_is_one_path() {
    // A page crossing every 56.5 calls (56, 57, 56, ...) came out as two paths "every 113
    // events" at two phases; every 56.9 (kernel lab, perf) as eight paths every 512.
    let line = tight_fast_path_line(130.0, 56.5);
    assert!(line.contains("slow path every 56.5 events on average (2 times in every 113 calls"), "{line}");
    assert!(!line.contains("middle path") && !line.contains("path 2"), "{line}");
    let line = tight_fast_path_line(130.0, 512.0 / 9.0);
    assert!(line.contains("slow path every 56.9 events on average (9 times in every 512 calls"), "{line}");
    assert!(!line.contains("middle path") && !line.contains("path 2"), "{line}");
}

#[test]
fn speed_phases_are_not_code_paths() {
    // A machine that drifts between two speeds (60 ns and 130 ns per call in stretches of 7000 to
    // 13000 calls), with a real slow path every 500 calls (+900 ns) and interrupt-like outliers.
    let (mut slow_phase, mut left, mut runs) = (false, 10_000u64, 1u64);
    let line = none_line(100_000, |i, rnd| {
        if left == 0 {
            (slow_phase, left, runs) = (!slow_phase, 7000 + rnd() % 6000, runs + 1);
        }
        left -= 1;
        let lat = if slow_phase { 130.0 } else { 60.0 } + (rnd() % 2) as f64 * 10.0;
        let lat = lat + if i % 500 == 321 { 900.0 } else { 0.0 };
        lat + if rnd().is_multiple_of(1000) { 200.0 + (rnd() % 3000) as f64 } else { 0.0 }
    });
    // Half the calls run at the higher level: the fast path is of calls judged against their
    // window's level, and says so; the levels come in the stretches drawn, give or take two.
    let judged = "at the machine's lower speed level; each call judged against its 64-call window's level";
    for want in ["two speed levels in stretches of calls, not single-call paths", judged, "slow path every 500 events"]
    {
        assert!(line.contains(want), "{want}: {line}");
    }
    for not in ["middle path", "faster path", "every 1 events", "about every"] {
        assert!(!line.contains(not), "{not}: {line}");
    }
    let said = line.split("not single-call paths").nth(1).unwrap();
    let stretches: u64 = said.split(" in ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(stretches.abs_diff(runs) <= 2, "{stretches} stretches said, {runs} drawn: {line}");
}

#[test]
fn emulated_runs_make_no_timing_comparison() {
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 3, 3000, vec![1, 2], false);
    let p = d.path().join("run.json");
    let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    run["host"]["guest"] = "qemu TCG, 1 vCPU".into();
    run["host"]["emulated"] = true.into();
    std::fs::write(&p, run.to_string()).unwrap();
    let r = build(d.path(), 100, 100).unwrap();
    assert!(r.survey_notes[0].starts_with("No timing comparison with the survey"), "{:?}", r.survey_notes);
    assert!(!r.survey_notes.iter().any(|l| l.contains("Agrees") || l.contains("Departs")), "{:?}", r.survey_notes);
}

#[test]
fn too_short_a_run_says_how_many_calls_would_settle_it() {
    // lttng-ust in the synthetic data: 256 events per sub-buffer (geometry in run.json), but the
    // run holds fewer than 4 of them.
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 5, 4000, vec![1], false);
    let p = d.path().join("run.json");
    let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let t = run["tracers"].as_array_mut().unwrap().iter_mut().find(|t| t["name"] == "lttng-ust").unwrap();
    t["cells"] = serde_json::json!([{"after_run": {"geometry": {
        "subbuf_bytes": 16384, "event_bytes": 10.0, "header_bytes": 84.0, "events_per_subbuf": 1630}}}]);
    std::fs::write(&p, run.to_string()).unwrap();
    let r = build(d.path(), 100, 100).unwrap();
    let l = r.survey_notes.iter().find(|l| l.contains("sub-buffer")).unwrap();
    assert!(l.starts_with("Cannot tell yet") && l.contains("-n 10000"), "{l}");
    let cp = r.code_paths.iter().find(|l| l.starts_with("lttng-ust")).unwrap();
    assert!(cp.contains("[expected: sub-buffer 16384 B (84 B header) / event 10.0 B = 1630"), "{cp}");
}

#[test]
fn small_speed_phases_are_said_as_phases() {
    // 40/50 ns against 90/100 ns in stretches of 300 to 900 calls: one latency mode (the 15 ns
    // kernel floor merges them), but two levels of window means.
    let (mut slow, mut left) = (false, 500u64);
    let line = none_line(5000, |_, rnd| {
        if left == 0 {
            slow = !slow;
            left = 300 + rnd() % 600;
        }
        left -= 1;
        (if slow { 90.0 } else { 40.0 }) + 10.0 * (rnd() % 2) as f64
    });
    assert!(line.contains("two speed levels in stretches of calls, not single-call paths"), "{line}");
    assert!(!line.contains("slow path") && !line.contains("middle path"), "{line}");
}

#[test]
fn a_rare_costly_path_is_found_among_a_slower_phase() {
    // lttng-ust in CI: 731 calls (14.6%) of a slower phase in 2 stretches above the fast path,
    // and the sub-buffer switch (+1 us) every 810 calls: the switch was "no periodic path found".
    let line = none_line(5000, |i, rnd| {
        let phase = (1000..1400).contains(&i) || (3000..3331).contains(&i);
        // The slower phase: a tail off the fast path (no mode of its own).
        let u = (rnd() % 10_000) as f64 / 10_000.0;
        let lat = if phase { 110.0 - 100.0 * (1.0 - u).ln() } else { 90.0 + (rnd() % 2) as f64 * 10.0 };
        lat + if i % 810 == 500 { 1000.0 } else { 0.0 }
    });
    assert!(line.contains("every 810 events"), "{line}");
}

#[test]
fn a_costlier_call_of_a_flush_is_the_flush_not_an_outlier() {
    // printf in a fresh run: 11 flushes 431-455 calls apart, one of them +410 ns where the others
    // cost +250 to +300: "89% of spacings within 10%; 1 outlier on no path", though the data put
    // the costlier one exactly on the flush's spacing.
    // The flush iterations of that run (the spacing drifts with the formatted length).
    let flush = [261, 716, 1162, 1593, 2024, 2455, 2887, 3318, 3749, 4180, 4611];
    let line = none_line(5000, |i, rnd| {
        let base = 90.0 + (rnd() % 2) as f64 * 10.0;
        match i {
            3749 => base + 410.0,
            i if flush.contains(&i) => base + 250.0 + (rnd() % 6) as f64 * 10.0,
            _ => base,
        }
    });
    assert!(line.contains("about every 431 events (no exact period; 100% of spacings"), "{line}");
    assert!(!line.contains("outlier"), "{line}");
}

/// A tracer row with these repetitions' means and nothing else measured.
pub(in crate::report) fn tracer_row(label: &str, spec: &str, reps: &[f64]) -> crate::report::model::TracerReport {
    crate::report::model::TracerReport {
        name: label.into(),
        spec: spec.into(),
        label: label.into(),
        colour: 0,
        config: serde_json::Value::Null,
        by_threads: Default::default(),
        rep_means: reps.to_vec(),
        rep_by_threads: Default::default(),
        analysis: None,
        dated: None,
        footprint: Vec::new(),
        folded: None,
        attribution: None,
        note: None,
    }
}

/// The latency's code paths of sequences of latencies (one repetition each), through an
/// in-memory events.csv.
pub(in crate::report) fn analysis_of(seqs: &[Vec<f64>]) -> code_paths::CodePaths {
    let a = tracer_analysis_of(seqs);
    a.code_paths.into_iter().find(|c| c.metric == "latency").unwrap()
}

/// The whole analysis of sequences of latencies (one repetition each), as a row's.
pub(in crate::report) fn tracer_analysis_of(seqs: &[Vec<f64>]) -> code_paths::TracerAnalysis {
    let mut ev = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
    for (r, v) in seqs.iter().enumerate() {
        for (i, x) in v.iter().enumerate() {
            ev.push_str(&format!("none,1,0,1,{i},{x:.2},{r},0\n"));
        }
    }
    let src = load::Source::Memory { name: "t/events.csv".into(), bytes: std::sync::Arc::new(ev.into_bytes()) };
    analysis::analyze_source(&src, None, 0, 0).unwrap()
}

#[test]
fn printf_flush_in_three_repetitions_is_one_path() {
    // printf's flush at the same iterations in every repetition, about every 431 calls, is one
    // path, not "path 2 every 2156 events ... path 3 about every 862 ... slow path every 2156".
    let flush = [261u64, 716, 1162, 1593, 2024, 2455, 2887, 3318, 3749, 4180, 4611];
    let mut rnd = xorshift();
    let seqs: Vec<Vec<f64>> = (0..3)
        .map(|_| {
            (0..5000u64)
                .map(|i| {
                    let base = 90.0 + (rnd() % 2) as f64 * 10.0;
                    if flush.contains(&i) {
                        base + 250.0 + (rnd() % 6) as f64 * 10.0
                    } else {
                        base
                    }
                })
                .collect()
        })
        .collect();
    let cp = analysis_of(&seqs);
    let line = path_line::describe("printf", &cp, None);
    assert!(cp.periodic.is_empty(), "{line}");
    assert_eq!(cp.irregular.iter().filter(|p| !p.is_phase()).count(), 1, "{line}");
    assert!(line.contains("about every 431 events"), "{line}");
    let period = crate::analysis::attribution::main_slow_path(&cp, None).unwrap().mean_period;
    assert!((period - 431.0).abs() <= 43.1, "{period}: {line}");
}

#[test]
fn printf_flush_every_8_calls_is_one_path_at_its_spacing() {
    // At payload 1024 the flush comes every 7 to 9 calls (12% of calls): sweep.csv's slow_period
    // must be that spacing, 8 (not, say, 205).
    let mut rnd = xorshift();
    let seqs: Vec<Vec<f64>> = (0..2)
        .map(|_| {
            let mut next = 5u64;
            (0..5000u64)
                .map(|i| {
                    let base = 300.0 + (rnd() % 2) as f64 * 10.0;
                    if i == next {
                        next += [8, 8, 8, 7, 9][(rnd() % 5) as usize];
                        base + 900.0 + (rnd() % 10) as f64 * 10.0
                    } else {
                        base
                    }
                })
                .collect()
        })
        .collect();
    let cp = analysis_of(&seqs);
    let line = path_line::describe("printf", &cp, None);
    let above = cp.periodic.len() + cp.irregular.iter().filter(|p| !p.is_phase()).count();
    assert_eq!(above, 1, "{line}");
    let period = crate::analysis::attribution::main_slow_path(&cp, None).unwrap().mean_period;
    assert!((period - 8.0).abs() <= 0.8, "{period}: {line}");
}

#[test]
fn calibration_battery_seeded_subset_meets_the_targets() {
    // The battery's targets (95 % for periods and tracer stretches, printf's flush as one path)
    // on a seeded subset of `make calibrate`: 5 runs of each kind, deterministic, so it cannot flake.
    let t0 = std::time::Instant::now();
    let res = calibration_battery::run(5, 7).unwrap();
    let (table, ok) = calibration_battery::table(&res, 7, t0.elapsed().as_secs_f64());
    println!("{table}");
    assert!(ok, "{table}");
    let get = |k: calibration_battery::Kind| res.iter().find(|r| r.0 == k).unwrap().1;
    let claims: u32 = calibration_battery::NULL_KINDS.iter().map(|&k| get(k).claimed).sum();
    let irregular: u32 = calibration_battery::NO_PATH_KINDS.iter().map(|&k| get(k).irregular).sum();
    assert_eq!((claims, irregular), (0, 0), "{table}");
    // Every planted kind with a power target is found in every seeded run.
    for (k, _, target) in calibration_battery::POWER.iter().filter(|p| p.2 > 0.0) {
        let t = get(*k);
        assert_eq!(t.found, t.runs, "{k:?} (target {target}): {table}");
    }
}

#[test]
fn commensurate_paths_at_two_phases_stay_apart() {
    // +500 ns at phase 10 and +600 ns at phase 60 of period 100 are two paths, not one "every 50".
    let mut rnd = xorshift();
    let seqs: Vec<Vec<f64>> = (0..3)
        .map(|_| {
            (0..5000u64)
                .map(|i| {
                    100.0
                        + (rnd() % 2) as f64 * 10.0
                        + if i % 100 == 10 {
                            500.0
                        } else if i % 100 == 60 {
                            600.0
                        } else {
                            0.0
                        }
                })
                .collect()
        })
        .collect();
    let cp = analysis_of(&seqs);
    let line = path_line::describe("x", &cp, None);
    assert_eq!(cp.periodic.iter().filter(|p| p.period == 100).count(), 2, "{line}");
}

/// A `none` row of 2 x 30000 calls with `t_ns` and sentinels every 32 calls, slower for the
/// stretches 6000-12000 and 18000-24000 of each repetition: by 20 % for the tracer and its
/// sentinels alike (`machine`), or by +300 ns for the tracer alone.
fn dated_run(dir: &std::path::Path, machine: bool) {
    synth(dir, 1, 200, vec![1], false);
    let mut ev = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set,t_ns\n");
    let mut se = String::from("tracer,threads,thread,cpu,iteration,t_ns,latency_ns,repetition\n");
    let mut rnd = xorshift();
    let mut noise = move |sd: f64| sd * ((0..4).map(|_| (rnd() % 1000) as f64 / 1000.0).sum::<f64>() - 2.0) * 1.73;
    for rep in 0..2 {
        let mut t = 0.0f64;
        for i in 0..30_000u64 {
            let on = (i / 6000) % 2 == 1;
            let speed = if machine && on { 1.2 } else { 1.0 };
            if i % 32 == 0 {
                let v = ((50.0 * speed + noise(5.0)) / 10.0).round() * 10.0;
                se.push_str(&format!("none,1,0,1,{i},{},{v:.2},{rep}\n", t as u64));
                t += v + 200.0;
            }
            let extra = if !machine && on { 300.0 } else { 0.0 };
            let v = ((1000.0 * speed + extra + noise(20.0)) / 10.0).round() * 10.0;
            ev.push_str(&format!("none,1,0,1,{i},{v:.2},{rep},0,{}\n", t as u64));
            t += v + 200.0;
        }
    }
    std::fs::write(dir.join("none/events.csv"), ev).unwrap();
    std::fs::write(dir.join("none/sentinels.csv"), se).unwrap();
}

#[test]
fn dated_levels_reach_the_line_and_report_json() {
    for (machine, owner, words) in [
        (true, findings::Attribution::Machine, "the machine's"),
        (false, findings::Attribution::Tracer, "the tracer's"),
    ] {
        let d = tempfile::tempdir().unwrap();
        dated_run(d.path(), machine);
        let r = build(d.path(), 100, 100).unwrap();
        let line = r.code_paths.iter().find(|l| l.starts_with("none:")).unwrap();
        let dated = r.findings[0].metrics[0]
            .findings
            .iter()
            .find_map(|f| match f {
                findings::Finding::DatedLevels(d) => Some(d.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no dated levels: {line}"));
        assert_eq!(dated.sequences, 2, "{line}");
        assert!(!dated.levels.is_empty() && dated.levels.iter().all(|l| l.attribution == owner), "{line}");
        assert!(
            line.contains(&format!("the sentinel windows of the same spans): {} {words}", dated.levels.len())),
            "{line}"
        );
        // The same run without its sentinels (a directory from before them) cannot tell.
        std::fs::remove_file(d.path().join("none/sentinels.csv")).unwrap();
        let r = build(d.path(), 100, 100).unwrap();
        let line = r.code_paths.iter().find(|l| l.starts_with("none:")).unwrap();
        assert!(!line.contains("levels over time"), "{line}");
        assert!(line.contains(findings::NO_SENTINELS), "{line}");
    }
}
