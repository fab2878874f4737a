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
    let h1 = det.head();
    assert!(det.classify(h0, h1) & Reason::PageFault as u16 != 0, "{}", Reason::names(det.classify(h0, h1)));
    std::thread::sleep(std::time::Duration::from_millis(2));
    let h2 = det.head();
    assert!(det.classify(h1, h2) & Reason::ContextSwitch as u16 != 0, "{}", Reason::names(det.classify(h1, h2)));
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
    assert!(mask & (Reason::ContextSwitch as u16) != 0, "{}", Reason::names(mask));
    drop(det);
    drop(keep);
}
