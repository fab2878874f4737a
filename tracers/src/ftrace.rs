//! ftrace backends, each in a private tracefs instance made for the run
//! (`instances/tracebench-<pid>`) so the global trace buffer and anyone else's settings are left
//! alone, and removed on drop.
//!
//! - `ftrace`: userspace writes the payload, in decimal, to the instance's `trace_marker`
//!   (a `print` event). ftrace's userspace entry point; the kernel-side cost of a system call is
//!   part of it.
//! - `ftrace-raw`: writes `{id: u32, payload: u32}` to `trace_marker_raw` (a `raw_data` event):
//!   no text at all.
//! - `ftrace-syscall`: an untraced-by-userspace `getppid()` with the instance's
//!   `syscalls:sys_enter_getppid`/`sys_exit_getppid` events enabled (survey section 7.3,
//!   Table 5 "Ftrace"): the `syscall` row is its baseline.
//! - `ftrace-raw-syscall`: the same with `raw_syscalls:sys_enter`/`sys_exit` (every system call
//!   of the machine is recorded, which is what tools such as `trace-cmd -e raw_syscalls` do).
//! - `ftrace-open`: `open()` of a name of `--payload-size` bytes with
//!   `syscalls:sys_{enter,exit}_openat` enabled (survey Figure 9; the name is in `open.rs`): the
//!   event records the name's pointer, not the string, and `open` is its baseline.
//!
//! With `--payload-size N` (N != 4), `ftrace` writes N bytes of the preallocated payload
//! (payload.rs) to trace_marker, and `ftrace-raw` writes N bytes to trace_marker_raw (whose first
//! 4 are the record's id): the kernel copies them from user memory into the ring (survey 7.3).
//!
//! Configuration follows survey section 6.2.3: 16 KiB per CPU (`buffer_size_kb=16`, the same as
//! LTTng's 2 x 8 KiB), overwrite mode, no reader during the run, and the global clock unless
//! `--ftrace-clock` says otherwise (the survey switched ftrace from its default local clock to the
//! global one so that every tracer samples time the same way).
use std::ffi::CString;
use std::path::{Path, PathBuf};

use crate::payload::Payload;
use crate::{Tracer, TracerError};

/// Largest `--payload-size` of a marker write: one event must fit in a ring-buffer page, and
/// Linux 6.18 with 4 KiB pages cuts a trace_marker write at 4054 bytes (measured), so stay below.
pub const MAX_MARKER: u32 = 4000;
pub const BUFFER_SIZE_KB: u64 = 16;
pub const DEFAULT_CLOCK: &str = "global";
/// `--ftrace-clock` values (name on the command line, name in `trace_clock`).
pub const CLOCKS: &[(&str, &str)] =
    &[("local", "local"), ("global", "global"), ("counter", "counter"), ("x86-tsc", "x86-tsc"), ("mono", "mono")];
/// Data bytes of a ring-buffer page (4096 minus the page header).
const RB_PAGE_DATA: u64 = 4080;
/// Id written at the start of each `trace_marker_raw` record.
pub const RAW_ID: u32 = 0x7462_0001;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Marker,
    MarkerRaw,
    Syscall,
    RawSyscall,
    OpenSyscall,
}

