//! A run killed with SIGKILL (no Drop runs) leaves nothing that the next run does not clean up:
//! the lttng-sessiond it started (and its consumer daemons) is stopped by the
//! next run, and a daemon the user started is never stopped, though the dead run's session in it
//! is destroyed.
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use tracebench_tracers::lttng;
use tracebench_tracers::owned::ProcId;

/// Each test's next run reaps what the other's killed run left: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracebench"))
}

/// Live children of `parent` called `name` (the consumer daemons of one session daemon).
fn children(parent: i32, name: &str) -> Vec<ProcId> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == name))
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)?.parse().ok()) == Some(parent)
        })
        .filter_map(ProcId::of)
        .filter(|p| p.alive())
        .collect()
}

/// `lttng list`'s text; it must succeed (a daemon runs whenever this is called).
fn sessions() -> String {
    let o = Command::new("lttng").arg("list").output().expect("run lttng list");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "lttng list failed: {out}{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Whether the session of the killed cell `cell` (`tracebench-RUN-CELL`) is listed.
fn cell_session_listed(cell: i32) -> bool {
    sessions().lines().any(|l| l.contains(&format!("-{cell} [")))
}

/// The newest cell directory, if a cell has started.
fn newest_cell(out: &Path) -> Option<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(out.join(".cells")).ok()?.flatten().map(|e| e.path()).collect();
    v.sort();
    v.pop()
}

/// The pid of the measuring process of the cell in `dir` (`tracebench __cell DIR` on its
/// command line), once it runs.
fn cell_pid(dir: &Path) -> Option<i32> {
    let want = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<String> = cmd.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        args.windows(2).any(|w| w[0] == "__cell" && w[1] == want).then_some(pid)
    })
}

/// Starts `tracebench run --tracer lttng-ust -n 3000000` (repeated, as 3 M calls
/// take under 3 s here), lets it run 3 s, then SIGKILLs the parent and its measuring child (their
/// process group; the daemon has its own session) half a second into a cell, so that the cell's
/// LTTng session exists. Returns the killed cell's pid.
fn start_and_kill(out: &Path) -> i32 {
    start_and_kill_when(out, "lttng-ust", |cell| lttng::running_sessiond().is_some() && cell_session_listed(cell))
}

