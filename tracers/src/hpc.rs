//! `extrae`, `scorep`, `vampirtrace`: the HPC tracers of survey section 5.2 (5.2.4 Extrae,
//! 5.2.5 VampirTrace, and Score-P, VampirTrace's successor), wrapped when a user has them.
//!
//! None of them is packaged in Debian, so they cannot be installed on the machines this project
//! tests on: each backend finds its library (the dynamic linker's cache, `ldconfig -p`, then
//! the usual install prefixes and `EXTRAE_HOME`, `SCOREP_ROOT`, `VT_ROOT`), dlopens it and calls
//! its user API. Where it is missing, `tracebench list` says what to install.
//!
//! What fires, as the survey measured it:
//! - Extrae: `Extrae_event(type, value)`, its only static tracepoint (5.2.4): a type and a
//!   value; the value is payload + 1 because 0 means "end" to Paraver.
//! - VampirTrace: an empty user region, `VT_User_start__` then `VT_User_end__` (5.2.5: "an empty
//!   section to trace, but generates an event on each loop").
//! - Score-P: the same empty user region through `SCOREP_User_RegionBegin`/`RegionEnd`.
//!
//! These wrappers are written against the documented user APIs but could not be run here (no
//! library to load); the detection, the error messages and the availability lines are tested.
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::path::{Path, PathBuf};

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

use crate::{Tracer, TracerError};

/// One wrapped HPC tracer: how to find it and what to tell a user who lacks it.
pub struct Hpc {
    pub name: &'static str,
    /// Shared objects to look for, preferred first (the thread-safe variant first: the harness
    /// measures from several pinned threads).
    pub libs: &'static [&'static str],
    /// Environment variables naming an install prefix (`$VAR/lib/<lib>`).
    pub env: &'static [&'static str],
    pub description: &'static str,
    pub fix: &'static str,
}

pub const EXTRAE: Hpc = Hpc {
    name: "extrae",
    libs: &["libpttrace.so", "libseqtrace.so"],
    env: &["EXTRAE_HOME"],
    description: "Extrae (BSC): Extrae_event(type, payload+1), survey 5.2.4",
    fix: "build Extrae (not packaged in Debian) from BSC's sources, then set EXTRAE_HOME to its prefix \
          or add its lib directory to ldconfig; Extrae reads its settings from EXTRAE_CONFIG_FILE",
};

pub const SCOREP: Hpc = Hpc {
    name: "scorep",
    libs: &["libscorep_adapter_user_event.so"],
    env: &["SCOREP_ROOT", "SCOREP_HOME"],
    description: "Score-P: an empty user region (SCOREP_User_RegionBegin/End), survey 5.2.5",
    fix: "build Score-P (not packaged in Debian) and set SCOREP_ROOT to its prefix or add its lib directory \
          to ldconfig; SCOREP_ENABLE_TRACING=true to trace rather than profile",
};

pub const VAMPIRTRACE: Hpc = Hpc {
    name: "vampirtrace",
    libs: &["libvt-mt.so", "libvt.so"],
    env: &["VT_ROOT", "VAMPIRTRACE_ROOT"],
    description: "VampirTrace: an empty user region (VT_User_start__/end__), survey 5.2.5",
    fix: "build VampirTrace 5.14 (not packaged in Debian; superseded by Score-P) and set VT_ROOT to its prefix \
          or add its lib directory to ldconfig",
};

pub const ALL: [&Hpc; 3] = [&EXTRAE, &SCOREP, &VAMPIRTRACE];

impl Hpc {
    /// The library to load, if this machine has one.
    pub fn find(&self) -> Option<PathBuf> {
        for lib in self.libs {
            let cached = crate::sys::ld_cache_path(lib);
            if cached.is_some() {
                return cached;
            }
            let prefixes = self
                .env
                .iter()
                .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
                .chain(["/usr/local", "/opt"].iter().map(PathBuf::from))
                .chain(std::iter::once(Path::new("/opt").join(self.name)));
            for p in prefixes {
                for dir in ["lib", "lib64"] {
                    let f = p.join(dir).join(lib);
                    if f.is_file() {
                        return Some(f);
                    }
                }
            }
        }
        None
    }

    /// `Ok` when the library is here; otherwise (why, fix) for `tracebench list`.
    pub fn availability(&self) -> Result<(), (String, String)> {
        match self.find() {
            Some(_) => Ok(()),
            None => Err((format!("{} not found", self.libs.join(" or ")), self.fix.to_string())),
        }
    }

    fn unavailable(&self) -> TracerError {
        TracerError::Unavailable {
            name: self.name.into(),
            why: format!("{} not found", self.libs.join(" or ")),
            fix: self.fix.into(),
        }
    }

    fn open(&self) -> Result<(Library, PathBuf), TracerError> {
        let path = self.find().ok_or_else(|| self.unavailable())?;
        // RTLD_GLOBAL: these libraries dlopen or expect parts of themselves (measurement
        // core, PAPI, OTF) to see each other's symbols, as when linked into an application.
        // SAFETY: runs the tracer's constructors; that is what loading a tracer means.
        let lib = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| TracerError::Setup {
            name: self.name.into(),
            why: format!("dlopen {}: {e}", path.display()),
        })?;
        Ok((lib, path))
    }
}

fn sym<T: Copy>(lib: &Library, name: &str, tracer: &str, path: &Path) -> Result<T, TracerError> {
    // SAFETY: T is the function-pointer type of the documented C prototype.
    unsafe { lib.get::<T>(name.as_bytes()) }.map(|s| *s).map_err(|_| TracerError::Setup {
        name: tracer.into(),
        why: format!("{} has no symbol {name}: not the expected library or version", path.display()),
    })
}

