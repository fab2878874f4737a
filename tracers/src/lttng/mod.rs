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
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::payload::Payload;
use crate::{owned, Tracer, TracerError};

mod provider;
mod sessiond;
mod snapshot;

use provider::{load_lib, BlobFn};

pub use sessiond::*;
pub use snapshot::*;

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
/// Name prefix of the private snapshot directories (`owned::private_workdir`).
pub(crate) const SNAPSHOT_PREFIX: &str = "lttng-snapshot";
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
    /// The snapshot output: a private directory of ours (mkdtemp, 0700, in the state directory),
    /// removed when this drops. A predictable name under /tmp would let another user plant a
    /// symlink there, and the clean-up below would then empty whatever it pointed to.
    out_dir: tempfile::TempDir,
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
        // `lttng --version` runs while the session is made (one process's start less on the
        // cell's path); waited for at the end, or reaped on drop if set-up fails.
        let version = Command::new("lttng")
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()
            .map(Reaped);
        let session = session_name(&opts.run_id);
        let out_dir = crate::owned::private_workdir(SNAPSHOT_PREFIX)
            .map_err(|e| setup_err(mode, format!("cannot make a private snapshot directory: {e}")))?;
        let out = out_dir.path().to_string_lossy().into_owned();
        let mut me = Lttng {
            mode,
            name: mode.spec().into(),
            session: session.clone(),
            out_dir,
            session_created: false,
            fire: noop,
            blob: None,
            subbuf_size: subbuf_size.clone(),
            subbuf_bytes,
            num_subbuf,
            ust_version: String::new(),
            tools_version: String::new(),
            sentinel_cpus: std::sync::Mutex::new(Vec::new()),
            geometry: std::sync::Mutex::new(None),
        };
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
        me.tools_version = version.and_then(|v| v.output()).unwrap_or_default();
        Ok(me)
    }

    /// Records a snapshot of the session's buffers and reads it back with babeltrace2.
    pub fn read_snapshot(&self) -> Result<BTreeMap<u32, CpuSnapshot>, String> {
        lttng(&["snapshot", "record", "--session", &self.session])?;
        if which("babeltrace2").is_none() {
            return Err("babeltrace2 not installed (apt-get install babeltrace2)".into());
        }
        // The details read (buffer geometry) runs beside the plain read; both are waited for
        // before the directory is cleared.
        // Each output is drained by its own thread: a full pipe must not hold either one back.
        let (out, details) = std::thread::scope(|s| {
            let details = s.spawn(|| snapshot::spawn_details(self.out_dir.path()).and_then(|c| c.wait_with_output()));
            let out = Command::new("babeltrace2").arg(self.out_dir.path()).output();
            (out, details.join().unwrap_or_else(|_| Err(std::io::Error::other("the babeltrace2 reader panicked"))))
        });
        let out = out.map_err(|e| format!("cannot run babeltrace2: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "babeltrace2 {} failed: {}",
                self.out_dir.path().display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        *self.geometry.lock().unwrap() = Some(snapshot::geometry(self.out_dir.path(), self.subbuf_bytes, details));
        // Each snapshot record goes to a new snapshot-N directory: clear it so the next read only
        // sees the next snapshot. The directory is ours alone (0700), so nobody else can plant an
        // entry in it; std's remove_dir_all does not follow symlinks either.
        for entry in std::fs::read_dir(self.out_dir.path()).map_err(|e| e.to_string())?.flatten() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
        Ok(parse_babeltrace(&String::from_utf8_lossy(&out.stdout), self.mode))
    }
}

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
        // The snapshot directory goes when `out_dir` drops (TempDir).
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

extern "C" fn noop(_: u32) {}

/// A child process that is waited for when dropped (no zombie if set-up fails first).
struct Reaped(std::process::Child);

impl Reaped {
    /// Its stdout, trimmed, once it has exited successfully.
    fn output(mut self) -> Option<String> {
        let out = std::mem::replace(&mut self.0.stdout, None)?;
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(out), &mut s).ok()?;
        self.0.wait().ok().filter(|st| st.success()).map(|_| s.trim().to_string())
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests;
