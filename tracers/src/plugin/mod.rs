//! `plugin:PATH[:ARGS]`: an out-of-tree tracer loaded with dlopen through the C ABI declared
//! (and documented) in `tracers/include/tracebench.h`.
//!
//! The fire path is the plugin's own `fire` called through the vtable with its `ctx`: `Plugin`
//! keeps both as its first two fields, so [`Tracer::fire`] is two loads and one indirect call,
//! with no Rust-side work. Against a built-in backend, a plugin pays exactly one extra indirect
//! call (the harness's `&dyn Tracer` dispatch lands in `Plugin::fire`, which calls the plugin).
//!
//! Crash isolation is the runner's job (one child process per cell). The only place where the
//! harness's own process would run plugin code is the command-line check before any cell runs;
//! [`validate`] therefore loads the library in a forked child, so that a constructor that
//! crashes, hangs or starts threads never touches the parent.
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use thiserror::Error;

use crate::payload::Payload;
use crate::{Tracer, TracerError};

/// Must equal `TRACEBENCH_ABI_VERSION` in tracers/include/tracebench.h (struct v1).
pub const ABI_VERSION: u32 = 1;
/// Must equal `TRACEBENCH_ABI_VERSION_2` (struct v2: v1 + the payload-size entry points).
pub const ABI_VERSION_2: u32 = 2;
/// The symbol a v1 plugin exports.
pub const SYMBOL: &str = "tracebench_tracer_v1";
/// The symbol a v2 plugin exports; looked up first.
pub const SYMBOL_V2: &str = "tracebench_tracer_v2";
/// How long loading a plugin (its constructors) may take in the validation child.
const LOAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Size of the buffer init() may write its error message into.
const ERR_LEN: usize = 512;

const HOWTO: &str = "see tracers/include/tracebench.h and tracers/examples/";

/// Why a plugin cannot be used. Every message names the file and the cause.
#[derive(Debug, Error)]
pub enum PluginError {
    #[error(
        "bad tracer spec '{spec}': {why} (fix: write plugin:PATH[:ARGS], e.g. plugin:target/plugins/libring_plugin.so)"
    )]
    Spec { spec: String, why: String },
    #[error("plugin '{path}': no such file (fix: build your tracer with `cc -O2 -fPIC -shared -I tracers/include -o {path} mytracer.c` (API: tracers/include/tracebench.h), tracebench's examples with `make plugins`, or correct the path)")]
    NotFound { path: String },
    #[error("plugin '{path}': dlopen failed: {why} (fix: give a shared object built with -shared -fPIC whose dependencies are installed)")]
    Load { path: String, why: String },
    #[error("plugin '{path}': missing symbol `{SYMBOL}` (fix: export `const struct tracebench_tracer_v1 tracebench_tracer_v1` with default visibility; {HOWTO})")]
    MissingSymbol { path: String },
    #[error("plugin '{path}': ABI version {found} in {symbol}, this tracebench speaks {expected} there (fix: rebuild the plugin against this tracebench's tracers/include/tracebench.h)")]
    AbiVersion { path: String, symbol: &'static str, found: u32, expected: u32 },
    #[error("plugin '{path}' ({name}): {why}")]
    Payload { path: String, name: String, why: String },
    #[error("plugin '{path}': `{field}` is NULL in {SYMBOL} (fix: set it; only thread_init may be NULL; {HOWTO})")]
    NullField { path: String, field: &'static str },
    #[error("plugin '{path}' ({name}): init failed: {why}")]
    Init { path: String, name: String, why: String },
    #[error("plugin '{path}' ({name}): thread_init on cpu {cpu} returned {rc}")]
    ThreadInit { path: String, name: String, cpu: usize, rc: c_int },
    #[error("plugin '{path}': loading it {why} (fix: check the plugin's constructors, e.g. run it under gdb)")]
    LoadCrashed { path: String, why: String },
    /// An error found in the validation child, already formatted.
    #[error("{0}")]
    Checked(String),
}

impl From<PluginError> for TracerError {
    fn from(e: PluginError) -> Self {
        TracerError::Plugin(e.to_string())
    }
}

type InitFn = unsafe extern "C" fn(*const c_char, *mut *mut c_void, *mut c_char, usize) -> c_int;
type BufferEventsFn = unsafe extern "C" fn(*mut c_void) -> u64;
type ThreadInitFn = unsafe extern "C" fn(*mut c_void, c_uint) -> c_int;
type FireFn = unsafe extern "C" fn(*mut c_void, u32);
type FiniFn = unsafe extern "C" fn(*mut c_void);
type FireBytesFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize);
type BufferEventsForFn = unsafe extern "C" fn(*mut c_void, usize) -> u64;

