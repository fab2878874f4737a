//! A tracebench plugin in Rust: a per-CPU ring of `{ts, payload}` records timestamped with
//! `rdtsc`, the cheapest timestamp a userspace tracer can take on x86-64.
//!
//! It depends on no tracebench crate: only on the C ABI documented in
//! `tracers/include/tracebench.h`, mirrored below. Build with
//! `cargo build --release --manifest-path tracers/examples/rust-plugin/Cargo.toml`
//! (or `make plugins`) and run with
//! `tracebench run --tracer plugin:target/plugins/librust_plugin.so[:events=N],lw`.
//!
//! `panic = "abort"`: a panic must never unwind across the C ABI into the harness.
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `TRACEBENCH_ABI_VERSION`.
const ABI_VERSION: u32 = 1;

/// `struct tracebench_tracer_v1`, field for field.
#[repr(C)]
pub struct TracerV1 {
    abi_version: u32,
    name: *const c_char,
    version: *const c_char,
    init: unsafe extern "C" fn(*const c_char, *mut *mut c_void, *mut c_char, usize) -> c_int,
    buffer_events: unsafe extern "C" fn(*mut c_void) -> u64,
    thread_init: Option<unsafe extern "C" fn(*mut c_void, c_uint) -> c_int>,
    fire: unsafe extern "C" fn(*mut c_void, u32),
    fini: unsafe extern "C" fn(*mut c_void),
}

// SAFETY: the struct is immutable and its pointers point to static data and functions.
unsafe impl Sync for TracerV1 {}

/// The one symbol tracebench looks for.
#[no_mangle]
pub static tracebench_tracer_v1: TracerV1 = TracerV1 {
    abi_version: ABI_VERSION,
    name: c"rust-plugin".as_ptr(),
    version: c"0.1.0".as_ptr(),
    init,
    buffer_events,
    thread_init: Some(thread_init),
    fire,
    fini,
};

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Record {
    ts: u64,
    payload: u32,
    _pad: u32,
}

/// One CPU's ring; aligned so that two CPUs' heads never share a cache line.
#[repr(C, align(64))]
struct Ring {
    head: UnsafeCell<u64>,
    records: UnsafeCell<Box<[Record]>>,
}

// repr(C): tracers/tests/plugins.rs reads the rings to check that fire() recorded.
#[repr(C)]
struct Ctx {
    mask: u64,
    rings: Box<[Ring]>,
}

thread_local! {
    // Index of this thread's ring, set in thread_init on the pinned thread.
    static SLOT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn write_err(err: *mut c_char, errlen: usize, msg: &str) {
    if err.is_null() || errlen == 0 {
        return;
    }
    let n = msg.len().min(errlen - 1);
    // SAFETY: err has errlen bytes (ABI contract); we write n + 1 <= errlen.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), err.cast::<u8>(), n);
        *err.add(n) = 0;
    }
}

fn parse(args: &str) -> Result<u64, String> {
    let mut events = 2048u64;
    for opt in args.split('+').filter(|s| !s.is_empty()) {
        match opt.split_once('=') {
            Some(("events", v)) => {
                events = v.parse().map_err(|_| format!("events must be a number, got '{v}'"))?;
                if events < 2 || !events.is_power_of_two() {
                    return Err(format!("events must be a power of two >= 2, got {events}"));
                }
            }
            _ => return Err(format!("unknown option '{opt}' (known: events=N)")),
        }
    }
    Ok(events)
}

unsafe extern "C" fn init(args: *const c_char, ctx: *mut *mut c_void, err: *mut c_char, errlen: usize) -> c_int {
    let args = if args.is_null() { "" } else { CStr::from_ptr(args).to_str().unwrap_or("\u{fffd}") };
    let events = match parse(args) {
        Ok(e) => e,
        Err(msg) => {
            write_err(err, errlen, &msg);
            return -1;
        }
    };
    let ncpu = libc_sysconf_nprocessors().max(1);
    let rings = (0..ncpu)
        .map(|_| Ring {
            head: UnsafeCell::new(0),
            records: UnsafeCell::new(vec![Record::default(); events as usize].into_boxed_slice()),
        })
        .collect();
    *ctx = Box::into_raw(Box::new(Ctx { mask: events - 1, rings })).cast();
    0
}

/// Number of configured CPUs, from /sys (no libc crate: this example has no dependencies).
fn libc_sysconf_nprocessors() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| s.trim().rsplit(['-', ',']).next().and_then(|n| n.parse::<usize>().ok()))
        .map(|last| last + 1)
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

unsafe extern "C" fn buffer_events(ctx: *mut c_void) -> u64 {
    (*ctx.cast::<Ctx>()).mask + 1
}

unsafe extern "C" fn thread_init(ctx: *mut c_void, cpu: c_uint) -> c_int {
    let ctx = &*ctx.cast::<Ctx>();
    let cpu = cpu as usize;
    if cpu >= ctx.rings.len() {
        return -1;
    }
    SLOT.with(|s| s.set(cpu));
    // Touch the ring on the pinned thread so that no page fault lands in the timed window.
    for r in (*ctx.rings[cpu].records.get()).iter_mut() {
        std::ptr::write_volatile(r, Record::default());
    }
    0
}

unsafe extern "C" fn fire(ctx: *mut c_void, payload: u32) {
    let ctx = &*ctx.cast::<Ctx>();
    let ts = core::arch::x86_64::_rdtsc();
    let ring = ctx.rings.get_unchecked(SLOT.with(|s| s.get()));
    let head = &mut *ring.head.get();
    let records = &mut *ring.records.get();
    *records.get_unchecked_mut((*head & ctx.mask) as usize) = Record { ts, payload, _pad: 0 };
    *head += 1;
}

unsafe extern "C" fn fini(ctx: *mut c_void) {
    drop(Box::from_raw(ctx.cast::<Ctx>()));
}
