//! `otf` and `otf2`: the trace writers of the HPC tracers of survey section 5.2, measured for real.
//! Neither VampirTrace nor Score-P is packaged in Debian, but the formats they write
//! are: OTF 1 (libopen-trace-format1, VampirTrace's format) and OTF2 (libopen-trace-format2-10,
//! Score-P's). These backends are the **event writers** of those formats, not the tracers'
//! measurement systems (no region filter, no profiling, no MPI): one call is the writer's part of
//! a VampirTrace/Score-P event, an enter record with a timestamp, into a real trace archive.
//!
//! What fires (one record per call, survey Table 4's "one event"):
//! - `otf`: `OTF_Writer_writeEnter(writer, time, region, process, 0)` (v1.rs);
//! - `otf2`: `OTF2_EvtWriter_Enter(writer, NULL, time, region)` (v2.rs).
//!
//! `time` is CLOCK_MONOTONIC in ns (the vDSO call is part of the cost, as a tracer takes its own
//! timestamp); `region` is [`region`]`(payload)`: the payload with a marker bit, so that every
//! record has the same size (both formats write the region with a variable-length encoding) and
//! the flush comes at a fixed period.
//!
//! The flush is a code path (survey 7.1: VampirTrace's std comes from a flush every 85 events):
//! OTF 1 writes its buffer to the file when the next record does not fit (`--otf-buffer-size`);
//! OTF2 flushes when its memory callbacks refuse a new chunk, as Score-P's do when its memory is
//! used up, and here each location owns one chunk (`--otf2-chunk-size`, OTF2_Archive_Open's
//! event chunk size). Each backend declares its geometry (bytes per record, bytes per buffer) in
//! `after_run`, so the report prints the period it predicts beside the one it finds.
//!
//! The libraries are dlopen()ed by soname from the dynamic linker's path, like the HPC backends
//! (hpc.rs): a build needs neither package, and `tracebench list` says what to install when the
//! runtime library is missing. The archive goes into a private working directory
//! (`owned::private_workdir`), removed after the cell, or kept with `--keep-trace`.
use std::path::{Path, PathBuf};

use crate::{owned, TracerError};

pub mod v1;
pub mod v2;

/// Working directory name prefixes: `otf-PID-*` while the cell runs (a later run removes those of
/// a killed one, [`reap_leftovers`]); `otf-kept-PID-*` once kept, which nothing removes.
pub(crate) const WORKDIR_PREFIX: &str = "otf";
const KEPT_PREFIX: &str = "otf-kept";

/// The region of one record: the payload's low 24 bits with bit 24 set, so that every region
/// takes the same bytes (4 in OTF2's compressed integers, 7 hex digits in OTF 1's text).
#[inline(always)]
pub fn region(payload: u32) -> u32 {
    0x0100_0000 | (payload & 0x00FF_FFFF)
}

/// CLOCK_MONOTONIC in ns (vDSO), each record's timestamp.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One writer library: its runtime shared object and what to tell a user who lacks it.
pub struct Lib {
    pub name: &'static str,
    /// The runtime soname first (what the Debian runtime package ships), then the -dev link.
    pub sonames: &'static [&'static str],
    pub package: &'static str,
}

pub const OTF: Lib = Lib {
    name: "otf",
    sonames: &["libopen-trace-format.so.1", "libopen-trace-format.so"],
    package: "libopen-trace-format-dev",
};
pub const OTF2: Lib = Lib {
    name: "otf2",
    sonames: &["libopen-trace-format2.so.10", "libopen-trace-format2.so"],
    package: "libopen-trace-format2-dev",
};

impl Lib {
    /// The library the dynamic linker would load, if this machine has one (no side effects).
    pub fn find(&self) -> Option<PathBuf> {
        self.sonames.iter().find_map(|s| crate::sys::ld_cache_path(s))
    }

    /// `Ok` when the library is here; otherwise (why, fix) for `tracebench list`.
    pub fn availability(&self) -> Result<(), (String, String)> {
        match self.find() {
            Some(_) => Ok(()),
            None => Err((
                format!("{} not found by the dynamic linker", self.sonames[0]),
                format!("scripts/setup.sh or apt-get install {}", self.package),
            )),
        }
    }

