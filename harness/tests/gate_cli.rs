//! `tracebench gate` end to end on synthetic results directories (the output contract's
//! repetitions.csv); the interleaved gate is in gate_interleave.rs.
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

#[path = "../../tracers/tests/support/example_plugins.rs"]
mod example_plugins;

const HEAD: &str = "tracer,threads,repetition,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns";

/// Deterministic per-repetition jitter in [-1, 1).
fn jitter(i: usize) -> f64 {
    (i as f64 * 0.618_033_988_75).fract() * 2.0 - 1.0
}

/// Writes DIR/repetitions.csv with `reps` rows per (tracer, threads) at `mean` ns (1% noise),
/// plus `extra` counter columns (e.g. ["instructions_mean"]) holding `mean * 3`.
fn results(root: &Path, name: &str, rows: &[(&str, u32, f64)], reps: usize, extra: &[&str]) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    let mut s = String::from(HEAD);
    for c in extra {
        s.push(',');
        s.push_str(c);
    }
    s.push('\n');
    for &(tracer, threads, mean) in rows {
        for r in 0..reps {
            let m = mean * (1.0 + 0.01 * jitter(r + name.len()));
            s.push_str(&format!(
                "{tracer},{threads},{r},10000,3,{m:.3},5.0,{m:.0},{:.0},{:.0},{:.0},{:.0}",
                m + 5.0,
                m + 20.0,
                m - 10.0,
                m + 900.0
            ));
            for _ in extra {
                s.push_str(&format!(",{:.1}", m * 3.0));
            }
            s.push('\n');
        }
    }
    fs::write(dir.join("repetitions.csv"), s).unwrap();
    dir
}

fn gate() -> Command {
    Command::cargo_bin("tracebench").unwrap()
}

/// `tracebench gate --baseline A --candidate B`.
fn judge(a: &Path, b: &Path) -> Command {
    let mut c = gate();
    c.args(["gate", "--baseline"]).arg(a).arg("--candidate").arg(b);
    c
}

fn stderr_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr).lines().map(str::to_string).collect()
}

#[test]
fn unchanged_passes_and_writes_every_format() {
    let t = tempfile::tempdir().unwrap();
    let rows = [("spin", 1, 215.0), ("spin", 2, 230.0)];
    let a = results(t.path(), "a", &rows, 10, &[]);
    let b = results(t.path(), "bb", &rows, 10, &[]);
    let (md, xml, json) = (t.path().join("g.md"), t.path().join("g.xml"), t.path().join("g.json"));
    judge(&a, &b)
        .arg("--markdown")
        .arg(&md)
        .arg("--junit")
        .arg(&xml)
        .arg("--json")
        .arg(&json)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("unchanged").and(predicate::str::contains("PASS")));
    let m = fs::read_to_string(&md).unwrap();
    assert!(m.contains("| `spin` | 2 |") && m.contains("unchanged"), "{m}");
    let x = fs::read_to_string(&xml).unwrap();
    assert!(x.contains("<testsuite ") && x.contains("tests=\"2\" failures=\"0\"") && !x.contains("<failure"), "{x}");
    let j: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["exit_code"], 0);
    assert_eq!(j["metric"], "mean_ns");
    assert_eq!(j["rows"].as_array().unwrap().len(), 2);
    assert_eq!(j["rows"][0]["verdict"], "unchanged");
    assert_eq!(j["rows"][0]["baseline_values"].as_array().unwrap().len(), 10);
    let ci = j["rows"][0]["ci"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() > -0.05 && ci[1].as_f64().unwrap() < 0.05);
}

#[test]
fn a_ten_percent_regression_exits_1() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("lttng", 1, 300.0), ("spin", 1, 215.0)], 8, &[]);
    let b = results(t.path(), "b", &[("lttng", 1, 300.0), ("spin", 1, 236.5)], 8, &[]);
    let xml = t.path().join("j.xml");
    gate()
        .args(["gate", "--threshold", "5%", "--confidence", "99%", "--baseline"])
        .arg(&a)
        .arg("--candidate")
        .arg(&b)
        .arg("--junit")
        .arg(&xml)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("regressed").and(predicate::str::contains("FAIL")));
    let x = fs::read_to_string(&xml).unwrap();
    assert_eq!(x.matches("<failure").count(), 1, "{x}");
}

#[test]
fn an_improvement_passes() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("spin", 1, 236.5)], 8, &[]);
    let b = results(t.path(), "b", &[("spin", 1, 215.0)], 8, &[]);
    judge(&a, &b).assert().code(0).stdout(predicate::str::contains("improved"));
}

