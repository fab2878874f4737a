//! `uprobe`: a tracefs uprobe event on the probe site, recorded by ftrace's ring buffer in a
//! private tracefs instance (survey section 4.3 trap / 4.4 trampoline, 5.2 dynamic userspace
//! instrumentation, configured as section 6.2.3).
//!
//! Set-up (in the measuring child):
//! 1. `p:tracebench_<pid>/site <exe>:<file offset> payload=%di:u32` appended to `uprobe_events`
//!    (with `--payload-size N`, N != 4, also `data=+0(%si):ustring`: the kernel fetches the N-byte
//!    string from user memory at each hit, the userspace form of the survey's string resolution,
//!    section 7.3);
//! 2. `instances/tracebench-<pid>` created, `buffer_size_kb=16` (the survey's 16 KiB per CPU),
//!    overwrite on, the trace clock set (`--ftrace-clock`, default `global` as the survey);
//! 3. the event enabled in that instance only. Nothing reads the buffer during the run.
//!
//! Teardown in `Drop`: disable, remove the instance, remove the event. Events and instances left
//! by a process that was killed with SIGKILL are removed at the next set-up.
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use crate::payload::Payload;
use crate::probe_site::{ProbeSite, SiteKind};
use crate::{CreateOptions, Tracer, TracerError};

/// Per-CPU buffer of the private instance, as the survey configures ftrace (section 6.2.3).
pub const BUFFER_KB: u64 = 16;
/// A lower bound on one recorded event (4 B ring-buffer header + 8 B common fields + 8 B ip + 4 B
/// payload = 24 B), so that `buffer_events` over-estimates and the warm-up surely wraps the buffer
/// (section 6.2.4); the ring also holds one reader page beyond buffer_size_kb.
const MIN_EVENT_BYTES: u64 = 16;
/// Sets up in one process get distinct names (tests create several tracers in one process).
static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// `base` for the first set-up in this process, `base_N` / `base-N` after.
fn unique(base: &str, sep: char, seq: u32) -> String {
    if seq == 0 {
        base.to_string()
    } else {
        format!("{base}{sep}{seq}")
    }
}

/// The tracefs mount point, if tracefs is mounted.
pub fn tracefs_root() -> Option<PathBuf> {
    crate::sys::tracefs_root_with("uprobe_events")
}

/// Why uprobe events cannot be used here, with the fix; `Ok` when they can.
pub fn availability() -> Result<(), (String, String)> {
    let Some(root) = tracefs_root() else {
        if Path::new("/sys/kernel/tracing").exists() && !Path::new("/sys/kernel/tracing/README").exists() {
            return Err(crate::sys::tracefs_absent());
        }
        return Err((
            "no uprobe_events in tracefs (kernel without CONFIG_UPROBE_EVENTS, or tracefs not mounted)".into(),
            "mount -t tracefs nodev /sys/kernel/tracing; use a kernel with CONFIG_UPROBE_EVENTS=y".into(),
        ));
    };
    if let Err(e) = OpenOptions::new().append(true).open(root.join("uprobe_events")) {
        return Err((format!("cannot write {}/uprobe_events: {e}", root.display()), "run as root".into()));
    }
    Ok(())
}

fn setup_err(name: &str, why: impl Into<String>) -> TracerError {
    TracerError::Setup { name: name.into(), why: why.into() }
}

pub use crate::sys::kernel_release;
pub(crate) use crate::sys::tracefs_write;

/// One uprobe event definition in `uprobe_events`, removed on drop. Shared with `perf`, which
/// records the same event as a tracepoint.
pub struct UprobeEvent {
    root: PathBuf,
    pub group: String,
    /// Event name within the group: `site`, or `site_N` for the N-th set-up in this process.
    pub event: String,
    /// Instance name to use with this event: `tracebench-<pid>[-N]`.
    pub instance_name: String,
    pub site: ProbeSite,
    /// The definition as written to uprobe_events.
    pub definition: String,
    defined: bool,
}

/// The fetch-args of the site's event: the index, and with a payload the string at `%si`.
fn fetch_args(data: bool) -> &'static str {
    if data {
        "payload=%di:u32 data=+0(%si):ustring"
    } else {
        "payload=%di:u32"
    }
}

impl UprobeEvent {
    /// `data`: also fetch the payload string (`--payload-size`).
    pub fn define(name: &str, site: ProbeSite, data: bool) -> Result<UprobeEvent, TracerError> {
        let root = tracefs_root().ok_or_else(|| setup_err(name, "tracefs with uprobe_events not found"))?;
        remove_stale(&root);
        let group = format!("tracebench_{}", std::process::id());
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let event = unique("site", '_', seq);
        let instance_name = unique(&format!("tracebench-{}", std::process::id()), '-', seq);
        let def = format!("p:{group}/{event} {}:0x{:x} {}\n", site.path, site.file_offset, fetch_args(data));
        tracefs_write(&root.join("uprobe_events"), &def).map_err(|e| {
            let log = fs::read_to_string(root.join("error_log")).unwrap_or_default();
            let last = log.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
            setup_err(name, format!("writing '{}' to uprobe_events: {e} ({last})", def.trim()))
        })?;
        let definition = def.trim().to_string();
        Ok(UprobeEvent { root, group, event, instance_name, site, definition, defined: true })
    }