/// Starts `tracebench run --tracer TRACER -n 3000000 --repeats 50`, waits for a second cell and
/// for `ready(cell pid)` (what the cell sets up exists), then SIGKILLs the run's process group.
/// Returns the killed cell's pid.
fn start_and_kill_when(out: &Path, tracer: &str, ready: impl Fn(i32) -> bool) -> i32 {
    use std::os::unix::process::CommandExt;
    let mut parent: Child = bin()
        .args(["run", "-q", "--tracer", tracer, "-n", "3000000", "--repeats", "50", "--out"])
        .arg(out)
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while newest_cell(out).is_none() {
        assert!(Instant::now() < deadline, "the cell never started");
        assert!(parent.try_wait().unwrap().is_none(), "the run ended before its cell started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(3));
    let seen = newest_cell(out);
    while newest_cell(out) == seen {
        assert!(Instant::now() < deadline, "no new cell started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let dir = newest_cell(out).unwrap();
    let cell = loop {
        if let Some(p) = cell_pid(&dir) {
            break p;
        }
        assert!(Instant::now() < deadline, "the cell's measuring process never appeared");
        std::thread::sleep(Duration::from_millis(5));
    };
    // What the cell sets up (an LTTng session `tracebench-...-CELLPID`, a tracefs instance) lives
    // while its calls run, which on a fast machine is well under a second: kill as soon as it is
    // there, not after a guessed delay.
    while !ready(cell) {
        assert!(Instant::now() < deadline, "the cell's tracer set-up never appeared");
        assert!(Path::new(&format!("/proc/{cell}")).exists(), "the cell ended before its session was seen");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(parent.try_wait().unwrap().is_none(), "the run ended before it was killed");
    // SAFETY: the process group of the run this test started (the run and its measuring child).
    unsafe { libc::killpg(parent.id() as i32, libc::SIGKILL) };
    parent.wait().unwrap();
    let gone = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{cell}")).exists() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    cell
}

/// The next, ordinary run, of `tracer`; returns its stderr.
fn next_run(tracer: &str, out: &Path) -> String {
    let o = bin().args(["run", "-q", "--tracer", tracer, "-n", "300", "--out"]).arg(out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "the run after the SIGKILL failed: {err}");
    err
}

#[test]
fn a_killed_runs_daemon_is_reaped_and_a_users_daemon_is_left_alone() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Err((why, _)) = lttng::availability() {
        println!("SKIP sigkill test: LTTng unavailable: {why}");
        return;
    }
    if let Some(pid) = lttng::running_sessiond() {
        println!("SKIP sigkill test: an lttng-sessiond (pid {pid}) already runs, so this test cannot start its own");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();

    // 1. The daemon tracebench started outlives the SIGKILL; the next run stops it, whatever it
    //    measures. Checked by pid: the daemon of the pid file (none ran before the killed run)
    //    and its consumer daemons, not every lttng process on the machine.
    start_and_kill(&tmp.path().join("killed"));
    let daemon = lttng::running_sessiond().expect("the killed run's lttng-sessiond should still be there");
    let daemon = ProcId::of(daemon).expect("the killed run's lttng-sessiond is alive");
    let consumers = children(daemon.pid, "lttng-consumerd");
    assert!(!consumers.is_empty(), "the killed run's daemon has no consumer daemon");
    let err = next_run("none", &tmp.path().join("next"));
    assert!(err.contains(&format!("stopped lttng-sessiond (pid {})", daemon.pid)), "{err}");
    for p in std::iter::once(&daemon).chain(&consumers) {
        assert!(!p.alive(), "pid {} (started by the killed run) survived the next run", p.pid);
    }

    // 2. A daemon the user started is never stopped; the killed run's session in it is destroyed.
    let st = Command::new("lttng-sessiond").args(["--daemonize", "--no-kernel"]).status().unwrap();
    assert!(st.success());
    let users = ProcId::of(lttng::running_sessiond().expect("the user's daemon")).unwrap();
    // Stopped however the test ends, so that a failure here does not make later LTTng tests skip.
    let _stop = StopOnDrop(users);
    let cell = start_and_kill(&tmp.path().join("killed2"));
    assert!(cell_session_listed(cell), "the killed cell {cell}'s session should be left: {}", sessions());
    let err = next_run("lttng-ust", &tmp.path().join("next2"));
    assert!(!err.contains("stopped lttng-sessiond"), "{err}");
    assert!(users.alive(), "the user's lttng-sessiond was stopped");
    assert!(!cell_session_listed(cell), "the killed cell {cell}'s session survived: {}", sessions());
}

/// Stops the daemon the test started as "the user's", on success and on panic.
struct StopOnDrop(ProcId);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if !tracebench_tracers::owned::stop(self.0, Duration::from_secs(5)) && !std::thread::panicking() {
            panic!("could not stop the test's lttng-sessiond (pid {})", self.0.pid);
        }
    }
}

#[test]
fn a_killed_runs_tracefs_instance_is_removed_by_the_next_run() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Err((why, _)) = tracebench_tracers::ftrace::availability(tracebench_tracers::ftrace::Mode::Marker) {
        println!("SKIP tracefs sigkill test: ftrace unavailable: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let instance = |cell: i32| format!("/sys/kernel/tracing/instances/tracebench-{cell}");
    let cell = start_and_kill_when(&tmp.path().join("killed"), "ftrace", |cell| Path::new(&instance(cell)).exists());
    assert!(Path::new(&instance(cell)).exists(), "the killed cell's instance should be left");
    let err = next_run("none", &tmp.path().join("next"));
    assert!(err.contains(&format!("removed tracefs instance tracebench-{cell}")), "{err}");
    assert!(!Path::new(&instance(cell)).exists(), "the killed cell's instance survived the next run");
}
