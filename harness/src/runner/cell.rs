//! Stage 3, measure: the measuring child process. One cell = one tracer x thread count x counter
//! set x repetition (docs/ARCHITECTURE.md). It sets the tracer up, pins one thread per CPU, warms
//! up to steady state, measures (`timed`), tears the tracer down, and writes its rows, in their
//! final form, into the cell directory for the merge. A tracer that crashes or hangs takes down
//! only this process.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

use tracebench_tracers::Tracer;

use super::drain::{self, Drain, Origin};
use super::protocol::{self, CellResult, CellSpec, ThreadResult, CELL_RESULT, CELL_STOP};
use super::reference::{self, ReferenceLoop};
use super::timed::{self, Buffers, Sentinel, STOP};
use crate::clock::{Clock, ClockKind, Monotonic, Tsc};
use crate::counters::{CounterGroup, CounterRead, NoCounters};
use crate::disturbance::{Detector, Sources, ALL_REASONS};
use crate::error::Error;
use crate::results::events_file;
use crate::results::rows::{DiscardsWriter, EventsWriter, ReferenceRow, ReferenceWriter, SentinelsWriter};
use crate::results::{write_json, DISCARDED_CSV, EVENTS_CSV, REFERENCE_CSV, SENTINELS_CSV};
use crate::steady_state::{self, DriftWindow};

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn to_ns(ticks: u64, hz: f64) -> f64 {
    ticks as f64 * 1e9 / hz
}

struct ThreadOut {
    result: ThreadResult,
    buf: Buffers,
    counter_read: &'static str,
    sources: Sources,
    /// Seconds of set-up, warm-up and the timed loop (`runner::timings`).
    phases: [f64; 3],
}

/// Entry point of the hidden `__cell DIR` subcommand: the spec comes on stdin (`protocol`); DIR,
/// its directory, is on the command line too so that `ps` tells which run a cell belongs to.
pub fn main(dir: &std::path::Path) -> Result<i32, Error> {
    super::supervise::install_handlers_with(on_signal);
    super::supervise::name_process();
    let spec = protocol::read_spec(&mut std::io::stdin().lock())?;
    if spec.dir != dir {
        return Err(Error::Usage(format!("__cell {}: the spec on stdin is for {}", dir.display(), spec.dir.display())));
    }
    // The stop handshake with the parent (`runner::run_cell`): a Ctrl-C can land while a launch
    // prefix (strace) is up but this process does not exist yet, and a prefix that blocks
    // SIGINT would then let the whole cell run. So: handler first, then our pid (the parent
    // signals it once it has been asked to stop), then the parent's stop mark, in that order.
    protocol::send_pid();
    if spec.dir.join(CELL_STOP).exists() {
        STOP.store(true, Ordering::Relaxed);
    }
    if spec.kernel {
        return super::kernel_cell::main(&spec);
    }
    if spec.singlestep {
        return crate::runner::singlestep::cell_main(&spec);
    }
    // Where the cell's time goes (`runner::timings`): outside every timed window.
    let mut phases = BTreeMap::new();
    let mut lap = std::time::Instant::now();
    let mut mark = |name: &str, phases: &mut BTreeMap<String, f64>| {
        let now = std::time::Instant::now();
        phases.insert(name.to_string(), (now - lap).as_secs_f64());
        lap = now;
    };
    let tracer = tracebench_tracers::create(&spec.spec, &spec.create_options())?;
    // The sentinel: the `none` tracer, called through the same `&dyn Tracer` as the tracer.
    let none = tracebench_tracers::create("none", &spec.create_options())?;
    mark("tracer_setup", &mut phases);
    let outs = measure(&spec, tracer.as_ref(), none.as_ref());
    mark("measure", &mut phases);
    let after_run = tracer.after_run();
    let (version, config, buffer_events) = (tracer.version(), tracer.config(), tracer.buffer_events());
    // What the tracer reports itself (LTTng: a snapshot read back with babeltrace2).
    mark("after_run", &mut phases);
    // Tear the tracer down before writing: the system is restored even if writing fails.
    drop(tracer);
    mark("tracer_teardown", &mut phases);
    let outs = outs?;
    // `measure` split by its first thread: set-up (pin, detector, buffers), warm-up to steady
    // state, the timed loop; what is left is the threads' start and join.
    if let Some(first) = outs.first() {
        let m = phases.remove("measure").unwrap_or(0.0);
        let [setup, warmup, timed] = first.phases;
        phases.insert("thread_setup".into(), setup);
        phases.insert("warmup".into(), warmup);
        phases.insert("timed".into(), timed);
        phases.insert("threads".into(), (m - setup - warmup - timed).max(0.0));
    }
    let hz = if spec.clock == ClockKind::Tsc { spec.tsc_hz } else { 1e9 };
    write_rows(&spec, &outs, hz)?;
    mark("write_rows", &mut phases);
    let mut warnings = Vec::new();
    for o in &outs {
        let r = &o.result;
        if !r.steady {
            warnings.push(format!(
                "{} thread {}: latency still drifting after {} warm-up calls; measuring anyway (steady: false in run.json)",
                spec.label, r.thread, r.warmup_calls
            ));
        }
        if r.kept < spec.iterations && !STOP.load(Ordering::Relaxed) {
            warnings.push(format!(
                "{} thread {}: only {} of {} iterations undisturbed after {} calls",
                spec.label, r.thread, r.kept, spec.iterations, r.attempts
            ));
        }
    }
    let result = CellResult {
        tracer_version: version,
        tracer_config: config,
        after_run,
        buffer_events,
        counter_read: outs.first().map(|o| o.counter_read).unwrap_or("none").into(),
        detector: serde_json::to_value(outs.first().map(|o| o.sources.clone()).unwrap_or_default()).unwrap_or_default(),
        threads: outs.into_iter().map(|o| o.result).collect(),
        stopped: STOP.load(Ordering::Relaxed),
        warnings,
        phases,
    };
    write_json(spec.dir.join(CELL_RESULT), &result)?;
    Ok(if result.stopped { 130 } else { 0 })
}

