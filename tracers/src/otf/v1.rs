//! `otf`: OTF 1's writer (libopen-trace-format, VampirTrace's trace format), one
//! `OTF_Writer_writeEnter` per call into a buffer of `--otf-buffer-size` bytes that the library
//! writes to the stream's file when the next record does not fit (survey 5.2.5, 7.1).
//!
//! OTF 1 is a text format. With an uncompressed stream one enter record is three lines: the
//! timestamp in hex (when it changed), the process (`*1`), the record (`E1000005`), so its size
//! follows from the timestamp's and the region's hex digits ([`record_bytes`]); the test
//! `otf_writes_the_records_it_declares` (tests/otf.rs) checks it against the file written.
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::Mutex;

use super::{check_size, geometry, now_ns, region, slot, sym, TraceDir, OTF};
use crate::{CreateOptions, Tracer, TracerError};

/// 8 KiB: the survey's sub-buffer size for LTTng (6.2.3), which puts the flush every ~356 calls.
pub const DEFAULT_BUFFER: u64 = 8 * 1024;
/// The smallest buffer that holds a few records, and 16 MiB.
pub const MIN_BUFFER: u64 = 1024;
pub const MAX_BUFFER: u64 = 16 << 20;

type FmOpen = unsafe extern "C" fn(u32) -> *mut c_void;
type FmClose = unsafe extern "C" fn(*mut c_void);
type WOpen = unsafe extern "C" fn(*const c_char, u32, *mut c_void) -> *mut c_void;
type WClose = unsafe extern "C" fn(*mut c_void) -> c_int;
type WSetBuf = unsafe extern "C" fn(*mut c_void, u32);
type WSetComp = unsafe extern "C" fn(*mut c_void, u32) -> c_int;
type WTimer = unsafe extern "C" fn(*mut c_void, u32, u64) -> c_int;
type WProcess = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_char, u32) -> c_int;
type WEnter = unsafe extern "C" fn(*mut c_void, u64, u32, u32, u32) -> c_int;

struct Api {
    fm_open: FmOpen,
    fm_close: FmClose,
    open: WOpen,
    close: WClose,
    set_buf: WSetBuf,
    set_comp: WSetComp,
    timer: WTimer,
    process: WProcess,
    enter: WEnter,
}

/// One measuring thread's writer (OTF writers are not thread-safe): its own manager and files.
struct ThreadWriter {
    manager: *mut c_void,
    writer: *mut c_void,
    process: u32,
}

pub struct Otf {
    api: Api,
    instance: u64,
    buffer: u64,
    writers: Mutex<Vec<Box<ThreadWriter>>>,
    dir: TraceDir,
    path: PathBuf,
    _lib: libloading::Library,
}

// SAFETY: each ThreadWriter is used only by the thread that made it (slot.rs), and closed in Drop
// after the measuring threads ended.
unsafe impl Send for Otf {}
unsafe impl Sync for Otf {}

/// The bytes of one enter record as OTF 1 writes it uncompressed: `<time hex>\n*<process hex>\nE<region hex>\n`.
pub fn record_bytes(time: u64, process: u32, region: u32) -> u64 {
    let hex = |v: u64| format!("{v:x}").len() as u64;
    (hex(time) + 1) + (1 + hex(u64::from(process)) + 1) + (1 + hex(u64::from(region)) + 1)
}

impl Otf {
    pub fn new(o: &CreateOptions) -> Result<Otf, TracerError> {
        let buffer =
            check_size("--otf-buffer-size", o.otf_buffer_size.as_deref(), DEFAULT_BUFFER, MIN_BUFFER, MAX_BUFFER)
                .map_err(|why| TracerError::BadOption { spec: "otf".into(), why })?;
        let (lib, path) = OTF.open()?;
        let api = Api {
            fm_open: sym(&lib, "OTF_FileManager_open", "otf", &path)?,
            fm_close: sym(&lib, "OTF_FileManager_close", "otf", &path)?,
            open: sym(&lib, "OTF_Writer_open", "otf", &path)?,
            close: sym(&lib, "OTF_Writer_close", "otf", &path)?,
            set_buf: sym(&lib, "OTF_Writer_setBufferSizes", "otf", &path)?,
            set_comp: sym(&lib, "OTF_Writer_setCompression", "otf", &path)?,
            timer: sym(&lib, "OTF_Writer_writeDefTimerResolution", "otf", &path)?,
            process: sym(&lib, "OTF_Writer_writeDefProcess", "otf", &path)?,
            enter: sym(&lib, "OTF_Writer_writeEnter", "otf", &path)?,
        };
        let dir = TraceDir::new("otf", o.keep_trace)?;
        Ok(Otf { api, instance: slot::new_instance(), buffer, writers: Mutex::new(Vec::new()), dir, path, _lib: lib })
    }

