//! `ebpf`: a BPF program attached as a uprobe to the probe site (survey section 5.1.6). On each
//! hit it reads the clock (`bpf_ktime_get_ns`) and writes `{ts, payload}` into a per-CPU array
//! used as a 16 KiB ring (tracers/bpf/site.bpf.c). Like the survey's eBPF row, it is an
//! aggregator made to behave like a tracer: the data is never read during the run.
//!
//! With `--payload-size N` (N != 4) the site is called with the payload's address and length and
//! the object's other program, `tracebench_site_blob`, is attached instead: it copies the N bytes
//! with `bpf_probe_read_user` into a per-CPU ring of 4 slots of up to 4096 bytes.
//!
//! Loaded with libbpf-rs from the object that build.rs compiles; attached with
//! `bpf_program__attach_uprobe` to this process only. `Drop` detaches the link and unloads the
//! program and map (the link's and object's own drops, in that order).
use std::os::fd::AsFd;

use libbpf_rs::{Link, MapCore, MapFlags, Object, ObjectBuilder};

use crate::payload::Payload;
use crate::probe_site::{ProbeSite, SiteKind};
use crate::sys::kernel_release;
use crate::{CreateOptions, Tracer, TracerError};

static BPF_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/site.bpf.o"));
/// Must match RING_EVENTS and the layout in site.bpf.c.
pub const RING_EVENTS: usize = 1024;
const EVENT_BYTES: usize = 16;
/// Must match BLOB_SLOTS, BLOB_MAX and struct blob_event in site.bpf.c.
pub const BLOB_SLOTS: usize = 4;
const BLOB_MAX: usize = 4096;
const BLOB_EVENT_BYTES: usize = 16 + BLOB_MAX;