impl Mode {
    pub fn spec(self) -> &'static str {
        match self {
            Mode::Marker => "ftrace",
            Mode::MarkerRaw => "ftrace-raw",
            Mode::Syscall => "ftrace-syscall",
            Mode::RawSyscall => "ftrace-raw-syscall",
            Mode::OpenSyscall => "ftrace-open",
        }
    }
    /// Event directories (under `events/`) this mode enables.
    fn events(self) -> &'static [&'static str] {
        match self {
            Mode::Marker | Mode::MarkerRaw => &[],
            Mode::Syscall => &["syscalls/sys_enter_getppid", "syscalls/sys_exit_getppid"],
            Mode::RawSyscall => &["raw_syscalls/sys_enter", "raw_syscalls/sys_exit"],
            Mode::OpenSyscall => &["syscalls/sys_enter_openat", "syscalls/sys_exit_openat"],
        }
    }
    /// Fewest bytes one call adds to the buffer: ring-buffer header 4 + trace_entry 8 + the
    /// event's fields, rounded up to 4. Dividing the buffer by it bounds from above the calls
    /// needed to wrap it.
    fn min_bytes_per_call(self) -> u64 {
        match self {
            // print: ip 8 + "0\n\0".
            Mode::Marker => 4 + 8 + 8 + 4,
            // raw_data: id 4 + payload 4.
            Mode::MarkerRaw => 4 + 8 + 4 + 4,
            // sys_enter_getppid: nr 8 (no arguments); sys_exit_getppid: nr 8 + ret 8.
            Mode::Syscall => (4 + 8 + 8) + (4 + 8 + 16),
            // raw sys_enter: id 8 + args 6 x 8; raw sys_exit: id 8 + ret 8.
            Mode::RawSyscall => (4 + 8 + 56) + (4 + 8 + 16),
            // sys_enter_openat: nr 8 + dfd, filename (a pointer), flags, mode 4 x 8; exit as above.
            Mode::OpenSyscall => (4 + 8 + 40) + (4 + 8 + 16),
        }
    }
}

/// The tracefs mount point, if tracefs is mounted.
pub fn tracefs_root() -> Option<PathBuf> {
    crate::sys::tracefs_root_with("instances")
}

/// `Ok(())` when `mode` can run here, else (why, fix). No side effects.
pub fn availability(mode: Mode) -> Result<(), (String, String)> {
    let Some(root) = tracefs_root() else {
        return Err(crate::sys::tracefs_absent());
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(("making a tracefs instance needs root".into(), "run tracebench as root (sudo)".into()));
    }
    for ev in mode.events() {
        if !root.join("events").join(ev).is_dir() {
            return Err((
                format!("this kernel has no {ev} event"),
                "use a kernel built with CONFIG_FTRACE_SYSCALLS=y".into(),
            ));
        }
    }
    Ok(())
}

/// Checks a `--ftrace-clock` value; returns the `trace_clock` name.
pub fn check_clock(clock: &str) -> Result<&'static str, String> {
    CLOCKS.iter().find(|(n, _)| *n == clock).map(|(_, k)| *k).ok_or_else(|| {
        format!(
            "unknown --ftrace-clock '{clock}': use one of {}",
            CLOCKS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join("|")
        )
    })
}

/// Checks a `--ftrace-clock` value (default when `None`) by name and against the kernel's own
/// list (`trace_clock` at the tracefs root lists the same clocks as every instance's), before
/// anything runs; returns the `trace_clock` name. Without a readable list (no tracefs), only the
/// name is checked: such a machine cannot run the ftrace rows anyway (`availability`).
pub fn check_clock_here(clock: Option<&str>) -> Result<&'static str, String> {
    let clock = clock.unwrap_or(DEFAULT_CLOCK);
    let file = check_clock(clock)?;
    let Some(list) = tracefs_root().and_then(|r| std::fs::read_to_string(r.join("trace_clock")).ok()) else {
        return Ok(file);
    };
    let have: Vec<&str> = list.split_whitespace().map(|c| c.trim_matches(['[', ']'])).collect();
    if have.contains(&file) {
        Ok(file)
    } else {
        Err(format!(
            "--ftrace-clock {clock}: this kernel has no '{file}' trace clock (its trace_clock lists {}); pick one of {}",
            have.join(" "),
            CLOCKS.iter().filter(|(_, k)| have.contains(k)).map(|(n, _)| *n).collect::<Vec<_>>().join("|")
        ))
    }
}

/// A private tracefs instance; dropping it turns it off and removes it.
pub struct Instance {
    pub path: PathBuf,
}