/// Without a PMU the gate judges `mom_ns` (median of block means) when both sides have it. The
/// synthetic mom_ns column holds 3 x the mean, so the central values printed (~645 ns, not
/// ~215 ns) show which column was judged.
#[test]
fn mom_ns_is_the_time_metric_when_present() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("spin", 1, 215.0)], 6, &["mom_ns"]);
    let b = results(t.path(), "b", &[("spin", 1, 215.0)], 6, &["mom_ns"]);
    judge(&a, &b)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("metric mom_ns").and(predicate::str::contains("645.")));
    // Only one side has it (results from before mom_ns existed): mean_ns.
    let old = results(t.path(), "old", &[("spin", 1, 215.0)], 6, &[]);
    judge(&old, &b).assert().code(0).stdout(predicate::str::contains("metric mean_ns"));
}

#[test]
fn instructions_are_primary_when_counted() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("spin", 1, 215.0)], 6, &["instructions_mean"]);
    let b = results(t.path(), "b", &[("spin", 1, 215.0)], 6, &["instructions_mean"]);
    judge(&a, &b).assert().code(0).stdout(predicate::str::contains("metric instructions_mean"));
}

#[test]
fn one_repetition_is_inconclusive_and_strict_fails() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("spin", 1, 215.0)], 1, &[]);
    let b = results(t.path(), "b", &[("spin", 1, 300.0)], 1, &[]);
    judge(&a, &b)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("inconclusive").and(predicate::str::contains("at least 6 per side")));
    gate().args(["gate", "--strict", "--baseline"]).arg(&a).arg("--candidate").arg(&b).assert().code(1);
}

/// `--net`: an 18 ns tracer over a 25 ns floor that gains 2 ns is +4.7% raw (unchanged at 5%)
/// and +11% of its own cost (regressed); the method line says which the change is relative to.
/// Without a `none` row, or on exact counts, --net is refused in one line.
#[test]
fn net_judges_a_tracers_own_cost_and_needs_the_floor() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("none", 1, 25.0), ("lw", 1, 43.0)], 10, &[]);
    let b = results(t.path(), "b", &[("none", 1, 25.0), ("lw", 1, 45.0)], 10, &[]);
    judge(&a, &b)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("raw value").and(predicate::str::contains("unchanged")));
    judge(&a, &b)
        .arg("--net")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("net of the baseline's none row").and(predicate::str::contains("regressed")));
    let c = results(t.path(), "c", &[("lw", 1, 43.0)], 10, &[]);
    assert_one_line_exit_2(
        gate().args(["gate", "--net", "--baseline"]).arg(&c).arg("--candidate").arg(&c),
        "--net needs a `none` row at 1 thread(s) in the baseline",
    );
    let s = stepped(t.path(), "s", 34);
    assert_one_line_exit_2(
        gate().args(["gate", "--net", "--baseline"]).arg(&s).arg("--candidate").arg(&s),
        "exact instruction counts (user_instructions) have no floor to subtract",
    );
}

fn assert_one_line_exit_2(cmd: &mut Command, needle: &str) {
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains(needle), "{lines:?}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("spin:200", 1, 215.0)], 5, &[]);
    let b = results(t.path(), "b", &[("spin:220", 1, 236.0)], 5, &[]);
    let c = results(t.path(), "c", &[("spin:200", 1, 215.0)], 5, &["instructions_mean"]);
    let d = results(t.path(), "d", &[("spin:200", 2, 215.0)], 5, &[]);
    let arg = |x: &Path, y: &Path| {
        let mut g = gate();
        g.args(["gate", "--baseline"]).arg(x).arg("--candidate").arg(y);
        g
    };
    assert_one_line_exit_2(&mut arg(&a, &b), "--label");
    assert_one_line_exit_2(&mut arg(&a, &c), "counters differ");
    assert_one_line_exit_2(&mut arg(&a, &d), "thread");
    assert_one_line_exit_2(&mut arg(&a, &t.path().join("nope")), "not a results directory");
    fs::create_dir_all(t.path().join("empty")).unwrap();
    assert_one_line_exit_2(&mut arg(&a, &t.path().join("empty")), "repetitions.csv");
    let e = t.path().join("e");
    fs::create_dir_all(&e).unwrap();
    fs::write(e.join("repetitions.csv"), format!("{HEAD}\nspin:200,1,0,10,0,abc,1,1,1,1,1,1\n")).unwrap();
    assert_one_line_exit_2(&mut arg(&a, &e), "not a positive number");
    assert_one_line_exit_2(
        gate().args(["gate", "--metric", "p42_ns", "--baseline"]).arg(&a).arg("--candidate").arg(&a),
        "p42_ns",
    );
    // Usage errors (clap) exit 2 as well.
    let out =
        gate().args(["gate", "--threshold", "five", "--baseline"]).arg(&a).arg("--candidate").arg(&a).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = gate().args(["gate", "--baseline"]).arg(&a).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

// --- the gate's output says what it does ---

/// Writes DIR/repetitions.csv with one row per repetition of `tracer` x 1 thread at `values`.
fn reps_at(root: &Path, name: &str, values: &[f64]) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    let mut s = format!("{HEAD}\n");
    for (r, m) in values.iter().enumerate() {
        s.push_str(&format!("spin,1,{r},10000,0,{m:.3},5.0,{m:.0},{m:.0},{m:.0},{m:.0},{m:.0}\n"));
    }
    fs::write(dir.join("repetitions.csv"), s).unwrap();
    dir
}

