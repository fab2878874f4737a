//! `tracebench gate --interleave` end to end, with a stand-in side command: the ABBA order, the
//! kept and merged results, a failing side, and the sequential looks of --max-repeats.
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

const HEAD: &str = "tracer,threads,repetition,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns";

fn gate() -> Command {
    Command::cargo_bin("tracebench").unwrap()
}

/// A stand-in for `tracebench run`: writes a one-repetition results dir at `$1` ns, with 1%
/// deterministic jitter from the repetition number the gate exports.
fn fake_run(root: &Path) -> PathBuf {
    let p = root.join("fake-run.sh");
    fs::write(
        &p,
        format!(
            r#"#!/bin/sh
ns=$1; shift
[ "$ns" = fail ] && {{ echo "fake-run: no such tracer" >&2; exit 3; }}
while [ $# -gt 0 ]; do case "$1" in --out) out=$2; shift;; --repeats) [ "$2" = 1 ] || exit 9; shift;; esac; shift; done
mkdir -p "$out"
m=$(awk -v n="$ns" -v r="$TRACEBENCH_GATE_REPETITION" 'BEGIN {{ printf "%.3f", n * (1 + 0.01 * ((r * 0.618034) % 1 * 2 - 1)) }}')
printf '%s\nspin,1,0,1000,0,%s,1,1,1,1,1,1\n' '{HEAD}' "$m" > "$out/repetitions.csv"
echo '{{}}' > "$out/run.json"
echo "$TRACEBENCH_GATE_SIDE $TRACEBENCH_GATE_REPETITION" >> "{}/order.txt"
"#,
            root.display()
        ),
    )
    .unwrap();
    p
}

/// `tracebench gate --interleave` with the fake run as both sides, at `base` and `cand` ns, plus
/// `extra` options.
fn fake_gate(fake: &Path, base: &str, cand: &str, extra: &[&str]) -> Command {
    let mut c = gate();
    c.args(["gate", "--interleave"])
        .args(extra)
        .arg("--baseline-cmd")
        .arg(format!("sh {} {base}", fake.display()))
        .arg("--candidate-cmd")
        .arg(format!("sh {} {cand}", fake.display()));
    c
}

#[test]
fn interleave_runs_abba_keeps_results_and_can_be_rejudged() {
    let t = tempfile::tempdir().unwrap();
    let fake = fake_run(t.path());
    let out = t.path().join("gate-out");
    fake_gate(&fake, "215", "236.5", &["--repeats", "8"])
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("regressed").and(predicate::str::contains("interleaved ABBA")));
    let order: Vec<String> =
        fs::read_to_string(t.path().join("order.txt")).unwrap().lines().map(str::to_string).collect();
    assert_eq!(order[..4], ["baseline 0", "candidate 0", "candidate 1", "baseline 1"]);
    assert_eq!(order.len(), 16);
    for d in ["A-0", "B-7", "baseline", "candidate"] {
        assert!(out.join(d).join("repetitions.csv").is_file(), "{d}");
    }
    assert!(out.join("A-0.log").is_file() && out.join("baseline/run.json").is_file());
    let merged = fs::read_to_string(out.join("candidate/repetitions.csv")).unwrap();
    assert_eq!(merged.lines().count(), 9, "{merged}");
    // Re-judged from the files alone, paired as in the interleaved run: the same verdict.
    gate()
        .args(["gate", "--paired", "--baseline"])
        .arg(out.join("baseline"))
        .arg("--candidate")
        .arg(out.join("candidate"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("regressed"));
}

#[test]
fn interleave_same_command_passes_and_cleans_up() {
    let t = tempfile::tempdir().unwrap();
    let fake = fake_run(t.path());
    let cmd = format!("sh {} 215", fake.display());
    // A private TMPDIR, so that the check does not race other tests.
    let tmp = t.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    gate()
        .env("TMPDIR", &tmp)
        .args(["gate", "--interleave", "--repeats", "6", "--baseline-cmd", &cmd, "--candidate-cmd", &cmd])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("unchanged"));
    let left: Vec<_> = fs::read_dir(&tmp).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "the temporary work directory must be removed: {left:?}");
}

#[test]
fn interleave_failing_command_exits_2_with_its_last_line() {
    let t = tempfile::tempdir().unwrap();
    let fake = fake_run(t.path());
    let out = fake_gate(&fake, "215", "fail", &["--repeats", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap();
    assert!(last.contains("candidate command (repetition 0) failed: exit status 3: fake-run: no such tracer"), "{err}");
    // A command that writes nothing is named as such.
    let out = gate()
        .args(["gate", "--interleave", "--repeats", "1", "--baseline-cmd", "true", "--candidate-cmd", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote no"), "{out:?}");
}

/// --max-repeats: an inconclusive first look (6 pairs: too few for any sign-test interval at the
/// per-look 99.67%) makes the gate run 6 more pairs, continuing the ABBA order, and judge again at
/// the Bonferroni-split confidence.
#[test]
fn interleave_sequential_adds_repetitions_only_while_inconclusive() {
    let t = tempfile::tempdir().unwrap();
    let fake = fake_run(t.path());
    let json = t.path().join("g.json");
    fake_gate(&fake, "215", "236.5", &["--repeats", "6", "--max-repeats", "18"])
        .arg("--json")
        .arg(&json)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("regressed").and(predicate::str::contains("sequential: 2 of 3 looks")))
        .stdout(predicate::str::contains("99.67% CI"));
    let order: Vec<String> =
        fs::read_to_string(t.path().join("order.txt")).unwrap().lines().map(str::to_string).collect();
    assert_eq!(order.len(), 24, "two looks of 6 pairs: {order:?}");
    assert_eq!(order[12..16], ["baseline 6", "candidate 6", "candidate 7", "baseline 7"]);
    let j: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["sequential"]["looks_taken"], 2);
    assert_eq!(j["rows"][0]["n_baseline"], 12);
    assert!((j["confidence"].as_f64().unwrap() - (1.0 - 0.01 / 3.0)).abs() < 1e-9, "{j}");

    // Without --max-repeats the same 6 pairs stay inconclusive and pass.
    fs::remove_file(t.path().join("order.txt")).unwrap();
    fake_gate(&fake, "215", "236.5", &["--repeats", "6"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("inconclusive"));
    assert_eq!(fs::read_to_string(t.path().join("order.txt")).unwrap().lines().count(), 12);
    // M below K is a usage error.
    let out = gate()
        .args(["gate", "--interleave", "--repeats", "4", "--max-repeats", "3", "--baseline-cmd", "true"])
        .args(["--candidate-cmd", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-repeats 3 is below --repeats 4"), "{out:?}");
}
