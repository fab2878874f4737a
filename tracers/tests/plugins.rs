//! Loads the example plugins of tracers/examples through the registry, as the measuring child
//! does, and checks every load error. The crash kinds (segfault, abort, hang in fire) need the
//! runner's child processes: they are tested end to end in harness/tests/plugin.rs.

use tracebench_tracers::{create, validate, CreateOptions, Tracer, TracerError};

#[path = "support/example_plugins.rs"]
mod example_plugins;
use example_plugins::plugin;

fn opts() -> CreateOptions {
    CreateOptions { tsc_hz: 2.5e9, ..Default::default() }
}

/// Creates, runs `n` events (payloads 0..n) on this thread as CPU slot 0, and returns the tracer
/// with its name, version and buffer size.
fn run(spec: &str, n: u32) -> (Box<dyn Tracer>, String, String, u64) {
    validate(spec).unwrap_or_else(|e| panic!("validate {spec}: {e}"));
    let t = create(spec, &opts()).unwrap_or_else(|e| panic!("create {spec}: {e}"));
    t.thread_init(0).unwrap();
    for i in 0..n {
        t.fire(i);
    }
    let (name, version, events) = (t.name().to_string(), t.version(), t.buffer_events());
    (t, name, version, events)
}

// What the example plugins recorded, read from their own memory: the ABI has no read-back call,
// so the layouts of tracers/examples/{lw,ring}_plugin.c and rust-plugin/src/lib.rs are mirrored
// here. The registry's `Plugin` is #[repr(C)] with the plugin's ctx as its first word.

/// The ctx that the plugin's init returned to the registry.
fn ctx_of(t: &dyn Tracer) -> *const u8 {
    // SAFETY: `create("plugin:...")` boxes a `tracebench_tracers::plugin::Plugin`, #[repr(C)] with
    // `ctx: *mut c_void` first.
    unsafe { *(t as *const dyn Tracer as *const *const u8) }
}

#[repr(C)]
struct LwEvent {
    id: u32,
    payload: u32,
    ts: u64,
}
#[repr(C, align(64))]
struct LwRing {
    head: u64,
    _pad: [u8; 56],
    events: [LwEvent; 1024],
}
#[repr(C)]
struct LwCtx {
    ncpu: usize,
    rings: *const LwRing,
}

#[repr(C)]
struct RingRecord {
    ts: u64,
    payload: u32,
    seq: u32,
}
#[repr(C, align(64))]
struct ThreadRing {
    head: u64,
    rec: *const RingRecord,
    _bhead: u64,
    _bytes: *const u8,
}
#[repr(C)]
struct RingCtx {
    events: u64,
    _tsc: i32,
    rings: [ThreadRing; 1024],
}

#[repr(C)]
struct RustRecord {
    ts: u64,
    payload: u32,
    _pad: u32,
}
#[repr(C, align(64))]
struct RustRing {
    head: u64,
    records: *const RustRecord,
    records_len: usize,
}
#[repr(C)]
struct RustCtx {
    mask: u64,
    rings: *const RustRing,
    rings_len: usize,
}

/// What one CPU slot's ring holds: how many events were written, and the newest ones, oldest
/// first, as (payload, timestamp).
struct Recorded {
    head: u64,
    newest: Vec<(u32, u64)>,
}

/// Reads slot `cpu` of the example plugin `name`'s rings (up to its 64 newest records).
fn recorded(t: &dyn Tracer, cpu: usize) -> Recorded {
    let ctx = ctx_of(t);
    // SAFETY: the layouts mirror the example plugins' own (see above); `cpu` was thread_init'ed.
    unsafe {
        let (head, mask, at): (u64, u64, Box<dyn Fn(u64) -> (u32, u64)>) = match t.name() {
            "lw-plugin" => {
                let c = &*(ctx as *const LwCtx);
                assert!(cpu < c.ncpu);
                let r = &*c.rings.add(cpu);
                (r.head, 1023, Box::new(move |i| (r.events[i as usize].payload, r.events[i as usize].ts)))
            }
            "ring-plugin" => {
                let c = &*(ctx as *const RingCtx);
                let r = &c.rings[cpu];
                let rec = r.rec;
                (r.head, c.events - 1, Box::new(move |i| ((*rec.add(i as usize)).payload, (*rec.add(i as usize)).ts)))
            }
            "rust-plugin" => {
                let c = &*(ctx as *const RustCtx);
                assert!(cpu < c.rings_len);
                let r = &*c.rings.add(cpu);
                assert_eq!(r.records_len as u64, c.mask + 1);
                let rec = r.records;
                (r.head, c.mask, Box::new(move |i| ((*rec.add(i as usize)).payload, (*rec.add(i as usize)).ts)))
            }
            other => panic!("no mirrored layout for {other}"),
        };
        let k = head.min(mask + 1).min(64);
        Recorded { head, newest: (head - k..head).map(|i| at(i & mask)).collect() }
    }
}