pub fn availability() -> Result<(), (String, String)> {
    // Loading a program needs CAP_BPF + CAP_PERFMON (root here) and a kernel with BPF and
    // uprobes; a failure at load says which.
    if !std::path::Path::new("/sys/bus/event_source/devices/uprobe").exists() {
        return Err((
            "kernel without the uprobe PMU (no /sys/bus/event_source/devices/uprobe)".into(),
            "use a kernel with CONFIG_UPROBES=y and CONFIG_BPF_EVENTS=y".into(),
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(("loading BPF programs needs root (CAP_BPF, CAP_PERFMON)".into(), "run as root".into()));
    }
    Ok(())
}

/// One CPU's ring as read back from the map.
#[derive(Debug, Clone)]
pub struct CpuRing {
    pub head: u64,
    /// (ts, payload), in slot order.
    pub events: Vec<(u64, u32)>,
}

impl CpuRing {
    /// The payloads in write order, oldest first.
    pub fn payloads_in_order(&self) -> Vec<u32> {
        let n = (self.head as usize).min(RING_EVENTS);
        let start = if (self.head as usize) > RING_EVENTS { self.head as usize % RING_EVENTS } else { 0 };
        (0..n).map(|i| self.events[(start + i) % RING_EVENTS].1).collect()
    }
}

pub struct Ebpf {
    name: String,
    site: ProbeSite,
    // Drop order: the link (detach) before the object (unload program and map).
    link: Option<Link>,
    obj: Object,
    /// `Some` with `--payload-size` other than 4: the bytes the blob program copies.
    payload: Option<Payload>,
}

impl Ebpf {
    pub fn new(name: &str, opts: &CreateOptions) -> Result<Ebpf, TracerError> {
        availability().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let kind = SiteKind::parse(opts.probe_site.as_deref())?;
        let site = ProbeSite::locate(kind).map_err(|e| TracerError::setup(name, e))?;
        let open = ObjectBuilder::default()
            .open_memory(BPF_OBJECT)
            .map_err(|e| TracerError::setup(name, format!("opening the BPF object: {e}")))?;
        let obj = open.load().map_err(|e| TracerError::setup(name, format!("loading the BPF program: {e}")))?;
        let pid = std::process::id() as i32;
        // The program borrows the object only for the attach; the link lives on its own.
        let payload = Payload::for_size(opts.payload_size);
        let prog_name = if payload.is_some() { "tracebench_site_blob" } else { "tracebench_site" };
        let link = {
            let prog = obj
                .progs_mut()
                .find(|p| p.name() == prog_name)
                .ok_or_else(|| TracerError::setup(name, format!("program {prog_name} missing from the object")))?;
            prog.attach_uprobe(false, pid, &site.path, site.file_offset as usize).map_err(|e| {
                TracerError::setup(name, format!("attaching to {}:0x{:x}: {e}", site.path, site.file_offset))
            })?
        };
        let t = Ebpf { name: name.into(), site, link: Some(link), obj, payload };
        // Fail at set-up, not after the run, if the map cannot be read back.
        t.rings().map_err(|e| TracerError::setup(name, e))?;
        Ok(t)
    }

    /// Reads every CPU's ring from the map.
    pub fn rings(&self) -> Result<Vec<CpuRing>, String> {
        let map = self.obj.maps().find(|m| m.name() == "ring").ok_or("map 'ring' missing")?;
        let vals = map
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| format!("reading map 'ring': {e}"))?
            .ok_or("map 'ring' has no key 0")?;
        Ok(vals
            .iter()
            .map(|v| {
                let head = u64::from_ne_bytes(v[0..8].try_into().unwrap());
                let events = (0..RING_EVENTS)
                    .map(|i| {
                        let o = 8 + i * EVENT_BYTES;
                        (
                            u64::from_ne_bytes(v[o..o + 8].try_into().unwrap()),
                            u32::from_ne_bytes(v[o + 8..o + 12].try_into().unwrap()),
                        )
                    })
                    .collect();
                CpuRing { head, events }
            })
            .collect())
    }

    /// Per CPU: (blob events written, the newest one's bytes), from the blob ring.
    pub fn blobs(&self) -> Result<Vec<(u64, Vec<u8>)>, String> {
        let map = self.obj.maps().find(|m| m.name() == "blob_ring").ok_or("map 'blob_ring' missing")?;
        let vals = map
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| format!("reading map 'blob_ring': {e}"))?
            .ok_or("map 'blob_ring' has no key 0")?;
        Ok(vals
            .iter()
            .map(|v| {
                let head = u64::from_ne_bytes(v[0..8].try_into().unwrap());
                if head == 0 {
                    return (0, Vec::new());
                }
                let o = 8 + ((head as usize - 1) % BLOB_SLOTS) * BLOB_EVENT_BYTES;
                let len = (u32::from_ne_bytes(v[o + 8..o + 12].try_into().unwrap()) as usize).min(BLOB_MAX);
                (head, v[o + 16..o + 16 + len].to_vec())
            })
            .collect())
    }

    /// The kernel's count of program runs skipped because a BPF program was already running on
    /// the CPU (BPF's only "lost event" counter for this kind of program).
    fn recursion_misses(&self) -> Option<u64> {
        let prog_name = if self.payload.is_some() { "tracebench_site_blob" } else { "tracebench_site" };
        let prog = self.obj.progs().find(|p| p.name() == prog_name)?;
        let fd = prog.as_fd();
        let mut info = libbpf_rs::libbpf_sys::bpf_prog_info::default();
        let mut len = std::mem::size_of_val(&info) as u32;
        // SAFETY: info is a bpf_prog_info of len bytes.
        let r = unsafe {
            libbpf_rs::libbpf_sys::bpf_prog_get_info_by_fd(std::os::fd::AsRawFd::as_raw_fd(&fd), &mut info, &mut len)
        };
        (r == 0).then_some(info.recursion_misses)
    }
}

impl Drop for Ebpf {
    fn drop(&mut self) {
        // Detach first, explicitly: the uprobe is gone before the program is unloaded.
        drop(self.link.take());
    }
}

