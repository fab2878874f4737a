//! The LTTng, ftrace and system-call backends against the real tracers: no mocks. Each test
//! prints `SKIP <test>: <reason>` and returns when what it needs is not here.
#[path = "support/common.rs"]
mod common;
use common::{available, pin0};
use std::sync::Mutex;

use tracebench_tracers::{create, ftrace, lttng, parent_guard, CreateOptions, Tracer};

/// ftrace instances are named after the pid and LTTng tests share one session daemon, so the
/// tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn opts() -> CreateOptions {
    CreateOptions { run_id: "test".into(), ..Default::default() }
}

fn lttng_records(spec: &str, test: &str) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, spec) {
        return;
    }
    if lttng::which("babeltrace2").is_none() {
        println!("SKIP {test}: babeltrace2 not installed (apt-get install babeltrace2)");
        return;
    }
    let guard = parent_guard(spec, &opts()).expect("sessiond");
    let t = create(spec, &opts()).expect("create");
    pin0();
    t.thread_init(0).unwrap();
    let n: u32 = 5000;
    for i in 0..n {
        t.fire(i);
    }
    let after = t.after_run();
    assert_eq!(after["buffer_wrapped"], true, "{after}");
    drop(t);
    // A fresh session with fewer events than the buffer holds: read it back and check every
    // recorded payload.
    let mode = if spec == "lttng-ust" { lttng::Mode::Tracepoint } else { lttng::Mode::Tracef };
    let t2 = lttng::Lttng::new(mode, &opts()).expect("create");
    t2.thread_init(0).unwrap();
    for i in 0..100u32 {
        t2.fire(1000 + i);
    }
    let snap = t2.read_snapshot().expect("snapshot");
    let all: Vec<i64> = snap.values().flat_map(|c| c.payloads.iter().copied()).collect();
    // 100 events do not wrap 2 x 8 KiB: the sentinel and every payload are there, in order.
    let sentinel = if spec == "lttng-tracef" { -1 } else { u32::MAX as i64 };
    assert_eq!(all.len(), 101, "{snap:?}");
    assert_eq!(all[0], sentinel);
    assert_eq!(&all[1..], &(1000..1100).collect::<Vec<i64>>()[..]);
    // The session goes before its daemon: `lttng destroy` needs the daemon that holds it.
    drop(t2);
    drop(guard);
}

#[test]
fn lttng_ust_records_real_events() {
    lttng_records("lttng-ust", "lttng_ust_records_real_events");
}

#[test]
fn lttng_tracef_records_real_events() {
    lttng_records("lttng-tracef", "lttng_tracef_records_real_events");
}

#[test]
fn lttng_session_is_destroyed() {
    let test = "lttng_session_is_destroyed";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "lttng-ust") {
        return;
    }
    let guard = parent_guard("lttng-ust", &opts()).unwrap();
    let o = CreateOptions { run_id: "destroytest".into(), ..Default::default() };
    let t = create("lttng-ust", &o).unwrap();
    // This tracer's own session, by its exact name: other runs' sessions may be listed too.
    let session = t.config()["session"].as_str().expect("the session's name in config").to_string();
    assert!(session.starts_with("tracebench-destroytest-"), "{session}");
    let listed = || {
        let o = std::process::Command::new("lttng").arg("list").output().expect("run lttng list");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "lttng list failed: {text}{}", String::from_utf8_lossy(&o.stderr));
        text.split_whitespace().any(|w| w == session)
    };
    assert!(listed(), "{session} not in lttng list");
    drop(t);
    assert!(!listed(), "{session} still listed after drop");
    drop(guard);
}

#[test]
fn ftrace_markers_are_recorded_and_buffer_wraps() {
    let test = "ftrace_markers_are_recorded_and_buffer_wraps";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace") {
        return;
    }
    let t = ftrace::Ftrace::new(ftrace::Mode::Marker, &opts()).unwrap();
    let path = t.instance_path().to_path_buf();
    // The kernel rounds 16 KiB up to whole ring-buffer pages (4080 data bytes each) and reports
    // the rounded size.
    let kb: u64 = std::fs::read_to_string(path.join("buffer_size_kb")).unwrap().trim().parse().unwrap();
    assert!((16..32).contains(&kb), "buffer_size_kb {kb}");
    assert_eq!(t.config()["buffer_size_kb_requested"], 16);
    assert!(std::fs::read_to_string(path.join("trace_clock")).unwrap().contains("[global]"));
    for i in 0..10u32 {
        t.fire(i);
    }
    let trace = std::fs::read_to_string(path.join("trace")).unwrap();
    let marks: Vec<&str> =
        trace.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.rsplit(": ").next()).collect();
    assert_eq!(marks, (0..10).map(|i| i.to_string()).collect::<Vec<_>>(), "{trace}");
    assert_eq!(t.after_run()["buffer_wrapped"], false);
    for i in 0..(t.buffer_events() as u32 + 10) {
        t.fire(i);
    }
    let after = t.after_run();
    assert_eq!(after["buffer_wrapped"], true, "{after}");
    drop(t);
    assert!(!path.exists(), "instance {} left behind", path.display());
}

