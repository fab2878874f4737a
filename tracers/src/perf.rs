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
use crate::sys::kernel_release;
use crate::uprobe_event::UprobeEvent;
use crate::{CreateOptions, Tracer, TracerError};

use crate::perf_ring::{self, Target, PAGE, PERF_RECORD_LOST, PERF_RECORD_SAMPLE};

/// Data pages per ring: 4 x 4 KiB = 16 KiB, the survey's per-CPU buffer size.
pub const DATA_PAGES: usize = 4;
const SAMPLE_TYPE: u64 = perf_ring::PERF_SAMPLE_IP
    | perf_ring::PERF_SAMPLE_TID
    | perf_ring::PERF_SAMPLE_TIME
    | perf_ring::PERF_SAMPLE_CPU
    | perf_ring::PERF_SAMPLE_RAW;

pub fn availability() -> Result<(), (String, String)> {
    crate::uprobe_event::availability()?;
    if !std::path::Path::new("/proc/sys/kernel/perf_event_paranoid").exists() {
        return Err((
            "kernel without perf_events (no /proc/sys/kernel/perf_event_paranoid)".into(),
            "use a kernel with CONFIG_PERF_EVENTS=y".into(),
        ));
    }
    Ok(())
}

/// One thread's perf ring.
struct Ring {
    ring: perf_ring::Ring,
    tid: i32,
}

impl Ring {
    fn data_head(&self) -> u64 {
        self.ring.data_head()
    }
    fn bytes(&self, pos: u64, n: usize) -> Vec<u8> {
        self.ring.bytes(pos, n)
    }
    /// Events counted by the kernel for this thread (0 when the read fails).
    fn count(&self) -> u64 {
        self.ring.count().unwrap_or(0)
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

pub struct Perf {
    name: String,
    tp_id: u64,
    payload_offset: usize,
    // Drop order: rings (perf fds) before the uprobe event they use.
    rings: Mutex<Vec<Ring>>,
    event: UprobeEvent,
    /// `Some` with `--payload-size` other than 4: the string the probe fetches (uprobe_event.rs).
    payload: Option<Payload>,
}

impl Perf {
    pub fn new(name: &str, opts: &CreateOptions) -> Result<Perf, TracerError> {
        availability().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let (event, payload) = UprobeEvent::on_site(name, opts)?;
        let tp_id = event.id().map_err(|e| TracerError::setup(name, e))?;
        let payload_offset = payload_offset(&event).map_err(|e| TracerError::setup(name, e))?;
        Ok(Perf { name: name.into(), tp_id, payload_offset, rings: Mutex::new(Vec::new()), event, payload })
    }

    fn open_ring(&self) -> Result<Ring, String> {
        let ring = perf_ring::Ring::open(self.tp_id, Target::ThisThread, SAMPLE_TYPE, DATA_PAGES)?;
        // SAFETY: gettid has no preconditions.
        Ok(Ring { ring, tid: unsafe { libc::gettid() } })
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
        let ring = self.open_ring().map_err(|e| TracerError::setup(&self.name, e))?;
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
