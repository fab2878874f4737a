//! Every tracer option is checked in the plan stage, before anything runs: a bad value gets one
//! line on stderr, exit 2, and no directory, in `run`, `scale`, `sweep` (its
//! `--vary` values too) and the interleaved `gate`.
mod common;
use common::*;

/// Runs `tracebench ARGS --out DIR` and checks: exit 2, one line naming `needle`, no DIR.
fn refused(args: &[&str], needle: &str) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = tb().args(args).arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert!(!out.exists(), "{args:?}: {} was created for bad input", out.display());
}

fn lttng_here() -> bool {
    match tracebench_tracers::lttng::availability() {
        Ok(()) => true,
        Err((why, _)) => {
            eprintln!("SKIP the LTTng option checks: {why}");
            false
        }
    }
}

#[test]
fn lttng_buffer_options_are_refused_before_any_directory() {
    if !lttng_here() {
        return;
    }
    let page = "power of two of at least the page size";
    for cmd in ["run", "scale"] {
        refused(&[cmd, "--tracer", "lttng-ust", "--subbuf-size", "3"], page);
        refused(&[cmd, "--tracer", "lttng-tracef", "--subbuf-size", "12k"], page);
        refused(&[cmd, "--tracer", "none,lttng-ust", "--subbuf-size", "8q"], "bad --subbuf-size '8q'");
        refused(&[cmd, "--tracer", "lttng-ust", "--num-subbuf", "1"], "at least 2 sub-buffers");
    }
    // A sweep plans every value first: the bad one is named and nothing is created.
    refused(&["sweep", "--tracer", "lttng-ust", "--vary", "subbuf-size=8k,3"], "--vary subbuf-size=3");
    refused(&["sweep", "--tracer", "lttng-ust", "--vary", "num-subbuf=2,1"], "--vary num-subbuf=1");
    refused(&["sweep", "--tracer", "lttng-ust", "--subbuf-size", "5000", "--vary", "num-subbuf=2,4"], page);
}

#[test]
fn ftrace_clock_is_checked_before_any_directory() {
    if let Err((why, _)) = tracebench_tracers::ftrace::availability(tracebench_tracers::ftrace::Mode::Marker) {
        eprintln!("SKIP the ftrace clock checks: {why}");
        return;
    }
    refused(&["run", "--tracer", "ftrace", "--ftrace-clock", "perf"], "unknown --ftrace-clock 'perf'");
    refused(&["sweep", "--tracer", "ftrace", "--vary", "ftrace-clock=global,sundial"], "--vary ftrace-clock=sundial");
}

#[test]
fn probe_site_values_of_a_sweep_are_checked_before_any_directory() {
    if let Some(Err((why, _))) =
        tracebench_tracers::known().into_iter().find(|i| i.name == "uprobe").map(|i| i.availability)
    {
        eprintln!("SKIP the probe-site checks: {why}");
        return;
    }
    refused(&["sweep", "--tracer", "uprobe", "--vary", "probe-site=nop5,int3"], "expected nop5, push or ret");
}

/// The gate plans a plain `tracebench run ...` side before its work directory exists.
#[test]
fn the_interleaved_gate_refuses_a_bad_option_before_any_run() {
    if !lttng_here() {
        return;
    }
    refused(
        &[
            "gate",
            "--interleave",
            "--baseline-cmd",
            "tracebench run --tracer lttng-ust --subbuf-size 3",
            "--candidate-cmd",
            "tracebench run --tracer lttng-ust",
        ],
        "--baseline-cmd: tracer 'lttng-ust': --subbuf-size 3",
    );
}

#[test]
fn an_out_directory_holding_files_is_refused_and_left_alone() {
    // A report of a directory reads every file in it: a run never mixes with an earlier one.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("summary.csv"), "tracer\n").unwrap();
    for cmd in [&["run", "--tracer", "none"][..], &["sweep", "--tracer", "lw", "--vary", "payload-size=4,8"]] {
        let o = tb().args(cmd).arg("--out").arg(d.path()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.trim().lines().last().unwrap().contains("already holds files"), "{cmd:?}: {err}");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["summary.csv"], "{cmd:?}: the directory was written to");
    }
}

#[test]
fn a_tracer_option_no_tracer_of_the_run_reads_is_refused() {
    refused(&["run", "--tracer", "none", "--subbuf-size", "3"], "--subbuf-size: no tracer of this run reads it");
    refused(
        &["run", "--tracer", "lw,none", "--ftrace-clock", "bogus"],
        "--ftrace-clock: no tracer of this run reads it",
    );
    refused(&["scale", "--tracer", "lw", "--probe-site", "ret"], "it applies to");
}

#[test]
fn a_swept_knob_given_as_an_option_too_is_refused() {
    refused(&["sweep", "--tracer", "lw", "--vary", "threads=1,2", "--threads", "2"], "--vary threads sets --threads");
    refused(&["sweep", "--tracer", "lw", "--vary", "payload-size=4,8", "--payload-size", "16"], "drop --payload-size");
}
