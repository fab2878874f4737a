//! `otf2`: OTF2's event writer (libopen-trace-format2, Score-P's trace format; not Score-P's
//! measurement system), one `OTF2_EvtWriter_Enter` per call.
//!
//! OTF2 writes events into memory chunks of the size given to `OTF2_Archive_Open`
//! (`--otf2-chunk-size`, 256 KiB to 16 MiB) and flushes them to the location's file only when
//! its memory callbacks refuse a chunk: without callbacks it keeps every chunk in memory until
//! the writer closes, and the flush never happens inside a run. Score-P gives OTF2 memory
//! callbacks over its own fixed memory (SCOREP_TOTAL_MEMORY), so a Score-P trace flushes when
//! that memory is used up; here each location's memory is one chunk, allocated and touched
//! once, so the flush comes every chunk ([`Pool`]). The post-flush callback returns a
//! timestamp, so OTF2 records the flush in the trace, as under Score-P.
//!
//! One enter record: a timestamp record (1 type byte + 8) and the enter (1 type byte + the region
//! as a compressed integer: 1 length byte + 4), [`RECORD_BYTES`]; the test
//! `otf2_flushes_every_chunk_and_writes_the_records_it_declares` (tests/otf.rs) checks it against the file written.
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::{check_size, geometry, now_ns, region, slot, sym, TraceDir, OTF2};
use crate::{CreateOptions, Tracer, TracerError};

/// OTF2_Archive_Open's range for the event chunk size.
pub const MIN_CHUNK: u64 = 256 * 1024;
pub const MAX_CHUNK: u64 = 16 << 20;
/// The smallest chunk OTF2 takes (its default is 1 MiB): the flush every ~17,476 calls, so a run
/// of -n 100000 holds five of them.
pub const DEFAULT_CHUNK: u64 = MIN_CHUNK;
/// Timestamp record (type byte + u64) + Enter (type byte + region: length byte + 4 bytes).
pub const RECORD_BYTES: u64 = 9 + 1 + 5;

/// The stdio buffer OTF2's POSIX substrate writes an event file through (see `buffer_events`).
const STDIO_BUFFER: u64 = 4 << 20;
const FILEMODE_WRITE: u8 = 0;
const SUBSTRATE_POSIX: u8 = 1;
const COMPRESSION_NONE: u8 = 1;
const FILETYPE_EVENTS: u8 = 3;
const FLUSH: u8 = 1;
const CHUNK_SIZE_DEFINITIONS: u64 = 4 << 20;

type Open = unsafe extern "C" fn(*const c_char, *const c_char, u8, u64, u64, u8, u8) -> *mut c_void;
type ArchiveFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type SetCallbacks = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;
type GetEvtWriter = unsafe extern "C" fn(*mut c_void, u64) -> *mut c_void;
type CloseEvtWriter = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type Enter = unsafe extern "C" fn(*mut c_void, *mut c_void, u64, u32) -> c_int;

#[repr(C)]
struct FlushCallbacks {
    pre: unsafe extern "C" fn(*mut c_void, u8, u64, *mut c_void, bool) -> u8,
    post: unsafe extern "C" fn(*mut c_void, u8, u64) -> u64,
}

#[repr(C)]
struct MemoryCallbacks {
    allocate: unsafe extern "C" fn(*mut c_void, u8, u64, *mut *mut c_void, u64) -> *mut c_void,
    free_all: unsafe extern "C" fn(*mut c_void, u8, u64, *mut *mut c_void, bool),
}

/// Event-file flushes the pre-flush callback saw (the final one at close not counted).
#[derive(Default)]
struct Counts {
    flushes: AtomicU64,
}

/// One buffer's memory (OTF2's `perBufferData`): an event buffer gets one chunk, reused after
/// every flush; other buffers (definitions) get what they ask for.
struct Pool {
    chunks: Vec<*mut c_void>,
    next: usize,
    limit: usize,
}

unsafe extern "C" fn pre_flush(user: *mut c_void, ft: u8, _loc: u64, _caller: *mut c_void, last: bool) -> u8 {
    if ft == FILETYPE_EVENTS && !last {
        // SAFETY: user is the Counts box, alive as long as the archive.
        unsafe { &*(user as *const Counts) }.flushes.fetch_add(1, Ordering::Relaxed);
    }
    FLUSH
}

unsafe extern "C" fn post_flush(_: *mut c_void, _: u8, _: u64) -> u64 {
    now_ns()
}

