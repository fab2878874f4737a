//! End-to-end runs of the dynamic-instrumentation backends (uprobe, ebpf, perf, bpftrace,
//! systemtap) through the real CLI, with a small N: each checks the results, that the tracer
//! recorded the payloads (its `after_run` in run.json), and that the uprobe events and tracefs
//! instances are gone afterwards. A backend that cannot run here prints `SKIP <test>: <reason>`.
//!
//! `ebpf` runs only in a build with the feature: `cargo test -p tracebench --features
//! tracebench-tracers/ebpf` (the Makefile's build); otherwise its test prints a skip line.
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A uprobe records every thread of a process that calls the site, and tests here look at the
/// global uprobe_events: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracebench"))
}

/// `tracebench list` says whether `tracer` can run here; if not, prints the skip line.
fn available(test: &str, tracer: &str) -> bool {
    let out = bin().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines().skip_while(|l| l.split_whitespace().next() != Some(tracer));
    match lines.next() {
        Some(l) if l.split_whitespace().nth(1) == Some("available") => true,
        Some(_) => {
            let why: Vec<&str> = lines.take(2).map(|l| l.trim()).collect();
            println!("SKIP {test}: {tracer} unavailable: {}", why.join("; "));
            false
        }
        None => panic!("{tracer} missing from `tracebench list`:\n{text}"),
    }
}

fn run_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

/// A column of `tracer`'s row in summary.csv, by header name.
fn summary(dir: &Path, tracer: &str, col: &str) -> String {
    let text = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (ti, ci) = (head.iter().position(|h| *h == "tracer").unwrap(), head.iter().position(|h| *h == col).unwrap());
    let row = lines.map(|l| l.split(',').collect::<Vec<_>>()).find(|r| r[ti] == tracer).expect("row");
    row[ci].to_string()
}

fn tracefs() -> &'static Path {
    Path::new("/sys/kernel/tracing")
}

fn uprobe_events() -> String {
    std::fs::read_to_string(tracefs().join("uprobe_events")).unwrap_or_default()
}

/// What the run set up is gone: the uprobe event named in the tracer's config, its instance.
fn assert_left_nothing(tracer: &serde_json::Value) {
    let cfg = &tracer["config"];
    if let Some(ev) = cfg["event"].as_str() {
        assert!(!uprobe_events().contains(&format!("{ev} ")), "uprobe event {ev} left in uprobe_events");
    }
    if let Some(inst) = cfg["instance"].as_str() {
        assert!(!Path::new(inst).exists(), "tracefs instance {inst} left behind");
    }
}

