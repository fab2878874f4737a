//! `lttng-ust` and `lttng-tracef`: LTTng-UST 2.13 (survey sections 5.2.2 and 5.2.3).
//!
//! - `lttng-ust` fires a real tracepoint, `tracebench:event`, with a 4-byte integer payload
//!   (tracers/c/tb_lttng_tp.h).
//! - `lttng-tracef` calls `lttng_ust_tracef("%d", payload)`, which formats the payload into an
//!   `lttng_ust_tracef:event` (the survey's fairer comparison with printf).
//!
//! With `--payload-size N` (N != 4, payload.rs), `lttng-ust` fires `tracebench:blob`, whose field
//! is a variable-length sequence of the N bytes, and `lttng-tracef` formats the N bytes with
//! `lttng_ust_tracef("%s", ...)`; the sentinel (below) stays a `tracebench:event` /
//! `%d` event in the same channel.
//!
//! Configuration follows survey section 6.2.3: a snapshot (flight-recorder) session whose
//! channel overwrites, 2 sub-buffers of 8 KiB per CPU (the same 16 KiB per CPU as ftrace and
//! `lw`), and no consumer activity while the run lasts (snapshot mode writes nothing until a
//! snapshot is recorded; the monitor timer, which would wake the consumer daemon every second, is
//! turned off).
//!
//! Lifetimes: the parent starts `lttng-sessiond` if none runs ([`SessiondGuard`], stopped only if
//! it was started here); the measuring child creates a uniquely named session, enables the event,
//! starts it, then dlopen()s libtb_lttng.so (whose liblttng-ust constructor registers with the
//! sessiond and receives the enabled event). `Drop` destroys the session and removes the snapshot
//! directory. [`Lttng::read_snapshot`] records a snapshot and reads it back with babeltrace2.
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::payload::Payload;
use crate::{owned, Tracer, TracerError};

/// Survey section 6.2.3: 2 sub-buffers of 8 KiB per CPU.
pub const DEFAULT_SUBBUF_SIZE: &str = "8k";
pub const DEFAULT_NUM_SUBBUF: u32 = 2;
/// Payload fired once per measuring thread in `thread_init`. If it is missing from the snapshot
/// after the run, the buffer of that CPU wrapped (the oldest events were overwritten).
pub const SENTINEL: u32 = u32::MAX;
/// Smallest event this channel records: a compact 32-bit header (5-bit id, 27-bit timestamp)
/// plus the 4-byte payload. Dividing the buffer by it bounds from above the events needed to wrap.
const MIN_EVENT_BYTES: u64 = 8;
/// tracef's smallest event: header 4 + `_msg_length` 4 + one digit.
const MIN_TRACEF_EVENT_BYTES: u64 = 9;
const CHANNEL: &str = "tbch";
/// How long to wait for the sessiond to push the enabled event to this process.
const ENABLE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `tracebench:event`, a real tracepoint.
    Tracepoint,
    /// `lttng_ust_tracef("%d", payload)`.
    Tracef,
}

impl Mode {
    fn spec(self) -> &'static str {
        match self {
            Mode::Tracepoint => "lttng-ust",
            Mode::Tracef => "lttng-tracef",
        }
    }
    fn event(self) -> &'static str {
        match self {
            Mode::Tracepoint => "tracebench:event",
            Mode::Tracef => "lttng_ust_tracef:*",
        }
    }
}

/// Where libtb_lttng.so is: `$TRACEBENCH_LTTNG_SO`, else next to the running executable, else
/// where build.rs put it.
pub fn library_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRACEBENCH_LTTNG_SO") {
        return Some(PathBuf::from(p));
    }
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        let p = dir.join("libtb_lttng.so");
        if p.exists() {
            return Some(p);
        }
    }
    option_env!("TB_LTTNG_SO").map(PathBuf::from)
}

/// `Ok(())` when the LTTng backends can run here, else (why, fix). No side effects.
pub fn availability() -> Result<(), (String, String)> {
    let fix = "scripts/setup.sh or apt-get install liblttng-ust-dev lttng-tools, then rebuild".to_string();
    match library_path() {
        None => return Err(("liblttng-ust-dev not installed when tracebench was built".into(), fix)),
        Some(p) if !p.exists() => return Err((format!("{} is missing", p.display()), fix)),
        Some(_) => {}
    }
    for bin in ["lttng", "lttng-sessiond"] {
        if which(bin).is_none() {
            return Err((format!("{bin} not found in PATH (lttng-tools not installed)"), fix));
        }
    }
    Ok(())
}

pub use crate::sys::which;

fn setup_err(mode: Mode, why: impl Into<String>) -> TracerError {
    TracerError::Setup { name: mode.spec().into(), why: why.into() }
}

