//! Processes tracebench started and must stop, recorded where a later run finds them.
//!
//! A backend that starts a daemon for a run (LTTng's session daemon) stops it on drop. A run killed
//! with SIGKILL drops nothing, and the daemon would then look like someone else's to every later
//! run, which never stops what it did not start. So the run records what it started in a state
//! file (`/run/tracebench/NAME.json` as root, else `$XDG_RUNTIME_DIR/tracebench/NAME.json`, else
//! `/tmp/tracebench-UID/NAME.json`): the daemon's pid and start time, and the owning run's pid
//! and start time. The next run reaps a daemon whose owner is gone, as `uprobe_event::remove_stale`
//! does for tracefs instances and uprobe events of dead runs.
//!
//! A pid alone is not an identity: pids are reused. A process is named by its pid and its start
//! time (field 22 of `/proc/PID/stat`, clock ticks since boot), which no later process with the
//! same pid shares. A daemon that does not match its record exactly (another process now has
//! that pid, or a user's own daemon) is never signalled.
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A process, named so that a reused pid does not match: pid and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcId {
    pub pid: i32,
    /// `/proc/PID/stat` field 22: when it started, in clock ticks since boot.
    pub start: u64,
}

/// Field 22 (starttime) of `/proc/PID/stat` and whether the process is a zombie. The fields are
/// counted after the command name's closing parenthesis (the name may hold spaces or parentheses).
fn stat(pid: i32) -> Option<(u64, bool)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = s.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): field N is fields[N - 3].
    Some((fields.get(19)?.parse().ok()?, fields.first() == Some(&"Z")))
}

/// The parent pid (field 4) of `pid`.
fn parent(pid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

fn comm(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim().to_string())
}

impl ProcId {
    /// `pid` as it is now, if it exists.
    pub fn of(pid: i32) -> Option<ProcId> {
        stat(pid).map(|(start, _)| ProcId { pid, start })
    }

    /// This process.
    pub fn me() -> Option<ProcId> {
        ProcId::of(std::process::id() as i32)
    }

    /// Whether this very process still runs (same pid, same start time, not a zombie).
    pub fn alive(&self) -> bool {
        matches!(stat(self.pid), Some((start, zombie)) if start == self.start && !zombie)
    }

    /// Sends `sig` to this very process, never to a later one that reused its pid: the pid is
    /// pinned with `pidfd_open` first, and the start time checked after it is pinned (a pidfd
    /// refers to one process for its whole life), then signalled through the pidfd. False when
    /// the process is gone or is no longer this one.
    pub fn signal(&self, sig: libc::c_int) -> bool {
        // SAFETY: plain syscalls on integers; the fd is closed below.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) } as libc::c_int;
        if fd < 0 {
            return false;
        }
        let sent = self.alive()
            // SAFETY: fd is a pidfd we own; a null siginfo means "as kill() would".
            && unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd, sig, std::ptr::null::<libc::siginfo_t>(), 0) } == 0;
        // SAFETY: our own fd.
        unsafe { libc::close(fd) };
        sent
    }

    fn to_json(self) -> serde_json::Value {
        serde_json::json!({ "pid": self.pid, "start": self.start })
    }

    fn from_json(v: &serde_json::Value) -> Option<ProcId> {
        Some(ProcId { pid: i32::try_from(v.get("pid")?.as_i64()?).ok()?, start: v.get("start")?.as_u64()? })
    }

    /// Its live children called `name` (e.g. the consumer daemons of a session daemon).
    pub fn children_named(&self, name: &str) -> Vec<ProcId> {
        let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
        rd.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&p| parent(p) == Some(self.pid) && comm(p).as_deref() == Some(name))
            .filter_map(ProcId::of)
            .collect()
    }
}

/// What a run started: the record of one state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The process's command name (`/proc/PID/comm`), checked again before it is signalled.
    pub comm: String,
    pub process: ProcId,
    /// The run that started it and stops it on drop.
    pub owner: ProcId,
}

/// Where the state files live: `/run/tracebench` as root, else `$XDG_RUNTIME_DIR/tracebench`,
/// else `/tmp/tracebench-UID`; with `create`, made (mode 0700) if missing. `None` when it is not
/// a private directory of this user (not a symlink someone planted in /tmp, not writable by
/// others), or does not exist and `create` is false: a run that records nothing creates nothing.
pub fn state_dir(create: bool) -> Option<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let dir = if uid == 0 {
        PathBuf::from("/run/tracebench")
    } else if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").filter(|x| !x.is_empty()) {
        PathBuf::from(x).join("tracebench")
    } else {
        // A fixed name, so that a later run finds what a killed one recorded; safe because it is
        // used only if it is a real directory of this user that nobody else can write (below):
        // one planted by someone else makes the run record nothing, never write through it.
        std::env::temp_dir().join(format!("tracebench-{uid}"))
    };
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    if create {
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    }
    let m = std::fs::symlink_metadata(&dir).ok()?;
    (m.is_dir() && m.uid() == uid && m.mode() & 0o022 == 0).then_some(dir)
}

