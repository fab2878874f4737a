//! The stepping process (`tracebench __stepper PID TID`): a process of ours that ptraces the one
//! measuring thread of a cell and single-steps it through every marked call.
//!
//! A thread cannot ptrace a thread of its own process, so the stepper is a separate process,
//! started by the measuring thread itself (it inherits that thread's CPU pinning: one CPU, so
//! every step is a context switch there, not a cross-CPU wake-up).
//!
//! ```text
//! stepper                                  measuring thread (`super::stepped_call`)
//! PTRACE_SEIZE tid, write "R" on stdout -> reads "R"
//!                                           rax=CALL, rsi=iteration, rdx=end; int3
//! SIGTRAP stop: GETREGS, rax == CALL    <-
//! PTRACE_SINGLESTEP until rip == end        call tramp -> tracer.fire(iteration) -> ret
//!   per step: 1 instruction; the bytes at rip say whether it enters the kernel, calls or
//!   returns (the shadow call stack, `super::shadow`); rax at a system call is its number
//! record the call, PTRACE_CONT          ->
//! ...                                       rax=DONE; int3
//! PTRACE_DETACH, write the records and  -> reads them to EOF
//!   the tally of where they went
//! ```
//! On arm64 the marker is `brk` with x9 = CALL/DONE, x1 = iteration, x10 = end, and the stepper
//! moves the pc past the `brk` (which, unlike int3, traps with the pc on itself); the registers,
//! markers and instruction kinds of each architecture are in `singlestep/arch/`.
//! Safety: nothing here can leave the thread stopped or traced. SIGINT/SIGTERM make the stepper
//! interrupt the thread (PTRACE_INTERRUPT) and detach at once. PTRACE_O_EXITKILL is deliberately
//! not set: it would SIGKILL the measuring process when the stepper dies, skipping the tracer's
//! teardown (a leaked LTTng session or tracefs instance). Instead, if the stepper dies, the
//! kernel detaches the thread and the cell's SIGTRAP handler (`super::on_trap`) clears the trap
//! flag, marks the stepper lost and ends the loop; the cell then tears down as after any error.
//! The stepper dies with its parent thread (PR_SET_PDEATHSIG).
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use super::kind::Kind;
use super::shadow::StepTally;
use super::{MAGIC_CALL, MAGIC_DONE};
use crate::error::Error;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// One stepped call, as the stepper writes it (one text line: `iteration instructions syscalls
/// traps faults signal`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Record {
    pub iteration: u64,
    /// User-space instructions from the `call` into the tracer to the last `ret`, inclusive.
    pub instructions: u64,
    /// Steps over a system-call instruction (syscall, sysenter, int 0x80).
    pub syscalls: u32,
    /// Steps over an int3 placed by someone else (a uprobe): a trap into the kernel.
    pub traps: u32,
    /// Page faults (minflt + majflt of the thread) during the call.
    pub faults: u32,
    /// A signal delivered during the call (its handler ran inside the count): 0 if none.
    pub signal: i32,
    /// Passes of the vDSO clock read's retry loop that were not counted (see [`Vdso`]).
    pub clock_retries: u32,
}

impl Record {
    pub fn kernel_entries(&self) -> u32 {
        self.syscalls + self.traps + self.faults
    }
    pub fn line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}",
            self.iteration, self.instructions, self.syscalls, self.traps, self.faults, self.signal, self.clock_retries
        )
    }
    pub fn parse(l: &str) -> Option<Record> {
        let f: Vec<&str> = l.split_ascii_whitespace().collect();
        if f.len() != 7 {
            return None;
        }
        Some(Record {
            iteration: f[0].parse().ok()?,
            instructions: f[1].parse().ok()?,
            syscalls: f[2].parse().ok()?,
            traps: f[3].parse().ok()?,
            faults: f[4].parse().ok()?,
            signal: f[5].parse().ok()?,
            clock_retries: f[6].parse().ok()?,
        })
    }
}

/// The last line the stepper writes when it ended cleanly, with why.
pub const END_DONE: &str = "END done";
pub const END_STOPPED: &str = "END stopped";

/// The registers the stepper needs, whatever the architecture (`super::arch::regs`).
#[derive(Debug, Clone, Copy)]
pub struct Regs {
    /// rip / pc.
    pub pc: u64,
    /// The marker register (rax; arm64: x9): [`MAGIC_CALL`] or [`MAGIC_DONE`] at a marker.
    pub marker: u64,
    /// The call's iteration at the start marker (rsi; arm64: x1).
    pub iteration: u64,
    /// Where the call returns to at the start marker (rdx; arm64: x10).
    pub end: u64,
    /// Right after a system call (x86-64: orig_rax or rcx says so; arm64: not told).
    pub after_syscall: bool,
    /// The system-call number register (rax; arm64: x8): the number when the next instruction
    /// is a system call.
    pub sysno: u64,
    /// The number of the system call just made (orig_rax; arm64: x8), for one in unreadable code.
    pub sysno_after: u64,
}

