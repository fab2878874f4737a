//! `tracebench run --instructions singlestep`, end to end with the real binary.
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{run_ok, tb, Table};

/// count -> calls, per tracer, from a stepped events.csv.
fn paths(dir: &Path, tracer: &str) -> BTreeMap<u64, usize> {
    let t = Table::read(&dir.join(tracer).join("events.csv"));
    let c = t.col("user_instructions");
    let mut m = BTreeMap::new();
    for r in &t.rows {
        *m.entry(r[c].parse::<u64>().unwrap()).or_insert(0) += 1;
    }
    m
}

fn mode(m: &BTreeMap<u64, usize>) -> (u64, f64) {
    let n: usize = m.values().sum();
    let (v, k) = m.iter().max_by_key(|(v, k)| (**k, std::cmp::Reverse(**v))).unwrap();
    (*v, *k as f64 / n as f64)
}

#[test]
fn none_lw_and_lw_tsc_have_one_exact_count_on_99_percent_of_calls() {
    let (_d, out) = run_ok(&["--tracer", "none,lw,lw-tsc", "--instructions", "singlestep", "-n", "400"]);
    for t in ["none", "lw", "lw-tsc"] {
        let m = paths(&out, t);
        assert_eq!(m.values().sum::<usize>(), 400, "{t}: every call stepped");
        let (v, share) = mode(&m);
        eprintln!("{t}: {v} instructions on {:.1}% of calls ({m:?})", 100.0 * share);
        assert!(share >= 0.99, "{t}: most frequent count {v} on only {:.1}% of calls: {m:?}", 100.0 * share);
    }
    // The floor is the dispatch alone; lw adds a clock read and a ring write.
    assert!(mode(&paths(&out, "none")).0 < mode(&paths(&out, "lw-tsc")).0);
    assert!(mode(&paths(&out, "lw-tsc")).0 < mode(&paths(&out, "lw")).0);
    // No timing column anywhere; run.json says kernel instructions are not counted.
    let ev = Table::read(&out.join("none/events.csv"));
    assert!(!ev.header.iter().any(|h| h.ends_with("_ns")), "timing column in {:?}", ev.header);
    let sum = Table::read(&out.join("summary.csv"));
    assert!(!sum.header.iter().any(|h| h.ends_with("_ns")), "timing column in {:?}", sum.header);
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["instructions"]["mode"], "singlestep");
    assert_eq!(run["instructions"]["kernel_instructions_counted"], false);
    // Exports and side-by-side reports are for timed runs: refused with one line and exit 2.
    let x = tb().args(["export"]).arg(&out).args(["--format", "bmf"]).output().unwrap();
    let err = String::from_utf8_lossy(&x.stderr);
    assert_eq!(x.status.code(), Some(2), "{err}");
    assert!(err.contains("singlestep") && err.trim().lines().count() == 1, "{err}");
    let side = tempfile::tempdir().unwrap();
    let x = tb().arg("report").arg(&out).arg(&out).arg("--out").arg(side.path()).output().unwrap();
    let err = String::from_utf8_lossy(&x.stderr);
    assert_eq!(x.status.code(), Some(2), "{err}");
    assert!(err.contains("singlestep") && err.trim().lines().count() == 1, "{err}");
}

#[test]
fn two_runs_give_identical_per_path_counts() {
    let args = ["--tracer", "none,lw-tsc,syscall", "--instructions", "singlestep", "-n", "300"];
    let (_a, a) = run_ok(&args);
    let (_b, b) = run_ok(&args);
    for t in ["none", "lw-tsc", "syscall"] {
        assert_eq!(paths(&a, t), paths(&b, t), "{t}: paths differ between two identical runs");
    }
    // lw reads the vDSO clock: its main path is the same count in both runs.
    let args = ["--tracer", "lw", "--instructions", "singlestep", "-n", "300"];
    let (_c, c) = run_ok(&args);
    let (_d, d) = run_ok(&args);
    assert_eq!(mode(&paths(&c, "lw")).0, mode(&paths(&d, "lw")).0);
    // A system call is one kernel entry per call.
    let t = Table::read(&a.join("syscall/events.csv"));
    let k = t.col("kernel_entries");
    assert!(t.rows.iter().all(|r| r[k] == "1"), "syscall: a getppid() per call");
}