/// Mirror of `struct tracebench_tracer_v1`.
#[repr(C)]
struct TracerV1 {
    abi_version: u32,
    name: *const c_char,
    version: *const c_char,
    init: Option<InitFn>,
    buffer_events: Option<BufferEventsFn>,
    thread_init: Option<ThreadInitFn>,
    fire: Option<FireFn>,
    fini: Option<FiniFn>,
}

/// Mirror of `struct tracebench_tracer_v2`: the v1 struct, then the payload-size fields.
#[repr(C)]
struct TracerV2 {
    v1: TracerV1,
    max_payload: u32,
    fire_bytes: Option<FireBytesFn>,
    buffer_events_for: Option<BufferEventsForFn>,
}

/// A parsed `plugin:PATH[:ARGS]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSpec {
    pub path: String,
    /// Everything after the second ':' verbatim (may contain ':'); `None` when absent.
    pub args: Option<String>,
}

impl PluginSpec {
    /// Parses the full spec, `plugin:` included.
    pub fn parse(spec: &str) -> Result<Self, PluginError> {
        let rest = spec.strip_prefix("plugin:").ok_or_else(|| PluginError::Spec {
            spec: spec.into(),
            why: "a plugin spec starts with 'plugin:'".into(),
        })?;
        let (path, args) = match rest.split_once(':') {
            Some((p, a)) => (p, Some(a.to_string())),
            None => (rest, None),
        };
        if path.is_empty() {
            return Err(PluginError::Spec { spec: spec.into(), why: "the path is empty".into() });
        }
        Ok(PluginSpec { path: path.into(), args })
    }

    /// The file as dlopen gets it: absolute, so that dlopen never searches the library path for
    /// a bare file name and loads something other than the file the user named.
    fn resolve(&self) -> Result<PathBuf, PluginError> {
        let p = Path::new(&self.path);
        if !p.is_file() {
            return Err(PluginError::NotFound { path: self.path.clone() });
        }
        std::fs::canonicalize(p).map_err(|e| PluginError::Load { path: self.path.clone(), why: e.to_string() })
    }
}

/// A loaded, checked library whose init has not run.
struct Loaded {
    // Never dlclose'd: the measuring process exits right after the cell, and unloading code
    // that may have registered TLS destructors or atexit handlers is a classic source of
    // crashes at exit that would be blamed on the wrong thing.
    _lib: ManuallyDrop<Library>,
    vt: &'static TracerV1,
    /// The v2 fields, for a v2 plugin.
    v2: Option<&'static TracerV2>,
    name: String,
    version: String,
    abs: PathBuf,
}

impl Loaded {
    /// The largest `--payload-size` the plugin takes (0: the default 4 only).
    fn max_payload(&self) -> u32 {
        self.v2.filter(|v| v.fire_bytes.is_some()).map_or(0, |v| v.max_payload)
    }
}

/// What [`validate`] learns about a plugin without calling its init.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    /// Its row name in results.
    pub name: String,
    /// 1 or 2 (tracebench.h).
    pub abi: u32,
    /// The largest `--payload-size` it takes; 0 when it records the default 4 bytes only.
    pub max_payload: u32,
}