unsafe extern "C" fn allocate(_: *mut c_void, ft: u8, _: u64, pbd: *mut *mut c_void, size: u64) -> *mut c_void {
    // SAFETY: OTF2 hands us its per-buffer slot; we own what it points to.
    unsafe {
        if (*pbd).is_null() {
            let limit = if ft == FILETYPE_EVENTS { 1 } else { usize::MAX };
            *pbd = Box::into_raw(Box::new(Pool { chunks: Vec::new(), next: 0, limit })) as *mut c_void;
        }
        let pool = &mut *(*pbd as *mut Pool);
        if pool.next < pool.chunks.len() {
            pool.next += 1;
            return pool.chunks[pool.next - 1];
        }
        if pool.chunks.len() >= pool.limit {
            return std::ptr::null_mut(); // OTF2 flushes, frees all (below) and asks again.
        }
        let p = libc::malloc(size as usize);
        if !p.is_null() {
            // Touched now, so no page fault of this chunk lands in a measured call later.
            std::ptr::write_bytes(p as *mut u8, 0, size as usize);
            pool.chunks.push(p);
            pool.next += 1;
        }
        p
    }
}

unsafe extern "C" fn free_all(_: *mut c_void, _: u8, _: u64, pbd: *mut *mut c_void, last: bool) {
    // SAFETY: the slot allocate() filled.
    unsafe {
        if (*pbd).is_null() {
            return;
        }
        let pool = &mut *(*pbd as *mut Pool);
        pool.next = 0;
        if last {
            let pool = Box::from_raw(*pbd as *mut Pool);
            pool.chunks.iter().for_each(|&c| libc::free(c));
            *pbd = std::ptr::null_mut();
        }
    }
}

static FLUSH_CALLBACKS: FlushCallbacks = FlushCallbacks { pre: pre_flush, post: post_flush };
static MEMORY_CALLBACKS: MemoryCallbacks = MemoryCallbacks { allocate, free_all };

struct Api {
    close_archive: ArchiveFn,
    get_writer: GetEvtWriter,
    close_writer: CloseEvtWriter,
    close_evt_files: ArchiveFn,
    enter: Enter,
}

pub struct Otf2 {
    api: Api,
    archive: *mut c_void,
    instance: u64,
    chunk: u64,
    counts: Box<Counts>,
    writers: Mutex<Vec<*mut c_void>>,
    dir: TraceDir,
    path: PathBuf,
    _lib: libloading::Library,
}

// SAFETY: an event writer is used only by the thread that got it (slot), writers are made under
// the mutex, and the archive is closed in Drop after the measuring threads ended.
unsafe impl Send for Otf2 {}
unsafe impl Sync for Otf2 {}

fn err(why: impl Into<String>) -> TracerError {
    TracerError::setup("otf2", why)
}

impl Otf2 {
    pub fn new(o: &CreateOptions) -> Result<Otf2, TracerError> {
        let chunk = check_size("--otf2-chunk-size", o.otf2_chunk_size.as_deref(), DEFAULT_CHUNK, MIN_CHUNK, MAX_CHUNK)
            .map_err(|why| TracerError::BadOption { spec: "otf2".into(), why })?;
        let (lib, path) = OTF2.open()?;
        let n = "otf2";
        let open: Open = sym(&lib, "OTF2_Archive_Open", n, &path)?;
        let set_flush: SetCallbacks = sym(&lib, "OTF2_Archive_SetFlushCallbacks", n, &path)?;
        let set_memory: SetCallbacks = sym(&lib, "OTF2_Archive_SetMemoryCallbacks", n, &path)?;
        let serial: ArchiveFn = sym(&lib, "OTF2_Archive_SetSerialCollectiveCallbacks", n, &path)?;
        let open_evt_files: ArchiveFn = sym(&lib, "OTF2_Archive_OpenEvtFiles", n, &path)?;
        let api = Api {
            close_archive: sym(&lib, "OTF2_Archive_Close", n, &path)?,
            get_writer: sym(&lib, "OTF2_Archive_GetEvtWriter", n, &path)?,
            close_writer: sym(&lib, "OTF2_Archive_CloseEvtWriter", n, &path)?,
            close_evt_files: sym(&lib, "OTF2_Archive_CloseEvtFiles", n, &path)?,
            enter: sym(&lib, "OTF2_EvtWriter_Enter", n, &path)?,
        };
        let dir = TraceDir::new(n, o.keep_trace)?;
        let at = CString::new(dir.path().to_string_lossy().into_owned()).map_err(|e| err(e.to_string()))?;
        let counts = Box::new(Counts::default());
        // SAFETY: the documented write-mode set-up, in the order of OTF2's writer example.
        let archive = unsafe {
            let a = open(
                at.as_ptr(),
                c"trace".as_ptr(),
                FILEMODE_WRITE,
                chunk,
                CHUNK_SIZE_DEFINITIONS,
                SUBSTRATE_POSIX,
                COMPRESSION_NONE,
            );
            if a.is_null() {
                return Err(err(format!("OTF2_Archive_Open in {} failed", dir.path().display())));
            }
            let user = &*counts as *const Counts as *mut c_void;
            let steps = [
                ("OTF2_Archive_SetFlushCallbacks", set_flush(a, &FLUSH_CALLBACKS as *const _ as *const c_void, user)),
                (
                    "OTF2_Archive_SetMemoryCallbacks",
                    set_memory(a, &MEMORY_CALLBACKS as *const _ as *const c_void, std::ptr::null_mut()),
                ),
                ("OTF2_Archive_SetSerialCollectiveCallbacks", serial(a)),
                ("OTF2_Archive_OpenEvtFiles", open_evt_files(a)),
            ];
            if let Some((what, code)) = steps.iter().find(|(_, c)| *c != 0) {
                (api.close_archive)(a);
                return Err(err(format!("{what} returned error {code}")));
            }
            a
        };
        Ok(Otf2 {
            api,
            archive,
            instance: slot::new_instance(),
            chunk,
            counts,
            writers: Mutex::new(Vec::new()),
            dir,
            path,
            _lib: lib,
        })
    }

