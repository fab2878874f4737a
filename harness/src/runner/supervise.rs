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
//! signals the measuring process itself once it has sent its pid down the pipe the parent gave
//! it, and only if that pid is our child's child, through a pidfd (a pid read from a file
//! another user could write would let Ctrl-C signal an unrelated root process).
//!
//! Children are started from `/proc/PID/exe` of this process, not from the path it was started
//! by: a rebuild that replaces the binary during a run would otherwise make every later cell
//! fail with ENOENT. The link opens the running image even once its file is gone.
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tracebench_tracers::registry;

use super::plan::Plan;
use super::protocol::{self, CellResult, CellSpec, CELL_PID_FD, CELL_STOP};
use crate::error::Error;
use crate::results::PRIVATE_DIR_MODE;

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

/// The stop handshake with a measuring cell: its directory, the read end of the pipe its pid
/// comes on, and whether it runs under a launch prefix (strace), which is then never signalled
/// itself: a prefix killed while it starts up leaves its traced child stopped for ever, holding
/// our stderr pipe. The cell stops, and the prefix exits with it.
pub struct Handshake<'a> {
    pub dir: &'a Path,
    pub pid_pipe: &'a OwnedFd,
    pub prefixed: bool,
}

/// This process's executable, as a path that opens the running image even after a rebuild has
/// replaced or removed its file (the module doc). `/proc/PID/exe`, not `/proc/self/exe`: under a
/// launch prefix it is the prefix that opens the path.
pub fn own_exe() -> PathBuf {
    PathBuf::from(format!("/proc/{}/exe", std::process::id()))
}

/// Started from `/proc/PID/exe` ([`own_exe`]), this process would be called "exe" in `ps` and
/// /proc/PID/comm: it takes tracebench's name back (its threads inherit it). Here, below both
/// processes that call it (the cell, `runner::cell`, and the stepper, `singlestep::stepper`).
pub fn name_process() {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"tracebench".as_ptr()) };
}

/// Reads the pid the cell sent (non-blocking; None until it is there).
fn cell_pid(pipe: &OwnedFd) -> Option<libc::pid_t> {
    let mut buf = [0u8; 16];
    // SAFETY: reads into our buffer from a descriptor we own (O_NONBLOCK).
    let n = unsafe { libc::read(pipe.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    std::str::from_utf8(&buf[..usize::try_from(n).ok()?]).ok()?.trim().parse().ok().filter(|&p| p > 0)
}

/// Signals `pid` only if it is a child of our child `parent` (the measuring process under its
/// launch prefix), through a pidfd: the check is made after the pidfd pins the process, so a
/// pid reused in between is never signalled. False when it is not our descendant.
pub fn signal_grandchild(parent: libc::pid_t, pid: libc::pid_t, sig: libc::c_int) -> bool {
    let is_child = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<i32>().ok()))
            == Some(parent)
    };
    // SAFETY: plain syscalls on integers; the fd is closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
    if fd < 0 {
        return false;
    }
    let sent = is_child()
        // SAFETY: fd is a pidfd we own; a null siginfo means "as kill() would".
        && unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd, sig, std::ptr::null::<libc::siginfo_t>(), 0) } == 0;
    // SAFETY: our own fd.
    unsafe { libc::close(fd) };
    sent
}