fn cstr(p: *const c_char) -> String {
    // SAFETY: checked non-NULL by the caller; the ABI requires a static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// dlopen + dlsym + ABI checks, in this process, without calling init.
fn load(spec: &PluginSpec) -> Result<Loaded, PluginError> {
    let abs = spec.resolve()?;
    let path = spec.path.clone();
    // RTLD_NOW: an unresolved symbol is an error here, not a crash in the middle of a run.
    // RTLD_LOCAL: two plugins never see each other's symbols.
    // SAFETY: loading runs the library's constructors; that is the contract of a plugin.
    let lib = unsafe { Library::open(Some(&abs), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| PluginError::Load { path: path.clone(), why: dl_cause(&e) })?;
    // v2 first; a v1 plugin exports only the v1 symbol. Both start with abi_version, which is
    // checked before any other field is read: a different ABI may have a different layout.
    // SAFETY: the symbols are data objects; Symbol<*const T> holds their address.
    let (vt, v2) = match unsafe { lib.get::<*const TracerV2>(SYMBOL_V2.as_bytes()) } {
        Ok(s) if !s.is_null() => {
            // SAFETY: the library stays loaded for the life of the process (never dlclose'd).
            let v: &'static TracerV2 = unsafe { &**s };
            if v.v1.abi_version != ABI_VERSION_2 {
                let found = v.v1.abi_version;
                return Err(PluginError::AbiVersion {
                    path,
                    symbol: "tracebench_tracer_v2",
                    found,
                    expected: ABI_VERSION_2,
                });
            }
            (&v.v1, Some(v))
        }
        _ => {
            let vt: *const TracerV1 = match unsafe { lib.get::<*const TracerV1>(SYMBOL.as_bytes()) } {
                Ok(s) => *s,
                Err(_) => return Err(PluginError::MissingSymbol { path }),
            };
            if vt.is_null() {
                return Err(PluginError::MissingSymbol { path });
            }
            // SAFETY: as above.
            let vt: &'static TracerV1 = unsafe { &*vt };
            if vt.abi_version != ABI_VERSION {
                let found = vt.abi_version;
                return Err(PluginError::AbiVersion {
                    path,
                    symbol: "tracebench_tracer_v1",
                    found,
                    expected: ABI_VERSION,
                });
            }
            (vt, None)
        }
    };
    let null = |field| Err(PluginError::NullField { path: path.clone(), field });
    if vt.name.is_null() {
        return null("name");
    }
    if vt.version.is_null() {
        return null("version");
    }
    if vt.init.is_none() {
        return null("init");
    }
    if vt.buffer_events.is_none() {
        return null("buffer_events");
    }
    if vt.fire.is_none() {
        return null("fire");
    }
    if vt.fini.is_none() {
        return null("fini");
    }
    if let Some(v) = v2 {
        if v.max_payload > 0 && v.fire_bytes.is_none() {
            return null("fire_bytes");
        }
    }
    Ok(Loaded { _lib: ManuallyDrop::new(lib), vt, v2, name: cstr(vt.name), version: cstr(vt.version), abs })
}

/// dlerror's text without the path it repeats.
fn dl_cause(e: &libloading::Error) -> String {
    use std::error::Error as _;
    let s = e.source().map(|s| s.to_string()).unwrap_or_else(|| e.to_string());
    match s.split_once(": ") {
        Some((head, tail)) if head.starts_with('/') => tail.to_string(),
        _ => s,
    }
}

/// One loaded plugin, initialised and ready to fire.
#[repr(C)]
pub struct Plugin {
    // ctx and fire first, side by side: Tracer::fire reads exactly these two words.
    ctx: *mut c_void,
    fire: FireFn,
    vt: &'static TracerV1,
    lib: Loaded,
    spec: PluginSpec,
    /// `--payload-size` other than 4: the bytes, and the v2 entry point that records them.
    blob: Option<(Payload, FireBytesFn)>,
}

// SAFETY: the ABI (tracebench.h) requires fire/thread_init to be callable concurrently from
// the measuring threads, each pinned to its own CPU; init and fini run on one thread with no
// other call in flight.
unsafe impl Send for Plugin {}
unsafe impl Sync for Plugin {}

impl Plugin {
    /// Loads, checks and initialises the plugin named by `spec` (`plugin:PATH[:ARGS]`).
    pub fn create(spec: &str, payload_size: u32) -> Result<Plugin, PluginError> {
        let spec = PluginSpec::parse(spec)?;
        let lib = load(&spec)?;
        let payload = Payload::for_size(payload_size);
        if payload.is_some() {
            check_payload(&spec.path, &lib.name, lib.max_payload(), lib.v2.is_some(), payload_size)?;
        }
        let vt = lib.vt;
        let args = CString::new(spec.args.clone().unwrap_or_default())
            .map_err(|_| PluginError::Spec { spec: spec.path.clone(), why: "ARGS contain a NUL byte".into() })?;
        let mut ctx: *mut c_void = std::ptr::null_mut();
        let mut err = [0 as c_char; ERR_LEN];
        // SAFETY: checked non-NULL in load(); err is ERR_LEN bytes and zeroed, so the message
        // is NUL-terminated even if the plugin forgets.
        let rc = unsafe { (vt.init.unwrap())(args.as_ptr(), &mut ctx, err.as_mut_ptr(), ERR_LEN - 1) };
        if rc != 0 {
            let msg = cstr(err.as_ptr());
            let why = if msg.trim().is_empty() { format!("init returned {rc} without a message") } else { msg };
            return Err(PluginError::Init { path: spec.path.clone(), name: lib.name.clone(), why });
        }
        // check_payload has made sure fire_bytes exists.
        let blob = payload.map(|p| (p, lib.v2.and_then(|v| v.fire_bytes).unwrap()));
        Ok(Plugin { ctx, fire: vt.fire.unwrap(), vt, lib, spec, blob })
    }

    pub fn path(&self) -> &Path {
        &self.lib.abs
    }
}

impl Tracer for Plugin {
    fn name(&self) -> &str {
        &self.lib.name
    }
    fn version(&self) -> String {
        self.lib.version.clone()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "plugin",
            "path": self.lib.abs.display().to_string(),
            "args": self.spec.args,
            "abi_version": self.vt.abi_version,
            "max_payload": self.lib.max_payload(),
            "call": match &self.blob {
                None => "fire(ctx, payload)".to_string(),
                Some((p, _)) => format!("fire_bytes(ctx, data, {})", p.len()),
            },
        })
    }
    fn buffer_events(&self) -> u64 {
        if let (Some((p, _)), Some(f)) = (&self.blob, self.lib.v2.and_then(|v| v.buffer_events_for)) {
            // SAFETY: ABI v2 contract; ctx came from init.
            return unsafe { f(self.ctx, p.len()) };
        }
        // SAFETY: checked non-NULL in load().
        unsafe { (self.vt.buffer_events.unwrap())(self.ctx) }
    }
    fn thread_init(&self, cpu: usize) -> Result<(), TracerError> {
        let Some(f) = self.vt.thread_init else {
            return Ok(());
        };
        // SAFETY: ABI contract; called on the measuring thread after pinning.
        let rc = unsafe { f(self.ctx, cpu as c_uint) };
        if rc != 0 {
            let (path, name) = (self.spec.path.clone(), self.lib.name.clone());
            return Err(PluginError::ThreadInit { path, name, cpu, rc }.into());
        }
        Ok(())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some((p, f)) = &self.blob {
            // SAFETY: as below; the bytes live as long as the Plugin.
            return unsafe { f(self.ctx, p.as_ptr().cast(), p.len()) };
        }
        // SAFETY: ctx came from this plugin's init; the ABI makes fire thread-safe per CPU.
        unsafe { (self.fire)(self.ctx, payload) }
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        // SAFETY: init succeeded (a Plugin exists only then); no fire is in flight.
        unsafe { (self.vt.fini.unwrap())(self.ctx) }
    }
}

