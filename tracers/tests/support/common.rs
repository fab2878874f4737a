//! What the tracer tests share: availability with a printed skip, and pinning like the harness.
use tracebench_tracers::known;

/// Whether `name` can run here; prints `SKIP <test>: <why> (fix: ...)` when not.
pub fn available(test: &str, name: &str) -> bool {
    let info = known().into_iter().find(|i| i.name == name).expect("registered");
    match info.availability {
        Ok(()) => true,
        Err((why, fix)) => {
            println!("SKIP {test}: {name} unavailable: {why} (fix: {fix})");
            false
        }
    }
}

/// Pins the calling thread to CPU 0, as the harness pins its measuring threads.
#[allow(dead_code)]
pub fn pin0() {
    // SAFETY: a zeroed cpu_set_t with one bit set, for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
