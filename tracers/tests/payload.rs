//! `--payload-size`: each backend that takes it really records N bytes, read back from the tracer
//! itself (the lw ring, ftrace's `trace`, babeltrace2 on the LTTng snapshot, the uprobe event's
//! fetched string, the eBPF map). No mocks; a test prints `SKIP <test>: <reason>` and returns
//! when its tracer is not here. printf writes to /dev/null and perf's ring is checked by size
//! only (bytes per sample), so neither is read back byte for byte.
#[path = "support/common.rs"]
mod common;
use common::{available, pin0};
#[path = "support/example_plugins.rs"]
mod example_plugins;
use std::sync::Mutex;

use tracebench_tracers::payload::Payload;
use tracebench_tracers::{ftrace, lttng, lw, parent_guard, registry, CreateOptions, Tracer};

/// ftrace instances and uprobe events are named after the pid, LTTng tests share one session
/// daemon: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn opts(size: u32) -> CreateOptions {
    CreateOptions { run_id: "payload-test".into(), payload_size: size, ..Default::default() }
}

/// The bytes every payload holds: `abc...xyzabc...`.
fn expected(n: usize) -> String {
    String::from_utf8(Payload::new(n).bytes().to_vec()).unwrap()
}

#[test]
fn ranges_and_refusals() {
    assert!(registry::validate_payload("lw", 4).is_ok());
    assert!(registry::validate_payload("syscall", 4).is_ok(), "4 is every backend's default");
    assert!(registry::validate_payload("lw", 1024).is_ok());
    let e = registry::validate_payload("syscall", 256).unwrap_err().to_string();
    assert!(e.contains("--payload-size 256") && e.contains("fixed 4-byte"), "{e}");
    let e = registry::validate_payload("ftrace", 5000).unwrap_err().to_string();
    assert!(e.contains("1 to 4000 bytes"), "{e}");
    assert!(registry::validate_payload("ftrace-raw", 2).is_err(), "the raw record's id needs 4 bytes");
    assert_eq!(registry::payload_note("lw"), "[payload 1..4096 B]");
    assert_eq!(registry::payload_note("strace"), "[payload 4 B fixed]");
}

#[test]
fn lw_copies_the_bytes_into_its_ring() {
    for n in [1usize, 13, 256, 1024, 4096] {
        let t = lw::Lw::new("lw", false, n as u32);
        pin0();
        t.thread_init(0).unwrap();
        // Several wraps of the 16 KiB ring.
        for i in 0..(t.buffer_events() as u32 * 3 + 7) {
            t.fire(i);
        }
        let (len, bytes) = t.last_record(0).expect("a record");
        assert_eq!(len as usize, n);
        assert_eq!(String::from_utf8(bytes).unwrap(), expected(n), "size {n}");
        assert_eq!(t.after_run()["events_per_cpu"][0], t.buffer_events() * 3 + 7);
    }
    // The default records the index, no variable-length record.
    let t = lw::Lw::new("lw", false, 4);
    assert!(t.last_record(0).is_none());
}

#[test]
fn ftrace_marker_records_n_bytes() {
    let test = "ftrace_marker_records_n_bytes";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace") {
        return;
    }
    for n in [1usize, 300, 4000] {
        let t = ftrace::Ftrace::new(ftrace::Mode::Marker, &opts(n as u32)).unwrap();
        t.fire(0);
        t.fire(1);
        let trace = std::fs::read_to_string(t.instance_path().join("trace")).unwrap();
        let marks: Vec<&str> =
            trace.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.rsplit(": ").next()).collect();
        assert_eq!(marks.len(), 2, "{trace}");
        for m in marks {
            assert_eq!(m, expected(n), "size {n}");
        }
    }
}

#[test]
fn ftrace_raw_records_n_bytes() {
    let test = "ftrace_raw_records_n_bytes";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ftrace-raw") {
        return;
    }
    let n = 300usize;
    let t = ftrace::Ftrace::new(ftrace::Mode::MarkerRaw, &opts(n as u32)).unwrap();
    t.fire(0);
    // raw_data prints its id (the first 4 bytes, little-endian, in hex) and the rest in hex,
    // padded with zeros to a multiple of 4: `# 64636261 buf: 65 66 ... 00`.
    let trace = std::fs::read_to_string(t.instance_path().join("trace")).unwrap();
    let line = trace.lines().find(|l| !l.starts_with('#') && l.contains(" buf:")).expect(&trace);
    assert!(line.contains("# 64636261 buf:"), "{line}");
    let hex: Vec<u8> =
        line.split("buf:").nth(1).expect(line).split_whitespace().map(|h| u8::from_str_radix(h, 16).unwrap()).collect();
    assert_eq!(hex[..n - 4], expected(n).as_bytes()[4..], "{line}");
    assert!(hex[n - 4..].iter().all(|b| *b == 0) && hex.len() < n, "{line}");
}