/// Runs `lttng ARGS`; on failure returns its stderr in one line.
fn lttng(args: &[&str]) -> Result<String, String> {
    let out =
        Command::new("lttng").args(args).output().map_err(|e| format!("cannot run `lttng {}`: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("; ");
        Err(format!("`lttng {}` failed: {err}", args.join(" ")))
    }
}

/// The pid file of the session daemon this user's `lttng` would talk to.
fn sessiond_pidfile() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        PathBuf::from("/var/run/lttng/lttng-sessiond.pid")
    } else {
        let home = std::env::var_os("LTTNG_HOME").or_else(|| std::env::var_os("HOME")).unwrap_or_default();
        PathBuf::from(home).join(".lttng/lttng-sessiond.pid")
    }
}

/// The pid of a live `lttng-sessiond` for this user, if one runs.
pub fn running_sessiond() -> Option<i32> {
    let pid: i32 = std::fs::read_to_string(sessiond_pidfile()).ok()?.trim().parse().ok()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    (comm.trim() == "lttng-sessiond").then_some(pid)
}

/// Name of the state file recording the session daemon a run started (see `owned`).
const STATE: &str = "lttng-sessiond";

/// Whether the process `pid` (a decimal string) no longer exists.
fn dead(pid: &str) -> bool {
    pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists()
}