impl Instance {
    pub fn create(root: &Path, name: &str) -> std::io::Result<Self> {
        let path = root.join("instances").join(name);
        std::fs::create_dir(&path)?;
        Ok(Instance { path })
    }
    pub fn write(&self, file: &str, value: &str) -> std::io::Result<()> {
        std::fs::write(self.path.join(file), value).map_err(|e| {
            std::io::Error::new(e.kind(), format!("write '{value}' to {}: {e}", self.path.join(file).display()))
        })
    }
    pub fn read(&self, file: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.path.join(file))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        let _ = self.write("events/enable", "0");
        // rmdir fails with EBUSY while a file of the instance is open; the owner closes its
        // files before dropping the instance, but retry briefly in case a reader lingers.
        for _ in 0..50 {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => return,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        if let Err(e) = std::fs::remove_dir(&self.path) {
            eprintln!("warning: could not remove tracefs instance {}: {e}", self.path.display());
        }
    }
}

/// Names of tracefs instances this tool made (`tracebench-*`), for leak checks.
pub fn leftover_instances() -> Vec<String> {
    let Some(root) = tracefs_root() else { return Vec::new() };
    std::fs::read_dir(root.join("instances"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("tracebench-"))
                .collect()
        })
        .unwrap_or_default()
}

pub struct Ftrace {
    mode: Mode,
    /// The marker file descriptor (-1 for the syscall modes). Closed before the instance goes.
    fd: libc::c_int,
    clock: String,
    buffer_size_kb: u64,
    subbuf_size_kb: Option<u64>,
    ncpu: usize,
    /// CPUs the measuring threads run on (from `thread_init`).
    measuring_cpus: std::sync::Mutex<Vec<usize>>,
    /// `ftrace-open`: the name it opens.
    open: Option<crate::open::OpenName>,
    /// `Some` with `--payload-size` other than 4 (marker modes): the bytes each write carries.
    payload: Option<Payload>,
    // Declared last: dropped after `fd` is closed in `Drop`.
    instance: Instance,
}

fn setup_err(mode: Mode, why: impl std::fmt::Display) -> TracerError {
    TracerError::Setup { name: mode.spec().into(), why: why.to_string() }
}