/// The vDSO's address range, for telling its clock read's seqlock retries from the call's path.
///
/// The vDSO reads the clock in a loop: read the sequence count, rdtsc(p), compute, and start
/// again if the kernel updated the clock data meanwhile (every tick). Unstepped, the read takes
/// tens of ns and a retry is a rare accident; stepped, it takes about a millisecond, so a tick
/// lands in it on a good share of the calls and adds one more pass (28 instructions on
/// Linux 6.18). That pass is the stepping's doing, not the tracer's path, so it is not counted:
/// when a vDSO instruction is about to run again after a clock read since its last run, the
/// instructions since its last run are a retried pass, dropped, and counted in `clock_retries`.
/// The vDSO's other loop (carrying nanoseconds into seconds) reads no clock and stays counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Vdso {
    pub start: u64,
    pub end: u64,
}

impl Vdso {
    fn of(pid: i32) -> Vdso {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        for l in maps.lines().filter(|l| l.ends_with("[vdso]")) {
            if let Some((a, b)) = l.split_whitespace().next().and_then(|r| r.split_once('-')) {
                if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                    return Vdso { start: a, end: b };
                }
            }
        }
        Vdso::default()
    }
    fn contains(&self, rip: u64) -> bool {
        rip >= self.start && rip < self.end
    }
}

/// Per call: the retry detector of [`Vdso`]. `visit` is called before each step with the
/// instruction's address, the steps so far and the clock reads so far; it returns the
/// instructions of a retried pass to drop (0 if none).
#[derive(Default)]
pub struct Retries {
    /// vDSO address -> (steps, clock reads) when it last ran.
    seen: HashMap<u64, (u64, u64)>,
}

impl Retries {
    pub fn visit(&mut self, rip: u64, steps: u64, clocks: u64) -> u64 {
        let dropped = match self.seen.get(&rip) {
            Some(&(s0, c0)) if clocks > c0 => {
                // Start the pass afresh: addresses of the dropped pass are seen again below.
                self.seen.clear();
                steps - s0
            }
            _ => 0,
        };
        self.seen.insert(rip, (steps, clocks));
        dropped
    }
}

pub(super) fn ptrace(req: libc::c_uint, tid: i32, addr: usize, data: usize) -> Result<libc::c_long, std::io::Error> {
    // SAFETY: raw ptrace on a thread we seized; errors are returned, never ignored silently.
    let r = unsafe { libc::ptrace(req, tid, addr as *mut libc::c_void, data as *mut libc::c_void) };
    if r == -1 {
        let e = std::io::Error::last_os_error();
        // PEEKTEXT returns data, so -1 is only an error with errno set.
        if e.raw_os_error().unwrap_or(0) != 0 {
            return Err(e);
        }
    }
    Ok(r)
}

use super::arch::regs;

/// How a wait on the thread ended.
enum Stop {
    /// Stopped by a signal (SIGTRAP for a step or a marker), or an event stop (`event` != 0).
    Signal { sig: i32, event: i32 },
    /// The thread (or its process) is gone.
    Gone,
    /// Our own SIGINT/SIGTERM interrupted the wait.
    Interrupted,
}

fn wait(tid: i32) -> Result<Stop, Error> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waits for a thread we trace.
        let r = unsafe { libc::waitpid(tid, &mut status, libc::__WALL) };
        if r == tid {
            if libc::WIFSTOPPED(status) {
                return Ok(Stop::Signal { sig: libc::WSTOPSIG(status), event: status >> 16 });
            }
            return Ok(Stop::Gone);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) if STOP.load(Ordering::Relaxed) => return Ok(Stop::Interrupted),
            Some(libc::EINTR) => continue,
            Some(libc::ECHILD) => return Ok(Stop::Gone),
            _ => return Err(Error::Measurement(format!("stepper: waitpid: {e}"))),
        }
    }
}

/// Minor + major faults of the thread so far (fields 10 and 12 of /proc/PID/task/TID/stat).
struct Faults(std::fs::File);

impl Faults {
    fn open(pid: i32, tid: i32) -> Option<Faults> {
        std::fs::File::open(format!("/proc/{pid}/task/{tid}/stat")).ok().map(Faults)
    }
    fn read(&self) -> u64 {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 1024];
        let n = self.0.read_at(&mut buf, 0).unwrap_or(0);
        let s = String::from_utf8_lossy(&buf[..n]);
        // The comm field (2) may hold spaces: count fields after its closing parenthesis.
        let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let f: Vec<&str> = rest.split_ascii_whitespace().collect();
        // rest starts at field 3 (state): field k is f[k - 3].
        let get = |k: usize| f.get(k - 3).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        get(10) + get(12)
    }
}

