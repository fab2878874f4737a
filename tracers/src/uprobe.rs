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
use std::fs;
use std::path::{Path, PathBuf};

use crate::payload::Payload;
use crate::uprobe_event::UprobeEvent;
use crate::{CreateOptions, Tracer, TracerError};

/// Per-CPU buffer of the private instance, as the survey configures ftrace (section 6.2.3).
pub const BUFFER_KB: u64 = 16;
/// A lower bound on one recorded event (4 B ring-buffer header + 8 B common fields + 8 B ip + 4 B
/// payload = 24 B), so that `buffer_events` over-estimates and the warm-up surely wraps the buffer
/// (section 6.2.4); the ring also holds one reader page beyond buffer_size_kb.
const MIN_EVENT_BYTES: u64 = 16;
pub use crate::sys::kernel_release;
pub use crate::uprobe_event::{availability, tracefs_root};

/// A private tracefs instance, removed on drop.
pub struct Instance {
    pub dir: PathBuf,
}

impl Instance {
    pub fn create(name: &str, root: &Path, instance: &str) -> Result<Instance, TracerError> {
        let dir = root.join("instances").join(instance);
        fs::create_dir(&dir).map_err(|e| TracerError::setup(name, format!("mkdir {}: {e}", dir.display())))?;
        Ok(Instance { dir })
    }

    pub fn set(&self, name: &str, file: &str, value: &str) -> Result<(), TracerError> {
        fs::write(self.dir.join(file), value).map_err(|e| {
            TracerError::setup(name, format!("writing '{value}' to {}: {e}", self.dir.join(file).display()))
        })
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
        let (event, payload) = UprobeEvent::on_site(name, opts)?;
        let instance = Instance::create(name, event.root(), &event.instance_name)?;
        let clock = opts.ftrace_clock.clone().unwrap_or_else(|| "global".into());
        instance.set(name, "buffer_size_kb", &BUFFER_KB.to_string())?;
        instance.set(name, "options/overwrite", "1")?;
        instance.set(name, "trace_clock", &clock)?;
        instance.set(name, "tracing_on", "1")?;
        fs::write(event.event_dir(Some(&instance.dir)).join("enable"), "1")
            .map_err(|e| TracerError::setup(name, format!("enabling {}/{}: {e}", event.group, event.event)))?;
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