    /// This thread's event writer, location = the order threads asked for one.
    fn open_writer(&self) -> Result<*mut c_void, TracerError> {
        let mut all = self.writers.lock().unwrap();
        // SAFETY: archive open; writers are requested one at a time (the mutex).
        let w = unsafe { (self.api.get_writer)(self.archive, all.len() as u64) };
        if w.is_null() {
            return Err(err("OTF2_Archive_GetEvtWriter failed"));
        }
        all.push(w);
        slot::set(self.instance, w);
        Ok(w)
    }

    #[cold]
    #[inline(never)]
    fn late_writer(&self) -> *mut c_void {
        self.open_writer().unwrap_or(std::ptr::null_mut())
    }
}

impl Tracer for Otf2 {
    fn name(&self) -> &str {
        "otf2"
    }
    fn version(&self) -> String {
        std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone()).display().to_string()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "library": self.path.display().to_string(),
            "otf2_chunk_size": self.chunk,
            "record": "OTF2_EvtWriter_Enter(NULL, time = CLOCK_MONOTONIC ns, region = 0x1000000 | payload)",
            "memory": "one pre-touched chunk per location, reused: a flush every chunk",
            "substrate": "posix",
            "compression": "none",
            "trace": self.dir.describe(),
        })
    }
    fn buffer_events(&self) -> u64 {
        // A flush copies the chunk into the event file's stdio buffer, which OTF2's POSIX
        // substrate sizes at 4 MiB (strace: one 4,198,400-byte mmap per event file, written out
        // when full). Until that buffer has been filled once, every flush also takes the page
        // faults of its first touch (64 per 256 KiB), a start-up transient the survey's warm-up
        // (6.2.4) leaves out: the warm-up runs until it has been filled and written once.
        (STDIO_BUFFER.max(self.chunk) + self.chunk) / RECORD_BYTES
    }
    fn thread_init(&self, _cpu: usize) -> Result<(), TracerError> {
        self.open_writer().map(|_| ())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        let mut w = slot::get(self.instance);
        if w.is_null() {
            w = self.late_writer();
        }
        // SAFETY: this thread's event writer, alive until Drop.
        unsafe { (self.api.enter)(w, std::ptr::null_mut(), now_ns(), region(payload)) };
    }
    fn after_run(&self) -> serde_json::Value {
        serde_json::json!({
            "geometry": geometry(self.chunk, RECORD_BYTES, (self.chunk / RECORD_BYTES) as f64,
                "OTF2 flushes a location's chunk when the memory callbacks refuse a new one (one chunk per \
                 location): one flush every floor(chunk / record) records; the chunk's own header and the \
                 BufferFlush record after a flush take a record or two of it"),
            "flushes": self.counts.flushes.load(Ordering::Relaxed),
        })
    }
}

impl Drop for Otf2 {
    fn drop(&mut self) {
        // SAFETY: writers of this archive; close flushes them, then the files and the archive.
        unsafe {
            for w in self.writers.get_mut().unwrap().drain(..) {
                (self.api.close_writer)(self.archive, w);
            }
            (self.api.close_evt_files)(self.archive);
            (self.api.close_archive)(self.archive);
        }
        self.dir.finish();
    }
}