fn measure(spec: &CellSpec, tracer: &dyn Tracer, none: &dyn Tracer) -> Result<Vec<ThreadOut>, Error> {
    let barrier = Barrier::new(spec.threads);
    let failed = AtomicBool::new(false);
    let origin = Origin::new(spec.threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..spec.threads)
            .map(|t| {
                let (barrier, failed, origin) = (&barrier, &failed, &origin);
                let sentinel =
                    Sentinel { tracer: none, every: spec.sentinel_every, reference: none, reference_every: 0 };
                s.spawn(move || thread_main(spec, tracer, sentinel, t, barrier, failed, origin))
            })
            .collect();
        let mut outs = Vec::new();
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(o)) => outs.push(o),
                Ok(Err(e)) => first_err = first_err.or(Some(e)),
                Err(_) => first_err = first_err.or(Some(Error::Measurement("a measuring thread panicked".into()))),
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(outs),
        }
    })
}

/// Set-up on the pinned thread, then the two barriers every thread reaches even on error (so no
/// thread waits forever), then warm-up and measurement.
fn thread_main(
    spec: &CellSpec,
    tracer: &dyn Tracer,
    sentinel: Sentinel,
    t: usize,
    barrier: &Barrier,
    failed: &AtomicBool,
    origin: &Origin,
) -> Result<ThreadOut, Error> {
    let cpu = spec.cpus[t];
    let t_setup = std::time::Instant::now();
    // This thread's reference loop, set to the tracer's length after warm-up (reference.rs).
    let reference = ReferenceLoop::default();
    let sentinel = Sentinel { reference: &reference, reference_every: spec.reference_every, ..sentinel };
    let setup = (|| {
        super::affinity::pin(cpu)?;
        tracer.thread_init(cpu)?;
        let det = Detector::open_ignoring(tolerated_mask(tracer))?;
        let group = if spec.counters.is_empty() { None } else { Some(CounterGroup::open(&spec.counters)?) };
        // One block of kept calls (`drain`), room for a generous share of discarded rows in it;
        // beyond it, reasons are still counted.
        let every = spec.sentinel_every;
        let block = spec.iterations.min(drain::BLOCK);
        let buf = Buffers::new(block, block * 2 + 1000, timed::sentinel_rows(block, every));
        let scratch = Buffers::new(steady_state::WINDOW, 0, timed::sentinel_rows(steady_state::WINDOW, every));
        let drain = Drain::create(spec, t, cpu, origin)?;
        Ok::<_, Error>((det, group, buf, scratch, drain))
    })();
    if setup.is_err() {
        failed.store(true, Ordering::SeqCst);
    }
    barrier.wait();
    let (mut det, mut group, mut buf, mut scratch, mut drain) = setup?;
    if failed.load(Ordering::SeqCst) {
        // Another thread failed: still meet the second barrier.
        barrier.wait();
        return Err(Error::Measurement("another measuring thread failed to set up".into()));
    }
    let sources = det.sources.clone();
    let mut phases = [t_setup.elapsed().as_secs_f64(), 0.0, 0.0];
    macro_rules! go {
        ($clock:expr, $ctr:expr) => {{
            let ctr = $ctr;
            let (det, buf, scratch, ph, dr) = (&mut det, &mut buf, &mut scratch, &mut phases, &mut drain);
            let r = body($clock, &ctr, spec, tracer, sentinel, &reference, det, buf, scratch, dr, barrier, t, cpu, ph);
            (r, ctr.method())
        }};
    }
    let rdpmc = group.as_mut().and_then(|g| g.rdpmc());
    let (result, counter_read) = match (spec.clock, group.as_ref(), rdpmc) {
        (ClockKind::Tsc, None, _) => go!(&Tsc, NoCounters),
        (ClockKind::Monotonic, None, _) => go!(&Monotonic, NoCounters),
        (ClockKind::Tsc, Some(_), Some(r)) => go!(&Tsc, r),
        (ClockKind::Monotonic, Some(_), Some(r)) => go!(&Monotonic, r),
        (ClockKind::Tsc, Some(g), None) => go!(&Tsc, g.syscall()),
        (ClockKind::Monotonic, Some(g), None) => go!(&Monotonic, g.syscall()),
    };
    let result = result?;
    drain.finish()?;
    let mut result = result;
    result.counter_not_running = buf.counter_not_running[..spec.counters.len()].to_vec();
    result.counter_scheduled_fraction = group.as_ref().and_then(|g| g.scheduled_fraction());
    Ok(ThreadOut { result, buf, counter_read, sources, phases })
}