impl Tracer for Ebpf {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        // SAFETY: libbpf_version_string returns a static string.
        let libbpf = unsafe { std::ffi::CStr::from_ptr(libbpf_rs::libbpf_sys::libbpf_version_string()) };
        format!("linux {}, libbpf-rs 0.27, libbpf {}", kernel_release(), libbpf.to_string_lossy())
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": "BPF program on a uprobe (bpf_program__attach_uprobe, this pid only)",
            "program": match &self.payload {
                None => "tracers/bpf/site.bpf.c tracebench_site: bpf_ktime_get_ns + {ts, payload} into a per-CPU array ring".to_string(),
                Some(p) => format!("tracers/bpf/site.bpf.c tracebench_site_blob: bpf_ktime_get_ns + bpf_probe_read_user of {} bytes into a per-CPU array ring", p.len()),
            },
            "map": if self.payload.is_some() { "BPF_MAP_TYPE_PERCPU_ARRAY, 1 entry of {head, 4 x (16 B + 4096 B)}" } else { "BPF_MAP_TYPE_PERCPU_ARRAY, 1 entry of {head, 1024 x 16 B}" },
            "ring_events_per_cpu": if self.payload.is_some() { BLOB_SLOTS } else { RING_EVENTS },
            "overwrite": true,
            "consumer_during_run": false,
            "site": self.site.config(),
        })
    }
    fn buffer_events(&self) -> u64 {
        if self.payload.is_some() {
            BLOB_SLOTS as u64
        } else {
            RING_EVENTS as u64
        }
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some(p) = &self.payload {
            return self.site.call_with(payload, p.as_ptr(), p.len());
        }
        self.site.call(payload);
    }
    fn after_run(&self) -> serde_json::Value {
        if self.payload.is_some() {
            return match self.blobs() {
                Ok(b) => serde_json::json!({
                    "events_per_cpu": b.iter().map(|(h, _)| *h).collect::<Vec<_>>(),
                    "newest_payload_bytes_per_cpu": b.iter().map(|(_, d)| d.len()).collect::<Vec<_>>(),
                    "recursion_misses": self.recursion_misses(),
                    "site": self.site.patched_state(),
                }),
                Err(e) => serde_json::json!({ "error": e }),
            };
        }
        match self.rings() {
            Ok(rings) => serde_json::json!({
                "events_per_cpu": rings.iter().map(|r| r.head).collect::<Vec<_>>(),
                "overwritten_per_cpu": rings.iter().map(|r| r.head.saturating_sub(RING_EVENTS as u64)).collect::<Vec<_>>(),
                "newest_payload_per_cpu": rings.iter().map(|r| r.payloads_in_order().last().copied()).collect::<Vec<_>>(),
                "recursion_misses": self.recursion_misses(),
                "site": self.site.patched_state(),
            }),
            Err(e) => serde_json::json!({ "error": e }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_holds_the_payloads_in_order() {
        let _g = crate::probe_site::test_lock();
        if let Err((why, _)) = availability() {
            println!("SKIP map_holds_the_payloads_in_order: {why}");
            return;
        }
        let mut cpu = unsafe { std::mem::zeroed::<libc::cpu_set_t>() };
        unsafe { libc::CPU_SET(0, &mut cpu) };
        // Pin so that every event lands in one CPU's ring.
        assert_eq!(unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&cpu), &cpu) }, 0);
        let t = Ebpf::new("ebpf", &CreateOptions::default()).unwrap();
        let n = 3000u32;
        for i in 0..n {
            t.fire(i);
        }
        let rings = t.rings().unwrap();
        assert_eq!(rings[0].head, n as u64, "{:?}", rings.iter().map(|r| r.head).collect::<Vec<_>>());
        let p = rings[0].payloads_in_order();
        let want: Vec<u32> = (n - RING_EVENTS as u32..n).collect();
        assert_eq!(p, want);
        // Timestamps increase along the ring.
        let start = n as usize % RING_EVENTS;
        let ts: Vec<u64> = (0..RING_EVENTS).map(|i| rings[0].events[(start + i) % RING_EVENTS].0).collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]) && ts[0] > 0);
        drop(t);
    }
}
