use super::*;

/// The fallback sees a page fault and a context switch of its own thread, and names them.
#[test]
fn rusage_fallback_sees_faults_and_switches() {
    let mut det = Detector::rusage(Sources::default()).unwrap();
    assert!(det.is_rusage());
    assert!(det.sources.weak.as_deref().unwrap().contains("interrupts"));
    let h0 = det.head();
    // SAFETY: a private anonymous mapping, written once and unmapped.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        std::ptr::write_volatile(p as *mut u8, 1);
        libc::munmap(p, 4096);
    }
    // What the thread met from here on, by getrusage itself: a window that holds the sleep's.
    let own = || {
        // SAFETY: getrusage fills the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
        (ru.ru_minflt + ru.ru_majflt, ru.ru_nivcsw)
    };
    let before = own();
    let h1 = det.head();
    assert!(det.classify(h0, h1) & Reason::PageFault as u16 != 0, "{}", Reason::names(det.classify(h0, h1)));
    // A sleep is a voluntary switch: the thread's own wait, named `blocked` (kept), not a preemption.
    // The window may also hold what the thread really met besides (a page fault of its stack or
    // of the allocator its test neighbours share, a preemption on a busy machine): getrusage's own
    // counts of the same window say which, so the test holds under any load.
    std::thread::sleep(std::time::Duration::from_millis(2));
    let h2 = det.head();
    let after = own();
    let c = det.classify(h1, h2);
    let mut want = Reason::Blocked as u16;
    if after.0 > before.0 {
        want |= Reason::PageFault as u16;
    }
    if after.1 > before.1 {
        want |= Reason::ContextSwitch as u16;
    }
    assert_eq!(c & Reason::Blocked as u16, Reason::Blocked as u16, "{}", Reason::names(c));
    assert_eq!(c & !want, 0, "named beyond what the thread met: {}", Reason::names(c));
}

/// Holding the tracepoints must not blind the detector: a page fault and a context switch
/// opened after a `KeepAlive` still move the ring's head and are named.
#[test]
fn keep_alive_holds_every_tracepoint_and_the_detector_still_sees() {
    let Some(tps) = tracepoint_sources() else {
        eprintln!("SKIP keep_alive test: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
        return;
    };
    let keep = KeepAlive::hold();
    if keep.held() == 0 {
        eprintln!("SKIP keep_alive test: cannot open tracepoint perf events (need root or perf_event_paranoid <= 1)");
        return;
    }
    let openable = tps.iter().filter(|(n, _)| crate::counters::tracepoint_id(n).is_some()).count();
    assert_eq!(keep.held(), openable);
    let mut det = Detector::open().unwrap();
    // Involuntary switches of this thread, so that a preemption by a neighbour (a loaded machine)
    // is told apart from the sleep's own switch, which must not be called one.
    let preempted = || {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        u.ru_nivcsw
    };
    let iv0 = preempted();
    let h0 = det.head();
    // A fresh anonymous page: its first touch is a page fault.
    // SAFETY: a private anonymous mapping, written once and unmapped.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        std::ptr::write_volatile(p as *mut u8, 1);
        libc::munmap(p, 4096);
    }
    std::thread::sleep(std::time::Duration::from_millis(2));
    let h1 = det.head();
    assert!(h1 > h0, "the detector saw nothing");
    let mask = det.classify(h0, h1);
    assert!(mask & (Reason::PageFault as u16) != 0, "{}", Reason::names(mask));
    // The sleep went through sched_switch with prev_state S: blocked, not a preemption.
    assert!(mask & (Reason::Blocked as u16) != 0, "{}", Reason::names(mask));
    if preempted() == iv0 {
        assert!(mask & (Reason::ContextSwitch as u16) == 0, "{}", Reason::names(mask));
    } else {
        eprintln!("keep_alive test: this thread was also preempted, so a context switch is rightly named too");
    }
    drop(det);
    drop(keep);
}

/// The sched_switch format of this kernel (6.18), where a preempted thread reports 0x100.
const FORMAT: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n";

#[test]
fn prev_state_is_found_and_read_as_sleep_or_preemption() {
    assert_eq!(parse_prev_state(FORMAT), Some(PrevState { offset: 32, size: 8 }));
    assert_eq!(parse_prev_state("field:long prev_stat;\toffset:32;\tsize:8;"), None);
    // Running (yield) and "R+" (preempted: TASK_REPORT_MAX, 0x100 on 6.x, 0x80 on 4.14-5.13).
    for preempted in [0, 0x80, 0x100] {
        assert_eq!(switch_reason(preempted), Reason::ContextSwitch, "{preempted:#x}");
    }
    // S, D, T, t, and S with the older kernels' preempt bit unset.
    for slept in [1, 2, 4, 8, 0x41] {
        assert_eq!(switch_reason(slept), Reason::Blocked, "{slept:#x}");
    }
}