#[test]
fn ftrace_raw_and_clock_option() {
    let test = "ftrace_raw_and_clock_option";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace-raw") {
        return;
    }
    let o = CreateOptions { ftrace_clock: Some("x86-tsc".into()), ..opts() };
    let t = create("ftrace-raw", &o).unwrap();
    assert_eq!(t.config()["trace_clock"], "x86-tsc");
    for i in 0..(t.buffer_events() as u32 + 10) {
        t.fire(i);
    }
    assert_eq!(t.after_run()["buffer_wrapped"], true);
    drop(t);
    let bad = CreateOptions { ftrace_clock: Some("sundial".into()), ..opts() };
    let e = create("ftrace", &bad).err().expect("bad clock refused").to_string();
    assert!(e.contains("local|global|counter|x86-tsc|mono"), "{e}");
    assert!(ftrace::leftover_instances().iter().all(|n| n != &format!("tracebench-{}", std::process::id())));
}

#[test]
fn ftrace_syscall_records_getppid() {
    let test = "ftrace_syscall_records_getppid";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace-syscall") {
        return;
    }
    let t = ftrace::Ftrace::new(ftrace::Mode::Syscall, &opts()).unwrap();
    let path = t.instance_path().to_path_buf();
    for i in 0..5u32 {
        t.fire(i);
    }
    let trace = std::fs::read_to_string(path.join("trace")).unwrap();
    let enters = trace.lines().filter(|l| l.contains("sys_getppid(")).count();
    let exits = trace.lines().filter(|l| l.contains("sys_getppid -> ")).count();
    assert!(enters >= 5 && exits >= 5, "{trace}");
    drop(t);
    assert!(!path.exists());
}

#[test]
fn strace_refuses_to_run_untraced() {
    let test = "strace_refuses_to_run_untraced";
    if !available(test, "strace") {
        return;
    }
    let e = create("strace", &opts()).err().expect("must refuse").to_string();
    assert!(e.contains("not running under strace"), "{e}");
    assert_eq!(tracebench_tracers::launch_prefix("strace")[0], "strace");
    assert!(create("syscall", &opts()).is_ok());
}

#[test]
fn ftrace_open_records_the_name_pointer_not_the_name() {
    let test = "ftrace_open_records_the_name_pointer_not_the_name";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace-open") {
        return;
    }
    let t = ftrace::Ftrace::new(ftrace::Mode::OpenSyscall, &CreateOptions { payload_size: 300, ..opts() }).unwrap();
    let path = t.instance_path().to_path_buf();
    for i in 0..5u32 {
        t.fire(i);
    }
    let trace = std::fs::read_to_string(path.join("trace")).unwrap();
    // SAFETY: gettid has no preconditions. The trace names threads, not processes.
    let tid = unsafe { libc::gettid() };
    let ours: Vec<&str> =
        trace.lines().filter(|l| l.contains("sys_openat(") && l.contains(&format!("-{tid} "))).collect();
    assert!(ours.len() >= 5, "{trace}");
    // The event carries `filename: 0x...` (the pointer), never the name's characters.
    assert!(ours.iter().all(|l| l.contains("filename: 0x") && !l.contains("tracebench-no-such-file")), "{trace}");
    let exits = trace.lines().filter(|l| l.contains("sys_openat -> 0xfffffffffffffffe")).count();
    assert!(exits >= 5, "openat must fail with ENOENT (-2): {trace}");
    drop(t);
    assert!(!path.exists());
}

#[test]
fn open_names_and_strace_open_refusal() {
    let t = create("open", &CreateOptions { payload_size: 4095, ..opts() }).unwrap();
    assert_eq!(t.config()["name_bytes"], 4095);
    assert!(tracebench_tracers::registry::validate_payload("open", 0).is_err());
    assert!(tracebench_tracers::registry::validate_payload("open", 4096).is_err());
    assert!(tracebench_tracers::registry::validate_payload("ftrace-open", 1).is_ok());
    if !available("open_names_and_strace_open_refusal", "strace-open") {
        return;
    }
    let e = create("strace-open", &opts()).err().expect("must refuse").to_string();
    assert!(e.contains("not running under strace"), "{e}");
    assert_eq!(tracebench_tracers::launch_prefix("strace-open")[0], "strace");
}