fn refused(args: &[&str], needle: &str) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = tb().arg("run").args(args).arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!out.exists(), "{args:?}: nothing may be written");
}

#[test]
fn untraceable_tracers_and_options_are_refused_with_exit_2() {
    refused(&["--tracer", "none,strace", "--instructions", "singlestep"], "strace");
    refused(&["--tracer", "spin:100", "--instructions", "singlestep"], "spin");
    refused(&["--tracer", "none", "--instructions", "singlestep", "--threads", "2"], "thread");
    refused(&["--tracer", "none", "--instructions", "singlestep", "--kernel"], "--kernel");
    let o = tb().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("--instructions singlestep: not supported"), "{text}");
}

/// The pids of our processes whose command line contains `needle`.
fn pids_with(needle: &str) -> Vec<i32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).replace('\0', " ").contains(needle) {
            v.push(pid);
        }
    }
    v
}

fn ppid(pid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// Starts a long stepped run and waits until its stepper runs; returns (child, cell, stepper).
fn start_long(out: &Path) -> (std::process::Child, i32, i32) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_tracebench"))
        .args(["run", "--tracer", "lw", "--instructions", "singlestep", "-n", "1000000", "--quiet", "--out"])
        .arg(out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let cells = pids_with(&out.display().to_string());
        let cell = cells.into_iter().find(|p| ppid(*p) == Some(child.id() as i32));
        if let Some(cell) = cell {
            if let Some(s) = pids_with("__stepper").into_iter().find(|p| ppid(*p) == Some(cell)) {
                // Let it step a little.
                std::thread::sleep(Duration::from_millis(300));
                return (child, cell, s);
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "the stepper never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gone(pid: i32) -> bool {
    // A zombie not reaped yet counts as gone: it runs nothing and traces nothing.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit_once(')').map(|(_, r)| r.trim_start().starts_with('Z')).unwrap_or(true),
    }
}

#[test]
fn sigint_and_a_killed_stepper_leave_nothing_stopped_or_traced() {
    let d = tempfile::tempdir().unwrap();
    // SIGINT to the runner: exit 130, the calls stepped so far are written.
    let out = d.path().join("int");
    let (mut child, cell, stepper) = start_long(&out);
    // SAFETY: our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(200));
    assert!(gone(cell) && gone(stepper), "cell {cell} or stepper {stepper} left behind");
    let t = Table::read(&out.join("lw/events.csv"));
    assert!(!t.rows.is_empty(), "what was stepped is kept");
    // The stepper killed: the cell is detached, tears down and fails; nothing is left.
    let out = d.path().join("kill");
    let (mut child, cell, stepper) = start_long(&out);
    // SAFETY: a process of this test's run.
    unsafe { libc::kill(stepper, libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a lost stepper fails the cell");
    std::thread::sleep(Duration::from_millis(200));
    assert!(gone(cell), "cell {cell} left behind");
    let run = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(run.contains("stepping process failed"), "{run}");
}

#[test]
fn gate_on_user_instructions_is_exact() {
    let (_a, a) = run_ok(&["--tracer", "none,lw-tsc", "--instructions", "singlestep", "-n", "200"]);
    let (_b, b) = run_ok(&["--tracer", "none,lw-tsc", "--instructions", "singlestep", "-n", "200"]);
    let o = tb()
        .args(["gate", "--metric", "user_instructions", "--baseline"])
        .arg(&a)
        .arg("--candidate")
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.matches("unchanged").count() >= 2, "{text}");
    // A different call under one row name: more instructions is a regression, one repetition
    // per side being enough for exact counts.
    let (_c, c) = run_ok(&["--tracer", "none", "--label", "t", "--instructions", "singlestep", "-n", "100"]);
    let (_d, d) = run_ok(&["--tracer", "lw-tsc", "--label", "t", "--instructions", "singlestep", "-n", "100"]);
    let o = tb().args(["gate", "--baseline"]).arg(&c).arg("--candidate").arg(&d).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("regressed"), "{text}");
}