/// Entry point of the hidden `__stepper PID TID` subcommand.
pub fn main(pid: i32, tid: i32) -> Result<i32, Error> {
    crate::runner::supervise::name_process();
    // SAFETY: prctl and sigaction with plain arguments; the handler only stores to an atomic.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        for sig in [libc::SIGINT, libc::SIGTERM] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    let seize = |e: std::io::Error| Error::Measurement(format!("stepper: cannot ptrace thread {tid}: {e}"));
    ptrace(libc::PTRACE_SEIZE, tid, 0, 0).map_err(seize)?;
    let faults = Faults::open(pid, tid);
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| Error::Measurement(format!("stepper: writing to the cell: {e}"));
    out.write_all(b"R").and_then(|_| out.flush()).map_err(io)?;
    let mut records: Vec<Record> = Vec::with_capacity(1 << 14);
    // Bytes at each address: code does not change during the loop (uprobes are placed before it).
    let mut kinds: HashMap<u64, Kind> = HashMap::new();
    let vdso = Vdso::of(pid);
    let mut tally = StepTally::default();
    let end = step_all(tid, &faults, vdso, &mut records, &mut kinds, &mut tally);
    // Whatever happened, the thread must not stay stopped or traced.
    let detached = detach(tid);
    let mut text = String::with_capacity(records.len() * 24);
    for r in &records {
        text.push_str(&r.line());
        text.push('\n');
    }
    text.push_str(&tally.lines());
    match (&end, &detached) {
        (Ok(End::Done), Ok(())) => text.push_str(END_DONE),
        (Ok(End::Stopped), Ok(())) => text.push_str(END_STOPPED),
        (Ok(End::Gone), Ok(())) => text.push_str("END error the measuring thread went away while stepped"),
        (Err(e), _) => text.push_str(&format!("END error {e}")),
        (_, Err(e)) => text.push_str(&format!("END error {e}")),
    }
    text.push('\n');
    out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(io)?;
    Ok(if end.is_ok() { 0 } else { 1 })
}

/// Detaches from the thread, stopping it first if it runs (a detach needs a stopped tracee).
fn detach(tid: i32) -> Result<(), Error> {
    if ptrace(libc::PTRACE_DETACH, tid, 0, 0).is_ok() {
        return Ok(());
    }
    // Running: interrupt, wait for the stop, detach (ESRCH: it is gone, nothing to undo).
    match ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
        _ => {}
    }
    STOP.store(false, Ordering::Relaxed);
    loop {
        match wait(tid)? {
            Stop::Gone => return Ok(()),
            Stop::Interrupted => continue,
            Stop::Signal { sig, event } => {
                // A signal other than ours stays pending for the thread after the detach.
                let pass = if event == 0 && sig != libc::SIGTRAP && sig != libc::SIGSTOP { sig } else { 0 };
                return match ptrace(libc::PTRACE_DETACH, tid, 0, pass as usize) {
                    Ok(_) => Ok(()),
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
                    Err(e) => Err(Error::Measurement(format!("stepper: detach: {e}"))),
                };
            }
        }
    }
}

/// How the stepping ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The DONE marker: every call was stepped.
    Done,
    /// Our SIGINT/SIGTERM.
    Stopped,
    /// The thread went away.
    Gone,
}

/// Runs until the DONE marker, a stop of ours or the thread's end.
fn step_all(
    tid: i32,
    faults: &Option<Faults>,
    vdso: Vdso,
    records: &mut Vec<Record>,
    kinds: &mut HashMap<u64, Kind>,
    tally: &mut StepTally,
) -> Result<End, Error> {
    let perr = |what: &str, e: std::io::Error| Error::Measurement(format!("stepper: {what}: {e}"));
    let mut inject = 0usize;
    // A seized thread runs: the first thing to do is wait for its first marker.
    let mut stopped = false;
    loop {
        if STOP.load(Ordering::Relaxed) {
            return Ok(End::Stopped);
        }
        // Between calls the thread runs freely up to its next marker.
        if stopped {
            match ptrace(libc::PTRACE_CONT, tid, 0, inject) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(End::Gone),
                Err(e) => return Err(perr("PTRACE_CONT", e)),
            }
        }
        inject = 0;
        stopped = true;
        let (sig, event) = match wait(tid)? {
            Stop::Gone => return Ok(End::Gone),
            Stop::Interrupted => return Ok(End::Stopped),
            Stop::Signal { sig, event } => (sig, event),
        };
        if event != 0 {
            continue;
        }
        if sig != libc::SIGTRAP {
            // Not ours (SIGSTOP of a seize, a signal for the process): let it through.
            inject = if sig == libc::SIGSTOP { 0 } else { sig as usize };
            continue;
        }
        let r = regs(tid).map_err(|e| perr("GETREGS", e))?;
        match r.marker {
            MAGIC_DONE => {
                super::arch::skip_marker(tid, &r).map_err(|e| perr("SETREGS", e))?;
                return Ok(End::Done);
            }
            MAGIC_CALL => {
                super::arch::skip_marker(tid, &r).map_err(|e| perr("SETREGS", e))?;
                let rec = step_call(tid, r.iteration, r.end, faults, vdso, kinds, tally)?;
                match rec {
                    Ok(rec) => records.push(rec),
                    Err(end) => return Ok(end),
                }
            }
            // Someone else's SIGTRAP: deliver it.
            _ => inject = libc::SIGTRAP as usize,
        }
    }
}