/// `gate --help` says what `--metric auto` picks: mom_ns for timed runs (not mean_ns, unless a
/// side lacks it), user_instructions for stepped ones, instructions_mean with a PMU.
#[test]
fn help_says_what_metric_auto_does() {
    let out = gate().args(["gate", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    for want in ["instructions_mean when both sides counted", "user_instructions for", "else mom_ns", "else mean_ns"] {
        assert!(help.contains(want), "{want:?} not in: {help}");
    }
}

/// Paired, the change is the median of the per-pair differences: the table names the side values
/// as medians and the change as the median pair's, and says when the side medians point the other
/// way.
#[test]
fn paired_table_says_when_the_side_medians_point_the_other_way() {
    let t = tempfile::tempdir().unwrap();
    // Differences +6, +18, -80, +30, -30: median pair +6 ns, +2.3% of the cheaper side's median
    // (260); side medians 290 -> 260 (-10.3%).
    let a = reps_at(t.path(), "a", &[100.0, 300.0, 280.0, 500.0, 290.0]);
    let b = reps_at(t.path(), "b", &[106.0, 318.0, 200.0, 530.0, 260.0]);
    let md = t.path().join("g.md");
    let out = judge(&a, &b).arg("--paired").arg("--markdown").arg(&md).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    for want in ["baseline median", "candidate median", "change (median pair)", "+2.3%"] {
        assert!(s.contains(want), "{want:?} not in:\n{s}");
    }
    assert!(s.contains("the side medians differ by -10.3% but the median pair changed +2.3%"), "{s}");
    let m = fs::read_to_string(&md).unwrap();
    assert!(m.contains("| change (median pair) |") && m.contains("| +2.3% |"), "{m}");
    // Unpaired, no pair column and no such line.
    let out = judge(&a, &b).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("baseline median") && !s.contains("median pair") && !s.contains("side medians"), "{s}");
}

const STEPPED_HEAD: &str = "tracer,threads,repetition,kept,discarded,user_instructions,main_share,\
user_instructions_mean,user_instructions_min,user_instructions_p50,user_instructions_max,kernel_entries_mean";

fn stepped(root: &Path, name: &str, count: u64) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    let mut s = format!("{STEPPED_HEAD}\n");
    for r in 0..3 {
        s.push_str(&format!("spin,1,{r},2000,0,{count},1.0,{count}.0,{count},{count},{count},0.0\n"));
    }
    fs::write(dir.join("repetitions.csv"), s).unwrap();
    dir
}

/// A stepped side with its run.json and events.csv: `main` instructions on every call but every
/// 4096th, which takes `wrap`.
fn stepped_with_events(root: &Path, name: &str, main: u64, wrap: u64) -> PathBuf {
    let dir = stepped(root, name, main);
    fs::write(dir.join("run.json"), r#"{"tracers": [{"name": "spin", "dir": "spin"}]}"#).unwrap();
    fs::create_dir_all(dir.join("spin")).unwrap();
    let mut s = String::from(
        "tracer,threads,thread,cpu,iteration,user_instructions,kernel_entries,repetition,counter_set,clock_retries\n",
    );
    for i in 0..100_000u64 {
        let u = if i % 4096 == 4095 { wrap } else { main };
        s.push_str(&format!("spin,1,0,0,{i},{u},0,0,0,0\n"));
    }
    fs::write(dir.join("spin/events.csv"), s).unwrap();
    dir
}

/// The main path the same, the wrap path 30 instructions dearer: "regressed", said as the paths
/// whose share moved; the same events on both sides stay unchanged and say the paths were
/// compared.
#[test]
fn a_change_on_a_rarer_path_alone_is_a_regression() {
    let t = tempfile::tempdir().unwrap();
    let a = stepped_with_events(t.path(), "a", 34, 120);
    let b = stepped_with_events(t.path(), "b", 34, 150);
    let same = stepped_with_events(t.path(), "same", 34, 120);
    judge(&a, &b).assert().code(1).stdout(
        predicate::str::contains("regressed")
            .and(predicate::str::contains("the main path is unchanged, but paths whose share moved"))
            .and(predicate::str::contains("150 instructions 0% -> 0.024% of calls")),
    );
    judge(&a, &same).assert().code(0).stdout(predicate::str::contains("0 regressed, 0 improved, 1 unchanged"));
    let json = t.path().join("g.json");
    judge(&a, &same).arg("--json").arg(&json).assert().code(0);
    let why = fs::read_to_string(&json).unwrap();
    assert!(why.contains("no other path's share moved (100000 and 100000 calls)"), "{why}");
}

/// An exact count one percent up is "regressed" (any change in an exact count is real), and the
/// output says the threshold in its header does not apply to it.
#[test]
fn exact_counts_say_they_ignore_the_threshold() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (stepped(t.path(), "a", 100), stepped(t.path(), "b", 101));
    let out = judge(&a, &b).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("metric user_instructions") && s.contains("threshold ±5.0% (not applied to exact counts"),
        "{s}"
    );
    assert!(s.contains("spin, 1 thread(s): regressed: exact counts: 1 instructions more per call"), "{s}");
    assert!(s.contains("the ±5.0% threshold does not apply to exact counts"), "{s}");
    // Unchanged exact counts need no such line under the table.
    let out = judge(&a, &stepped(t.path(), "c", 100)).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("does not apply"));
    // --count-threshold N: N instructions more per call still pass, N + 1 fail; --threshold never does.
    let b3 = stepped(t.path(), "d", 103);
    judge(&a, &b3).args(["--count-threshold", "3"]).assert().code(0);
    judge(&a, &b3).args(["--count-threshold", "2"]).assert().code(1);
    judge(&a, &b3).args(["--threshold", "50%"]).assert().code(1);
}