    /// dlopen()s the library. RTLD_LOCAL: nothing else needs its symbols.
    pub fn open(&self) -> Result<(libloading::Library, PathBuf), TracerError> {
        let path = self.find().ok_or_else(|| {
            let (why, fix) = self.availability().err().unwrap_or_default();
            TracerError::Unavailable { name: self.name.into(), why, fix }
        })?;
        // SAFETY: loading the writer library runs no code beyond its (empty) constructors.
        let lib = unsafe { libloading::Library::new(&path) }
            .map_err(|e| TracerError::setup(self.name, format!("dlopen {}: {e}", path.display())))?;
        Ok((lib, path))
    }
}

/// A symbol of `lib` as the function-pointer type `T` of its C prototype.
pub(crate) fn sym<T: Copy>(lib: &libloading::Library, name: &str, tracer: &str, path: &Path) -> Result<T, TracerError> {
    // SAFETY: T is the function-pointer type of the documented C prototype.
    unsafe { lib.get::<T>(name.as_bytes()) }.map(|s| *s).map_err(|_| {
        TracerError::setup(tracer, format!("{} has no symbol {name}: not the expected library", path.display()))
    })
}

/// `8k`, `256K`, `1M`, `4096` -> bytes.
pub fn parse_size(v: &str) -> Option<u64> {
    let t = v.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1024),
        (i, 'm' | 'M') => (&t[..i], 1024 * 1024),
        _ => (t, 1),
    };
    num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult))
}

/// A buffer size option: `None` gives `default`; a value outside `lo..=hi` is refused with the
/// range (checked up front by the plan, `Knob::check`, and again in `create`).
pub fn check_size(flag: &str, v: Option<&str>, default: u64, lo: u64, hi: u64) -> Result<u64, String> {
    let Some(v) = v else { return Ok(default) };
    match parse_size(v) {
        Some(b) if (lo..=hi).contains(&b) => Ok(b),
        Some(b) => Err(format!("{flag} {v}: {b} bytes is outside {lo}..={hi}")),
        None => Err(format!("{flag} {v}: not a size in bytes (e.g. 8192, 8k, 1M)")),
    }
}

/// The geometry a writer declares (survey 7.1: the slow path every BUFFER / EVENT events), read
/// by the report (`report::against::expected_period`) to print the period it predicts.
/// `per`: the records between two flushes, not a whole number where a record can straddle two
/// buffers (OTF 1 writes a record's lines one at a time).
pub fn geometry(buffer_bytes: u64, record_bytes: u64, per: f64, how: &str) -> serde_json::Value {
    let per = (per * 100.0).round() / 100.0;
    serde_json::json!({
        "buffer_bytes": buffer_bytes,
        "record_bytes": record_bytes,
        "events_per_flush": per,
        "how": how,
    })
}

/// The archive's private directory: removed when the cell ends, or kept (renamed
/// `otf-kept-PID-*`, so no later run reaps it) with `--keep-trace`.
pub struct TraceDir {
    dir: Option<tempfile::TempDir>,
    keep: bool,
    pub kept: std::sync::Mutex<Option<PathBuf>>,
}

impl TraceDir {
    pub fn new(name: &str, keep: bool) -> Result<TraceDir, TracerError> {
        let dir = owned::private_workdir(WORKDIR_PREFIX)
            // "no private state directory (...)": owned.rs says which directories it tried.
            .map_err(|e| TracerError::setup(name, e.to_string()))?;
        Ok(TraceDir { dir: Some(dir), keep, kept: std::sync::Mutex::new(None) })
    }

    pub fn path(&self) -> &Path {
        self.dir.as_ref().map(|d| d.path()).unwrap_or(Path::new(""))
    }

