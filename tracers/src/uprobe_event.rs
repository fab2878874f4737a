//! A uprobe event on the probe site, defined in tracefs `uprobe_events` (survey section 5.2,
//! dynamic userspace instrumentation): what `uprobe` records with ftrace's ring buffer and `perf`
//! with perf_event_open(PERF_TYPE_TRACEPOINT). It lives in neither backend, as both define it the
//! same way; stale definitions of killed runs are removed at the next set-up.
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use crate::payload::Payload;
use crate::probe_site::{ProbeSite, SiteKind};
use crate::sys::tracefs_write;
use crate::{CreateOptions, TracerError};

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

/// One uprobe event definition in `uprobe_events`, removed on drop.
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
    /// The event on the site that `--probe-site` names, fetching the payload string when
    /// `--payload-size` asks for one (returned with it).
    pub fn on_site(name: &str, opts: &CreateOptions) -> Result<(UprobeEvent, Option<Payload>), TracerError> {
        availability().map_err(|(why, fix)| TracerError::Unavailable { name: name.into(), why, fix })?;
        let kind = SiteKind::parse(opts.probe_site.as_deref())?;
        let site = ProbeSite::locate(kind).map_err(|e| TracerError::setup(name, e))?;
        let payload = Payload::for_size(opts.payload_size);
        let event = UprobeEvent::define(name, site, payload.is_some())?;
        Ok((event, payload))
    }

    /// `data`: also fetch the payload string (`--payload-size`).
    pub fn define(name: &str, site: ProbeSite, data: bool) -> Result<UprobeEvent, TracerError> {
        let root = tracefs_root().ok_or_else(|| TracerError::setup(name, "tracefs with uprobe_events not found"))?;
        crate::sys::remove_stale_tracefs(&root);
        let group = format!("tracebench_{}", std::process::id());
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let event = unique("site", '_', seq);
        let instance_name = unique(&format!("tracebench-{}", std::process::id()), '-', seq);
        let def = format!("p:{group}/{event} {}:0x{:x} {}\n", site.path, site.file_offset, fetch_args(data));
        tracefs_write(&root.join("uprobe_events"), &def).map_err(|e| {
            let log = fs::read_to_string(root.join("error_log")).unwrap_or_default();
            let last = log.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
            TracerError::setup(name, format!("writing '{}' to uprobe_events: {e} ({last})", def.trim()))
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