#[test]
fn rusage_tells_voluntary_from_involuntary() {
    let pack = |nv: u64, niv: u64| nv | niv << 16;
    assert_eq!(rusage_reasons(pack(3, 5), pack(4, 5)), Reason::Blocked as u16);
    assert_eq!(rusage_reasons(pack(3, 5), pack(3, 6)), Reason::ContextSwitch as u16);
    assert_eq!(rusage_reasons(pack(3, 5), pack(4, 6)), (Reason::Blocked as u16) | (Reason::ContextSwitch as u16));
    assert_eq!(rusage_reasons(pack(3, 5), pack(3, 5)), 0);
}

/// Waits up to 3 s for `det` to see this thread lose its CPU to a spinner pinned beside it (a
/// preemption, never a sleep), and returns what it named; None if the scheduler never switched.
fn preempted_mask(det: &mut Detector) -> Option<u16> {
    let cpu = unsafe { libc::sched_getcpu() } as usize;
    crate::runner::affinity::pin(cpu).ok()?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let spinner = std::thread::spawn(move || {
        let _ = crate::runner::affinity::pin(cpu);
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    });
    let t0 = std::time::Instant::now();
    let mut found = None;
    while found.is_none() && t0.elapsed() < std::time::Duration::from_secs(3) {
        let h0 = det.head();
        for _ in 0..1000 {
            std::hint::spin_loop();
        }
        let h1 = det.head();
        if h0 != h1 {
            let m = det.classify(h0, h1);
            if m & (Reason::ContextSwitch as u16 | Reason::Blocked as u16) != 0 {
                found = Some(m);
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = spinner.join();
    found
}

/// A thread that loses its CPU while running is preempted: `context-switch` (discarded), never
/// `blocked`, in both the perf detector and the getrusage fallback.
#[test]
fn a_preemption_is_a_context_switch_not_blocked() {
    let mut dets = vec![("getrusage", Detector::rusage(Sources::default()).unwrap())];
    match Detector::open() {
        Ok(d) if !d.is_rusage() && d.sources.watched.iter().any(|w| w == "sched:sched_switch") => {
            dets.push(("perf", d))
        }
        _ => eprintln!("SKIP a_preemption (perf part): sched:sched_switch cannot be watched (need root)"),
    }
    for (name, mut det) in dets {
        let Some(mask) = preempted_mask(&mut det) else {
            eprintln!("SKIP a_preemption ({name}): the scheduler never switched the spinning thread out in 3 s");
            continue;
        };
        assert!(mask & Reason::ContextSwitch as u16 != 0, "{name}: {}", Reason::names(mask));
        assert!(mask & Reason::Blocked as u16 == 0, "{name}: {}", Reason::names(mask));
    }
}

#[test]
fn records_between_windows_are_released_so_the_ring_never_fills() {
    // Records that arrive outside every window are never classified; `release` frees them after
    // each undisturbed window, or the ring would fill and its head stop for the rest of the run.
    let mut det = Detector::disabled("test").unwrap();
    let head = det.head_ptr_for_test();
    for k in 1..=3u64 {
        // SAFETY: the head of a `disabled` detector's anonymous mapping.
        unsafe { *head += 64 };
        let h = det.head();
        assert_eq!(h, 64 * k);
        det.release(h);
        assert_eq!(det.tail_for_test(), h, "the tail follows the head after window {k}");
    }
}

/// Pins the calling thread to `cpu`; returns the mask it had.
fn pin_to(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: plain affinity calls on zeroed cpu_set_t values we own.
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set), 0);
        old
    }
}

/// Without sched_switch's prev_state (no tracefs, as in a container), the kernel's switch
/// records still tell the tracer's own sleep (kept, blocked) from a preemption (discarded): a
/// thread that sleeps is blocked, one that spins while another spinner shares its CPU is
/// preempted.
#[test]
fn switch_records_tell_a_sleep_from_a_preemption() {
    if !switch::records_tell_preemption() {
        eprintln!("SKIP switch records test: this kernel is older than 4.17 (no PREEMPT mark on switch-outs)");
        return;
    }
    let mut det = match Detector::open_with(0, None) {
        Ok(d) if d.switch_records => d,
        Ok(d) => {
            eprintln!("SKIP switch records test: no perf event could write switch records ({:?})", d.sources.missing);
            return;
        }
        Err(e) => {
            eprintln!("SKIP switch records test: {e}");
            return;
        }
    };
    assert!(det.sources.voluntary.contains("PERF_RECORD_SWITCH"), "{}", det.sources.voluntary);
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() }.max(0) as usize;
    let old = pin_to(cpu);
    let h0 = det.head();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let h1 = det.head();
    let slept = det.classify(h0, h1);
    assert_eq!(
        slept & (Reason::Blocked as u16 | Reason::ContextSwitch as u16),
        Reason::Blocked as u16,
        "{}",
        Reason::names(slept)
    );
    // A spinner on the same CPU: within 200 ms of spinning, the scheduler preempts one of us.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            pin_to(cpu);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(5)); // the spinner runs
    let h2 = det.head();
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_millis(200) {
        std::hint::spin_loop();
    }
    let h3 = det.head();
    stop.store(true, Ordering::Relaxed);
    spinner.join().unwrap();
    let spun = det.classify(h2, h3);
    // SAFETY: restores the mask read above.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old) };
    assert!(spun & Reason::ContextSwitch as u16 != 0, "{}", Reason::names(spun));
}