/// Cleans up after tracebench runs killed with SIGKILL (no Drop ran): stops the session daemon
/// (and its consumer daemons) a dead run started, destroys `tracebench-...-PID` sessions of dead
/// measuring processes in a daemon that lives on (a user's own daemon keeps running), and
/// removes their snapshot directories. Done by the parent before it needs a daemon, as uprobe
/// events and tracefs instances of dead runs are removed before new ones are made.
pub fn reap_leftovers() {
    if let owned::Reaped::Stopped(r) = owned::reap_stale(STATE, Some("lttng-consumerd")) {
        eprintln!(
            "tracebench: stopped lttng-sessiond (pid {}) left running by a tracebench run that was killed (pid {})",
            r.process.pid, r.owner.pid
        );
    }
    if running_sessiond().is_some() {
        for session in lttng(&["list"]).map(|t| stale_sessions(&t)).unwrap_or_default() {
            let _ = lttng(&["destroy", &session]);
        }
    }
    if let Ok(rd) = std::fs::read_dir(std::env::temp_dir()) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n
                .strip_prefix("tracebench-")
                .and_then(|r| r.strip_suffix("-snapshot"))
                .and_then(|r| r.rsplit('-').next());
            if pid.is_some_and(dead) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Sessions in `lttng list` output named by [`session_name`] whose measuring process is gone.
fn stale_sessions(list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|l| l.trim_start().split_once(") ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|name| name.starts_with("tracebench-") && name.rsplit('-').next().is_some_and(dead))
        .map(String::from)
        .collect()
}

/// Parent-side guard: makes sure a session daemon runs for the whole `tracebench run`, and stops
/// it on drop only if this guard started it. What it starts is recorded (`owned`), so that if
/// this run is killed with SIGKILL the next run stops it ([`reap_leftovers`]).
pub struct SessiondGuard {
    started: Option<owned::ProcId>,
}

impl SessiondGuard {
    pub fn ensure(spec: &str) -> Result<Self, TracerError> {
        reap_leftovers();
        if running_sessiond().is_some() {
            return Ok(SessiondGuard { started: None });
        }
        // --no-kernel: only the userspace domain is used, and this kernel has no LTTng modules.
        // --daemonize returns once the daemon is ready to accept commands.
        let out = Command::new("lttng-sessiond")
            .args(["--daemonize", "--no-kernel"])
            .output()
            .map_err(|e| TracerError::Setup { name: spec.into(), why: format!("cannot run lttng-sessiond: {e}") })?;
        if !out.status.success() {
            // The launcher may have been interrupted after the daemon forked: stop a daemon that
            // was not there before rather than leave it running.
            if let Some(p) = running_sessiond().and_then(owned::ProcId::of) {
                drop(SessiondGuard { started: Some(p) });
            }
            return Err(TracerError::Setup {
                name: spec.into(),
                why: format!("lttng-sessiond --daemonize failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
            });
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(p) = running_sessiond().and_then(owned::ProcId::of) {
                let guard = SessiondGuard { started: Some(p) };
                if let Err(e) = owned::record(STATE, "lttng-sessiond", p) {
                    // The run goes on; only a SIGKILL of it would now leave the daemon behind.
                    eprintln!("tracebench: warning: cannot record the lttng-sessiond this run started: {e}");
                }
                return Ok(guard);
            }
            if Instant::now() > deadline {
                return Err(TracerError::Setup {
                    name: spec.into(),
                    why: format!("lttng-sessiond started but {} never appeared", sessiond_pidfile().display()),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The pid of the daemon this guard started, if it started one.
    pub fn started_pid(&self) -> Option<i32> {
        self.started.map(|p| p.pid)
    }
}

impl Drop for SessiondGuard {
    fn drop(&mut self) {
        let Some(p) = self.started else { return };
        // Only the daemon this guard started: same pid and start time, and still the one the
        // pid file names.
        if running_sessiond() == Some(p.pid) && !owned::stop(p, Duration::from_secs(5)) {
            eprintln!("warning: lttng-sessiond (pid {}) did not stop after SIGTERM and SIGKILL", p.pid);
        }
        owned::forget(STATE);
    }
}

/// The dlopen()ed libtb_lttng.so: loaded once per process and never unloaded (unloading
/// liblttng-ust while its listener threads run is not supported).
struct Lib {
    fire: extern "C" fn(u32),
    tracef: extern "C" fn(u32),
    fire_blob: BlobFn,
    tracef_blob: BlobFn,
    event_enabled: extern "C" fn() -> c_int,
    blob_enabled: extern "C" fn() -> c_int,
    tracef_enabled: extern "C" fn() -> c_int,
    ust_version: String,
}

/// `tb_lttng_fire_blob(data, len)` / `tb_lttng_tracef_blob(data, len)`.
type BlobFn = extern "C" fn(*const c_char, u32);

static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();

fn load_lib() -> Result<&'static Lib, String> {
    LIB.get_or_init(|| {
        let path = library_path().ok_or("liblttng-ust-dev was not installed when tracebench was built")?;
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: dlopen with a valid C string; RTLD_NODELETE because liblttng-ust must stay.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NODELETE) };
        if handle.is_null() {
            // SAFETY: dlerror returns a static string after a failure.
            let e = unsafe { CStr::from_ptr(libc::dlerror()) };
            return Err(format!("dlopen {}: {}", path.display(), e.to_string_lossy()));
        }
        let sym = |name: &str| -> Result<*mut c_void, String> {
            let n = CString::new(name).unwrap();
            // SAFETY: handle is a live dlopen handle.
            let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
            if p.is_null() {
                Err(format!("{name} missing from {}", path.display()))
            } else {
                Ok(p)
            }
        };
        // SAFETY: the symbols have these C signatures (tracers/c/tb_lttng*.c).
        unsafe {
            let version: extern "C" fn() -> *const c_char = std::mem::transmute(sym("tb_lttng_ust_version")?);
            Ok(Lib {
                fire: std::mem::transmute::<*mut c_void, extern "C" fn(u32)>(sym("tb_lttng_fire")?),
                tracef: std::mem::transmute::<*mut c_void, extern "C" fn(u32)>(sym("tb_lttng_tracef")?),
                fire_blob: std::mem::transmute::<*mut c_void, BlobFn>(sym("tb_lttng_fire_blob")?),
                tracef_blob: std::mem::transmute::<*mut c_void, BlobFn>(sym("tb_lttng_tracef_blob")?),
                blob_enabled: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(
                    "tb_lttng_blob_enabled",
                )?),
                event_enabled: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(
                    "tb_lttng_event_enabled",
                )?),
                tracef_enabled: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(
                    "tb_lttng_tracef_enabled",
                )?),
                ust_version: CStr::from_ptr(version()).to_string_lossy().into_owned(),
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// What a snapshot holds, per CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSnapshot {
    pub events: u64,
    /// Payloads in trace order (the sentinel included if it survived).
    pub payloads: Vec<i64>,
    pub sentinel_present: bool,
    /// `--payload-size` events (`tracebench:blob`, or a tracef whose message is not a number).
    pub blobs: u64,
    /// Length in bytes of the newest of them.
    pub last_blob_len: Option<usize>,
    /// Whether every one of them held the payload's bytes (`abc...`).
    pub blobs_match: bool,
}

/// One LTTng-UST session, set up and started, with the provider loaded.
pub struct Lttng {
    mode: Mode,
    name: String,
    session: String,
    out_dir: PathBuf,
    session_created: bool,
    fire: extern "C" fn(u32),
    /// `--payload-size` other than 4: the bytes, and the function that records them.
    blob: Option<(Payload, BlobFn)>,
    subbuf_size: String,
    subbuf_bytes: u64,
    num_subbuf: u32,
    ust_version: String,
    tools_version: String,
    sentinel_cpus: std::sync::Mutex<Vec<usize>>,
    /// What the last snapshot says about the buffer's geometry (see [`geometry`]).
    geometry: std::sync::Mutex<Option<serde_json::Value>>,
}

/// `8k`, `16K`, `1M`, `4096` -> bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1024),
        (i, 'm' | 'M') => (&s[..i], 1024 * 1024),
        (i, 'g' | 'G') => (&s[..i], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().filter(|n| *n > 0).map(|n| n * mult)
}

/// Checks `--subbuf-size` and `--num-subbuf` (defaults when `None`); returns the size as given,
/// in bytes, and the count. `lttng enable-channel` silently rounds a sub-buffer size up to a power
/// of two of at least the page size, so any other value would measure a buffer other than the one
/// run.json records (and `buffer_events` would be wrong): refused instead. LTTng needs at least 2
/// sub-buffers (one being written while the other is read). The plan stage calls this through
/// `registry::validate_options`, so a bad value costs nothing and leaves nothing behind.
pub fn check_buffer(subbuf: Option<&str>, num: Option<u32>) -> Result<(String, u64, u32), String> {
    let size = subbuf.unwrap_or(DEFAULT_SUBBUF_SIZE).to_string();
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let bytes =
        parse_size(&size).ok_or_else(|| format!("bad --subbuf-size '{size}': use a size such as 8k, 16k or 1M"))?;
    if !bytes.is_power_of_two() || bytes < page {
        return Err(format!(
            "--subbuf-size {size} ({bytes} bytes): LTTng sub-buffers are a power of two of at least the page size \
             ({page} bytes); use e.g. {}k, {}k or 1M",
            page / 1024,
            2 * page / 1024
        ));
    }
    let n = num.unwrap_or(DEFAULT_NUM_SUBBUF);
    if n < 2 {
        return Err(format!("--num-subbuf {n}: LTTng needs at least 2 sub-buffers"));
    }
    Ok((size, bytes, n))
}

fn session_name(run_id: &str) -> String {
    let clean: String =
        run_id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    if clean.is_empty() {
        format!("tracebench-{pid}")
    } else {
        format!("tracebench-{clean}-{pid}")
    }
}

impl Lttng {
    pub fn new(mode: Mode, opts: &crate::CreateOptions) -> Result<Self, TracerError> {
        if let Err((why, fix)) = availability() {
            return Err(TracerError::Unavailable { name: mode.spec().into(), why, fix });
        }
        let (subbuf_size, subbuf_bytes, num_subbuf) = check_buffer(opts.subbuf_size.as_deref(), opts.num_subbuf)
            .map_err(|why| TracerError::BadOption { spec: mode.spec().into(), why })?;
        if running_sessiond().is_none() {
            return Err(setup_err(
                mode,
                "no lttng-sessiond is running (the parent's guard starts one; start one with \
                 `lttng-sessiond --daemonize --no-kernel`)",
            ));
        }
        let session = session_name(&opts.run_id);
        let out_dir = std::env::temp_dir().join(format!("{session}-snapshot"));
        let mut me = Lttng {
            mode,
            name: mode.spec().into(),
            session: session.clone(),
            out_dir: out_dir.clone(),
            session_created: false,
            fire: noop,
            blob: None,
            subbuf_size: subbuf_size.clone(),
            subbuf_bytes,
            num_subbuf,
            ust_version: String::new(),
            tools_version: lttng(&["--version"]).map(|v| v.trim().to_string()).unwrap_or_default(),
            sentinel_cpus: std::sync::Mutex::new(Vec::new()),
            geometry: std::sync::Mutex::new(None),
        };
        let out = out_dir.to_string_lossy().into_owned();
        // Drop tries to destroy the session from here on, even if `lttng create` itself fails: it
        // may have been interrupted (SIGINT reaches it too) after the daemon made the session.
        me.session_created = true;
        lttng(&["create", &session, "--snapshot", "--output", &out]).map_err(|e| setup_err(mode, e))?;
        let num = num_subbuf.to_string();
        lttng(&[
            "enable-channel",
            "--userspace",
            "--session",
            &session,
            "--overwrite",
            "--buffers-uid",
            "--subbuf-size",
            &subbuf_size,
            "--num-subbuf",
            &num,
            "--monitor-timer",
            "0",
            CHANNEL,
        ])
        .map_err(|e| setup_err(mode, e))?;
        let payload = Payload::for_size(opts.payload_size);
        // The blob event and the sentinel's event, in the same channel.
        let events = match (mode, &payload) {
            (Mode::Tracepoint, Some(_)) => "tracebench:event,tracebench:blob",
            _ => mode.event(),
        };
        lttng(&["enable-event", "--userspace", "--session", &session, "--channel", CHANNEL, events])
            .map_err(|e| setup_err(mode, e))?;
        lttng(&["start", &session]).map_err(|e| setup_err(mode, e))?;

        // Loading the provider registers this process with the sessiond, which pushes the
        // started session's enabled event to it. If the library was already loaded (a second
        // session in the same process), the push is asynchronous: wait for it either way, so that
        // the timed calls record events instead of testing a disabled tracepoint.
        let lib = load_lib().map_err(|e| setup_err(mode, e))?;
        let enabled = match mode {
            Mode::Tracepoint => lib.event_enabled,
            Mode::Tracef => lib.tracef_enabled,
        };
        let blob_enabled = match (mode, &payload) {
            (Mode::Tracepoint, Some(_)) => lib.blob_enabled,
            _ => enabled,
        };
        let deadline = Instant::now() + ENABLE_TIMEOUT;
        while enabled() == 0 || blob_enabled() == 0 {
            if Instant::now() > deadline {
                return Err(setup_err(
                    mode,
                    format!(
                        "{} never became enabled in this process within {} s (is the sessiond reachable?)",
                        mode.event(),
                        ENABLE_TIMEOUT.as_secs()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        me.fire = match mode {
            Mode::Tracepoint => lib.fire,
            Mode::Tracef => lib.tracef,
        };
        me.blob = payload.map(|p| {
            let f = match mode {
                Mode::Tracepoint => lib.fire_blob,
                Mode::Tracef => lib.tracef_blob,
            };
            (p, f)
        });
        me.ust_version = lib.ust_version.clone();
        Ok(me)
    }

    /// Records a snapshot of the session's buffers and reads it back with babeltrace2.
    pub fn read_snapshot(&self) -> Result<BTreeMap<u32, CpuSnapshot>, String> {
        lttng(&["snapshot", "record", "--session", &self.session])?;
        if which("babeltrace2").is_none() {
            return Err("babeltrace2 not installed (apt-get install babeltrace2)".into());
        }
        let out = Command::new("babeltrace2")
            .arg(&self.out_dir)
            .output()
            .map_err(|e| format!("cannot run babeltrace2: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "babeltrace2 {} failed: {}",
                self.out_dir.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        *self.geometry.lock().unwrap() = Some(geometry(&self.out_dir, self.subbuf_bytes));
        // Each snapshot record goes to a new snapshot-N directory: clear it so the next read only
        // sees the next snapshot.
        for entry in std::fs::read_dir(&self.out_dir).map_err(|e| e.to_string())?.flatten() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
        Ok(parse_babeltrace(&String::from_utf8_lossy(&out.stdout), self.mode))
    }
}

/// CTF packet magic, and where LTTng-UST's 64-bit packet header and context keep the fields read
/// here (bytes): magic u32 @0, then after uuid, stream_id and stream_instance_id the context
/// timestamp_begin @32, timestamp_end @40, content_size @48 and packet_size @56 (bits),
/// packet_seq_num @64, events_discarded @72, cpu_id @80. Reading stops at a packet whose magic
/// or sizes do not fit, so a layout change yields no geometry (packets fail to pair up with
/// babeltrace2's) rather than a wrong one.
const CTF_MAGIC: u32 = 0xC1FC_1FC1;

/// One packet (sub-buffer) of a snapshot stream file.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    pub cpu: u32,
    pub seq: u64,
    pub content_bytes: u64,
    pub events: u64,
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

/// Packets of the stream files under `dir` (every file but `metadata` and the index files).
fn read_packets(dir: &Path, subbuf_bytes: u64, out: &mut Vec<Packet>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            read_packets(&p, subbuf_bytes, out);
            continue;
        }
        if p.file_name().is_some_and(|n| n == "metadata") || p.extension().is_some_and(|x| x == "idx") {
            continue;
        }
        let Ok(b) = std::fs::read(&p) else { continue };
        // Packets follow each other, each `packet_size` long: a snapshot trims the packet being
        // written (and an empty one) to whole pages, so sizes vary.
        let mut off = 0usize;
        while off < b.len() {
            let chunk = &b[off..];
            let magic = chunk.get(0..4).map(|m| u32::from_le_bytes(m.try_into().unwrap()));
            let (Some(content), Some(size), Some(seq)) = (u64_at(chunk, 48), u64_at(chunk, 56), u64_at(chunk, 64))
            else {
                break;
            };
            let cpu = chunk.get(80..84).map(|c| u32::from_le_bytes(c.try_into().unwrap()));
            if magic != Some(CTF_MAGIC) || size == 0 || size % 8 != 0 || size > subbuf_bytes * 8 || content > size {
                break;
            }
            out.push(Packet { cpu: cpu.unwrap_or(0), seq, content_bytes: content / 8, events: 0 });
            off += (size / 8) as usize;
        }
    }
}

/// Events per packet, per CPU, in trace order, from babeltrace2's `sink.text.details` output.
pub fn parse_packet_events(text: &str) -> BTreeMap<u32, Vec<u64>> {
    let mut out: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    // Streams interleave in time order: keep the open packet of each stream (by its id line).
    let mut open: BTreeMap<String, (Option<u32>, u64)> = BTreeMap::new();
    let mut stream = String::new();
    let mut want_cpu = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('{') && l.contains("Stream ID") {
            stream = l.to_string();
        } else if l.starts_with("Packet beginning") {
            open.insert(stream.clone(), (None, 0));
            want_cpu = true;
        } else if want_cpu && l.starts_with("cpu_id:") {
            if let Some(p) = open.get_mut(&stream) {
                p.0 = l["cpu_id:".len()..].trim().parse().ok();
            }
            want_cpu = false;
        } else if l.starts_with("Event `") {
            want_cpu = false;
            if let Some(p) = open.get_mut(&stream) {
                p.1 += 1;
            }
        } else if l.starts_with("Packet end") {
            if let Some((Some(cpu), n)) = open.remove(&stream) {
                out.entry(cpu).or_default().push(n);
            }
        }
    }
    out
}

/// The buffer geometry a snapshot shows (survey section 7.1: the slow path comes every
/// SUB-BUFFER_SIZE / EVENT_SIZE events): each packet's content size from its CTF header and its
/// event count from babeltrace2, hence the event size, the packet header's size and the events a
/// full sub-buffer holds, which is the period the report expects for the sub-buffer switch.
pub fn geometry(dir: &Path, subbuf_bytes: u64) -> serde_json::Value {
    let mut packets = Vec::new();
    read_packets(dir, subbuf_bytes, &mut packets);
    let out = Command::new("babeltrace2")
        .args(["-c", "sink.text.details", "-p", "with-metadata=false,with-time=false"])
        .arg(dir)
        .output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            return serde_json::json!({"error": format!("babeltrace2 details: {}", String::from_utf8_lossy(&o.stderr).trim())})
        }
        Err(e) => return serde_json::json!({"error": format!("cannot run babeltrace2: {e}")}),
    };
    geometry_of(&mut packets, &parse_packet_events(&text), subbuf_bytes)
}

/// [`geometry`] from parsed packets and per-CPU event counts (packets of one CPU pair up in
/// sequence-number order, which is trace order).
pub fn geometry_of(packets: &mut [Packet], counts: &BTreeMap<u32, Vec<u64>>, subbuf_bytes: u64) -> serde_json::Value {
    packets.sort_by_key(|p| (p.cpu, p.seq));
    let mut by_cpu: BTreeMap<u32, Vec<&mut Packet>> = BTreeMap::new();
    for p in packets.iter_mut() {
        by_cpu.entry(p.cpu).or_default().push(p);
    }
    // A CPU whose packets do not pair up one to one is left out (no guess).
    let unpaired: Vec<u32> = by_cpu
        .iter()
        .filter(|(cpu, ps)| counts.get(cpu).map(Vec::len).unwrap_or(0) != ps.len())
        .map(|(c, _)| *c)
        .collect();
    by_cpu.retain(|c, _| !unpaired.contains(c));
    for (cpu, ps) in by_cpu.iter_mut() {
        for (p, n) in ps.iter_mut().zip(&counts[cpu]) {
            p.events = *n;
        }
    }
    if by_cpu.is_empty() {
        return serde_json::json!({
            "error": "packets in the stream files and in babeltrace2's output do not pair up",
            "file_packets": packets.len(),
            "babeltrace_packets": counts.values().map(Vec::len).sum::<usize>(),
        });
    }
    // Full packets: all but the last of each CPU's stream (the one being written).
    let mut full: Vec<(u64, u64)> = Vec::new();
    let mut all: Vec<(u64, u64)> = Vec::new();
    for ps in by_cpu.values() {
        for (i, p) in ps.iter().enumerate() {
            all.push((p.events, p.content_bytes));
            if i + 1 < ps.len() && p.events > 0 {
                full.push((p.events, p.content_bytes));
            }
        }
    }
    // The header: an empty packet's content, else a straight line through packets of different
    // event counts.
    let header = all.iter().filter(|p| p.0 == 0).map(|p| p.1).min().map(|h| h as f64).or_else(|| {
        let lo = all.iter().filter(|p| p.0 > 0).min_by_key(|p| p.0)?;
        let hi = all.iter().max_by_key(|p| p.0)?;
        (hi.0 > lo.0).then(|| {
            let slope = (hi.1 as f64 - lo.1 as f64) / (hi.0 - lo.0) as f64;
            lo.1 as f64 - slope * lo.0 as f64
        })
    });
    let mut per: Vec<u64> = full.iter().map(|p| p.0).collect();
    per.sort_unstable();
    let Some(&median) = per.get(per.len() / 2) else {
        return serde_json::json!({"error": "no full sub-buffer in the snapshot (run more calls)", "packets": all.len()});
    };
    let h = header.unwrap_or(0.0);
    let (ev, cb): (u64, u64) = full.iter().fold((0, 0), |a, p| (a.0 + p.0, a.1 + p.1));
    let event_bytes = (cb as f64 - h * full.len() as f64) / ev as f64;
    serde_json::json!({
        "subbuf_bytes": subbuf_bytes,
        "full_subbufs": full.len(),
        "events_per_subbuf": median,
        "events_per_subbuf_all": per,
        "event_bytes": event_bytes,
        "header_bytes": header,
        "cpus_left_out": unpaired,
        "how": "content_size of each packet from its CTF header, events per packet from babeltrace2 sink.text.details; \
                a full sub-buffer is any packet but the last of its CPU's stream",
    })
}

/// Parses babeltrace2's text output: `... tracebench:event: { cpu_id = 1 }, { payload = 42 }` or
/// `... lttng_ust_tracef:event: { cpu_id = 0 }, { _msg_length = 2, msg = "42" }`.
pub fn parse_babeltrace(text: &str, mode: Mode) -> BTreeMap<u32, CpuSnapshot> {
    let mut cpus: BTreeMap<u32, CpuSnapshot> = BTreeMap::new();
    let (marker, key) = match mode {
        Mode::Tracepoint => ("tracebench:event:", "payload = "),
        Mode::Tracef => ("lttng_ust_tracef:event:", "msg = \""),
    };
    for line in text.lines() {
        if let Some((len, ok)) = blob_of(line, mode) {
            let c = cpus.entry(field(line, "cpu_id = ").and_then(|v| v.parse::<u32>().ok()).unwrap_or(0)).or_default();
            c.blobs_match = if c.blobs == 0 { ok } else { c.blobs_match && ok };
            c.blobs += 1;
            c.events += 1;
            c.last_blob_len = Some(len);
            continue;
        }
        if !line.contains(marker) {
            continue;
        }
        let cpu = field(line, "cpu_id = ").and_then(|v| v.parse::<u32>().ok());
        let payload = field(line, key).and_then(|v| v.parse::<i64>().ok());
        if let (Some(cpu), Some(p)) = (cpu, payload) {
            let c = cpus.entry(cpu).or_default();
            c.events += 1;
            c.payloads.push(p);
            // tracef formats with %d, so the sentinel u32::MAX reads back as -1.
            if p == SENTINEL as i64 || p == -1 {
                c.sentinel_present = true;
            }
        }
    }
    cpus
}

/// A `--payload-size` event's (length, whether its bytes are the payload's `abc...`):
/// `tracebench:blob: { cpu_id = 0 }, { _data_length = 5, data = "abcde" }`, or a tracef event
/// whose message is not a number.
fn blob_of(line: &str, mode: Mode) -> Option<(usize, bool)> {
    let (marker, key) = match mode {
        Mode::Tracepoint => ("tracebench:blob:", "data = \""),
        Mode::Tracef => ("lttng_ust_tracef:event:", "msg = \""),
    };
    if !line.contains(marker) {
        return None;
    }
    let start = line.find(key)? + key.len();
    let rest = &line[start..];
    let text = &rest[..rest.find('"')?];
    if mode == Mode::Tracef && text.parse::<i64>().is_ok() {
        return None;
    }
    let ok = text.bytes().enumerate().all(|(i, b)| b == b'a' + (i % 26) as u8);
    Some((text.len(), ok))
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(key)? + key.len();
    let rest = &line[start..];
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(rest.len());
    Some(&rest[..end])
}

extern "C" fn noop(_: u32) {}

impl Drop for Lttng {
    fn drop(&mut self) {
        if self.session_created {
            if let Err(e) = lttng(&["destroy", &self.session]) {
                // A session that never got made is not an error worth a warning.
                if !e.contains("not found") {
                    eprintln!("warning: {e}");
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.out_dir);
    }
}

impl Tracer for Lttng {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        format!("lttng-ust {} / {}", self.ust_version, self.tools_version)
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "event": self.mode.event(),
            "call": match (self.mode, &self.blob) {
                (Mode::Tracepoint, None) => {
                    "lttng_ust_tracepoint(tracebench, event, payload) [ctf integer uint32_t]".to_string()
                }
                (Mode::Tracef, None) => "lttng_ust_tracef(\"%d\", payload)".to_string(),
                (Mode::Tracepoint, Some((p, _))) => format!(
                    "lttng_ust_tracepoint(tracebench, blob, data, {}) [ctf sequence of char, uint32_t length]",
                    p.len()
                ),
                (Mode::Tracef, Some((p, _))) => format!("lttng_ust_tracef(\"%s\", {} bytes + NUL)", p.len()),
            },
            "session": self.session,
            "session_mode": "snapshot (flight recorder, no consumer output during the run)",
            "channel": CHANNEL,
            "overwrite": true,
            "buffers": "per-uid",
            "subbuf_size": self.subbuf_size,
            "subbuf_bytes": self.subbuf_bytes,
            "num_subbuf": self.num_subbuf,
            "monitor_timer": "off",
            "clock": "LTTng default (CLOCK_MONOTONIC)",
            "provider": library_path().map(|p| p.display().to_string()),
        })
    }
    fn buffer_events(&self) -> u64 {
        let min = match self.mode {
            Mode::Tracepoint => MIN_EVENT_BYTES,
            Mode::Tracef => MIN_TRACEF_EVENT_BYTES,
        };
        self.subbuf_bytes * self.num_subbuf as u64 / min
    }
    fn thread_init(&self, cpu: usize) -> Result<(), TracerError> {
        // The sentinel: once per CPU, before warm-up. `after_run` looks for it in the snapshot.
        // The CPU it lands on is the one the thread runs on (the harness pinned it to `cpu`).
        // SAFETY: sched_getcpu has no preconditions.
        let on = unsafe { libc::sched_getcpu() };
        (self.fire)(SENTINEL);
        self.sentinel_cpus.lock().unwrap().push(if on >= 0 { on as usize } else { cpu });
        Ok(())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some((p, f)) = &self.blob {
            return f(p.as_c_ptr(), p.len() as u32);
        }
        (self.fire)(payload);
    }
    fn after_run(&self) -> serde_json::Value {
        let cpus = self.sentinel_cpus.lock().unwrap().clone();
        match self.read_snapshot() {
            Ok(snap) => {
                let per_cpu: serde_json::Map<String, serde_json::Value> = snap
                    .iter()
                    .map(|(cpu, s)| {
                        (
                            cpu.to_string(),
                            serde_json::json!({
                                "events_in_snapshot": s.events,
                                "sentinel_present": s.sentinel_present,
                                "first_payload": s.payloads.first(),
                                "last_payload": s.payloads.last(),
                                "payload_events": s.blobs,
                                "last_payload_bytes": s.last_blob_len,
                                "payload_bytes_match": (s.blobs > 0).then_some(s.blobs_match),
                            }),
                        )
                    })
                    .collect();
                // A measuring CPU whose sentinel is gone had its buffer overwritten at least once.
                let wrapped = !cpus.is_empty()
                    && cpus.iter().all(|c| snap.get(&(*c as u32)).map(|s| !s.sentinel_present).unwrap_or(false));
                serde_json::json!({
                    "snapshot": per_cpu,
                    "geometry": self.geometry.lock().unwrap().clone(),
                    "measuring_cpus": cpus,
                    "buffer_wrapped": wrapped,
                    "how": "a sentinel event is fired on each measuring CPU before warm-up; \
                            it is absent from the end-of-run snapshot iff that CPU's buffer wrapped",
                })
            }
            Err(e) => serde_json::json!({ "snapshot_error": e }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_sessions_are_those_of_dead_processes() {
        let mut c = Command::new("true").spawn().unwrap();
        let gone = c.id();
        c.wait().unwrap();
        let me = std::process::id();
        let list = format!(
            "Available recording sessions:\n  1) foo [inactive]\n    Trace output: /root/lttng-traces/foo\n\n  \
             2) tracebench-20261125T094059Z-77-{gone} [inactive snapshot]\n  3) tracebench-{me} [active snapshot]\n\n\
             Use lttng list <session_name> for more details\n"
        );
        assert_eq!(stale_sessions(&list), vec![format!("tracebench-20261125T094059Z-77-{gone}")]);
    }

    #[test]
    fn buffer_geometry_is_checked() {
        assert_eq!(check_buffer(None, None).unwrap().1, 8192);
        assert!(check_buffer(Some("3"), None).unwrap_err().contains("power of two"));
        assert!(check_buffer(Some("12k"), None).unwrap_err().contains("power of two"));
        assert!(check_buffer(Some("16k"), Some(1)).unwrap_err().contains("at least 2"));
        assert_eq!(check_buffer(Some("1M"), Some(4)).unwrap(), ("1M".to_string(), 1 << 20, 4));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8k"), Some(8192));
        assert_eq!(parse_size("16K"), Some(16384));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("k"), None);
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("x8k"), None);
    }

    #[test]
    fn geometry_from_packets() {
        let text = "{Trace 0, Stream class ID 0, Stream ID 0}\nPacket beginning:\n  Context:\n    cpu_id: 0\n\n\
                    {Trace 0, Stream class ID 0, Stream ID 1}\nPacket beginning:\n  Context:\n    cpu_id: 1\n\n\
                    {Trace 0, Stream class ID 0, Stream ID 1}\nPacket end\n"
            .to_string()
            + &"{Trace 0, Stream class ID 0, Stream ID 0}\nEvent `tracebench:event` (Class ID 0):\n".repeat(810)
            + "{Trace 0, Stream class ID 0, Stream ID 0}\nPacket end\n{Trace 0, Stream class ID 0, Stream ID 0}\nPacket beginning:\n  Context:\n    cpu_id: 0\n"
            + &"{Trace 0, Stream class ID 0, Stream ID 0}\nEvent `tracebench:event` (Class ID 0):\n".repeat(570)
            + "{Trace 0, Stream class ID 0, Stream ID 0}\nPacket end\n";
        let counts = parse_packet_events(&text);
        assert_eq!(counts[&0], vec![810, 570]);
        assert_eq!(counts[&1], vec![0]);
        // As in a real 8 KiB snapshot: content 65472 and 46272 bits, an empty packet of 672.
        let mut packets = vec![
            Packet { cpu: 0, seq: 4, content_bytes: 5784, events: 0 },
            Packet { cpu: 0, seq: 3, content_bytes: 8184, events: 0 },
            Packet { cpu: 1, seq: 0, content_bytes: 84, events: 0 },
        ];
        let g = geometry_of(&mut packets, &counts, 8192);
        assert_eq!(g["events_per_subbuf"], 810);
        assert_eq!(g["header_bytes"], 84.0);
        assert!((g["event_bytes"].as_f64().unwrap() - 10.0).abs() < 1e-9, "{g}");
    }

    #[test]
    fn parses_babeltrace_lines() {
        let text = "[17:02:03.490842017] (+?.?????????) vm tracebench:event: { cpu_id = 1 }, { payload = 4050 }\n\
                    [17:02:03.490843720] (+0.000001703) vm tracebench:event: { cpu_id = 1 }, { payload = 4051 }\n\
                    [17:02:03.490843720] (+0.000001703) vm tracebench:event: { cpu_id = 0 }, { payload = 4294967295 }\n";
        let m = parse_babeltrace(text, Mode::Tracepoint);
        assert_eq!(m[&1].payloads, vec![4050, 4051]);
        assert!(!m[&1].sentinel_present);
        assert!(m[&0].sentinel_present);
        let t = "[x] vm lttng_ust_tracef:event: { cpu_id = 0 }, { _msg_length = 2, msg = \"42\" }\n\
                 [x] vm lttng_ust_tracef:event: { cpu_id = 0 }, { _msg_length = 2, msg = \"-1\" }\n";
        let m = parse_babeltrace(t, Mode::Tracef);
        assert_eq!(m[&0].payloads, vec![42, -1]);
        assert!(m[&0].sentinel_present);
    }
}