    pub fn event_dir(&self, instance: Option<&Path>) -> PathBuf {
        instance.unwrap_or(&self.root).join("events").join(&self.group).join(&self.event)
    }

    /// The event's id, for perf_event_open(PERF_TYPE_TRACEPOINT).
    pub fn id(&self) -> Result<u64, String> {
        let p = self.event_dir(None).join("id");
        fs::read_to_string(&p)
            .map_err(|e| format!("{}: {e}", p.display()))?
            .trim()
            .parse()
            .map_err(|e| format!("{}: {e}", p.display()))
    }

    /// Whether the definition is still listed in uprobe_events.
    pub fn listed(root: &Path, group: &str, event: &str) -> bool {
        fs::read_to_string(root.join("uprobe_events"))
            .map(|s| s.lines().any(|l| l.contains(&format!("{group}/{event} "))))
            .unwrap_or(false)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for UprobeEvent {
    fn drop(&mut self) {
        if self.defined {
            // Fails with EBUSY while any instance or perf event still uses it: callers drop
            // those first.
            let _ = tracefs_write(&self.root.join("uprobe_events"), &format!("-:{}/{}\n", self.group, self.event));
        }
    }
}

/// Removes events `tracebench_<pid>` and instances `tracebench-<pid>` of processes that no longer
/// exist (killed with SIGKILL, where no Drop runs).
fn remove_stale(root: &Path) {
    let dead = |pid: &str| pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists();
    if let Ok(rd) = fs::read_dir(root.join("instances")) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if let Some(rest) = n.strip_prefix("tracebench-") {
                if dead(rest.split('-').next().unwrap_or("")) {
                    let _ = fs::remove_dir(e.path());
                }
            }
        }
    }
    let defs = fs::read_to_string(root.join("uprobe_events")).unwrap_or_default();
    for l in defs.lines() {
        // "p:tracebench_123/site /path:0x..."
        let Some(name) = l.split_whitespace().next().and_then(|h| h.split_once(':')).map(|(_, n)| n) else {
            continue;
        };
        if let Some((group, _)) = name.split_once('/') {
            if let Some(pid) = group.strip_prefix("tracebench_") {
                if dead(pid) {
                    let _ = tracefs_write(&root.join("uprobe_events"), &format!("-:{name}\n"));
                }
            }
        }
    }
}

/// A private tracefs instance, removed on drop.
pub struct Instance {
    pub dir: PathBuf,
}

impl Instance {
    pub fn create(name: &str, root: &Path, instance: &str) -> Result<Instance, TracerError> {
        let dir = root.join("instances").join(instance);
        fs::create_dir(&dir).map_err(|e| setup_err(name, format!("mkdir {}: {e}", dir.display())))?;
        Ok(Instance { dir })
    }

    pub fn set(&self, name: &str, file: &str, value: &str) -> Result<(), TracerError> {
        fs::write(self.dir.join(file), value)
            .map_err(|e| setup_err(name, format!("writing '{value}' to {}: {e}", self.dir.join(file).display())))
    }

    /// Sums a field of `per_cpu/cpuN/stats` over CPUs, and gives the per-CPU values.
    pub fn stat(&self, field: &str) -> (u64, Vec<u64>) {
        let mut per_cpu = Vec::new();
        for cpu in 0.. {
            let p = self.dir.join(format!("per_cpu/cpu{cpu}/stats"));
            let Ok(s) = fs::read_to_string(&p) else { break };
            let v = s
                .lines()
                .find_map(|l| l.strip_prefix(field).and_then(|r| r.strip_prefix(':')))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            per_cpu.push(v);
        }
        (per_cpu.iter().sum(), per_cpu)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // rmdir disables every event in the instance and frees its buffers.
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        let _ = fs::remove_dir(&self.dir);
    }
}

pub struct Uprobe {
    name: String,
    clock: String,
    // Field order is drop order: the instance (which uses the event) goes before the event.
    instance: Instance,
    event: UprobeEvent,
    /// `Some` with `--payload-size` other than 4: the string the probe fetches.
    payload: Option<Payload>,
}