/// The reasons `tracer` causes itself on every call (`Tracer::intrinsic_disturbances`), as a
/// mask: not watched, and never a reason to discard.
fn tolerated_mask(tracer: &dyn Tracer) -> u16 {
    tracer.intrinsic_disturbances().iter().fold(0u16, |m, r| m | *r as u16)
}

/// Windows timed for each step of the reference loop's calibration (reference.rs).
const REFERENCE_PROBE: usize = 301;

/// Windows timed and thrown away after the start barrier (see `body`).
const REENTRY_WINDOWS: usize = 64;

#[allow(clippy::too_many_arguments)]
fn body<C: Clock, R: CounterRead>(
    clock: &C,
    ctr: &R,
    spec: &CellSpec,
    tracer: &dyn Tracer,
    sentinel: Sentinel,
    reference: &ReferenceLoop,
    det: &mut Detector,
    buf: &mut Buffers,
    scratch: &mut Buffers,
    drain: &mut Drain,
    barrier: &Barrier,
    thread: usize,
    cpu: usize,
    phases: &mut [f64; 3],
) -> Result<ThreadResult, Error> {
    let t_warm = std::time::Instant::now();
    let hz = if spec.clock == ClockKind::Tsc { spec.tsc_hz } else { 1e9 };
    let tolerated = tolerated_mask(tracer);
    // Steady state (see steady_state.rs): wrap the buffer, then wait for the drift to settle.
    let wrap = steady_state::wrap_calls(tracer.buffer_events());
    timed::fire_untimed(tracer, wrap);
    let mut warmup_calls = wrap;
    let mut windows = Vec::with_capacity(steady_state::MAX_WINDOWS);
    let mut lat = Vec::with_capacity(steady_state::WINDOW);
    let mut steady = false;
    let w = steady_state::WINDOW;
    // The tracer's fast path in ticks: the median of the last warm-up window's kept calls.
    let mut ticks: Vec<u64> = Vec::with_capacity(REFERENCE_PROBE.max(w));
    let mut fast_ticks = None;
    for _ in 0..steady_state::MAX_WINDOWS {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        // Warm-up interleaves the sentinels too: the steady state is the one that is measured.
        let o = timed::run(clock, ctr, tracer, sentinel, det, scratch, w, 0, (w as u64) * 50, false, tolerated);
        warmup_calls += o.attempts;
        lat.clear();
        lat.extend(scratch.samples[..o.kept].iter().map(|s| to_ns(s.ticks, hz)));
        if lat.is_empty() {
            continue;
        }
        ticks.clear();
        ticks.extend(scratch.samples[..o.kept].iter().map(|s| s.ticks));
        ticks.sort_unstable();
        fast_ticks = ticks.get(ticks.len() / 2).copied();
        windows.push(DriftWindow::of(&mut lat));
        if steady_state::is_steady(&windows, spec.resolution_ns) {
            steady = true;
            break;
        }
    }
    // The reference loop is set to last what the tracer's fast path lasts (outside measurement).
    let mut target_ns = 0.0;
    if let Some(target) = fast_ticks.filter(|_| sentinel.reference_every > 1 && !STOP.load(Ordering::Relaxed)) {
        target_ns = to_ns(target, hz);
        reference::calibrate(target, reference, |n| {
            reference.set(n);
            timed::median_window(clock, ctr, reference, det, REFERENCE_PROBE, &mut ticks)
        });
        // The calibration's windows went to the reference's histogram of the scratch buffers
        // only through `median_window`, which stores nothing: the measured one starts empty.
    }
    // Threads start measuring together (survey 6.2.1: 5,000 iterations per core, in parallel).
    // Warm-up ends at the barrier (the wait for the other threads' warm-ups is counted in it).
    barrier.wait();
    // The barrier's wait (a futex, a sleep, a wake-up) leaves the window code and the tracer's
    // lines cold: the first timed call of every sequence was 10 to 50 ns slower than the rest
    // (lw, printf, lttng-ust, 10 repetitions each), a harness artifact on the first kept call
    // that the report's footprint check flagged in runs of many short repetitions. A few timed
    // windows, thrown away, re-enter the steady state first.
    // The same after each drain (`drain`): its writes leave the lines cold as the wait does.
    let reenter = |det: &mut Detector, scratch: &mut Buffers| {
        let n = REENTRY_WINDOWS;
        timed::run(clock, ctr, tracer, sentinel, det, scratch, n, 0, n as u64 * 50, false, tolerated).attempts
    };
    warmup_calls += reenter(det, scratch);
    let t_timed = std::time::Instant::now();
    phases[1] = (t_timed - t_warm).as_secs_f64();
    let max_attempts = spec.iterations as u64 * 50 + 100_000;
    // Block by block: each `timed::run` fills at most `drain::BLOCK` samples, written out between
    // blocks. Iterations (and the tracer's argument) continue across blocks and count the
    // re-entry windows' calls between them as well: an iteration is the tracer's call since its
    // timed loop began, so a path the tracer takes every P of its calls (a sub-buffer switch)
    // stays on one lattice of iterations across the blocks, whatever number of calls the
    // re-entry made (64 windows, and one more for each it threw away).
    let (mut kept, mut attempts, mut calls) = (0usize, 0u64, 0u64);
    while kept < spec.iterations && attempts < max_attempts && !STOP.load(Ordering::Relaxed) {
        let want = (spec.iterations - kept).min(buf.samples.len());
        let o =
            timed::run(clock, ctr, tracer, sentinel, det, buf, want, calls, max_attempts - attempts, true, tolerated);
        drain.block(buf, o.kept, calls)?;
        kept += o.kept;
        attempts += o.attempts;
        calls += o.attempts;
        if kept < spec.iterations && attempts < max_attempts {
            let n = reenter(det, scratch);
            warmup_calls += n;
            calls += n;
        }
    }
    let o = timed::Outcome { kept, attempts };
    phases[2] = t_timed.elapsed().as_secs_f64();
    let mut reasons = BTreeMap::new();
    for r in ALL_REASONS {
        let n = buf.reason_counts[(r as u16).trailing_zeros() as usize];
        if n > 0 {
            reasons.insert(r.name().to_string(), n);
        }
    }
    Ok(ThreadResult {
        thread,
        cpu,
        kept: o.kept,
        attempts: o.attempts,
        discarded: buf.discarded,
        reasons,
        discard_rows_dropped: buf.discarded - drain.discards,
        wrap_calls: wrap,
        warmup_calls,
        steady,
        windows,
        blocked: buf.blocked,
        blocked_ns: to_ns(buf.blocked_ticks, hz),
        sentinels: drain.sentinels,
        sentinels_dropped: buf.sentinels_dropped,
        sentinels_unstored: buf.sentinels_unstored,
        reference_iterations: reference.iterations(),
        reference_target_ns: target_ns,
        reference_windows: buf.reference.iter().map(|&n| n as u64).sum(),
        reference_dropped: buf.reference_dropped,
        ..ThreadResult::zero(thread, cpu)
    })
}