impl Ftrace {
    pub fn new(mode: Mode, opts: &crate::CreateOptions) -> Result<Self, TracerError> {
        if let Err((why, fix)) = availability(mode) {
            return Err(TracerError::Unavailable { name: mode.spec().into(), why, fix });
        }
        let clock = opts.ftrace_clock.clone().unwrap_or_else(|| DEFAULT_CLOCK.into());
        let clock_file = check_clock(&clock).map_err(|why| TracerError::BadOption { spec: mode.spec().into(), why })?;
        let root = tracefs_root().expect("checked by availability");
        // SAFETY: getpid has no preconditions.
        let name = format!("tracebench-{}", unsafe { libc::getpid() });
        let instance = Instance::create(&root, &name)
            .map_err(|e| setup_err(mode, format!("mkdir {}: {e}", root.join("instances").join(&name).display())))?;
        // From here on the instance is removed on any early return.
        let err = |e: std::io::Error| setup_err(mode, e);
        instance.write("tracing_on", "0").map_err(err)?;
        if !instance
            .read("trace_clock")
            .map_err(err)?
            .split_whitespace()
            .any(|c| c.trim_matches(['[', ']']) == clock_file)
        {
            return Err(TracerError::Unavailable {
                name: mode.spec().into(),
                why: format!("this kernel has no '{clock_file}' trace clock"),
                fix: "pick another --ftrace-clock".into(),
            });
        }
        instance.write("trace_clock", clock_file).map_err(err)?;
        instance.write("buffer_size_kb", &BUFFER_SIZE_KB.to_string()).map_err(err)?;
        instance.write("options/overwrite", "1").map_err(err)?;
        for ev in mode.events() {
            instance.write(&format!("events/{ev}/enable"), "1").map_err(err)?;
        }
        let buffer_size_kb = instance.read("buffer_size_kb").map_err(err)?.trim().parse().unwrap_or(BUFFER_SIZE_KB);
        let subbuf_size_kb = instance.read("buffer_subbuf_size_kb").ok().and_then(|s| s.trim().parse().ok());
        let fd = match mode {
            Mode::Marker | Mode::MarkerRaw => {
                let file = if mode == Mode::Marker { "trace_marker" } else { "trace_marker_raw" };
                let p = CString::new(instance.path.join(file).as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: valid path.
                let fd = unsafe { libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(setup_err(mode, format!("open {file}: {}", std::io::Error::last_os_error())));
                }
                fd
            }
            Mode::Syscall | Mode::RawSyscall | Mode::OpenSyscall => -1,
        };
        let open = match mode {
            Mode::OpenSyscall => Some(crate::open::OpenName::new(opts.payload_size).map_err(|e| setup_err(mode, e))?),
            _ => None,
        };
        // SAFETY: sysconf has no preconditions.
        let ncpu = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
        let me = Ftrace {
            mode,
            fd,
            clock,
            buffer_size_kb,
            subbuf_size_kb,
            ncpu,
            measuring_cpus: std::sync::Mutex::new(Vec::new()),
            open,
            payload: match mode {
                Mode::Marker | Mode::MarkerRaw => Payload::for_size(opts.payload_size),
                Mode::Syscall | Mode::RawSyscall | Mode::OpenSyscall => None,
            },
            instance,
        };
        me.instance.write("tracing_on", "1").map_err(err)?;
        Ok(me)
    }

    /// The instance's directory (for tests).
    pub fn instance_path(&self) -> &Path {
        &self.instance.path
    }

    /// Per-CPU `stats` of the instance: `{"0": {"entries": .., "overrun": .., ...}, ...}`.
    pub fn stats(&self) -> serde_json::Map<String, serde_json::Value> {
        (0..self.ncpu)
            .filter_map(|cpu| {
                let text = self.instance.read(&format!("per_cpu/cpu{cpu}/stats")).ok()?;
                let fields: serde_json::Map<String, serde_json::Value> = text
                    .lines()
                    .filter_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        let v = v.trim();
                        let val = v.parse::<u64>().map(Into::into).unwrap_or_else(|_| v.to_string().into());
                        Some((k.trim().replace(' ', "_"), val))
                    })
                    .collect();
                Some((cpu.to_string(), serde_json::Value::Object(fields)))
            })
            .collect()
    }
}

impl Drop for Ftrace {
    fn drop(&mut self) {
        if self.fd >= 0 {
            // SAFETY: fd was opened by us and is closed once.
            unsafe { libc::close(self.fd) };
        }
        // `instance` drops next: tracing off, events off, rmdir.
    }
}

/// Decimal digits of `v` into the end of `buf`; returns the start index.
#[inline(always)]
fn utoa(mut v: u32, buf: &mut [u8; 10]) -> usize {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return i;
        }
    }
}