    /// Opens this thread's writer (outside the timed window: `thread_init`).
    fn open_writer(&self, cpu: usize) -> Result<*mut c_void, TracerError> {
        let mut all = self.writers.lock().unwrap();
        let process = all.len() as u32 + 1;
        let prefix = self.dir.path().join(format!("cpu{cpu}-{process}"));
        let prefix = CString::new(prefix.to_string_lossy().into_owned())
            .map_err(|e| TracerError::setup("otf", e.to_string()))?;
        let name = CString::new(format!("cpu{cpu}")).unwrap();
        // SAFETY: the documented writer calls, in order, on handles this function made.
        unsafe {
            let manager = (self.api.fm_open)(4);
            if manager.is_null() {
                return Err(TracerError::setup("otf", "OTF_FileManager_open failed"));
            }
            let writer = (self.api.open)(prefix.as_ptr(), 1, manager);
            if writer.is_null() {
                (self.api.fm_close)(manager);
                return Err(TracerError::setup("otf", format!("OTF_Writer_open {} failed", prefix.to_string_lossy())));
            }
            (self.api.set_buf)(writer, self.buffer as u32);
            // 0 = OTF_FILECOMPRESSION_UNCOMPRESSED: the record sizes are the text's.
            (self.api.set_comp)(writer, 0);
            (self.api.timer)(writer, 0, 1_000_000_000);
            (self.api.process)(writer, 0, process, name.as_ptr(), 0);
            let mut w = Box::new(ThreadWriter { manager, writer, process });
            let p = &mut *w as *mut ThreadWriter as *mut c_void;
            all.push(w);
            slot::set(self.instance, p);
            Ok(p)
        }
    }

    #[cold]
    #[inline(never)]
    fn late_writer(&self) -> *mut c_void {
        // A thread that never ran thread_init (a test calling fire directly).
        self.open_writer(usize::MAX).unwrap_or(std::ptr::null_mut())
    }
}

impl Tracer for Otf {
    fn name(&self) -> &str {
        "otf"
    }
    fn version(&self) -> String {
        std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone()).display().to_string()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "library": self.path.display().to_string(),
            "otf_buffer_size": self.buffer,
            "record": "OTF_Writer_writeEnter(time = CLOCK_MONOTONIC ns, region = 0x1000000 | payload, process, 0)",
            "compression": "none",
            "trace": self.dir.describe(),
        })
    }
    fn buffer_events(&self) -> u64 {
        self.buffer / record_bytes(now_ns(), 1, region(0))
    }
    fn thread_init(&self, cpu: usize) -> Result<(), TracerError> {
        self.open_writer(cpu).map(|_| ())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        let mut w = slot::get(self.instance);
        if w.is_null() {
            w = self.late_writer();
        }
        // SAFETY: w is this thread's ThreadWriter, alive until Drop.
        unsafe {
            let t = &*(w as *const ThreadWriter);
            (self.api.enter)(t.writer, now_ns(), region(payload), t.process, 0);
        }
    }
    fn after_run(&self) -> serde_json::Value {
        // The timestamp's hex digits now: they change only when CLOCK_MONOTONIC crosses a power
        // of 16 (2^40 ns is 18 minutes of uptime, 2^44 ns 4.9 hours), rarely inside a run.
        let rec = record_bytes(now_ns(), 1, region(0));
        let per = self.buffer as f64 / rec as f64;
        serde_json::json!({
            "geometry": geometry(self.buffer, rec, per,
                "OTF 1 writes its buffer to the stream file when the next line of a record does not fit, \
                 so a record may straddle two buffers: one flush every buffer / record records on average"),
        })
    }
}

impl Drop for Otf {
    fn drop(&mut self) {
        for w in self.writers.get_mut().unwrap().drain(..) {
            // SAFETY: handles made in open_writer; close flushes the buffer and writes the master file.
            unsafe {
                (self.api.close)(w.writer);
                (self.api.fm_close)(w.manager);
            }
        }
        self.dir.finish();
    }
}