    /// Where the archive is written (`dir`) and, with `--keep-trace`, where it will be kept
    /// (`kept_in`): for run.json.
    pub fn describe(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "keep_trace": self.keep, "dir": self.path().display().to_string() });
        if self.keep {
            v["kept_in"] = Self::kept_path(self.path()).display().to_string().into();
        }
        v
    }

    /// otf-PID-xxxx -> otf-kept-PID-xxxx, in the same private directory.
    fn kept_path(from: &Path) -> PathBuf {
        let name = from.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        from.with_file_name(name.replacen(WORKDIR_PREFIX, KEPT_PREFIX, 1))
    }

    /// Called once the writer closed its files: keeps or removes the directory.
    pub fn finish(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        if !self.keep {
            return; // TempDir removes it.
        }
        let from = dir.keep();
        // Renamed within the private directory (atomic), out of the reach of reap_leftovers.
        let to = Self::kept_path(&from);
        let at = if std::fs::rename(&from, &to).is_ok() { to } else { from };
        eprintln!("tracebench: trace kept in {}", at.display());
        *self.kept.lock().unwrap() = Some(at);
    }
}

/// Removes the working directories of killed runs (their Drop never ran); kept ones stay.
pub fn reap_leftovers() {
    for d in owned::stale_workdirs(WORKDIR_PREFIX) {
        if std::fs::remove_dir_all(&d).is_ok() {
            eprintln!("tracebench: removed {}, left by a run that was killed", d.display());
        }
    }
}

/// A per-thread writer handle for `fire`: (tracer instance, writer). The instance number keeps a
/// thread from using the writer of an earlier tracer of the same process (tests create several).
pub(crate) mod slot {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, Ordering};

    thread_local! {
        static SLOT: Cell<(u64, *mut std::ffi::c_void)> = const { Cell::new((0, std::ptr::null_mut())) };
    }
    static NEXT: AtomicU64 = AtomicU64::new(1);

    pub fn new_instance() -> u64 {
        NEXT.fetch_add(1, Ordering::Relaxed)
    }
    #[inline(always)]
    pub fn get(instance: u64) -> *mut std::ffi::c_void {
        SLOT.with(|s| {
            let (i, p) = s.get();
            if i == instance {
                p
            } else {
                std::ptr::null_mut()
            }
        })
    }
    pub fn set(instance: u64, p: *mut std::ffi::c_void) {
        SLOT.with(|s| s.set((instance, p)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_ranges_are_checked() {
        assert_eq!(parse_size("8k"), Some(8192));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(check_size("--otf-buffer-size", None, 8192, 1024, 1 << 24), Ok(8192));
        let e = check_size("--otf-buffer-size", Some("12"), 8192, 1024, 1 << 24).unwrap_err();
        assert!(e.contains("is outside 1024"), "{e}");
        let e = check_size("--otf-buffer-size", Some("big"), 8192, 1024, 1 << 24).unwrap_err();
        assert!(e.contains("not a size in bytes"), "{e}");
    }

    #[test]
    fn a_missing_library_says_which_and_how_to_install_it() {
        let lib = Lib { name: "otf", sonames: &["libtb-no-such-writer.so.9"], package: "libtb-no-such-dev" };
        let (why, fix) = lib.availability().unwrap_err();
        assert_eq!(why, "libtb-no-such-writer.so.9 not found by the dynamic linker");
        assert_eq!(fix, "scripts/setup.sh or apt-get install libtb-no-such-dev");
        let e = lib.open().err().unwrap().to_string();
        assert!(e.contains("tracer 'otf' is not available here") && e.contains("(fix: scripts/setup.sh"), "{e}");
    }

    #[test]
    fn a_library_without_the_symbol_is_named_with_it() {
        let path = Path::new("libc.so.6");
        // SAFETY: libc is already loaded in this process.
        let lib = unsafe { libloading::Library::new(path) }.unwrap();
        let e = sym::<unsafe extern "C" fn()>(&lib, "OTF2_Archive_Open", "otf2", path).err().unwrap().to_string();
        assert!(e.contains("libc.so.6 has no symbol OTF2_Archive_Open: not the expected library"), "{e}");
        assert!(sym::<unsafe extern "C" fn()>(&lib, "getpid", "otf2", path).is_ok());
    }

    #[test]
    fn regions_take_the_same_bytes_whatever_the_payload() {
        for p in [0, 1, 255, 65_536, 0x00FF_FFFF, u32::MAX] {
            assert_eq!(format!("{:x}", region(p)).len(), 7, "{p}");
        }
        let g = geometry(8192, 23, 8192.0 / 23.0, "");
        assert_eq!(g["events_per_flush"], 356.17);
    }
}