/// Single-steps one call from the instruction after the start marker until rip == `end`.
/// Err(how it ended) if the thread went away or we were asked to stop.
fn step_call(
    tid: i32,
    iteration: u64,
    end: u64,
    faults: &Option<Faults>,
    vdso: Vdso,
    kinds: &mut HashMap<u64, Kind>,
    tally: &mut StepTally,
) -> Result<Result<Record, End>, Error> {
    let perr = |what: &str, e: std::io::Error| Error::Measurement(format!("stepper: {what}: {e}"));
    let mut rec = Record { iteration, ..Default::default() };
    let f0 = faults.as_ref().map(Faults::read).unwrap_or(0);
    let r0 = regs(tid).map_err(|e| perr("GETREGS", e))?;
    let (mut rip, mut sysno) = (r0.pc, r0.sysno);
    tally.begin();
    let mut inject = 0usize;
    let (mut steps, mut clocks, mut dropped) = (0u64, 0u64, 0u64);
    let mut retries = Retries::default();
    loop {
        if STOP.load(Ordering::Relaxed) {
            return Ok(Err(End::Stopped));
        }
        let kind = match kinds.get(&rip) {
            Some(k) => *k,
            None => {
                // Unreadable code is the uprobes' out-of-line slot ([uprobes], which ptrace cannot
                // read): the probed instruction, run there after the int3 trap (counted then).
                let k = match ptrace(libc::PTRACE_PEEKTEXT, tid, rip as usize, 0) {
                    Ok(w) => super::arch::kind_of(w as u64),
                    Err(e) if e.raw_os_error() == Some(libc::EIO) => Kind::Xol,
                    Err(e) => return Err(perr("PEEKTEXT", e)),
                };
                kinds.insert(rip, k);
                k
            }
        };
        match ptrace(libc::PTRACE_SINGLESTEP, tid, 0, inject) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(Err(End::Gone)),
            Err(e) => return Err(perr("PTRACE_SINGLESTEP", e)),
        }
        inject = 0;
        let (sig, event) = match wait(tid)? {
            Stop::Gone => return Ok(Err(End::Gone)),
            Stop::Interrupted => return Ok(Err(End::Stopped)),
            Stop::Signal { sig, event } => (sig, event),
        };
        if event != 0 {
            // An event stop (e.g. the seize's PTRACE_EVENT_STOP): nothing executed.
            continue;
        }
        if sig != libc::SIGTRAP {
            // A signal arrived before the instruction ran: deliver it on the next step. Its
            // handler then runs inside the count, so the call is marked (and discarded).
            inject = sig as usize;
            rec.signal = sig;
            continue;
        }
        if vdso.contains(rip) {
            let d = retries.visit(rip, steps, clocks);
            if d > 0 {
                tally.drop_last(d);
                dropped += d;
                rec.clock_retries += 1;
            }
        }
        steps += 1;
        tally.step(rip, kind);
        match kind {
            Kind::Syscall => {
                rec.syscalls += 1;
                tally.syscall(sysno);
            }
            Kind::Trap => rec.traps += 1,
            Kind::Clock => clocks += 1,
            Kind::Plain | Kind::Xol | Kind::Call | Kind::Return => {}
        }
        let r = regs(tid).map_err(|e| perr("GETREGS", e))?;
        // Code ptrace cannot read (the uprobes' page: since Linux 6.17 a nop5 probe site calls a
        // trampoline there that makes the uprobe system call) may hold a system call: the
        // registers tell it afterwards (`Regs::after_syscall`).
        if kind == Kind::Xol && r.after_syscall {
            rec.syscalls += 1;
            tally.syscall(r.sysno_after);
        }
        (rip, sysno) = (r.pc, r.sysno);
        if rip == end {
            let f1 = faults.as_ref().map(Faults::read).unwrap_or(0);
            rec.faults = f1.saturating_sub(f0) as u32;
            rec.instructions = steps - dropped;
            tally.end(rec.instructions, rec.signal == 0);
            return Ok(Ok(rec));
        }
    }
}
