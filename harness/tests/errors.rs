//! Every message that tells a user what to fix, triggered through the real CLI: exit 2, one line
//! on stderr (`tracebench: error: ...`) that says what is wrong and how to fix it, and nothing
//! written. scripts/untested-messages.py lists the messages that no test names yet.
use std::path::{Path, PathBuf};

mod common;
use common::tb;

/// Runs tracebench with `args` and checks the usage-error contract: exit 2, one line holding
/// every one of `needles`, and `out` (when given) not created.
fn refused(args: &[&str], out: Option<&Path>, needles: &[&str]) -> String {
    let mut c = tb();
    c.args(args);
    if let Some(o) = out {
        c.arg("--out").arg(o);
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(err.starts_with("tracebench: error: "), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in: {err}");
    }
    if let Some(o) = out {
        assert!(!o.exists(), "{args:?}: {} written for bad input", o.display());
    }
    err
}

/// A clap usage error: exit 2, and its first line is the message (clap adds its --help hint).
fn refused_by_clap(args: &[&str], needles: &[&str]) {
    let o = tb().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    let first = err.lines().next().unwrap_or("");
    for n in needles {
        assert!(first.contains(n), "{args:?}: '{n}' not in the first line: {err}");
    }
}

fn tmp_out() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    (d, out)
}

#[test]
fn a_cpu_that_is_not_online_is_refused_with_the_fix() {
    let (_d, out) = tmp_out();
    refused(
        &["run", "-q", "--tracer", "none", "-n", "10", "--cpu", "4095"],
        Some(&out),
        &["cannot pin to CPU 4095", "is not online", "(fix: pick an online CPU"],
    );
}

#[test]
fn run_plan_errors_are_one_line() {
    let (_d, out) = tmp_out();
    let run = |extra: &[&str], needles: &[&str]| {
        let mut a = vec!["run", "-q", "-n", "10"];
        a.extend_from_slice(extra);
        refused(&a, Some(&out), needles);
    };
    run(&["--tracer", "none", "--repeats", "0"], &["--repeats must be at least 1"]);
    run(&["--tracer", "none,"], &["empty tracer name in --tracer", "tracebench list"]);
    run(&["--tracer", "none,lw", "--label", "a"], &["--label gives 1 names for 2 tracers", "give one per tracer"]);
    run(
        &["--tracer", "none,lw", "--label", "a,"],
        &["bad row name '' (--label): it is empty", "another name with --label"],
    );
    // A control character is named visibly, never sent to the terminal raw, and is the reason given.
    run(
        &["--tracer", "none", "--label", "evil\u{1b}[31mRED"],
        &["bad row name 'evil\\x1b[31mRED' (--label): it holds the control character \\x1b"],
    );
    run(&["--tracer", "none,none"], &["tracer row 'none' appears twice", "use --label"]);
    run(&["--tracer", "none", "--threads", "4096"], &["--threads 4096: each count must be between 1 and the"]);
    run(&["--tracer", "none", "--counters", "a,b,c,d,e"], &["--counters takes at most 4 events per set", "got 5"]);
    run(&["--tracer", "open", "--payload-size", "5000"], &["--payload-size 5000: 'open' records 1 to 4095 bytes"]);
    run(&["--tracer", "plugin:"], &["bad tracer spec 'plugin:'", "(fix: write plugin:PATH[:ARGS]"]);
}

#[test]
fn singlestep_refuses_what_it_cannot_step() {
    let (_d, out) = tmp_out();
    let step = |tracer: &str, needles: &[&str]| {
        refused(&["run", "-q", "-n", "10", "--instructions", "singlestep", "--tracer", tracer], Some(&out), needles);
    };
    step("spin:100", &["tracer 'spin:100' cannot be stepped", "busy-wait for a time"]);
    step("strace", &["tracer 'strace' cannot be stepped", "already ptraces the measuring process"]);
}

#[test]
fn kernel_path_errors_name_the_fix() {
    let (_d, out) = tmp_out();
    refused(
        &["run", "-q", "-n", "10", "--kernel", "--tracer", "lw"],
        Some(&out),
        &["--kernel drives", "'lw' needs its own kernel module or program", "make kernel-lab"],
    );
    refused(
        &["run", "-q", "-n", "10", "--kernel", "--tracer", "none", "--payload-size", "8"],
        Some(&out),
        &["--payload-size must be one of [4, 64, 256, 1024] bytes"],
    );
    if Path::new("/dev/kbench").exists() {
        println!("SKIP kernel_path_errors_name_the_fix (module missing): /dev/kbench exists here");
        return;
    }
    refused(
        &["run", "-q", "-n", "10", "--kernel", "--tracer", "none"],
        Some(&out),
        &["/dev/kbench not found: build and load kbench-module first", "insmod"],
    );
}

#[test]
fn sweep_value_errors_are_one_line() {
    let (_d, out) = tmp_out();
    refused(
        &["sweep", "-q", "-n", "10", "--tracer", "lw", "--vary", "threads=1,abc"],
        Some(&out),
        &["--vary threads: 'abc' is not a positive whole number"],
    );
}

/// DIR/repetitions.csv with two repetitions of one row.
fn results(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("repetitions.csv"),
        "tracer,threads,repetition,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns\n\
         spin,1,0,1000,0,100,1,1,1,1,1,1\nspin,1,1,1000,0,101,1,1,1,1,1,1\n",
    )
    .unwrap();
    dir
}

#[test]
fn gate_option_errors_say_how_to_write_them() {
    let d = tempfile::tempdir().unwrap();
    let a = results(d.path(), "a");
    let a = a.to_str().unwrap();
    let gate = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["gate", "--baseline", a, "--candidate", a].map(String::from).to_vec();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let args = gate(&["--threshold", "5"]);
    refused_by_clap(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &["threshold '5' is ambiguous: write it as a percentage (5%) or a fraction"],
    );
    let args = gate(&["--confidence", "40%"]);
    refused_by_clap(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &["confidence '40%' must lie between 50% and 100% (exclusive), e.g. 99%"],
    );
    let args = gate(&["--threshold=-5%"]);
    refused_by_clap(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &["threshold '-5%' must be a non-negative percentage, e.g. 5%"],
    );
    let args = gate(&["--metric", "p42_ns"]);
    refused(&args.iter().map(String::as_str).collect::<Vec<_>>(), None, &["--metric p42_ns: ", "has no such column"]);
}

#[test]
fn gate_interleave_refuses_an_out_that_holds_an_interleaved_run() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("g");
    std::fs::create_dir_all(out.join("A-0")).unwrap();
    let o = tb()
        .args(["gate", "--interleave", "--baseline-cmd", "true", "--candidate-cmd", "true", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("it already holds an interleaved run (A-0); pick a new directory"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "nothing added to {}", out.display());
}

#[test]
fn report_and_export_input_errors_are_one_line() {
    let d = tempfile::tempdir().unwrap();
    let a = results(d.path(), "a");
    let a = a.to_str().unwrap();
    refused(&["report", a, a], None, &["several directories make one report side by side", "--out DIR"]);
    refused(&["export", a, "-f", "bmf"], None, &["bad results data in", "no 'mom_ns' column", "re-run"]);
}