/// Runs `tracer` for real and returns (run.json's tracer entry, its first cell's after_run).
fn run_one(tracer: &str, site: &str, n: u32) -> (tempfile::TempDir, serde_json::Value, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["run", "-q", "-t", tracer, "-n", &n.to_string(), "--probe-site", site, "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{tracer} run failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(summary(dir.path(), tracer, "kept"), n.to_string());
    let run = run_json(dir.path());
    let t = run["tracers"].as_array().unwrap().iter().find(|t| t["name"] == tracer).unwrap().clone();
    assert!(t["version"].as_str().is_some_and(|v| v.contains("linux")), "{t}");
    assert_eq!(t["config"]["site"]["probe_site"], site, "{t}");
    let after = t["cells"][0]["after_run"].clone();
    assert_left_nothing(&t);
    (dir, t, after)
}

#[test]
fn uprobe_records_on_every_site_and_cleans_up() {
    let _g = serial();
    if !available("uprobe_records_on_every_site_and_cleans_up", "uprobe") {
        return;
    }
    for site in ["nop5", "push", "ret"] {
        let (_d, t, a) = run_one("uprobe", site, 300);
        assert!(a["entries"].as_u64().unwrap() > 0, "{site}: {a}");
        // The warm-up wraps the 16 KiB buffer (overwrite mode, survey 6.2.3-6.2.4).
        assert!(a["overrun"].as_u64().unwrap() > 0, "{site}: buffer never wrapped: {a}");
        assert_eq!(a["dropped_events"].as_u64(), Some(0), "{a}");
        assert!(a["last_payload"].as_u64().is_some(), "{a}");
        assert_eq!(t["config"]["buffer_size_kb_per_cpu"], 16);
        assert_eq!(t["config"]["overwrite"], true);
    }
}

#[test]
fn ebpf_map_holds_the_payloads() {
    let _g = serial();
    if !available("ebpf_map_holds_the_payloads", "ebpf") {
        return;
    }
    let (_d, _t, a) = run_one("ebpf", "nop5", 300);
    let events: u64 = a["events_per_cpu"].as_array().unwrap().iter().filter_map(|v| v.as_u64()).sum();
    // Warm-up (at least one 1024-event ring) plus 300 kept calls went through the program.
    assert!(events >= 1024 + 300, "{a}");
    let newest: Vec<u64> = a["newest_payload_per_cpu"].as_array().unwrap().iter().filter_map(|v| v.as_u64()).collect();
    assert!(!newest.is_empty(), "{a}");
    assert_eq!(a["recursion_misses"].as_u64(), Some(0), "{a}");
}

#[test]
fn perf_records_into_its_ring() {
    let _g = serial();
    if !available("perf_records_into_its_ring", "perf") {
        return;
    }
    let (_d, _t, a) = run_one("perf", "nop5", 300);
    assert!(a["hits"].as_u64().unwrap() >= 300, "{a}");
    assert_eq!(a["lost"].as_u64(), Some(0), "overwrite mode loses nothing: {a}");
    let th = &a["per_thread"][0];
    assert!(th["samples_in_ring"].as_u64().unwrap() > 0 && th["newest_payload"].as_u64().is_some(), "{a}");
}

#[test]
fn bpftrace_records_hits() {
    let _g = serial();
    if !available("bpftrace_records_hits", "bpftrace") {
        return;
    }
    let (_d, _t, a) = run_one("bpftrace", "nop5", 300);
    assert!(a["hits"].as_u64().unwrap() >= 300, "{a}");
}

#[test]
fn systemtap_runs_or_says_why_not() {
    let _g = serial();
    if !available("systemtap_runs_or_says_why_not", "systemtap") {
        // Asking for it anyway fails with one clear line and a non-zero exit.
        let dir = tempfile::tempdir().unwrap();
        let out = bin().args(["run", "-q", "-t", "systemtap", "-n", "10", "-o"]).arg(dir.path()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains("systemtap") && err.contains("fix"), "{err}");
        return;
    }
    let (_d, _t, a) = run_one("systemtap", "nop5", 100);
    assert!(a["hits"].as_u64().unwrap() >= 100, "{a}");
}

#[test]
fn bad_probe_site_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["run", "-q", "-t", "uprobe", "--probe-site", "int3", "-n", "10", "-o"])
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a usage error: {err}");
    // clap's refusal: the message on its first line, then the values it takes.
    let first = err.lines().next().unwrap_or("");
    assert!(first.contains("invalid value 'int3' for '--probe-site"), "{err}");
    assert!(err.contains("[possible values: nop5, push, ret]"), "{err}");
    assert!(!dir.path().join("r").exists(), "nothing written for bad input");
}

/// SIGINT to `tracebench run` while a uprobe cell measures: the event and the instance go away.
#[test]
fn uprobe_event_and_instance_removed_on_sigint() {
    let _g = serial();
    if !available("uprobe_event_and_instance_removed_on_sigint", "uprobe") {
        return;
    }
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    // A process group of its own: the measuring child, which names the uprobe event group
    // `tracebench_PID`, is in it; events of other runs on the machine are not.
    let mut child = bin()
        .args(["run", "-q", "-t", "uprobe", "--probe-site", "ret", "-n", "1000000", "-o"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id() as i32;
    // Wait for the measuring child's event to appear.
    let deadline = Instant::now() + Duration::from_secs(60);
    let pgrp_of = |pid: &str| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
    };
    let ours = |s: &str| -> Option<String> {
        s.lines()
            .filter_map(|l| l.split_whitespace().next()?.split_once(':').map(|(_, n)| n.to_string()))
            .filter(|n| n.starts_with("tracebench_"))
            .find(|n| pgrp_of(n.trim_start_matches("tracebench_").split('/').next().unwrap()) == Some(pgid))
    };
    let mut event = None;
    while Instant::now() < deadline {
        if let Some(e) = ours(&uprobe_events()) {
            event = Some(e);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let event = event.expect("the uprobe event never appeared in uprobe_events");
    let pid = event.trim_start_matches("tracebench_").split('/').next().unwrap().to_string();
    let instance = tracefs().join("instances").join(format!("tracebench-{pid}"));
    let t0 = Instant::now();
    while !instance.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(instance.exists(), "instance {} never appeared", instance.display());
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "an interrupted run exits 130: {status:?}");
    assert!(!uprobe_events().contains(&format!("{event} ")), "{event} left in uprobe_events after SIGINT");
    assert!(!instance.exists(), "{} left after SIGINT", instance.display());
}