/// A side whose run.json says it was interrupted is refused in one line that says so, before
/// its NaN row is read as a number.
#[test]
fn an_interrupted_side_is_said_interrupted() {
    let t = tempfile::tempdir().unwrap();
    let a = results(t.path(), "a", &[("spin", 1, 215.0)], 6, &["mom_ns"]);
    let b = results(t.path(), "b", &[("spin", 1, 215.0)], 6, &["mom_ns"]);
    let reps = fs::read_to_string(b.join("repetitions.csv")).unwrap();
    fs::write(b.join("repetitions.csv"), format!("{reps}spin,1,6,0,0,0.000,NaN,NaN,NaN,NaN,NaN,NaN,NaN\n")).unwrap();
    let run = serde_json::json!({"interrupted": true, "interrupted_at": {"cells_run": 7, "in_cell": true,
        "tracer": "spin", "threads": 1, "repetition": 6, "counter_set": 1}});
    fs::write(b.join("run.json"), run.to_string()).unwrap();
    let out = judge(&a, &b).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_lines(&out);
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].contains("interrupted") && err[0].contains("during cell 7 (spin at 1 thread(s), repetition 7)"),
        "{err:?}"
    );
    assert!(!err[0].contains("positive number"), "{err:?}");
}

/// A tracer fast in every other measuring process (tracers/examples/bimodal_plugin.c: a shared
/// counter file makes the processes alternate exactly, fast, +80 ns, fast, ...) against the same
/// tracer always fast: the real runs of an interleaved gate leave the row inconclusive, and the
/// verdict says that the baseline's repetitions form two clusters, half each, and what commonly
/// causes that, instead of only asking for more repetitions.
#[test]
fn a_plugin_fast_in_half_of_its_processes_is_said_to_form_two_clusters() {
    let t = tempfile::tempdir().unwrap();
    let so = example_plugins::plugin("libbimodal_plugin.so");
    let tb = assert_cmd::cargo::cargo_bin("tracebench");
    let side = |state: &str, ns: u32| {
        format!(
            "{} run -q --tracer plugin:{so}:state={}+ns={ns} --label bimodal -n 2000",
            tb.display(),
            t.path().join(state).display()
        )
    };
    let md = t.path().join("gate.md");
    let out = gate()
        .args(["gate", "--interleave", "--repeats", "10", "--max-repeats", "10", "--baseline-cmd"])
        .arg(side("a", 80))
        .arg("--candidate-cmd")
        .arg(side("b", 0))
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("inconclusive"), "{stdout}");
    let said = fs::read_to_string(&md).unwrap();
    assert!(
        said.contains("the baseline's repetitions form two clusters") && said.contains("(50% of processes)"),
        "{said}"
    );
    assert!(!said.contains("the candidate's repetitions form two clusters"), "{said}");
    assert!(said.contains("threads sharing a core"), "{said}");
    // Two levels are not settled by more repetitions, so no count of them is offered.
    assert!(!said.contains("would settle it"), "{said}");
    assert_eq!(fs::read_to_string(t.path().join("a")).unwrap().trim(), "10", "one number per baseline process");
}
