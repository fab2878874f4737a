//! Everything a run opens is closed or removed once it is over, on success, on an error
//! exit and on Ctrl-C: perf events (the disturbance detector's, and the tracepoints `KeepAlive`
//! holds, which a background process releases after the run), tracefs instances, LTTng sessions
//! and the session daemon a run starts.
//!
//! This test process makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every process a
//! run leaves behind, the orphaned releaser and a daemonized lttng-sessiond included, becomes our
//! child instead of PID 1's: we can count what they hold, and wait for them. A leftover is a live
//! process (not a zombie: PID 1 reaps late, and so might we) of ours after a deadline.
use std::path::Path;
use std::time::{Duration, Instant};

mod common;
use common::tb;

/// The processes in our tree: children, recursively (every thread's children).
fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.flatten().collect::<Vec<_>>());
    for t in tasks.unwrap_or_default() {
        let kids = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        for k in kids.split_whitespace().filter_map(|k| k.parse::<i32>().ok()) {
            out.push(k);
            out.extend(descendants(k));
        }
    }
    out
}

/// Live (not a zombie), by /proc/PID/stat's state.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").and_then(|(_, r)| r.chars().next()))
        .is_some_and(|state| state != 'Z' && state != 'X')
}

/// Perf event descriptors `pid` holds.
fn perf_events(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == Path::new("anon_inode:[perf_event]")))
                .count()
        })
        .unwrap_or(0)
}

fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string()
}

/// Perf events held by our whole tree (this test process holds none).
fn tree_perf_events() -> usize {
    descendants(std::process::id() as i32).into_iter().map(perf_events).sum()
}

/// Waits (reaping our zombies) until no process of our tree lives; Err lists what still does,
/// with the perf events each holds.
fn settle(what: &str) -> Result<Duration, String> {
    let t0 = Instant::now();
    let me = std::process::id() as i32;
    loop {
        let mut status = 0;
        // SAFETY: reaps any child that has ended; the runs' own `Command`s were waited for already.
        while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
        let live: Vec<i32> = descendants(me).into_iter().filter(|&p| alive(p)).collect();
        if live.is_empty() {
            return Ok(t0.elapsed());
        }
        if t0.elapsed() > Duration::from_secs(15) {
            let list: Vec<String> =
                live.iter().map(|&p| format!("{p} {} ({} perf events)", comm(p), perf_events(p))).collect();
            return Err(format!("{what}: still running 15 s after the run ended: {}", list.join(", ")));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn become_subreaper() {
    // SAFETY: prctl on this process; arguments as documented.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0);
}

/// LTTng sessions of the run whose parent was `pid` (`tracebench-<stamp>-<pid>-<cell pid>`).
fn lttng_sessions_of(pid: u32) -> Vec<String> {
    let Ok(o) = std::process::Command::new("lttng").arg("list").output() else { return Vec::new() };
    let mark = format!("-{pid}-");
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with("tracebench-") && w.contains(&mark))
        .map(String::from)
        .collect()
}

/// tracefs instances named `tracebench-*` that appeared since `before` and whose owner is dead.
fn leaked_instances(before: &[String]) -> Vec<String> {
    tracebench_tracers::ftrace::leftover_instances()
        .into_iter()
        .filter(|n| !before.contains(n))
        .filter(|n| {
            n.rsplit('-').next().and_then(|p| p.trim_start_matches('k').parse::<i32>().ok()).is_none_or(|p| !alive(p))
        })
        .collect()
}

/// One test function: the checks reap any child of this process, so they must not run beside
/// another test's.
#[test]
fn a_run_leaves_nothing_open_on_success_error_and_ctrl_c() {
    become_subreaper();
    settle("before the first run").unwrap();
    assert_eq!(tree_perf_events(), 0);
    let instances_before = tracebench_tracers::ftrace::leftover_instances();

    // Success, with every kind of thing a run opens that this machine has.
    let mut tracers = vec!["lw"];
    if tracebench_tracers::ftrace::availability(tracebench_tracers::ftrace::Mode::Marker).is_ok() {
        tracers.push("ftrace");
    }
    let lttng = tracebench_tracers::lttng::availability().is_ok();
    if lttng {
        tracers.push("lttng-ust");
    }
    let d = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("tracebench");
    let child = std::process::Command::new(&bin)
        .args(["run", "--tracer", &tracers.join(","), "-n", "2000", "--quiet", "--out"])
        .arg(d.path().join("ok"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let took = settle("after a successful run").unwrap();
    println!("success ({}): the tree was empty {:.2} s after the run", tracers.join(","), took.as_secs_f64());
    assert_eq!(tree_perf_events(), 0);
    assert_eq!(leaked_instances(&instances_before), Vec::<String>::new(), "tracefs instances left behind");
    assert_eq!(lttng_sessions_of(pid), Vec::<String>::new(), "LTTng sessions of the run");

    // An error exit after the detector's tracepoints are held (the results directory cannot be
    // made, found after the clock's calibration).
    let o = tb().args(["run", "--tracer", "lw", "-n", "100", "--quiet", "--out", "/proc/nope/r"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    settle("after an error exit").unwrap();

    // Ctrl-C while a cell warms up (spin:500000: 0.5 ms per untimed call). At that moment the run
    // holds perf events (which shows this test can see them); afterwards none is left.
    let mut run = std::process::Command::new(&bin);
    // With LTTng, its session daemon too: started and stopped by the run (unless one ran already).
    let tracer = if lttng { "spin:500000,lttng-ust" } else { "spin:500000" };
    run.args(["run", "--tracer", tracer, "-n", "10", "--quiet", "--out"]).arg(d.path().join("int"));
    let child = run.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    // Signalled once the measuring cell (the run's child) holds its detector: the run's handlers
    // are up by then.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut held = 0;
    while held == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        held = descendants(pid as i32).into_iter().map(perf_events).sum();
    }
    held += perf_events(pid as i32);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        assert!(held > 0, "the interrupted run held no perf event while it ran");
    }
    settle("after Ctrl-C").unwrap();
    assert_eq!(tree_perf_events(), 0);
    assert_eq!(leaked_instances(&instances_before), Vec::<String>::new(), "tracefs instances left behind");
    if lttng {
        assert_eq!(lttng_sessions_of(pid), Vec::<String>::new(), "LTTng sessions of the interrupted run");
    }
}
