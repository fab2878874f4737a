//! System helpers several backends share (and the harness uses): tracefs, tool lookup, the
//! kernel release, signal names. A helper two backends need lives here, not in one of them.
use std::io::Write;
use std::path::{Path, PathBuf};

/// The tracefs mount point that has `entry` (e.g. `instances`, `uprobe_events`), if any.
pub fn tracefs_root_with(entry: &str) -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].iter().map(PathBuf::from).find(|p| p.join(entry).exists())
}

/// Why no tracefs mount point could be found, and the fix: not mounted, or mounted but closed to
/// this user (tracefs is root's, mode 0700, so to a user it looks absent).
pub fn tracefs_absent() -> (String, String) {
    let mounted = std::fs::read_to_string("/proc/mounts").is_ok_and(|m| m.contains(" tracefs "));
    // SAFETY: geteuid has no preconditions.
    if mounted && unsafe { libc::geteuid() } != 0 {
        ("tracefs is mounted but only root may use it".into(), "run tracebench as root (sudo)".into())
    } else {
        ("tracefs is not mounted".into(), "mount -t tracefs nodev /sys/kernel/tracing (or run scripts/setup.sh)".into())
    }
}

/// Writes `s` to a tracefs control file, appending (no truncation: `uprobe_events` opened with
/// O_TRUNC would delete every uprobe on the system).
pub fn tracefs_write(path: &Path, s: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(s.as_bytes())
}

/// The running kernel's release, the version of every in-kernel tracer.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// `bin` found in PATH.
pub fn which(bin: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(bin)).find(|p| p.is_file())
}

/// `ldconfig -p`, read once per process.
fn ld_cache() -> &'static str {
    static CACHE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| {
        ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]
            .iter()
            .find_map(|c| std::process::Command::new(c).arg("-p").output().ok())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    })
}

/// Where the dynamic linker's cache says the shared object `lib` (a file name: `libvt.so`,
/// `libopen-trace-format2.so.10`) is, if it lists it. No side effects (nothing is loaded).
pub fn ld_cache_path(lib: &str) -> Option<PathBuf> {
    // "\tlibvt.so (libc6,x86-64) => /opt/vt/lib/libvt.so"
    ld_cache().lines().find_map(|l| {
        let (left, right) = l.split_once(" => ")?;
        (left.trim().split(' ').next() == Some(lib)).then(|| PathBuf::from(right.trim()))
    })
}

/// `SIGSEGV (11)`-style name of a signal.
pub fn signal_name(sig: libc::c_int) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGPIPE => "SIGPIPE",
        _ => "signal",
    };
    format!("{name} ({sig})")
}

/// The id of tracepoint `subsys:event`, read from tracefs (perf-event2's `with_name` looks under
/// /sys/kernel/debug, which is not mounted on many machines).
pub fn tracepoint_id(spec: &str) -> Option<u64> {
    let (sys, ev) = spec.split_once(':')?;
    if sys.contains('/') || ev.contains('/') || sys.contains("..") || ev.contains("..") {
        return None;
    }
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|root| std::fs::read_to_string(format!("{root}/events/{sys}/{ev}/id")).ok())
        .and_then(|s| s.trim().parse().ok())
}

/// The pid in a name this tool gives tracefs objects: `tracebench-<pid>[-N]` (ftrace and uprobe
/// instances), `tracebench-k<pid>` (the kernel path's instance), `tracebench_<pid>` (uprobe
/// event groups).
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("tracebench-").or_else(|| name.strip_prefix("tracebench_"))?;
    let rest = rest.strip_prefix('k').unwrap_or(rest);
    rest.split('-').next()?.parse().ok()
}

/// Removes the tracefs instances and uprobe events that a run killed with SIGKILL (no `Drop`
/// ran) left: those named after a process that no longer exists. Instances go first, as an
/// enabled event cannot be removed. Returns what it removed, one line each.
pub fn remove_stale_tracefs(root: &Path) -> Vec<String> {
    let dead = |name: &str| owner_pid(name).is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
    let mut removed = Vec::new();
    if let Ok(rd) = std::fs::read_dir(root.join("instances")) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if dead(&n) {
                let _ = std::fs::write(e.path().join("tracing_on"), "0");
                if std::fs::remove_dir(e.path()).is_ok() {
                    removed.push(format!("tracefs instance {n}"));
                }
            }
        }
    }
    let defs = std::fs::read_to_string(root.join("uprobe_events")).unwrap_or_default();
    for l in defs.lines() {
        // "p:tracebench_123/site /path:0x..."
        let Some(name) = l.split_whitespace().next().and_then(|h| h.split_once(':')).map(|(_, n)| n) else {
            continue;
        };
        if name.split_once('/').is_some_and(|(group, _)| dead(group))
            && tracefs_write(&root.join("uprobe_events"), &format!("-:{name}\n")).is_ok()
        {
            removed.push(format!("uprobe event {name}"));
        }
    }
    removed
}

#[cfg(test)]
mod stale_tests {
    #[test]
    fn owner_pids_of_our_names_only() {
        use super::owner_pid;
        assert_eq!(owner_pid("tracebench-123"), Some(123));
        assert_eq!(owner_pid("tracebench-123-2"), Some(123));
        assert_eq!(owner_pid("tracebench-k77"), Some(77));
        assert_eq!(owner_pid("tracebench_55"), Some(55));
        assert_eq!(owner_pid("tracebench-gate"), None);
        assert_eq!(owner_pid("someone-else-12"), None);
    }
}