fn lttng_records(spec: &str, test: &str) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, spec) {
        return;
    }
    if lttng::which("babeltrace2").is_none() {
        println!("SKIP {test}: babeltrace2 not installed (apt-get install babeltrace2)");
        return;
    }
    let mode = if spec == "lttng-ust" { lttng::Mode::Tracepoint } else { lttng::Mode::Tracef };
    let _guard = parent_guard(spec, &opts(4)).expect("sessiond");
    for n in [5usize, 1024] {
        let t = lttng::Lttng::new(mode, &opts(n as u32)).expect("create");
        pin0();
        t.thread_init(0).unwrap();
        for i in 0..3 {
            t.fire(i);
        }
        let snap = t.read_snapshot().expect("snapshot");
        let cpu = snap.values().find(|c| c.blobs > 0).unwrap_or_else(|| panic!("no payload events: {snap:?}"));
        assert_eq!(cpu.blobs, 3, "{snap:?}");
        assert_eq!(cpu.last_blob_len, Some(n), "{snap:?}");
        assert!(cpu.blobs_match, "bytes differ from abc...: {snap:?}");
        assert!(cpu.sentinel_present, "the sentinel shares the channel");
    }
}

#[test]
fn lttng_ust_blob_records_n_bytes() {
    lttng_records("lttng-ust", "lttng_ust_blob_records_n_bytes");
}

#[test]
fn lttng_tracef_records_n_bytes() {
    lttng_records("lttng-tracef", "lttng_tracef_records_n_bytes");
}

#[test]
fn uprobe_fetches_n_bytes() {
    let test = "uprobe_fetches_n_bytes";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "uprobe") {
        return;
    }
    for n in [1usize, 256, 4000] {
        let t = tracebench_tracers::uprobe::Uprobe::new("uprobe", &opts(n as u32)).unwrap();
        t.fire(7);
        t.fire(8);
        let data = t.recorded_data();
        assert_eq!(data.len(), 2, "size {n}: {:?}", data.iter().map(|d| d.len()).collect::<Vec<_>>());
        assert!(
            data.iter().all(|d| *d == expected(n)),
            "size {n}: {:?}",
            data.iter().map(|d| d.len()).collect::<Vec<_>>()
        );
        assert_eq!(t.recorded_payloads(), vec![7, 8], "the index is still recorded");
    }
}

#[test]
fn perf_samples_grow_by_n_bytes() {
    let test = "perf_samples_grow_by_n_bytes";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "perf") {
        return;
    }
    // Bytes the ring holds per sample, at two payload sizes: the fetched string is in the raw
    // record, so the difference is the size difference (rounded to 8 by perf).
    let per_sample = |n: u32| -> f64 {
        let t = tracebench_tracers::perf::Perf::new("perf", &opts(n)).unwrap();
        pin0();
        t.thread_init(0).unwrap();
        for i in 0..100 {
            t.fire(i);
        }
        let a = t.after_run();
        let th = &a["per_thread"][0];
        th["bytes_written"].as_f64().unwrap() / th["hits"].as_f64().unwrap()
    };
    let (small, big) = (per_sample(8), per_sample(1032));
    assert!((big - small - 1024.0).abs() <= 8.0, "{small} -> {big} bytes per sample");
}

#[cfg(feature = "ebpf")]
#[test]
fn ebpf_copies_n_bytes() {
    let test = "ebpf_copies_n_bytes";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !available(test, "ebpf") {
        return;
    }
    pin0();
    for n in [1usize, 256, 4096] {
        let t = tracebench_tracers::ebpf::Ebpf::new("ebpf", &opts(n as u32)).unwrap();
        for i in 0..10 {
            t.fire(i);
        }
        let blobs = t.blobs().unwrap();
        let (head, bytes) = blobs.iter().find(|(h, _)| *h > 0).expect("events on some CPU");
        assert_eq!(*head, 10);
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), expected(n), "size {n}");
    }
}

/// ABI v2: the example ring plugin records through fire_bytes, sizes its warm-up with
/// buffer_events_for; a v1 plugin is refused any size but 4 and still loads at 4.
#[test]
fn plugin_abi_v2_takes_a_payload_and_v1_does_not() {
    // Built here (into the tests' own directory), not left to an earlier test binary.
    let ring = format!("plugin:{}", example_plugins::plugin("libring_plugin.so"));
    let lw = format!("plugin:{}", example_plugins::plugin("liblw_plugin.so"));
    let info = tracebench_tracers::plugin::validate_info(&ring).unwrap();
    assert_eq!((info.abi, info.max_payload), (2, 4096));
    assert!(registry::validate_payload(&ring, 1024).is_ok());
    let e = registry::validate_payload(&ring, 4097).unwrap_err().to_string();
    assert!(e.contains("1 to 4096 bytes"), "{e}");
    let t = registry::create(&ring, &opts(1000)).unwrap();
    pin0();
    t.thread_init(0).unwrap();
    // 64 KiB ring / (16 + 1000) bytes per record, plus one.
    assert_eq!(t.buffer_events(), 65536 / 1016 + 1);
    assert_eq!(t.config()["call"], "fire_bytes(ctx, data, 1000)");
    assert_eq!(t.config()["abi_version"], 2);
    for i in 0..200 {
        t.fire(i);
    }
    drop(t);
    let v1 = tracebench_tracers::plugin::validate_info(&lw).unwrap();
    assert_eq!((v1.abi, v1.max_payload), (1, 0));
    let e = registry::validate_payload(&lw, 256).unwrap_err().to_string();
    assert!(e.contains("ABI v1 plugin records the default 4-byte payload only"), "{e}");
    assert!(registry::validate_payload(&lw, 4).is_ok());
    let t = registry::create(&lw, &opts(4)).unwrap();
    assert_eq!(t.config()["abi_version"], 1);
}