/// The cell's rows in their final form (`results::rows`): the threads' parts (`drain`), joined in
/// thread order; the merge only concatenates cells.
fn write_rows(spec: &CellSpec, outs: &[ThreadOut], hz: f64) -> Result<(), Error> {
    let columns = if spec.columns.is_empty() { &spec.counters } else { &spec.columns };
    let parts = |name: &str| outs.iter().map(|o| drain::part(&spec.dir, name, o.result.thread)).collect::<Vec<_>>();
    let ev = parts(EVENTS_CSV);
    if let [one] = ev.as_slice() {
        // One thread: its part is the file (no copy of what can be gigabytes).
        events_file::rename(one, &spec.dir.join(EVENTS_CSV))?;
    } else {
        let mut w = EventsWriter::create(&spec.dir.join(EVENTS_CSV), columns, (spec.iterations * spec.threads) as u64)?;
        for p in &ev {
            w.append_body_of(p)?;
        }
        w.commit()?;
    }
    if spec.sentinel_every > 0 {
        let mut w = SentinelsWriter::create(&spec.dir.join(SENTINELS_CSV))?;
        for p in &parts(SENTINELS_CSV) {
            w.append_body_of(p)?;
        }
        w.commit()?;
    }
    if spec.reference_every > 0 {
        write_reference(spec, outs, hz)?;
    }
    let mut ds = DiscardsWriter::create(&spec.dir.join(DISCARDED_CSV))?;
    for p in &parts(DISCARDED_CSV) {
        ds.append_body_of(p)?;
    }
    ds.commit()?;
    for p in ev.iter().chain(&parts(SENTINELS_CSV)).chain(&parts(DISCARDED_CSV)) {
        events_file::remove(p)?;
    }
    Ok(())
}

/// The cell's reference.csv (`--reference-every R` > 0): its non-empty bins per thread.
fn write_reference(spec: &CellSpec, outs: &[ThreadOut], hz: f64) -> Result<(), Error> {
    let mut w = ReferenceWriter::create(&spec.dir.join(REFERENCE_CSV))?;
    for o in outs {
        for (b, &n) in o.buf.reference.iter().enumerate().filter(|(_, &n)| n > 0) {
            w.row(&ReferenceRow {
                tracer: &spec.label,
                threads: spec.threads,
                thread: o.result.thread,
                repetition: spec.repetition,
                loop_iterations: o.result.reference_iterations,
                latency_lo_ns: to_ns(reference::lo(b), hz),
                latency_hi_ns: to_ns(reference::lo(b + 1), hz),
                windows: n as u64,
            })?;
        }
    }
    w.commit()
}
