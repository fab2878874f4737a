//! `perf`: perf_events as a tracer (survey section 5.1.5): the probe site's uprobe event is
//! recorded by perf_event_open(PERF_TYPE_TRACEPOINT) into perf's own mmap ring, what
//! `perf probe -x` + `perf record -e` does, minus the `perf` tool.
//!
//! Configured as section 6.2.3: sampling every hit (period 1), a 16 KiB data ring per measuring
//! thread, written backward and mapped read-only, which is perf's overwrite mode (`perf record
//! --overwrite`): the newest records overwrite the oldest and nothing consumes during the run.
//! One event per measuring thread (perf's per-task mode; the threads are pinned, so this is also
//! one ring per CPU).
//!
//! The uprobe event itself is defined in tracefs (shared with `uprobe`) so that its record
//! carries the payload (`payload=%di:u32`) in PERF_SAMPLE_RAW, as a static tracepoint would.
use std::fs;
use std::sync::Mutex;

use crate::payload::Payload;
use crate::probe_site::{ProbeSite, SiteKind};
use crate::sys::kernel_release;
use crate::uprobe::UprobeEvent;
use crate::{CreateOptions, Tracer, TracerError};

const PAGE: usize = 4096;
/// Data pages per ring: 4 x 4 KiB = 16 KiB, the survey's per-CPU buffer size.
pub const DATA_PAGES: usize = 4;

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_SAMPLE_IP: u64 = 1 << 0;
const PERF_SAMPLE_TID: u64 = 1 << 1;
const PERF_SAMPLE_TIME: u64 = 1 << 2;
const PERF_SAMPLE_CPU: u64 = 1 << 7;
const PERF_SAMPLE_RAW: u64 = 1 << 10;
const SAMPLE_TYPE: u64 = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_WRITE_BACKWARD: u64 = 1 << 27;
const PERF_RECORD_SAMPLE: u32 = 9;
const PERF_RECORD_LOST: u32 = 2;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// `struct perf_event_attr`, PERF_ATTR_SIZE_VER8 (136 bytes).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    reserved_3: u32,
    sig_data: u64,
    config3: u64,
}

/// Head of `struct perf_event_mmap_page` up to the fields we read (data_head at 1024).
const DATA_HEAD_OFFSET: usize = 1024;

pub fn availability() -> Result<(), (String, String)> {
    crate::uprobe::availability()?;
    if !std::path::Path::new("/proc/sys/kernel/perf_event_paranoid").exists() {
        return Err((
            "kernel without perf_events (no /proc/sys/kernel/perf_event_paranoid)".into(),
            "use a kernel with CONFIG_PERF_EVENTS=y".into(),
        ));
    }
    Ok(())
}

fn setup_err(name: &str, why: impl Into<String>) -> TracerError {
    TracerError::Setup { name: name.into(), why: why.into() }
}

/// One thread's perf event and its mapped ring.
struct Ring {
    fd: libc::c_int,
    base: *mut u8,
    len: usize,
    tid: i32,
}

// SAFETY: the mapping is only read, after the run, under the Mutex.
unsafe impl Send for Ring {}

impl Ring {
    fn data_head(&self) -> u64 {
        // SAFETY: the first page is the mmap control page; data_head is a u64 at offset 1024.
        unsafe { std::ptr::read_volatile(self.base.add(DATA_HEAD_OFFSET) as *const u64) }
    }

    /// Reads `n` bytes at ring position `pos` (modulo the data size).
    fn bytes(&self, pos: u64, n: usize) -> Vec<u8> {
        let size = (DATA_PAGES * PAGE) as u64;
        // SAFETY: the data area is DATA_PAGES pages after the control page.
        (0..n as u64).map(|i| unsafe { *self.base.add(PAGE + ((pos + i) % size) as usize) }).collect()
    }

