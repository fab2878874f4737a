//! `tracebench run --instructions singlestep`: the exact user-space instruction count
//! of every call, without a PMU, by single-stepping the measuring thread.
//!
//! The survey reads code paths out of instruction counts (Figures 3(d) and 7(d)), but hardware
//! counters need a PMU, which virtual machines and CI runners rarely have. A process of ours
//! (`stepper`) ptraces the cell's measuring thread and PTRACE_SINGLESTEPs it through each call,
//! one instruction per step, so the count is exact and the same on every run of the same build.
//!
//! The cell is today's cell (set-up, the same untimed warm-up to steady state, iteration
//! numbering from 0, teardown), with the timed loop replaced by a stepped one: per call,
//! `stepped_call` marks the start with an int3 (rax = [`MAGIC_CALL`], rsi = the iteration, rdx =
//! the return address), the stepper counts steps from the `call` into the tracer to the moment
//! rip is back at that address. Each step costs a ptrace round trip (tens of us), so time is not
//! measured at all: events.csv has `user_instructions` and `kernel_entries` and no `latency_ns`.
//!
//! What is counted: every user-space instruction of the call (the call into the tracer and the
//! dynamic dispatch included, the same for every tracer, so `none` is the floor as in the timed
//! runs). Where the call enters the kernel (a system-call instruction, a uprobe's int3, a page
//! fault) it is counted in `kernel_entries`; the kernel's own instructions are not counted.
//!
//! Where the instructions go: the stepper also keeps each instruction's address with a
//! shadow call stack, and each system call's number (`shadow`), tallied per exact count; the cell
//! names the addresses (`crate::symbolize`) before the tracer is torn down and writes
//! `profile.json`, which the merge sums per tracer and the report cuts into paths.
pub mod kind;
pub mod shadow;
pub mod stepper;
#[cfg(test)]
mod tests;

/// The architecture's markers, registers and instruction kinds: one module per architecture.
#[cfg(target_arch = "aarch64")]
#[path = "arch/aarch64.rs"]
mod arch;
#[cfg(target_arch = "x86_64")]
#[path = "arch/x86_64.rs"]
mod arch;
use arch::{done_marker, stepped_call};

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use tracebench_tracers::Tracer;

use crate::clock::{Clock, ClockKind, Monotonic, Tsc};
use crate::counters::NoCounters;
use crate::disturbance::Detector;
use crate::error::Error;
use crate::results::profile::PROFILE_JSON;
use crate::results::rows::{DiscardsWriter, EventsWriter};
use crate::results::stepped::{self, StepRow, StepSummaryRow};
use crate::results::{write_json, DISCARDED_CSV, EVENTS_CSV, REPETITIONS_CSV, SUMMARY_CSV};
use crate::runner::prepare::Prepared;
use crate::runner::protocol::{CellResult, CellSpec, ThreadResult, CELL_RESULT};
use crate::runner::supervise::CellRun;
use crate::runner::timed::{self, Buffers, STOP};
use crate::steady_state::{self, DriftWindow};
use shadow::StepTally;
use stepper::Record;

/// rax at the start marker of a call ("tracebst").
pub const MAGIC_CALL: u64 = 0x7473_6265_6361_7274;
/// rax at the marker after the last call.
pub const MAGIC_DONE: u64 = 0x656e_6f64_6563_7274;

/// `-n` when `--instructions singlestep` is given without one: each step is a ptrace round
/// trip, so 2,000 calls of a 1,000-instruction tracer take about a minute.
pub const DEFAULT_ITERATIONS: usize = 2000;

/// Set when the stepper vanished and the kernel delivered our own marker's or the trap flag's
/// SIGTRAP to us (see `stepper` on why that, not PTRACE_O_EXITKILL).
static GONE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_trap(_: libc::c_int, _: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    GONE.store(true, Ordering::Relaxed);
    // Leave no single-stepping behind once sigreturn restores the context (`arch`).
    // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
    unsafe { arch::recover_from_trap(ctx as *mut libc::ucontext_t) };
}

