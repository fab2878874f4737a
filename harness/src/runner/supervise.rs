//! Stage 2, supervise: start a child process, wait for it without adding wake-ups to the
//! measurement, forward a stop, enforce a timeout. Shared by `run`/`scale` (one child per cell)
//! and the gate (one `tracebench run` per repetition).
//!
//! The parent blocks in `waitpid`: a poll loop would wake every few ms on the other core, which a
//! cross-process tracer (strace) or a scalability run would feel. SIGINT/SIGTERM set [`STOP`] and,
//! since the handler is installed without SA_RESTART, interrupt the wait; the timeout is a
//! watchdog thread that sleeps until the deadline. The helper threads (watchdog, stderr reader)
//! block SIGINT/SIGTERM ([`spawn_helper`]): a signal taken by one of them would set STOP but leave
//! the wait blocked until the child ended by itself.
//!
//! The stop handshake with a cell (`cell::main`): a Ctrl-C can land while a launch prefix (strace)
//! is up but the measuring process does not exist yet, and a prefix that blocks SIGINT would then
//! let the whole cell run. So the parent writes the cell's stop mark, signals the child, and then
//! signals the measuring process itself once it has written its pid.
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tracebench_tracers::registry;

use super::protocol::{self, CellResult, CellSpec, CELL_PID, CELL_STOP};
use crate::error::Error;

/// Set by SIGINT/SIGTERM in the parent (runner or gate).
pub static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that set [`STOP`], to forward the same one.
pub static SIG: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIG.store(sig, Ordering::Relaxed);
    STOP.store(true, Ordering::Relaxed);
}

/// Routes SIGINT and SIGTERM to `handler`, without SA_RESTART (a blocked wait returns EINTR).
pub fn install_handlers_with(handler: extern "C" fn(libc::c_int)) {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handlers only store to atomics, which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The parent's handlers: set [`STOP`] and remember the signal.
pub fn install_handlers() {
    STOP.store(false, Ordering::SeqCst);
    install_handlers_with(on_signal);
}

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Spawns a helper thread that never takes SIGINT/SIGTERM, so that they are delivered to the
/// thread blocked in `waitpid` and interrupt it. The mask is set in this thread around the spawn
/// (a new thread inherits it), so there is no window in which the helper could take one.
pub fn spawn_helper<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> std::thread::JoinHandle<T> {
    // SAFETY: plain signal-set manipulation on this thread's own mask.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        libc::sigaddset(&mut block, libc::SIGINT);
        libc::sigaddset(&mut block, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
        let h = std::thread::spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        h
    }
}

/// How a supervised child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signalled(i32),
    /// Killed by us after the timeout (SIGTERM, then SIGKILL 3 s later).
    TimedOut,
}

/// The stop handshake with a measuring cell: its directory, and whether it runs under a launch
/// prefix (strace), which is then never signalled itself: a prefix killed while it starts up
/// leaves its traced child stopped for ever, holding our stderr pipe. The cell stops, and the
/// prefix exits with it.
#[derive(Debug, Clone, Copy)]
pub struct Handshake<'a> {
    pub dir: &'a Path,
    pub prefixed: bool,
}