    /// Events counted by the kernel for this thread (read(2) on the event fd).
    fn count(&self) -> u64 {
        let mut v = 0u64;
        // SAFETY: reading 8 bytes into v.
        let n = unsafe { libc::read(self.fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
        if n == 8 {
            v
        } else {
            0
        }
    }

    /// Walks the backward ring from the newest record: (samples present, lost records, newest
    /// payload).
    fn walk(&self, payload_offset: usize) -> (u64, u64, Option<u32>) {
        let head = self.data_head();
        let size = (DATA_PAGES * PAGE) as u64;
        let written = head.wrapping_neg(); // backward rings count down from 0.
        let mut pos = head;
        let mut seen = 0u64;
        let (mut samples, mut lost, mut newest) = (0, 0, None);
        while seen + 8 <= written.min(size) {
            let h = self.bytes(pos, 8);
            let ty = u32::from_ne_bytes(h[0..4].try_into().unwrap());
            let sz = u16::from_ne_bytes(h[6..8].try_into().unwrap()) as u64;
            if sz < 8 || seen + sz > written.min(size) {
                break; // the oldest, partly overwritten record.
            }
            let rec = self.bytes(pos, sz as usize);
            match ty {
                PERF_RECORD_SAMPLE => {
                    samples += 1;
                    // header 8, ip 8, pid/tid 8, time 8, cpu 8, raw size 4, raw data.
                    let raw = 8 + 8 + 8 + 8 + 8 + 4;
                    if newest.is_none() && rec.len() >= raw + payload_offset + 4 {
                        let at = raw + payload_offset;
                        newest = Some(u32::from_ne_bytes(rec[at..at + 4].try_into().unwrap()));
                    }
                }
                PERF_RECORD_LOST => lost += u64::from_ne_bytes(rec[16..24].try_into().unwrap()),
                _ => {}
            }
            pos = pos.wrapping_add(sz);
            seen += sz;
        }
        (samples, lost, newest)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: fd and mapping were created in Perf::open_ring and are released once.
        unsafe {
            libc::ioctl(self.fd, PERF_EVENT_IOC_DISABLE as _, 0);
            libc::munmap(self.base as *mut libc::c_void, self.len);
            libc::close(self.fd);
        }
    }
}

pub struct Perf {
    name: String,
    tp_id: u64,
    payload_offset: usize,
    // Drop order: rings (perf fds) before the uprobe event they use.
    rings: Mutex<Vec<Ring>>,
    event: UprobeEvent,
    /// `Some` with `--payload-size` other than 4: the string the probe fetches (uprobe.rs).
    payload: Option<Payload>,
}

impl Perf {
    pub fn new(name: &str, opts: &CreateOptions) -> Result<Perf, TracerError> {
        availability().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let kind = SiteKind::parse(opts.probe_site.as_deref())?;
        let site = ProbeSite::locate(kind).map_err(|e| setup_err(name, e))?;
        let payload = Payload::for_size(opts.payload_size);
        let event = UprobeEvent::define(name, site, payload.is_some())?;
        let tp_id = event.id().map_err(|e| setup_err(name, e))?;
        let payload_offset = payload_offset(&event).map_err(|e| setup_err(name, e))?;
        Ok(Perf { name: name.into(), tp_id, payload_offset, rings: Mutex::new(Vec::new()), event, payload })
    }

    fn open_ring(&self) -> Result<Ring, String> {
        let attr = PerfEventAttr {
            type_: PERF_TYPE_TRACEPOINT,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: self.tp_id,
            sample_period: 1,
            sample_type: SAMPLE_TYPE,
            flags: FLAG_DISABLED | FLAG_WRITE_BACKWARD,
            wakeup_events: 0,
            ..Default::default()
        };
        // SAFETY: attr is a valid perf_event_attr of the size it declares; pid 0 = this thread.
        let fd = unsafe {
            libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC)
        } as libc::c_int;
        if fd < 0 {
            return Err(format!("perf_event_open(tracepoint {}): {}", self.tp_id, std::io::Error::last_os_error()));
        }
        let len = (1 + DATA_PAGES) * PAGE;
        // PROT_READ only: with write_backward this is the overwrite ring (no data_tail to honour).
        // SAFETY: mapping a perf fd as the kernel documents.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd, 0) };
        if base == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            // SAFETY: fd is ours.
            unsafe { libc::close(fd) };
            return Err(format!("mmap of the perf ring ({len} bytes): {e}"));
        }
        let ring = Ring { fd, base: base as *mut u8, len, tid: unsafe { libc::gettid() } };
        // Touch the ring's pages now, not in the timed window (section 6.2.4).
        let _ = ring.bytes(0, DATA_PAGES * PAGE);
        // SAFETY: enabling our own event.
        if unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ENABLE as _, 0) } != 0 {
            return Err(format!("PERF_EVENT_IOC_ENABLE: {}", std::io::Error::last_os_error()));
        }
        Ok(ring)
    }
}