impl Uprobe {
    pub fn new(name: &str, opts: &CreateOptions) -> Result<Uprobe, TracerError> {
        availability().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let kind = SiteKind::parse(opts.probe_site.as_deref())?;
        let site = ProbeSite::locate(kind).map_err(|e| setup_err(name, e))?;
        let payload = Payload::for_size(opts.payload_size);
        let event = UprobeEvent::define(name, site, payload.is_some())?;
        let instance = Instance::create(name, event.root(), &event.instance_name)?;
        let clock = opts.ftrace_clock.clone().unwrap_or_else(|| "global".into());
        instance.set(name, "buffer_size_kb", &BUFFER_KB.to_string())?;
        instance.set(name, "options/overwrite", "1")?;
        instance.set(name, "trace_clock", &clock)?;
        instance.set(name, "tracing_on", "1")?;
        fs::write(event.event_dir(Some(&instance.dir)).join("enable"), "1")
            .map_err(|e| setup_err(name, format!("enabling {}/{}: {e}", event.group, event.event)))?;
        Ok(Uprobe { name: name.into(), clock, instance, event, payload })
    }

    /// The instance directory (tests check it is gone after the run).
    pub fn instance_dir(&self) -> &Path {
        &self.instance.dir
    }

    /// The fetched strings (`data="..."`) in the instance's buffer, oldest first.
    pub fn recorded_data(&self) -> Vec<String> {
        let t = fs::read_to_string(self.instance.dir.join("trace")).unwrap_or_default();
        t.lines()
            .filter_map(|l| l.split("data=\"").nth(1))
            .filter_map(|r| r.rsplit_once('"').map(|(d, _)| d.to_string()))
            .collect()
    }

    /// The payloads in the instance's buffer, oldest first (reads `trace` without consuming).
    pub fn recorded_payloads(&self) -> Vec<u32> {
        let t = fs::read_to_string(self.instance.dir.join("trace")).unwrap_or_default();
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split("payload=").nth(1))
            .filter_map(|p| p.split_whitespace().next()?.parse().ok())
            .collect()
    }
}

impl Tracer for Uprobe {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        format!("linux {}", kernel_release())
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "mechanism": "tracefs uprobe event, ftrace ring buffer",
            "event": format!("{}/{}", self.event.group, self.event.event),
            "definition": self.event.definition,
            "instance": self.instance.dir.display().to_string(),
            "buffer_size_kb_per_cpu": BUFFER_KB,
            "overwrite": true,
            "trace_clock": self.clock,
            "consumer_during_run": false,
            "site": self.event.site.config(),
        })
    }
    fn buffer_events(&self) -> u64 {
        (BUFFER_KB + 4) * 1024 / MIN_EVENT_BYTES
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        if let Some(p) = &self.payload {
            return self.event.site.call_with(payload, p.as_ptr(), p.len());
        }
        self.event.site.call(payload);
    }
    fn after_run(&self) -> serde_json::Value {
        let (entries, entries_cpu) = self.instance.stat("entries");
        let (overrun, overrun_cpu) = self.instance.stat("overrun");
        let (commit_overrun, _) = self.instance.stat("commit overrun");
        let (dropped, _) = self.instance.stat("dropped events");
        // uprobe_profile: "<path> <group>/<event> <hits>", the kernel's own hit count.
        let profile = fs::read_to_string(self.event.root().join("uprobe_profile")).unwrap_or_default();
        let me = format!("{}/{}", self.event.group, self.event.event);
        let hits = profile
            .lines()
            .find(|l| l.split_whitespace().any(|w| w == me || w == self.event.event))
            .and_then(|l| l.split_whitespace().last()?.parse::<u64>().ok());
        let last = self.recorded_payloads().last().copied();
        serde_json::json!({
            "entries": entries, "entries_per_cpu": entries_cpu,
            "overrun": overrun, "overrun_per_cpu": overrun_cpu,
            "commit_overrun": commit_overrun, "dropped_events": dropped,
            "uprobe_hits": hits,
            "last_payload": last,
            "site": self.event.site.patched_state(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip() -> Option<String> {
        availability().err().map(|(why, _)| why)
    }

    #[test]
    fn records_payloads_and_cleans_up() {
        let _g = crate::probe_site::test_lock();
        if let Some(why) = skip() {
            println!("SKIP records_payloads_and_cleans_up: {why}");
            return;
        }
        for site in ["nop5", "push", "ret"] {
            let opts = CreateOptions { probe_site: Some(site.into()), ..Default::default() };
            let t = Uprobe::new("uprobe", &opts).unwrap();
            let dir = t.instance_dir().to_path_buf();
            let root = t.event.root().to_path_buf();
            let (group, event) = (t.event.group.clone(), t.event.event.clone());
            for i in 0..2000u32 {
                t.fire(i);
            }
            let p = t.recorded_payloads();
            assert!(p.len() > 100, "{site}: only {} events in the buffer", p.len());
            // Other tests of this process may fire the same site meanwhile: look for ours.
            assert!(p.contains(&1999), "{site}: last payload missing");
            let a = t.after_run();
            assert!(a["overrun"].as_u64().unwrap() > 0, "{site}: 16 KiB buffer did not wrap: {a}");
            drop(t);
            assert!(!dir.exists(), "instance {} left behind", dir.display());
            assert!(!UprobeEvent::listed(&root, &group, &event), "event {group} left in uprobe_events");
        }
    }
}