fn install_trap_handler() {
    // SAFETY: the handler only stores to an atomic and edits its own ucontext.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_trap as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTRAP, &sa, std::ptr::null_mut());
    }
}

/// The measuring thread takes no SIGINT/SIGTERM while stepped: the cell's other thread takes
/// them and sets STOP, so no handler runs inside a stepped call.
fn block_stop_signals() {
    // SAFETY: plain signal-set manipulation on this thread's own mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// What the stepper steps: `p` points at the caller's `&dyn Tracer`. The same dynamic call as
/// the timed loop's, so `none` is the floor.
pub(crate) extern "C" fn tramp(p: usize, it: u64) {
    // SAFETY: `stepped_call` passes the address of a live `&dyn Tracer`.
    let t = unsafe { *(p as *const &dyn Tracer) };
    t.fire(it as u32);
}

/// The cell, stepped: called by `runner::cell::main` for a `--instructions singlestep` cell.
pub fn cell_main(spec: &CellSpec) -> Result<i32, Error> {
    let tracer = tracebench_tracers::create(&spec.spec, &spec.create_options())?;
    // One measuring thread; this one stays free to take SIGINT/SIGTERM (see block_stop_signals).
    let out = std::thread::scope(|s| {
        let t: &dyn Tracer = tracer.as_ref();
        s.spawn(move || measure(spec, t))
            .join()
            .unwrap_or_else(|_| Err(Error::Measurement("the measuring thread panicked".into())))
    });
    // Named here, while the tracer's libraries are still mapped: after teardown their addresses
    // name nothing.
    let profile = out.as_ref().ok().map(|m| m.3.profile(&crate::symbolize::names(&m.3.addresses())));
    let after_run = tracer.after_run();
    let (version, config, buffer_events) = (tracer.version(), tracer.config(), tracer.buffer_events());
    // Tear the tracer down before writing: the system is restored even if writing fails.
    drop(tracer);
    let (result, records, detector, _) = out?;
    write_rows(spec, &result, &records)?;
    if let Some(p) = profile {
        p.write(&spec.dir.join(PROFILE_JSON))?;
    }
    let stopped = STOP.load(Ordering::Relaxed);
    let res = CellResult {
        tracer_version: version,
        tracer_config: config,
        after_run,
        buffer_events,
        counter_read: "none".into(),
        detector,
        threads: vec![result],
        stopped,
        warnings: Vec::new(),
        phases: Default::default(),
    };
    write_json(spec.dir.join(CELL_RESULT), &res)?;
    Ok(if stopped { 130 } else { 0 })
}

type Measured = (ThreadResult, Vec<Record>, serde_json::Value, StepTally);

fn measure(spec: &CellSpec, tracer: &dyn Tracer) -> Result<Measured, Error> {
    let cpu = spec.cpus[0];
    crate::runner::affinity::pin(cpu)?;
    tracer.thread_init(cpu)?;
    let (wrap, warmup_calls, windows, steady, detector) = match spec.clock {
        ClockKind::Tsc => warm_up(&Tsc, spec, tracer)?,
        ClockKind::Monotonic => warm_up(&Monotonic, spec, tracer)?,
    };
    block_stop_signals();
    install_trap_handler();
    let (records, tally) = step(spec, tracer)?;
    let mut reasons = BTreeMap::new();
    let disturbed = records.iter().filter(|r| r.signal != 0).count() as u64;
    if disturbed > 0 {
        reasons.insert("signal".to_string(), disturbed);
    }
    let result = ThreadResult {
        kept: records.len() - disturbed as usize,
        attempts: records.len() as u64,
        discarded: disturbed,
        reasons,
        wrap_calls: wrap,
        warmup_calls,
        steady,
        windows,
        ..ThreadResult::zero(0, cpu)
    };
    Ok((result, records, detector, tally))
}

/// Today's warm-up (`runner::cell`), unstepped: wrap the buffer, then timed windows until the
/// drift settles, so the stepped calls see the same steady state as a timed run's.
fn warm_up<C: Clock>(
    clock: &C,
    spec: &CellSpec,
    tracer: &dyn Tracer,
) -> Result<(u64, u64, Vec<DriftWindow>, bool, serde_json::Value), Error> {
    let hz = if spec.clock == ClockKind::Tsc { spec.tsc_hz } else { 1e9 };
    let tolerated = tracer.intrinsic_disturbances().iter().fold(0u16, |m, r| m | *r as u16);
    let mut det = Detector::open_ignoring(tolerated)?;
    let detector = serde_json::to_value(det.sources.clone()).unwrap_or_default();
    let mut scratch = Buffers::new(steady_state::WINDOW, 0, 0);
    let wrap = steady_state::wrap_calls(tracer.buffer_events());
    timed::fire_untimed(tracer, wrap);
    let mut warmup_calls = wrap;
    let mut windows = Vec::new();
    let mut lat = Vec::with_capacity(steady_state::WINDOW);
    let w = steady_state::WINDOW;
    for _ in 0..steady_state::MAX_WINDOWS {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        // A stepped run has no sentinels (`sentinel_every` 0 in run.json).
        let none = timed::Sentinel::none(tracer);
        let o = timed::run(
            clock,
            &NoCounters,
            tracer,
            none,
            &mut det,
            &mut scratch,
            w,
            0,
            (w as u64) * 50,
            false,
            tolerated,
        );
        warmup_calls += o.attempts;
        lat.clear();
        lat.extend(scratch.samples[..o.kept].iter().map(|s| s.ticks as f64 * 1e9 / hz));
        if lat.is_empty() {
            continue;
        }
        windows.push(DriftWindow::of(&mut lat));
        if steady_state::is_steady(&windows, spec.resolution_ns) {
            return Ok((wrap, warmup_calls, windows, true, detector));
        }
    }
    Ok((wrap, warmup_calls, windows, false, detector))
}

/// Starts the stepper on this thread, makes the marked calls, and collects its records and its
/// tally of where the instructions went.
fn step(spec: &CellSpec, tracer: &dyn Tracer) -> Result<(Vec<Record>, StepTally), Error> {
    let exe = crate::runner::supervise::own_exe();
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let mut child = Command::new(exe)
        .arg("__stepper")
        .arg(std::process::id().to_string())
        .arg(tid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Error::Measurement(format!("cannot start the stepping process: {e}")))?;
    let mut pipe = child.stdout.take().expect("piped");
    let mut ready = [0u8; 1];
    let ok = pipe.read_exact(&mut ready).is_ok() && ready[0] == b'R';
    if !ok {
        let _ = child.wait();
        return Err(Error::Measurement(
            "the stepping process could not trace the measuring thread (see its message above)".into(),
        ));
    }
    let t: &dyn Tracer = tracer;
    let p = &t as *const &dyn Tracer as usize;
    for it in 0..spec.iterations as u64 {
        if STOP.load(Ordering::Relaxed) || GONE.load(Ordering::Relaxed) {
            break;
        }
        stepped_call(p, it);
    }
    done_marker();
    let mut text = String::new();
    let read = pipe.read_to_string(&mut text);
    let status = child.wait();
    let last = text.lines().last().unwrap_or("").to_string();
    let clean = last == stepper::END_DONE || last == stepper::END_STOPPED;
    if read.is_err() || !clean {
        let why = match (last.strip_prefix("END error "), status) {
            (Some(e), _) => e.to_string(),
            (None, Ok(s)) => format!("it ended early ({s})"),
            (None, Err(e)) => format!("it ended early ({e})"),
        };
        return Err(Error::Measurement(format!("the stepping process failed: {why}")));
    }
    let records: Vec<Record> = text.lines().filter_map(Record::parse).collect();
    let tally = StepTally::parse(&text)
        .ok_or_else(|| Error::Measurement("the stepping process wrote a malformed profile line".into()))?;
    Ok((records, tally))
}

/// The cell's rows, final form: kept calls in events.csv, signal-disturbed ones in discarded.csv.
fn write_rows(spec: &CellSpec, result: &ThreadResult, records: &[Record]) -> Result<(), Error> {
    let mut ev = EventsWriter::create_stepped(&spec.dir.join(EVENTS_CSV))?;
    let mut ds = DiscardsWriter::create_stepped(&spec.dir.join(DISCARDED_CSV))?;
    for r in records {
        let row = StepRow {
            tracer: &spec.label,
            threads: spec.threads,
            thread: result.thread,
            cpu: result.cpu as u32,
            iteration: r.iteration,
            user_instructions: r.instructions,
            kernel_entries: r.kernel_entries(),
            repetition: spec.repetition,
            clock_retries: r.clock_retries,
        };
        if r.signal == 0 {
            ev.row_stepped(&row)?;
        } else {
            ds.row_stepped(&row, "signal")?;
        }
    }
    ev.commit()?;
    ds.commit()
}

/// Counts of one group of cells.
#[derive(Default)]
struct Acc {
    counts: Vec<u64>,
    kernel: u64,
    discarded: u64,
}

impl crate::runner::concat::Group for Acc {
    type Row = StepSummaryRow;
    fn discarded(&mut self) -> &mut u64 {
        &mut self.discarded
    }
    fn kept(&self) -> usize {
        self.counts.len()
    }
    fn row(mut self, tracer: &str, threads: usize, repetition: Option<usize>) -> StepSummaryRow {
        let n = self.counts.len();
        self.counts.sort_unstable();
        let (mode, share) = mode_of(&self.counts);
        StepSummaryRow {
            tracer: tracer.into(),
            threads,
            repetition,
            kept: n,
            discarded: self.discarded,
            mean: if n == 0 { f64::NAN } else { self.counts.iter().sum::<u64>() as f64 / n as f64 },
            min: self.counts.first().copied().unwrap_or(0),
            p50: self.counts.get(n.saturating_sub(1) / 2).copied().unwrap_or(0),
            max: self.counts.last().copied().unwrap_or(0),
            mode,
            mode_share: share,
            kernel_entries_mean: if n == 0 { f64::NAN } else { self.kernel as f64 / n as f64 },
        }
    }
}

/// The most frequent value of sorted `v` (the smallest on a tie) and its share.
pub fn mode_of(sorted: &[u64]) -> (u64, f64) {
    let (mut best, mut best_n) = (0u64, 0usize);
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().position(|x| *x != sorted[i]).map_or(sorted.len(), |k| i + k);
        if j - i > best_n {
            (best, best_n) = (sorted[i], j - i);
        }
        i = j;
    }
    (best, if sorted.is_empty() { 0.0 } else { best_n as f64 / sorted.len() as f64 })
}

/// Stage 4 for a stepped run: each tracer's events.csv, discarded.csv and profile.json, then
/// summary.csv and repetitions.csv with the stepped columns
/// (`results::columns::STEPPED_SUMMARY_STATS`).
pub fn merge(p: &Prepared, runs: &[CellRun]) -> Result<Vec<StepSummaryRow>, Error> {
    let (summary_rows, rep_rows) = crate::runner::concat::concatenate(
        p,
        runs,
        &[crate::runner::concat::Joined::Profile],
        |dir, _| {
            Ok((
                EventsWriter::create_stepped(&dir.join(EVENTS_CSV))?,
                DiscardsWriter::create_stepped(&dir.join(DISCARDED_CSV))?,
            ))
        },
        |_| Acc::default(),
        |path, a, b| {
            stepped::for_each_stepped(path, |_, u, k| {
                a.counts.push(u);
                a.kernel += k;
                b.counts.push(u);
                b.kernel += k;
            })
        },
    )?;
    stepped::write_stepped_summary(&p.out.file(SUMMARY_CSV), &summary_rows, false)?;
    stepped::write_stepped_summary(&p.out.file(REPETITIONS_CSV), &rep_rows, true)?;
    Ok(summary_rows)
}
