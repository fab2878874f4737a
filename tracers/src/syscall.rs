//! System-call rows (survey section 7.3, Table 5). The survey timed an empty `ioctl()` into a
//! module of its own; no module can be loaded here, so the cheapest real system call,
//! `getppid()`, plays that part (glibc does not cache it, so every call enters the kernel).
//!
//! - `syscall`: the untraced `getppid()`, the baseline row ("None" in Table 5).
//! - `strace`: the same call while the measuring process runs under
//!   `strace -f -qq -o /dev/null` (the harness starts the child under [`STRACE_PREFIX`] through
//!   `launch_prefix`). Every call then stops the process twice (entry and exit) and wakes strace,
//!   so its cost depends on how quickly strace runs on the other core: measured here about 17 us
//!   when that core is busy and 140 us when it idles in a deep sleep.
//!
//! `ftrace-syscall` (the same call with syscall events enabled) is in `ftrace.rs`.
use crate::{Tracer, TracerError};

/// The command the `strace` row's measuring child is started under. `-o /dev/null` as in the
/// survey, so no terminal or file writing is timed; `-f` so every measuring thread is traced.
pub const STRACE_PREFIX: &[&str] = &["strace", "-f", "-qq", "-o", "/dev/null"];
/// The `strace-open` row's: `-s 4096` so that strace reads and formats the whole file name (up to
/// PATH_MAX), as a tracer that resolves the string does (survey section 7.3, Figure 9); its default
/// `-s 32` would stop at 32 characters and hide the growth with the length.
pub const STRACE_OPEN_PREFIX: &[&str] = &["strace", "-f", "-qq", "-s", "4096", "-o", "/dev/null"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Plain,
    Strace,
}

pub struct Syscall {
    mode: Mode,
    strace_version: String,
}

/// The pid of whatever ptraces this process (0 if none).
pub fn tracer_pid() -> i32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("TracerPid:").map(|v| v.trim().parse().unwrap_or(0))))
        .unwrap_or(0)
}

pub fn strace_availability() -> Result<(), (String, String)> {
    match crate::lttng::which("strace") {
        Some(_) => Ok(()),
        None => Err(("strace not installed".into(), "scripts/setup.sh or apt-get install strace".into())),
    }
}

fn read_strace_version() -> String {
    std::process::Command::new("strace")
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .unwrap_or_default()
}

/// Checks that this process runs under strace (the harness starts the measuring child under
/// [`STRACE_PREFIX`]), and returns strace's version. Refuses to time an untraced call under a
/// strace label. Shared by `strace` and `strace-open`.
pub fn require_strace(row: &str) -> Result<String, TracerError> {
    if let Err((why, fix)) = strace_availability() {
        return Err(TracerError::Unavailable { name: row.into(), why, fix });
    }
    let pid = tracer_pid();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if pid == 0 || comm.trim() != "strace" {
        return Err(TracerError::Setup {
            name: row.into(),
            why: format!(
                "this process is not running under strace (TracerPid {pid}); the harness must start it under `{}`",
                STRACE_PREFIX.join(" ")
            ),
        });
    }
    Ok(read_strace_version())
}

impl Syscall {
    pub fn new(mode: Mode) -> Result<Self, TracerError> {
        let strace_version = if mode == Mode::Strace { require_strace("strace")? } else { String::new() };
        Ok(Syscall { mode, strace_version })
    }
}

impl Tracer for Syscall {
    fn name(&self) -> &str {
        match self.mode {
            Mode::Plain => "syscall",
            Mode::Strace => "strace",
        }
    }
    fn version(&self) -> String {
        match self.mode {
            Mode::Plain => "getppid(2)".into(),
            Mode::Strace => self.strace_version.clone(),
        }
    }
    fn config(&self) -> serde_json::Value {
        match self.mode {
            Mode::Plain => serde_json::json!({"call": "getppid()", "traced": false}),
            Mode::Strace => serde_json::json!({
                "call": "getppid()",
                "command": STRACE_PREFIX.join(" "),
                "tracer_pid": tracer_pid(),
                "intrinsic_disturbances": [crate::reason::Reason::ContextSwitch.name()],
                "disturbance_detector": "off for this row: its per-thread perf events would add 5-10 us \
                                         to each ptrace stop; no iteration is discarded",
                "note": "the survey also passed -t; cost depends on the load of the core strace runs on",
            }),
        }
    }
    fn intrinsic_disturbances(&self) -> &'static [crate::reason::Reason] {
        match self.mode {
            Mode::Plain => &[],
            // Each traced system call stops the process twice (ptrace entry and exit stops) and
            // switches to strace: that is what strace costs (survey section 7.3), not noise.
            Mode::Strace => &[crate::reason::Reason::ContextSwitch],
        }
    }
    #[inline(never)]
    fn fire(&self, _payload: u32) {
        // SAFETY: getppid has no preconditions.
        core::hint::black_box(unsafe { libc::getppid() });
    }
}
