//! End-to-end runs of the LTTng, ftrace and system-call backends through the real CLI: each test
//! runs `tracebench run` for real with a small N and checks the results and that the system is
//! left as found. A backend that cannot run here prints `SKIP <test>: <reason>` instead.
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;

/// The LTTng tests share one session daemon (the first run's guard stops it when it started it),
/// so the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracebench"))
}

/// `tracebench list` says whether `tracer` can run here; if not, prints the skip line.
fn available(test: &str, tracer: &str) -> bool {
    let out = bin().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let Some(i) = lines.iter().position(|l| l.split_whitespace().next() == Some(tracer)) else {
        panic!("{tracer} missing from `tracebench list`:\n{text}");
    };
    if lines[i].split_whitespace().nth(1) == Some("available") {
        return true;
    }
    // The indented `why:` and `fix:` lines that follow an unavailable tracer.
    let why: Vec<&str> = lines[i + 1..].iter().take_while(|l| l.starts_with(' ')).map(|l| l.trim()).collect();
    println!("SKIP {test}: {tracer} unavailable; {}", why.join("; "));
    false
}

fn sessiond_running() -> bool {
    std::fs::read_to_string("/var/run/lttng/lttng-sessiond.pid")
        .ok()
        .and_then(|p| std::fs::read_to_string(format!("/proc/{}/stat", p.trim())).ok())
        .map(|s| s.contains("(lttng-sessiond)") && !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// The names of the LTTng sessions (`  1) NAME [state]` lines of `lttng list`); none when no
/// session daemon runs. Any other failure of `lttng list` fails the test: an empty list must not
/// stand for "nothing left behind" when it was never read.
fn lttng_sessions() -> Vec<String> {
    let o = Command::new("lttng").arg("list").output().expect("run lttng list");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    if !o.status.success() {
        assert!(err.contains("No session daemon"), "lttng list failed: {out}{err}");
        return Vec::new();
    }
    out.lines()
        .filter_map(|l| l.trim_start().split_once(") "))
        .filter(|(n, _)| n.parse::<u32>().is_ok())
        .filter_map(|(_, rest)| rest.split_whitespace().next().map(String::from))
        .collect()
}

/// The process group of `pid`, while it lives (field 5 of /proc/PID/stat).
fn pgrp_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
}

/// The pid a tracebench tracefs instance is named after: `tracebench-PID[-N]`.
fn instance_pid(name: &str) -> Option<i32> {
    name.strip_prefix("tracebench-")?.split('-').next()?.parse().ok()
}

/// The pid a tracebench LTTng session is named after: `tracebench-[RUN-]PID`.
fn session_pid(name: &str) -> Option<i32> {
    name.strip_prefix("tracebench-")?.rsplit('-').next()?.parse().ok()
}

fn run_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

/// Kept count of `tracer` in summary.csv, found by column name.
fn kept(dir: &Path, tracer: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (ti, ki) = (head.iter().position(|h| *h == "tracer").unwrap(), head.iter().position(|h| *h == "kept").unwrap());
    let row = lines.map(|l| l.split(',').collect::<Vec<_>>()).find(|r| r[ti] == tracer).expect("row");
    row[ki].parse().unwrap()
}

/// Checks that what the tracer made for the run is gone: its tracefs instance and its LTTng
/// session (named in run.json's config), and the session daemon if none ran before.
fn assert_left_nothing(run: &serde_json::Value, sessiond_before: bool) {
    for t in run["tracers"].as_array().unwrap() {
        let cfg = &t["config"];
        if let Some(inst) = cfg["instance"].as_str() {
            assert!(!Path::new(inst).exists(), "tracefs instance {inst} left behind");
        }
        if let Some(session) = cfg["session"].as_str() {
            assert!(!lttng_sessions().iter().any(|s| s == session), "LTTng session {session} left behind");
        }
    }
    if !sessiond_before {
        // The guard waits for the daemon it started to exit before the run returns.
        assert!(!sessiond_running(), "lttng-sessiond started by the run was left running");
    }
}

fn run_backend(test: &str, tracer: &str, extra: &[&str]) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, tracer) {
        return;
    }
    let sessiond_before = sessiond_running();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    bin().args(["run", "-q", "-t", tracer, "-n", "300", "-o"]).arg(&out).args(extra).assert().success();
    assert_eq!(kept(&out, tracer), 300);
    let run = run_json(&out);
    let t = &run["tracers"][0];
    assert_eq!(t["name"], tracer);
    assert!(!t["version"].as_str().unwrap_or("").is_empty(), "no version: {t}");
    assert!(t["config"].is_object(), "no config: {t}");
    // LTTng and ftrace report from their own counters that the warm-up wrapped the buffer.
    let after = &t["cells"][0]["after_run"];
    if tracer.starts_with("lttng") || tracer.starts_with("ftrace") {
        assert_eq!(after["buffer_wrapped"], true, "{tracer}: buffer did not wrap: {after}");
    }
    assert_left_nothing(&run, sessiond_before);
}