/// Offset of `payload` in the event's raw record, from its tracefs `format` file.
fn payload_offset(event: &UprobeEvent) -> Result<usize, String> {
    let p = event.event_dir(None).join("format");
    let f = fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    f.lines()
        .find(|l| l.contains(" payload;"))
        .and_then(|l| l.split("offset:").nth(1))
        .and_then(|r| r.split(';').next())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no payload field in {}", p.display()))
}

impl Tracer for Perf {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        format!("linux {} (perf_events)", kernel_release())
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": "perf_event_open(PERF_TYPE_TRACEPOINT) on a tracefs uprobe event",
            "event": format!("{}/{}", self.event.group, self.event.event),
            "definition": self.event.definition,
            "tracepoint_id": self.tp_id,
            "sample_period": 1,
            "sample_type": "IP|TID|TIME|CPU|RAW",
            "ring": "per measuring thread (pinned: one per CPU)",
            "ring_data_bytes": DATA_PAGES * PAGE,
            "overwrite": "write_backward, mapped read-only",
            "clock": "perf default (local_clock)",
            "consumer_during_run": false,
            "site": self.event.site.config(),
        })
    }
    fn buffer_events(&self) -> u64 {
        // Sample record: 8 header + 32 fixed fields + 4 raw size + 20 raw (8 common, 8 ip, 4
        // payload) = 64 bytes; divide by less so that the warm-up surely wraps the ring.
        (DATA_PAGES * PAGE) as u64 / 48 + 1
    }
    fn thread_init(&self, _cpu: usize) -> Result<(), TracerError> {
        let ring = self.open_ring().map_err(|e| setup_err(&self.name, e))?;
        self.rings.lock().unwrap().push(ring);
        Ok(())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some(p) = &self.payload {
            return self.event.site.call_with(payload, p.as_ptr(), p.len());
        }
        self.event.site.call(payload);
    }
    fn after_run(&self) -> serde_json::Value {
        let rings = self.rings.lock().unwrap();
        let per: Vec<serde_json::Value> = rings
            .iter()
            .map(|r| {
                let (samples, lost, newest) = r.walk(self.payload_offset);
                serde_json::json!({
                    "tid": r.tid,
                    "hits": r.count(),
                    "bytes_written": r.data_head().wrapping_neg(),
                    "samples_in_ring": samples,
                    "lost": lost,
                    "newest_payload": newest,
                })
            })
            .collect();
        let hits: u64 = per.iter().filter_map(|p| p["hits"].as_u64()).sum();
        let lost: u64 = per.iter().filter_map(|p| p["lost"].as_u64()).sum();
        serde_json::json!({ "hits": hits, "lost": lost, "per_thread": per, "site": self.event.site.patched_state() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_into_the_overwrite_ring() {
        let _g = crate::probe_site::test_lock();
        if let Err((why, _)) = availability() {
            println!("SKIP records_into_the_overwrite_ring: {why}");
            return;
        }
        let t = Perf::new("perf", &CreateOptions::default()).unwrap();
        t.thread_init(0).unwrap();
        for i in 0..1000u32 {
            t.fire(i);
        }
        let a = t.after_run();
        assert_eq!(a["hits"].as_u64(), Some(1000), "{a}");
        let th = &a["per_thread"][0];
        assert_eq!(th["newest_payload"].as_u64(), Some(999), "{a}");
        // The ring wrapped (1000 x 72 B > 16 KiB) and nothing was dropped: overwrite mode.
        assert!(th["bytes_written"].as_u64().unwrap() > (DATA_PAGES * PAGE) as u64, "{a}");
        assert!(th["samples_in_ring"].as_u64().unwrap() > 100, "{a}");
        assert_eq!(a["lost"].as_u64(), Some(0), "{a}");
        let (root, g, e) = (t.event.root().to_path_buf(), t.event.group.clone(), t.event.event.clone());
        drop(t);
        assert!(!UprobeEvent::listed(&root, &g, &e), "event left in uprobe_events");
    }
}