/// Slot `cpu` holds exactly `n` events, the newest carrying payloads up to n-1 in order, with
/// timestamps that never go back.
fn assert_recorded(t: &dyn Tracer, cpu: usize, n: u32) {
    let r = recorded(t, cpu);
    assert_eq!(r.head, n as u64, "{}: events written on slot {cpu}", t.name());
    let payloads: Vec<u32> = r.newest.iter().map(|e| e.0).collect();
    let want: Vec<u32> = (n - payloads.len() as u32..n).collect();
    assert!(!payloads.is_empty());
    assert_eq!(payloads, want, "{}: newest payloads on slot {cpu}", t.name());
    assert!(r.newest.windows(2).all(|w| w[0].1 <= w[1].1 && w[1].1 > 0), "{}: timestamps", t.name());
}

#[test]
fn c_ring_plugin_runs_with_and_without_args() {
    let p = plugin("libring_plugin.so");
    let (t, name, version, events) = run(&format!("plugin:{p}"), 10_000);
    assert_eq!((name.as_str(), version.as_str(), events), ("ring-plugin", "1.0", 4096));
    assert_recorded(&*t, 0, 10_000);
    let config = t.config();
    assert_eq!(config["kind"], "plugin");
    assert!(config["path"].as_str().unwrap().ends_with("libring_plugin.so"));
    let (t, _, _, events) = run(&format!("plugin:{p}:events=256+clock=tsc"), 1000);
    assert_eq!(events, 256);
    assert_recorded(&*t, 0, 1000);
    assert_eq!(t.config()["args"], "events=256+clock=tsc");
}

#[test]
fn lw_plugin_records_every_event() {
    let p = plugin("liblw_plugin.so");
    let (t, name, _, events) = run(&format!("plugin:{p}"), 5000);
    assert_eq!((name.as_str(), events), ("lw-plugin", 1024));
    assert_recorded(&*t, 0, 5000);
}

#[test]
fn rust_cdylib_plugin_records_every_event() {
    let p = plugin("librust_plugin.so");
    let (t, name, version, events) = run(&format!("plugin:{p}:events=512"), 5000);
    assert_eq!((name.as_str(), version.as_str(), events), ("rust-plugin", "0.1.0", 512));
    assert_recorded(&*t, 0, 5000);
}

#[test]
fn plugin_records_on_several_threads_each_in_its_own_ring() {
    let p = plugin("libring_plugin.so");
    let t = create(&format!("plugin:{p}"), &opts()).unwrap();
    std::thread::scope(|s| {
        for (cpu, n) in [(0usize, 10_000u32), (1, 7_000)] {
            let t = &t;
            s.spawn(move || {
                t.thread_init(cpu).unwrap();
                for i in 0..n {
                    t.fire(i);
                }
            });
        }
    });
    assert_recorded(&*t, 0, 10_000);
    assert_recorded(&*t, 1, 7_000);
}

fn load_error(spec: &str) -> String {
    match create(spec, &opts()) {
        Ok(_) => panic!("{spec} loaded"),
        Err(TracerError::Plugin(msg)) => msg,
        Err(e) => panic!("{spec}: not a plugin error: {e}"),
    }
}

#[test]
fn bad_plugin_args_fail_init_with_the_plugins_message() {
    let p = plugin("libring_plugin.so");
    let e = load_error(&format!("plugin:{p}:events=1000"));
    assert!(e.contains("libring_plugin.so") && e.contains("init failed") && e.contains("power of two"), "{e}");
    let e = load_error(&format!("plugin:{}:x", plugin("librust_plugin.so")));
    assert!(e.contains("rust-plugin") && e.contains("unknown option 'x'"), "{e}");
}

#[test]
fn wrong_abi_version_is_refused_by_validate_and_create() {
    let spec = format!("plugin:{}", plugin("broken-abi.so"));
    for e in [validate(&spec).unwrap_err().to_string(), load_error(&spec)] {
        assert!(e.contains("broken-abi.so") && e.contains("ABI version 42") && e.contains("speaks 1"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn missing_symbol_is_refused_by_validate_and_create() {
    let spec = format!("plugin:{}", plugin("broken-nosym.so"));
    for e in [validate(&spec).unwrap_err().to_string(), load_error(&spec)] {
        assert!(e.contains("broken-nosym.so") && e.contains("missing symbol `tracebench_tracer_v1`"), "{e}");
    }
}

#[test]
fn failing_init_passes_validate_but_not_create() {
    // validate must not call init: the broken-init plugin only fails in init.
    let spec = format!("plugin:{}", plugin("broken-init.so"));
    validate(&spec).unwrap();
    let e = load_error(&spec);
    assert!(e.contains("broken-init.so") && e.contains("init failed") && e.contains("/dev/imaginary"), "{e}");
}

#[test]
fn missing_file_is_refused() {
    let e =
        validate(&format!("plugin:{}/libdoesnotexist.so", example_plugins::dir().display())).unwrap_err().to_string();
    assert!(e.contains("libdoesnotexist.so") && e.contains("no such file"), "{e}");
}