#[test]
fn lttng_ust_runs() {
    run_backend("lttng_ust_runs", "lttng-ust", &[]);
}

#[test]
fn lttng_tracef_runs() {
    run_backend("lttng_tracef_runs", "lttng-tracef", &[]);
}

#[test]
fn lttng_subbuf_options_reach_the_channel() {
    let test = "lttng_subbuf_options_reach_the_channel";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "lttng-ust") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    bin()
        .args(["run", "-q", "-t", "lttng-ust", "-n", "200", "--subbuf-size", "16k", "--num-subbuf", "4", "-o"])
        .arg(&out)
        .assert()
        .success();
    let t = &run_json(&out)["tracers"][0];
    assert_eq!(t["config"]["subbuf_bytes"], 16384);
    assert_eq!(t["config"]["num_subbuf"], 4);
    // 4 x 16 KiB / 8-byte events.
    assert_eq!(t["buffer_events"], 8192);
    assert_eq!(t["cells"][0]["after_run"]["buffer_wrapped"], true);
}

#[test]
fn ftrace_runs() {
    run_backend("ftrace_runs", "ftrace", &[]);
}

#[test]
fn ftrace_raw_runs_with_tsc_clock() {
    run_backend("ftrace_raw_runs_with_tsc_clock", "ftrace-raw", &["--ftrace-clock", "x86-tsc"]);
}

#[test]
fn ftrace_bad_clock_is_refused() {
    let test = "ftrace_bad_clock_is_refused";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["run", "-q", "-t", "ftrace", "-n", "100", "--ftrace-clock", "sundial", "-o"])
        .arg(tmp.path().join("r"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a usage error: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("local|global|counter|x86-tsc|mono"), "{err}");
}

#[test]
fn syscall_runs() {
    run_backend("syscall_runs", "syscall", &[]);
}

#[test]
fn ftrace_syscall_runs() {
    run_backend("ftrace_syscall_runs", "ftrace-syscall", &[]);
}

#[test]
fn ftrace_raw_syscall_runs() {
    run_backend("ftrace_raw_syscall_runs", "ftrace-raw-syscall", &[]);
}

#[test]
fn strace_runs() {
    run_backend("strace_runs", "strace", &[]);
}

/// Starts `tracebench run ARGS` in a process group of its own, waits until `ready(pgid)` says the
/// tracer is set up, then sends SIGINT to the whole group (as Ctrl-C in a terminal would) and
/// returns the exit code and the output directory's run.json.
fn interrupt_run(args: &[&str], out: &Path, ready: impl Fn(i32) -> bool) -> (Option<i32>, Option<serde_json::Value>) {
    interrupt_run_to(args, out, ready, true)
}