/// Waits for `child`, forwarding a stop (see the module doc and [`Handshake`]) and killing it
/// after `timeout`. A stop forwards `forward`, or the signal received when None.
pub fn wait(
    child: &mut Child,
    timeout: Option<Duration>,
    cell: Option<Handshake>,
    forward: Option<i32>,
) -> Result<Ended, Error> {
    let cell_dir = cell.map(|c| c.dir);
    let signal_child = !cell.is_some_and(|c| c.prefixed);
    let forward_sig = || {
        forward.unwrap_or(match SIG.load(Ordering::Relaxed) {
            0 => libc::SIGTERM,
            s => s,
        })
    };
    let pid = child.id() as libc::pid_t;
    let timed_out = Arc::new(AtomicBool::new(false));
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let watchdog = timeout.map(|t| {
        let (timed_out, done) = (timed_out.clone(), done.clone());
        spawn_helper(move || {
            let deadline = Instant::now() + t;
            let (m, cv) = &*done;
            let mut finished = m.lock().unwrap_or_else(|e| e.into_inner());
            while !*finished {
                let now = Instant::now();
                if now >= deadline {
                    timed_out.store(true, Ordering::SeqCst);
                    // SAFETY: our child, not yet reaped (`finished` is set before reaping is
                    // reported, under this lock). TERM first so the tracer's teardown can run.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    let (g, _) = cv.wait_timeout(finished, Duration::from_secs(3)).unwrap_or_else(|e| e.into_inner());
                    finished = g;
                    if !*finished {
                        // SAFETY: as above.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                    return;
                }
                finished = cv.wait_timeout(finished, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
            }
        })
    });
    let mut forwarded = false;
    let mut cell_signalled = cell_dir.is_none();
    let mut status: libc::c_int = 0;
    loop {
        if stopped() && !forwarded {
            let sig = forward_sig();
            if let Some(d) = cell_dir {
                let _ = std::fs::write(d.join(CELL_STOP), b"");
            }
            if signal_child {
                // SAFETY: our own child, not yet reaped.
                unsafe { libc::kill(pid, sig) };
            }
            forwarded = true;
        }
        if forwarded && !cell_signalled {
            if let Some(cell) = cell_dir
                .and_then(|d| std::fs::read_to_string(d.join(CELL_PID)).ok())
                .and_then(|t| t.trim().parse::<i32>().ok())
                .filter(|&p| p > 0 && p != pid)
            {
                let sig = forward_sig();
                // SAFETY: a pid the cell wrote: our descendant, alive while its prefix parent is.
                unsafe { libc::kill(cell, sig) };
                cell_signalled = true;
            }
        }
        // Blocking, except while a stop still has to reach a cell that has not written its pid.
        let flags = if forwarded && !cell_signalled { libc::WNOHANG } else { 0 };
        // SAFETY: waits for our own child; std's Child is never waited on afterwards.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r == pid {
            break;
        }
        if r == 0 {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::Measurement(format!("waitpid: {e}")));
        }
    }
    {
        let (m, cv) = &*done;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    Ok(if timed_out.load(Ordering::SeqCst) {
        Ended::TimedOut
    } else if libc::WIFSIGNALED(status) {
        Ended::Signalled(libc::WTERMSIG(status))
    } else {
        Ended::Exited(libc::WEXITSTATUS(status))
    })
}

/// One cell as the parent saw it.
pub struct CellRun {
    pub spec: CellSpec,
    /// Index of the tracer row in the plan.
    pub row: usize,
    pub result: Option<CellResult>,
    pub error: Option<String>,
    pub seconds: f64,
}

fn tail(s: &str, n: usize) -> String {
    let t: Vec<&str> = s.lines().rev().take(n).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Spawns the measuring child for one cell (under its tracer's launch prefix) and waits for it.
pub fn run_cell(row: usize, spec: CellSpec, timeout: Duration) -> Result<CellRun, Error> {
    let t0 = Instant::now();
    let spec_path = protocol::write_spec(&spec)?;
    let exe = std::env::current_exe().map_err(|e| Error::io("current_exe", e))?;
    let prefix = registry::launch_prefix(&spec.spec);
    let mut cmd = match prefix.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.arg("__cell").arg(&spec_path).stdin(Stdio::null()).stdout(Stdio::inherit()).stderr(Stdio::piped());
    let mut child: Child =
        cmd.spawn().map_err(|e| Error::Measurement(format!("cannot start the measuring process: {e}")))?;
    let mut err_pipe = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    spawn_helper(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    let hs = Handshake { dir: &spec.dir, prefixed: !prefix.is_empty() };
    let ended = wait(&mut child, Some(timeout), Some(hs), None)?;
    // Bounded: a descendant that outlives the child would hold the pipe open.
    let stderr = rx
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "(stderr left open by a process that outlived the cell)".into());
    let result = protocol::read_result(&spec.dir);
    let error = match ended {
        Ended::TimedOut => Some(format!("hung: killed after the --timeout of {} s", timeout.as_secs())),
        Ended::Signalled(sig) => Some(format!("crashed: killed by {}", tracebench_tracers::sys::signal_name(sig))),
        Ended::Exited(130) if result.is_some() => None,
        Ended::Exited(0) if result.is_some() => None,
        Ended::Exited(code) => Some(format!("failed with exit code {code}")),
    };
    let error = error.map(|e| if stderr.trim().is_empty() { e } else { format!("{e}; stderr: {}", tail(&stderr, 6)) });
    if error.is_none() && !stderr.trim().is_empty() {
        eprint!("{stderr}");
    }
    Ok(CellRun { spec, row, result, error, seconds: t0.elapsed().as_secs_f64() })
}
