//! Pinning a measuring thread to its core (survey section 6.2.3: each thread runs pinned, so a
//! migration never lands inside a window). Shared by the timed cell, the stepped cell and the
//! clock's calibration.
use crate::error::Error;

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: usize) -> Result<(), Error> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds for cpu < CPU_SETSIZE.
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(Error::Pin { cpu, why: "CPU number too large".into() });
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(Error::Pin { cpu, why: std::io::Error::last_os_error().to_string() });
        }
        // Let the scheduler move us now, not inside the first window.
        libc::sched_yield();
    }
    Ok(())
}