/// Whether a plugin takes `--payload-size size` (not 4): a v2 plugin, up to its max_payload.
fn check_payload(path: &str, name: &str, max: u32, v2: bool, size: u32) -> Result<(), PluginError> {
    let why = if !v2 {
        format!(
            "--payload-size {size}: an ABI v1 plugin records the default 4-byte payload only (fix: export \
             tracebench_tracer_v2 with fire_bytes, see tracers/include/tracebench.h)"
        )
    } else if max == 0 {
        format!("--payload-size {size}: its max_payload is 0, so it records the default 4-byte payload only")
    } else if size == 0 || size > max {
        format!("--payload-size {size}: it records 1 to {max} bytes per event (its max_payload)")
    } else {
        return Ok(());
    };
    Err(PluginError::Payload { path: path.into(), name: name.into(), why })
}

/// Checks that the plugin of `spec` takes `--payload-size size`, without calling init.
pub fn validate_payload(spec: &str, size: u32) -> Result<(), PluginError> {
    let info = validate_info(spec)?;
    check_payload(&PluginSpec::parse(spec)?.path, &info.name, info.max_payload, info.abi == ABI_VERSION_2, size)
}

/// Checks a plugin spec without calling init: the file exists, loads with all its symbols
/// resolved, exports `tracebench_tracer_v1` with this ABI version and the mandatory fields.
/// Runs in a forked child so that the library's constructors never run in the caller.
/// Returns the plugin's `name` (its row name in results).
pub fn validate(spec: &str) -> Result<String, PluginError> {
    validate_info(spec).map(|i| i.name)
}

mod check;
pub use check::validate_info;

#[cfg(test)]
mod tests;