/// Extrae's type for our events, in the user range (Paraver's convention).
const EXTRAE_TYPE: c_uint = 81_000;
const REGION: &std::ffi::CStr = c"tracebench_fire";
const FILE: &std::ffi::CStr = c"tracebench.c";

type ExtraeEvent = unsafe extern "C" fn(c_uint, c_ulonglong);
type VoidFn = unsafe extern "C" fn();
type VtStart = unsafe extern "C" fn(*const c_char, *const c_char, c_int);
type VtEnd = unsafe extern "C" fn(*const c_char);
type ScorepBegin =
    unsafe extern "C" fn(*mut *mut c_void, *mut *const c_char, *mut usize, *const c_char, c_uint, *const c_char, u32);
type ScorepEnd = unsafe extern "C" fn(*mut c_void);

enum Api {
    Extrae {
        event: ExtraeEvent,
        fini: VoidFn,
    },
    Vt {
        start: VtStart,
        end: VtEnd,
    },
    // The region handle, file-name cache and file handle of SCOREP_USER_REGION_DEFINE, filled by
    // Score-P on the first Begin (done in `create`, outside the timed window).
    Scorep {
        begin: ScorepBegin,
        end: ScorepEnd,
        handle: UnsafeCell<*mut c_void>,
        last: UnsafeCell<(*const c_char, usize)>,
    },
}

pub struct HpcTracer {
    api: Api,
    name: &'static str,
    path: PathBuf,
    _lib: Library,
}

// SAFETY: the multi-threaded variants of these libraries are chosen first and keep per-thread
// state themselves; the Score-P handle is written once in `create` before any thread starts.
unsafe impl Send for HpcTracer {}
unsafe impl Sync for HpcTracer {}

/// Creates `extrae`, `scorep` or `vampirtrace`.
pub fn create(h: &Hpc) -> Result<HpcTracer, TracerError> {
    let (lib, path) = h.open()?;
    let api = match h.name {
        "extrae" => {
            let init: VoidFn = sym(&lib, "Extrae_init", h.name, &path)?;
            let event = sym(&lib, "Extrae_event", h.name, &path)?;
            let fini = sym(&lib, "Extrae_fini", h.name, &path)?;
            // SAFETY: documented entry point, called once.
            unsafe { init() };
            Api::Extrae { event, fini }
        }
        "vampirtrace" => Api::Vt {
            start: sym(&lib, "VT_User_start__", h.name, &path)?,
            end: sym(&lib, "VT_User_end__", h.name, &path)?,
        },
        _ => {
            let begin: ScorepBegin = sym(&lib, "SCOREP_User_RegionBegin", h.name, &path)?;
            let end: ScorepEnd = sym(&lib, "SCOREP_User_RegionEnd", h.name, &path)?;
            let api = Api::Scorep {
                begin,
                end,
                handle: UnsafeCell::new(std::ptr::null_mut()),
                last: UnsafeCell::new((std::ptr::null(), 0)),
            };
            // First Begin/End registers the region (what SCOREP_USER_REGION_BEGIN does once).
            fire_api(&api, 0);
            api
        }
    };
    Ok(HpcTracer { api, name: h.name, path, _lib: lib })
}

#[inline(always)]
fn fire_api(api: &Api, payload: u32) {
    // SAFETY: pointers resolved from the library's documented user API.
    unsafe {
        match api {
            Api::Extrae { event, .. } => event(EXTRAE_TYPE, c_ulonglong::from(payload) + 1),
            Api::Vt { start, end } => {
                start(REGION.as_ptr(), FILE.as_ptr(), 1);
                end(REGION.as_ptr());
            }
            Api::Scorep { begin, end, handle, last } => {
                let l = &mut *last.get();
                // 0 = SCOREP_USER_REGION_TYPE_COMMON.
                begin(handle.get(), &mut l.0, &mut l.1, REGION.as_ptr(), 0, FILE.as_ptr(), 1);
                end(*handle.get());
            }
        }
    }
}

impl Tracer for HpcTracer {
    fn name(&self) -> &str {
        self.name
    }
    fn version(&self) -> String {
        // The libraries export no version call common to all three; the resolved file (with
        // its soname version, if any) is what identifies the build.
        std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone()).display().to_string()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({ "library": self.path.display().to_string() })
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        fire_api(&self.api, payload)
    }
}

impl Drop for HpcTracer {
    fn drop(&mut self) {
        if let Api::Extrae { fini, .. } = self.api {
            // SAFETY: documented; flushes Extrae's buffers.
            unsafe { fini() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_says_what_is_needed() {
        for h in ALL {
            if h.find().is_some() {
                println!("{} is installed here: the unavailable path is not exercised", h.name);
                continue;
            }
            let (why, fix) = h.availability().unwrap_err();
            assert!(why.contains(h.libs[0]), "{why}");
            assert!(fix.contains("not packaged in Debian"), "{fix}");
            let e = create(h).err().unwrap().to_string();
            assert!(e.contains(h.name) && e.contains("not found") && e.contains("fix:"), "{e}");
        }
    }

    #[test]
    fn finds_a_library_under_an_env_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/libtb_fake_tracer.so"), b"").unwrap();
        let h = Hpc {
            name: "fake",
            libs: &["libtb_fake_tracer.so"],
            env: &["TB_FAKE_TRACER_HOME"],
            description: "",
            fix: "",
        };
        assert_eq!(h.find(), None);
        std::env::set_var("TB_FAKE_TRACER_HOME", &dir);
        assert_eq!(h.find(), Some(dir.join("lib/libtb_fake_tracer.so")));
        std::env::remove_var("TB_FAKE_TRACER_HOME");
    }
}
