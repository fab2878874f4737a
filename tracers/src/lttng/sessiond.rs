//! The session daemon's lifetime: started by the parent if none runs ([`SessiondGuard`]),
//! recorded as ours (owned.rs) so that a SIGKILLed run's daemon and sessions are reaped by the
//! next run, and never signalled when it is a user's own.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::*;
/// Runs `lttng ARGS`; on failure returns its stderr in one line.
pub(super) fn lttng(args: &[&str]) -> Result<String, String> {
    let out =
        Command::new("lttng").args(args).output().map_err(|e| format!("cannot run `lttng {}`: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("; ");
        Err(format!("`lttng {}` failed: {err}", args.join(" ")))
    }
}

/// The pid file of the session daemon this user's `lttng` would talk to.
pub(super) fn sessiond_pidfile() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        PathBuf::from("/var/run/lttng/lttng-sessiond.pid")
    } else {
        let home = std::env::var_os("LTTNG_HOME").or_else(|| std::env::var_os("HOME")).unwrap_or_default();
        PathBuf::from(home).join(".lttng/lttng-sessiond.pid")
    }
}

/// The pid of a live `lttng-sessiond` for this user, if one runs.
pub fn running_sessiond() -> Option<i32> {
    let pid: i32 = std::fs::read_to_string(sessiond_pidfile()).ok()?.trim().parse().ok()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    // A daemon that has exited stays a zombie until PID 1 reaps it, which can be late here.
    (comm.trim() == "lttng-sessiond" && owned::ProcId::of(pid).is_some_and(|p| p.alive())).then_some(pid)
}

/// Name of the state file recording the session daemon a run started (see `owned`).
pub(super) const STATE: &str = "lttng-sessiond";

/// Whether the process `pid` (a decimal string) no longer exists.
pub(super) fn dead(pid: &str) -> bool {
    pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Cleans up after tracebench runs killed with SIGKILL (no Drop ran): stops the session daemon
/// (and its consumer daemons) a dead run started, destroys `tracebench-...-PID` sessions of dead
/// measuring processes in a daemon that lives on (a user's own daemon keeps running), and
/// removes their snapshot directories. Done by the parent before it needs a daemon, as uprobe
/// events and tracefs instances of dead runs are removed before new ones are made.
pub fn reap_leftovers() {
    if let owned::Reaped::Stopped(r) = owned::reap_stale(STATE, Some("lttng-consumerd")) {
        eprintln!(
            "tracebench: stopped lttng-sessiond (pid {}) left running by a tracebench run that was killed (pid {})",
            r.process.pid, r.owner.pid
        );
    }
    if running_sessiond().is_some() {
        for session in lttng(&["list"]).map(|t| stale_sessions(&t)).unwrap_or_default() {
            let _ = lttng(&["destroy", &session]);
        }
    }
    // Snapshot directories of dead runs: private to us (state directory, 0700), found by the
    // measuring process's pid in their name.
    for d in crate::owned::stale_workdirs(super::SNAPSHOT_PREFIX) {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Sessions in `lttng list` output named by [`session_name`] whose measuring process is gone.
pub(super) fn stale_sessions(list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|l| l.trim_start().split_once(") ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|name| name.starts_with("tracebench-") && name.rsplit('-').next().is_some_and(dead))
        .map(String::from)
        .collect()
}

/// Parent-side guard: makes sure a session daemon runs for the whole `tracebench run`, and stops
/// it on drop only if this guard started it. What it starts is recorded (`owned`), so that if
/// this run is killed with SIGKILL the next run stops it ([`reap_leftovers`]).
pub struct SessiondGuard {
    started: Option<owned::ProcId>,
}

impl SessiondGuard {
    pub fn ensure(spec: &str) -> Result<Self, TracerError> {
        wait_stopped();
        reap_leftovers();
        if running_sessiond().is_some() {
            return Ok(SessiondGuard { started: None });
        }
        // --no-kernel: only the userspace domain is used, and this kernel has no LTTng modules.
        // --daemonize returns once the daemon is ready to accept commands.
        let out = Command::new("lttng-sessiond")
            .args(["--daemonize", "--no-kernel"])
            .output()
            .map_err(|e| TracerError::Setup { name: spec.into(), why: format!("cannot run lttng-sessiond: {e}") })?;
        if !out.status.success() {
            // The launcher may have been interrupted after the daemon forked: stop a daemon that
            // was not there before rather than leave it running.
            if let Some(p) = running_sessiond().and_then(owned::ProcId::of) {
                drop(SessiondGuard { started: Some(p) });
            }
            return Err(TracerError::Setup {
                name: spec.into(),
                why: format!("lttng-sessiond --daemonize failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
            });
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(p) = running_sessiond().and_then(owned::ProcId::of) {
                let guard = SessiondGuard { started: Some(p) };
                if let Err(e) = owned::record(STATE, "lttng-sessiond", p) {
                    // The run goes on; only a SIGKILL of it would now leave the daemon behind.
                    eprintln!("tracebench: warning: cannot record the lttng-sessiond this run started: {e}");
                }
                return Ok(guard);
            }
            if Instant::now() > deadline {
                return Err(TracerError::Setup {
                    name: spec.into(),
                    why: format!("lttng-sessiond started but {} never appeared", sessiond_pidfile().display()),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The pid of the daemon this guard started, if it started one.
    pub fn started_pid(&self) -> Option<i32> {
        self.started.map(|p| p.pid)
    }
}

/// Daemons this process's guards are stopping: each waited for by its own thread, so that the
/// run writes its results while the daemon shuts down (about 55 ms here).
static STOPPING: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> = std::sync::Mutex::new(Vec::new());

/// Waits until every daemon a dropped [`SessiondGuard`] is stopping has exited (or been killed).
/// The process calls it before it exits, and [`SessiondGuard::ensure`] before it looks for a
/// running daemon (else it could take one that is shutting down for its own).
pub fn wait_stopped() {
    let handles: Vec<_> = STOPPING.lock().map(|mut v| v.drain(..).collect()).unwrap_or_default();
    for h in handles {
        let _ = h.join();
    }
}

impl Drop for SessiondGuard {
    fn drop(&mut self) {
        let Some(p) = self.started else { return };
        // Only the daemon this guard started: same pid and start time, and still the one the
        // pid file names.
        if running_sessiond() != Some(p.pid) {
            owned::forget(STATE);
            return;
        }
        // SIGTERM here, so that a process that ends early still leaves a stopping daemon (and
        // its record, for the next run's reap); SIGKILL after 5 s, in the waiting thread.
        p.signal(libc::SIGTERM);
        let wait = std::thread::spawn(move || {
            if !owned::stop(p, Duration::from_secs(5)) {
                eprintln!("warning: lttng-sessiond (pid {}) did not stop after SIGTERM and SIGKILL", p.pid);
            }
            owned::forget(STATE);
        });
        if let Ok(mut v) = STOPPING.lock() {
            v.push(wait);
        }
    }
}