/// A new private working directory (mkdtemp: a random name, created exclusively, mode 0700)
/// inside [`state_dir`], removed when the handle drops. Nothing a run writes as root goes under
/// a name another user could predict and plant first (a symlink to a victim, a directory of
/// theirs); inside a 0700 directory nobody else can plant anything. The name starts with
/// `PREFIX-PID-`, so a later run can remove what a killed run left ([`stale_workdirs`]).
pub fn private_workdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let dir = state_dir(true).ok_or_else(|| {
        std::io::Error::other("no private state directory (/run/tracebench, $XDG_RUNTIME_DIR or /tmp/tracebench-UID)")
    })?;
    tempfile::Builder::new().prefix(&format!("{prefix}-{}-", std::process::id())).tempdir_in(dir)
}

/// Working directories of [`private_workdir`] named `PREFIX-PID-*` whose process is gone.
pub fn stale_workdirs(prefix: &str) -> Vec<PathBuf> {
    let Some(dir) = state_dir(false) else { return Vec::new() };
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')).and_then(|r| r.split('-').next());
            pid.and_then(|p| p.parse::<i32>().ok()).is_some_and(|p| ProcId::of(p).is_none_or(|q| !q.alive()))
        })
        .map(|e| e.path())
        .collect()
}

fn path_of(name: &str, create: bool) -> Option<PathBuf> {
    state_dir(create).map(|d| d.join(format!("{name}.json")))
}

/// Records that this run started `process` (called `comm`), under `name`. Written to a temp file
/// and renamed, so a reader never sees half a record.
pub fn record(name: &str, comm: &str, process: ProcId) -> Result<PathBuf, String> {
    let path = path_of(name, true).ok_or("no private state directory (/run/tracebench, $XDG_RUNTIME_DIR or /tmp)")?;
    let owner = ProcId::me().ok_or("cannot read /proc/self/stat")?;
    let rec = serde_json::json!({
        "comm": comm,
        "process": process.to_json(),
        "owner": owner.to_json(),
        "how": "process and owner are pid + start time (/proc/PID/stat field 22); a later run stops the process \
                if the owner is gone",
    });
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(&rec).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The record under `name`, if any.
pub fn read(name: &str) -> Option<Record> {
    let path = path_of(name, false)?;
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    Some(Record {
        comm: v.get("comm")?.as_str()?.to_string(),
        process: ProcId::from_json(v.get("process")?)?,
        owner: ProcId::from_json(v.get("owner")?)?,
    })
}

/// Removes the record under `name` if it is this run's.
pub fn forget(name: &str) {
    let me = ProcId::me();
    if let (Some(path), Some(r)) = (path_of(name, false), read(name)) {
        if Some(r.owner) == me {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What [`reap_stale`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reaped {
    /// No record.
    Nothing,
    /// The owner still runs: the process is its to stop.
    OwnerAlive(ProcId),
    /// The owner is gone and so is the process (or its pid now names another process, which was
    /// left alone): only the record was removed.
    RecordOnly,
    /// The owner is gone; the process (and its children called `child_comm`) was stopped.
    Stopped(Record),
}

/// If the run that recorded `name` is gone, stops what it started (with `children` of it called
/// `child_comm`, e.g. LTTng's consumer daemons) and removes the record. A process whose pid, start
/// time or command name differ from the record is not the one recorded and is never signalled.
pub fn reap_stale(name: &str, child_comm: Option<&str>) -> Reaped {
    let Some(rec) = read(name) else { return Reaped::Nothing };
    if rec.owner.alive() {
        return Reaped::OwnerAlive(rec.owner);
    }
    let ours = rec.process.alive() && comm(rec.process.pid).as_deref() == Some(rec.comm.as_str());
    let result = if ours {
        let children = child_comm.map(|c| rec.process.children_named(c)).unwrap_or_default();
        stop(rec.process, Duration::from_secs(5));
        // The daemon stops its children on SIGTERM; any left (it was stuck and got SIGKILL) go too.
        for c in children {
            stop(c, Duration::from_secs(2));
        }
        Reaped::Stopped(rec.clone())
    } else {
        Reaped::RecordOnly
    };
    if let Some(p) = path_of(name, false) {
        let _ = std::fs::remove_file(p);
    }
    result
}

/// SIGTERM, up to `grace` for it to exit, then SIGKILL. Signals only the recorded process.
pub fn stop(p: ProcId, grace: Duration) -> bool {
    for (sig, wait) in [(libc::SIGTERM, grace), (libc::SIGKILL, Duration::from_secs(2))] {
        if !p.alive() {
            return true;
        }
        // Through a pidfd: between the check above and the signal, the pid could be reused.
        p.signal(sig);
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if !p.alive() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    !p.alive()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_its_pid_and_start_time() {
        let me = ProcId::me().unwrap();
        assert!(me.alive());
        assert!(!ProcId { start: me.start + 1, ..me }.alive(), "a reused pid must not match");
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let c = ProcId::of(child.id() as i32).unwrap();
        assert_eq!(me.children_named("sleep"), vec![c]);
        assert!(stop(c, Duration::from_secs(2)));
        let _ = child.wait();
        assert!(!c.alive());
    }
}