/// Waits for `child`, forwarding a stop (see the module doc and [`Handshake`]) and killing it
/// after `timeout`. A stop forwards `forward`, or the signal received when None.
pub fn wait(
    child: &mut Child,
    timeout: Option<Duration>,
    cell: Option<Handshake>,
    forward: Option<i32>,
) -> Result<Ended, Error> {
    let cell_dir = cell.as_ref().map(|c| c.dir);
    let pid_pipe = cell.as_ref().map(|c| c.pid_pipe);
    let signal_child = !cell.as_ref().is_some_and(|c| c.prefixed);
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
            if let Some(cell) = pid_pipe.and_then(cell_pid) {
                // Without a prefix the cell is our child, signalled above.
                if cell != pid {
                    signal_grandchild(pid, cell, forward_sig());
                }
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

/// The pipe a cell sends its pid on: (read end, non-blocking, ours; write end, for the child).
fn pid_pipe() -> Result<(OwnedFd, OwnedFd), Error> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills `fds` with two new descriptors, which we own from here.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::Measurement(format!("pipe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: as above; and fcntl on our own read end.
    unsafe {
        libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK);
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
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

/// Each backend's parent-side guard (e.g. LTTng's session daemon), held for the whole run.
pub fn parent_guards(plan: &Plan, probe: &super::probe::Probe) -> Result<Vec<Box<dyn std::any::Any>>, Error> {
    let m = &probe.machine;
    let copts = plan.cell.tracer.create_options(m.clock.tsc_hz, &m.run_id, plan.cell.payload_size);
    let mut guards: Vec<Box<dyn std::any::Any>> = Vec::new();
    if !plan.cell.kernel {
        for r in &plan.rows {
            guards.push(Box::new(registry::parent_guard(&r.spec, &copts)?));
        }
    }
    Ok(guards)
}

/// The cells one after another (each is pinned; running two at once would measure contention).
pub fn run_cells(cells: Vec<(usize, CellSpec)>, plan: &Plan) -> Result<Vec<CellRun>, Error> {
    let pb = progress(cells.len(), plan.quiet);
    let mut runs = Vec::new();
    for (ri, spec) in cells {
        if stopped() {
            break;
        }
        pb.set_message(format!("{} x{} rep {}", spec.label, spec.threads, spec.repetition + 1));
        let run = run_cell(ri, spec, &plan.rows[ri].launch, plan.timeout)?;
        if let Some(e) = &run.error {
            pb.suspend(|| eprintln!("tracebench: tracer {} {e}", run.spec.label));
        }
        for w in run.result.iter().flat_map(|r| &r.warnings) {
            pb.suspend(|| eprintln!("tracebench: warning: {w}"));
        }
        runs.push(run);
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(runs)
}

fn progress(cells: usize, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(cells as u64);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb
}

/// Spawns the measuring child for one cell (under its tracer's launch prefix) and waits for it.
/// The spec goes down its stdin; its pid comes back on fd 3 (`protocol`).
pub fn run_cell(row: usize, spec: CellSpec, launch: &[String], timeout: Duration) -> Result<CellRun, Error> {
    let t0 = Instant::now();
    // The cell's directory: 0700, inside `.cells`, refused if it exists.
    std::fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(&spec.dir).map_err(|e| Error::io(&spec.dir, e))?;
    let json = serde_json::to_vec(&spec).map_err(|e| Error::Measurement(format!("cell spec: {e}")))?;
    let exe = own_exe();
    let mut cmd = match launch.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let (pid_r, pid_w) = pid_pipe()?;
    let w = pid_w.as_raw_fd();
    // SAFETY: dup2 is async-signal-safe; between fork and exec it only places the pipe's write
    // end at CELL_PID_FD (dup2 clears close-on-exec on the copy).
    unsafe {
        cmd.pre_exec(
            move || if libc::dup2(w, CELL_PID_FD) < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) },
        );
    }
    cmd.arg("__cell").arg(&spec.dir).stdin(Stdio::piped()).stdout(Stdio::inherit()).stderr(Stdio::piped());
    let spawned = cmd.spawn();
    drop(pid_w);
    let mut child: Child =
        spawned.map_err(|e| Error::Measurement(format!("cannot start the measuring process: {e}")))?;
    {
        // A spec is a few hundred bytes: it fits the pipe, so this never blocks on the child.
        let mut stdin = child.stdin.take().expect("piped");
        let _ = stdin.write_all(&json);
    }
    let mut err_pipe = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    spawn_helper(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    let hs = Handshake { dir: &spec.dir, pid_pipe: &pid_r, prefixed: !launch.is_empty() };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid that is not our child's child (here: our own child, or an unrelated process), as
    /// another user could plant it, is never signalled; a real grandchild is.
    #[test]
    fn only_a_grandchild_is_signalled() {
        let mut other = Command::new("sleep").arg("30").spawn().unwrap();
        let mut prefix = Command::new("sh").args(["-c", "sleep 30 & wait"]).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let grandchild = loop {
            let kids = std::fs::read_to_string(format!("/proc/{}/task/{}/children", prefix.id(), prefix.id()))
                .unwrap_or_default();
            if let Some(p) = kids.split_whitespace().next().and_then(|p| p.parse::<i32>().ok()) {
                break p;
            }
            assert!(Instant::now() < deadline, "the shell never started its child");
            std::thread::sleep(Duration::from_millis(5));
        };
        let prefix_pid = prefix.id() as i32;
        assert!(!signal_grandchild(prefix_pid, other.id() as i32, libc::SIGTERM), "an unrelated process");
        assert!(!signal_grandchild(prefix_pid, 1, libc::SIGTERM), "init");
        assert!(other.try_wait().unwrap().is_none(), "the unrelated process was signalled");
        assert!(signal_grandchild(prefix_pid, grandchild, libc::SIGTERM), "the real grandchild");
        let _ = other.kill();
        let _ = other.wait();
        let status = prefix.wait().unwrap();
        assert!(status.code().is_some(), "the shell ends once its child was terminated: {status:?}");
    }
}