impl Tracer for Ftrace {
    fn name(&self) -> &str {
        self.mode.spec()
    }
    fn version(&self) -> String {
        // ftrace is part of the kernel: its version is the kernel's.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: u is a valid out-pointer.
        unsafe { libc::uname(&mut u) };
        // SAFETY: uname NUL-terminates release.
        let rel = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
        format!("linux {}", rel.to_string_lossy())
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "instance": self.instance.path.display().to_string(),
            "call": match (self.mode, &self.payload) {
                (Mode::Marker, None) => "write(trace_marker, decimal payload)".to_string(),
                (Mode::MarkerRaw, None) => "write(trace_marker_raw, {u32 id, u32 payload})".to_string(),
                (Mode::Marker, Some(p)) => format!("write(trace_marker, {} payload bytes)", p.len()),
                (Mode::MarkerRaw, Some(p)) => {
                    format!("write(trace_marker_raw, {} payload bytes, the first 4 read as the id)", p.len())
                }
                (Mode::Syscall | Mode::RawSyscall, _) => "getppid()".to_string(),
                (Mode::OpenSyscall, _) => "openat(AT_FDCWD, name, O_RDONLY)".to_string(),
            },
            "open": self.open.as_ref().map(|o| o.config()),
            "events": self.mode.events(),
            "buffer_size_kb_requested": BUFFER_SIZE_KB,
            // What the kernel reports after rounding up to whole ring-buffer pages.
            "buffer_size_kb": self.buffer_size_kb,
            "buffer_subbuf_size_kb": self.subbuf_size_kb,
            // Data bytes of one ring-buffer page (4096 B less its 16 B header): the report divides
            // it by the event size (per-CPU stats bytes / entries) for the expected period of the
            // page-crossing path (survey section 7.1: every PAGE_SIZE / EVENT_SIZE events).
            "ring_page_data_bytes": RB_PAGE_DATA,
            "overwrite": true,
            "trace_clock": self.clock,
            "reader_during_run": false,
        })
    }
    fn buffer_events(&self) -> u64 {
        // ftrace rounds the size up to whole pages and keeps one extra reader page per CPU.
        let pages = (self.buffer_size_kb * 1024).div_ceil(RB_PAGE_DATA) + 1;
        pages * RB_PAGE_DATA / self.mode.min_bytes_per_call()
    }
    fn thread_init(&self, cpu: usize) -> Result<(), TracerError> {
        // SAFETY: sched_getcpu has no preconditions.
        let on = unsafe { libc::sched_getcpu() };
        self.measuring_cpus.lock().unwrap().push(if on >= 0 { on as usize } else { cpu });
        Ok(())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some(p) = &self.payload {
            // SAFETY: fd is open for writing; the payload is valid for its length.
            unsafe { libc::write(self.fd, p.as_ptr().cast(), p.len()) };
            return;
        }
        match self.mode {
            Mode::Marker => {
                let mut buf = [0u8; 10];
                let start = utoa(payload, &mut buf);
                // SAFETY: fd is open for writing; buf is valid for the length given.
                unsafe { libc::write(self.fd, buf[start..].as_ptr().cast(), buf.len() - start) };
            }
            Mode::MarkerRaw => {
                let rec: [u32; 2] = [RAW_ID, payload];
                // SAFETY: as above, 8 bytes.
                unsafe { libc::write(self.fd, rec.as_ptr().cast(), 8) };
            }
            Mode::Syscall | Mode::RawSyscall => {
                // SAFETY: getppid has no preconditions.
                core::hint::black_box(unsafe { libc::getppid() });
            }
            Mode::OpenSyscall => {
                if let Some(o) = &self.open {
                    o.call();
                }
            }
        }
    }
    fn after_run(&self) -> serde_json::Value {
        let stats = self.stats();
        let overrun_of = |cpu: &str| stats.get(cpu).and_then(|s| s.get("overrun")).and_then(|v| v.as_u64());
        let overrun: u64 = stats.keys().filter_map(|c| overrun_of(c)).sum();
        let cpus = self.measuring_cpus.lock().unwrap().clone();
        // Overwrite mode counts every event it overwrote in `overrun`: a measuring CPU whose count
        // is positive wrapped its buffer. Without thread_init (direct use), any CPU will do.
        let wrapped = if cpus.is_empty() {
            overrun > 0
        } else {
            cpus.iter().all(|c| overrun_of(&c.to_string()).unwrap_or(0) > 0)
        };
        serde_json::json!({
            "per_cpu_stats": stats,
            "measuring_cpus": cpus,
            "overrun_total": overrun,
            "buffer_wrapped": wrapped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utoa_digits() {
        let mut b = [0u8; 10];
        for v in [0u32, 7, 10, 4999, u32::MAX] {
            let s = utoa(v, &mut b);
            assert_eq!(std::str::from_utf8(&b[s..]).unwrap(), v.to_string());
        }
    }

    #[test]
    fn clocks() {
        assert_eq!(check_clock("global"), Ok("global"));
        assert_eq!(check_clock("x86-tsc"), Ok("x86-tsc"));
        assert!(check_clock("perf").unwrap_err().contains("local|global|counter|x86-tsc|mono"));
    }
}
