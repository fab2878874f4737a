//! The detector's tracepoints: which exist here and what each means, and [`KeepAlive`], which
//! keeps them registered with perf while a run lives.
use std::os::fd::AsRawFd;

use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter};

use super::Reason;

fn vector_reason(event: &str) -> Reason {
    match event {
        "local_timer_entry" => Reason::TimerIrq,
        "call_function_entry"
        | "call_function_single_entry"
        | "reschedule_entry"
        | "irq_work_entry"
        | "x86_platform_ipi_entry" => Reason::Ipi,
        _ => Reason::OtherVector,
    }
}

pub(super) fn tracefs_events() -> Option<std::path::PathBuf> {
    ["/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.join("sched").is_dir())
}

/// The detector's tracepoints (`group:event`) and what each means, or None without tracefs.
pub(super) fn tracepoint_sources() -> Option<Vec<(String, Reason)>> {
    let ev = tracefs_events()?;
    let mut vectors: Vec<String> = std::fs::read_dir(ev.join("irq_vectors"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with("_entry"))
                .collect()
        })
        .unwrap_or_default();
    vectors.sort();
    let mut out: Vec<(String, Reason)> = vectors
        .into_iter()
        .map(|v| {
            let r = vector_reason(&v);
            (format!("irq_vectors:{v}"), r)
        })
        .collect();
    out.push(("irq:irq_handler_entry".into(), Reason::DeviceIrq));
    out.push(("irq:softirq_entry".into(), Reason::Softirq));
    out.push(("nmi:nmi_handler".into(), Reason::Nmi));
    out.push(("sched:sched_switch".into(), Reason::ContextSwitch));
    Some(out)
}

/// Keeps the detector's tracepoints registered with perf while it lives, so that opening and
/// closing a detector is cheap.
///
/// Why: when the last perf event on a tracepoint is closed, the kernel unregisters its probe and
/// waits for an RCU grace period (`perf_trace_event_unreg` -> `tracepoint_synchronize_unregister`),
/// under a global mutex: measured here, 35-45 ms per tracepoint, so a detector's dozen
/// tracepoints cost 0.5 s to close, twice per `tracebench run` (the clock thread and the cell).
/// While another event on the tracepoint stays open, a close only drops a reference. A
/// `tracebench run` (and an interleaved gate, for all its runs) holds one disabled counting event
/// per tracepoint: it never counts, never samples, and changes nothing inside a measured window,
/// where the detector's own events have the tracepoints enabled anyway. Best effort: an event that
/// cannot be opened is skipped (the detector then reports it).
pub struct KeepAlive {
    events: Vec<Counter>,
}

impl KeepAlive {
    pub fn hold() -> Self {
        let events = tracepoint_sources()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, _)| crate::counters::tracepoint_id(&name))
            .filter_map(|id| {
                Builder::new(Tracepoint::with_id(id)).observe_self().any_cpu().include_kernel().build().ok()
            })
            .collect();
        KeepAlive { events }
    }

    /// How many tracepoints it holds.
    pub fn held(&self) -> usize {
        self.events.len()
    }
}

impl Drop for KeepAlive {
    /// Hands the last references to a process nobody waits for, which closes them.
    ///
    /// Why: the close that drops a tracepoint's last perf event waits for an RCU grace period
    /// (see above) under the kernel's global `event_mutex`, so closing from several threads
    /// would not overlap them: measured here, 13 tracepoints took 0.43-0.62 s of a 0.55-0.75 s
    /// `run`, one close after another, after every file was written. A forked grandchild
    /// (orphaned at once, so no process of ours has to reap it) keeps only these descriptors
    /// (every other one, pipes and output files included, is closed first, so no reader waits
    /// on it for EOF), waits until we have closed ours (EOF on a pipe whose write end only we
    /// hold: otherwise its closes could come first and ours would be the last, slow ones), and
    /// closes them. Nothing outlives it: the kernel closes a process's descriptors when it
    /// exits, whatever kills it (Ctrl-C on the process group included), so the tracepoints are
    /// unregistered within about half a second of the run's end, by the kernel, in the
    /// background. `harness/tests/leaks.rs` waits for that.
    fn drop(&mut self) {
        if self.events.is_empty() {
            return;
        }
        let mut fds: Vec<libc::c_int> = self.events.iter().map(|c| c.as_raw_fd()).collect();
        let mut pipe = [-1 as libc::c_int; 2];
        // SAFETY: pipe2 fills `pipe`; close-on-exec so no exec'd process keeps the write end.
        if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return; // the events close here, slowly, in this thread
        }
        fds.push(pipe[0]);
        fds.sort_unstable();
        // SAFETY: between fork and _exit the children only make async-signal-safe system calls
        // (fork, close_range, read, close, prctl, _exit) on integers prepared before the fork.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                if libc::fork() == 0 {
                    release_only(&fds, pipe[0]);
                }
                libc::_exit(0);
            }
            libc::close(pipe[0]);
            if pid > 0 {
                let mut status = 0;
                // The intermediate child exits at once; reaping it leaves no zombie.
                while libc::waitpid(pid, &mut status, 0) < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {}
            }
        }
        // Our closes: after a successful fork, only a reference each (if the fork failed, they
        // pay the grace periods here, in this thread). Then the releaser may go on.
        self.events.clear();
        // SAFETY: our own write end.
        unsafe { libc::close(pipe[1]) };
    }
}

/// In the releasing grandchild: close every descriptor but `keep` (sorted), wait for EOF on
/// `go` (the parent closed its event descriptors), close the rest one by one, exit. Never
/// returns.
///
/// # Safety
/// Only in a freshly forked child: it closes descriptors that other code in the process owns.
unsafe fn release_only(keep: &[libc::c_int], go: libc::c_int) -> ! {
    libc::prctl(libc::PR_SET_NAME, c"tracebench-rel".as_ptr());
    let mut from: libc::c_uint = 0;
    for &fd in keep {
        if fd as libc::c_uint > from {
            libc::syscall(libc::SYS_close_range, from, fd as libc::c_uint - 1, 0);
        }
        from = fd as libc::c_uint + 1;
    }
    libc::syscall(libc::SYS_close_range, from, libc::c_uint::MAX, 0);
    let mut b = 0u8;
    // EOF (0) once the parent's write end is closed; an error (EINTR) is retried, anything
    // else (the parent died) also means go.
    while libc::read(go, (&mut b as *mut u8).cast(), 1) < 0 && *libc::__errno_location() == libc::EINTR {}
    for &fd in keep {
        libc::close(fd);
    }
    libc::_exit(0)
}