/// `interrupt_run`, with SIGINT to the whole group (`to_group`) or to the tracebench parent only
/// (as `kill PID` would).
fn interrupt_run_to(
    args: &[&str],
    out: &Path,
    ready: impl Fn(i32) -> bool,
    to_group: bool,
) -> (Option<i32>, Option<serde_json::Value>) {
    use std::os::unix::process::CommandExt;
    let mut cmd = bin();
    cmd.args(["run", "-q"]).args(args).arg("-o").arg(out).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: setpgid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setpgid(0, 0);
            Ok(())
        })
    };
    let mut child = cmd.spawn().unwrap();
    let pgid = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready(pgid) {
        assert!(Instant::now() < deadline, "the tracer never got set up");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be interrupted");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: signal to the process group we created, or to our child.
    unsafe { libc::kill(if to_group { -pgid } else { pgid }, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("tracebench did not exit within 60 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = std::fs::read_to_string(out.join("run.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
    (status.code(), run)
}

fn our_instances() -> Vec<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn sigint_mid_run_leaves_nothing_behind() {
    let test = "sigint_mid_run_leaves_nothing_behind";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();

    // ftrace: interrupted while its instance exists (many repetitions, each a child of its own).
    // Only this run's instances count: `tracebench-PID` where PID is in the run's process group.
    if available(test, "ftrace-syscall") {
        let seen = std::cell::RefCell::new(Vec::<String>::new());
        let ours = |pgid: i32| {
            for n in our_instances() {
                if instance_pid(&n).and_then(pgrp_of) == Some(pgid) && !seen.borrow().contains(&n) {
                    seen.borrow_mut().push(n);
                }
            }
            !seen.borrow().is_empty()
        };
        let out = tmp.path().join("ftrace");
        let (code, run) = interrupt_run(&["-t", "ftrace-syscall", "-n", "200000", "--repeats", "20"], &out, ours);
        assert_eq!(code, Some(130), "exit code after SIGINT");
        let run = run.expect("run.json written after SIGINT");
        assert_eq!(run["interrupted"], true);
        assert_left_nothing(&run, true);
        let after = our_instances();
        let leaked: Vec<String> = seen.borrow().iter().filter(|n| after.contains(n)).cloned().collect();
        assert!(leaked.is_empty(), "this run's instances left behind: {leaked:?}");
    }

    // LTTng: interrupted while its session exists; the daemon the run started must be gone too.
    if available(test, "lttng-ust") {
        let sessiond_before = sessiond_running();
        let out = tmp.path().join("lttng");
        let seen = std::cell::RefCell::new(Vec::<String>::new());
        let ours = |pgid: i32| {
            if !sessiond_running() {
                return false;
            }
            for n in lttng_sessions() {
                if session_pid(&n).and_then(pgrp_of) == Some(pgid) && !seen.borrow().contains(&n) {
                    seen.borrow_mut().push(n);
                }
            }
            !seen.borrow().is_empty()
        };
        let (code, run) = interrupt_run(&["-t", "lttng-ust", "-n", "200000", "--repeats", "20"], &out, ours);
        assert_eq!(code, Some(130));
        let run = run.expect("run.json written after SIGINT");
        assert_left_nothing(&run, sessiond_before);
        let left = lttng_sessions();
        assert!(seen.borrow().iter().all(|n| !left.contains(n)), "this run's LTTng session left behind: {left:?}");
    }

    // strace: the measuring child runs under strace; neither may outlive the run.
    if available(test, "strace") {
        let out = tmp.path().join("strace");
        let marker = out.to_string_lossy().into_owned();
        // Processes whose command line names this run's output directory: the parent, strace
        // and the measuring child under it. Not the detector's releaser (`tracebench-rel`, a fork
        // that closes the run's perf events after it, keeping their grace periods off the run's
        // path); tests/leaks.rs checks that it goes too.
        let procs = move |strace_only: bool| {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("comm")).map_or(true, |c| c.trim() != "tracebench-rel")
                })
                .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                .filter(|c| String::from_utf8_lossy(c).contains(&marker) && (!strace_only || c.starts_with(b"strace")))
                .count()
        };
        let (code, _) = interrupt_run(&["-t", "strace", "-n", "100000", "--repeats", "5"], &out, |_| procs(true) > 0);
        assert_eq!(code, Some(130));
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(procs(false), 0, "strace or its measuring child outlived the run");
        // SIGINT to the parent only, as soon as strace is up: strace blocks SIGINT (it was
        // started with -o), and the measuring child may not exist yet, so only the parent's stop
        // handshake (the pid on its pipe, then the stop mark) can end the cell. Without it the cell ran all
        // of its 100000 calls (20-60 s).
        let out2 = tmp.path().join("strace-parent");
        let marker2 = out2.to_string_lossy().into_owned();
        let strace_up = move |_: i32| {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                .any(|c| c.starts_with(b"strace") && String::from_utf8_lossy(&c).contains(&marker2))
        };
        let t = Instant::now();
        let (code, _) = interrupt_run_to(&["-t", "strace", "-n", "100000", "--repeats", "5"], &out2, strace_up, false);
        assert_eq!(code, Some(130));
        assert!(t.elapsed() < Duration::from_secs(15), "the run took {:?} to stop", t.elapsed());
    }
}
