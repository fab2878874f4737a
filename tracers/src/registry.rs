//! Which tracers exist, whether each can run here, and how to create one from its spec: the
//! harness's entry points over the one backend table ([`crate::backends::BACKENDS`]).
//!
//! A spec is `KIND[:ARG]` as typed after `--tracer` (`lw`, `spin:300`, `plugin:/x/lib.so:args`).
//! - [`known`] for `tracebench list` (availability with why/fix);
//! - [`validate`] and [`validate_payload`] before any cell runs (no side effects);
//! - [`parent_guard`] in the parent, once per tracer for the whole run (e.g. start a daemon that
//!   must exist before the measuring process starts); dropped after the last cell;
//! - [`launch_prefix`] in the parent: a command the measuring child is started under (strace);
//! - [`create`] in the measuring child: sets the tracer up; its `Drop` tears it down.
use std::any::Any;

use crate::backends::{self, Backend};
use crate::{plugin, Tracer, TracerError};

/// What the harness hands a backend at creation. Options a backend does not use are ignored.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// Calibrated TSC frequency in Hz (for backends that time themselves with the TSC).
    pub tsc_hz: f64,
    /// `--ftrace-clock local|global|counter|x86-tsc|mono`.
    pub ftrace_clock: Option<String>,
    /// `--subbuf-size` (LTTng sub-buffer size, e.g. `8k`).
    pub subbuf_size: Option<String>,
    /// `--num-subbuf` (LTTng sub-buffer count).
    pub num_subbuf: Option<u32>,
    /// `--probe-site nop5|push|ret` (uprobe, ebpf, perf).
    pub probe_site: Option<String>,
    /// Run id, unique per `tracebench run` (for naming sessions and instances).
    pub run_id: String,
    /// `--payload-size BYTES`: the bytes one event records (default 4: the u32 iteration index).
    /// Backends that cannot vary it refuse any other value in `validate_payload`.
    pub payload_size: u32,
    /// `--otf-buffer-size` (OTF 1's write buffer, e.g. `8k`).
    pub otf_buffer_size: Option<String>,
    /// `--otf2-chunk-size` (OTF2's event chunk size of OTF2_Archive_Open, e.g. `256k`).
    pub otf2_chunk_size: Option<String>,
    /// `--keep-trace`: keep the trace a backend writes (otf, otf2) instead of removing it.
    pub keep_trace: bool,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            tsc_hz: 0.0,
            ftrace_clock: None,
            subbuf_size: None,
            num_subbuf: None,
            probe_site: None,
            run_id: String::new(),
            payload_size: crate::payload::DEFAULT,
            otf_buffer_size: None,
            otf2_chunk_size: None,
            keep_trace: false,
        }
    }
}

/// One line of `tracebench list`.
#[derive(Debug, Clone)]
pub struct TracerInfo {
    pub name: &'static str,
    pub spec: &'static str,
    pub description: &'static str,
    /// `Ok(())` when it can run here; otherwise (why not, how to fix it).
    pub availability: Result<(), (String, String)>,
    /// Whether `--tracer all` includes it (calibration backends are not tracers).
    pub in_all: bool,
    /// `--payload-size` range it accepts; `None`: a fixed 4-byte payload.
    pub payload: Option<(u32, u32)>,
}

/// Every tracer this build knows, with its availability on this machine.
pub fn known() -> Vec<TracerInfo> {
    backends::BACKENDS
        .iter()
        .map(|b| TracerInfo {
            name: b.name,
            spec: b.spec(),
            description: b.description,
            availability: (b.availability)(),
            in_all: b.in_all,
            payload: b.payload,
        })
        .collect()
}

/// `KIND[:ARG]`.
pub fn split(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (spec, None),
    }
}

fn backend(spec: &str) -> Result<(&'static Backend, Option<&str>), TracerError> {
    let (kind, arg) = split(spec);
    let b = backends::find(kind).ok_or_else(|| TracerError::Unknown {
        spec: spec.to_string(),
        hint: did_you_mean(kind).map(|n| format!("did you mean {n}? ")).unwrap_or_default(),
    })?;
    match (b.arg, arg) {
        (None, Some(_)) => Err(TracerError::BadSpec { spec: spec.into(), why: format!("'{kind}' takes no argument") }),
        _ => Ok((b, arg)),
    }
}

/// The known tracer nearest to a mistyped `kind`: at most two edits away (one for names of
/// four letters or fewer, so `lw` does not suggest `none`), the nearest first.
pub fn did_you_mean(kind: &str) -> Option<&'static str> {
    let kind = kind.to_ascii_lowercase();
    let most = if kind.chars().count() <= 4 { 1 } else { 2 };
    backends::BACKENDS
        .iter()
        .map(|b| (edit_distance(&kind, b.name), b.name))
        .filter(|(d, _)| *d <= most)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Levenshtein distance (insert, delete, substitute: one edit each).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Checks a spec without creating the tracer (no side effects), for validating a command line
/// before any cell runs.
pub fn validate(spec: &str) -> Result<(), TracerError> {
    let (b, arg) = backend(spec)?;
    if let Err((why, fix)) = (b.availability)() {
        return Err(TracerError::Unavailable { name: b.name.into(), why, fix });
    }
    match b.arg {
        Some(check) => check(spec, arg),
        None => Ok(()),
    }
}

/// Creates the tracer named by `spec` (e.g. `lw`, `spin:300`, `spin:100@64:1000`).
pub fn create(spec: &str, opts: &CreateOptions) -> Result<Box<dyn Tracer>, TracerError> {
    let (b, arg) = backend(spec)?;
    if let Err((why, fix)) = (b.availability)() {
        return Err(TracerError::Unavailable { name: b.name.into(), why, fix });
    }
    (b.create)(spec, arg, opts)
}

/// Checks the options the backend of `spec` takes (its knobs: `--subbuf-size`, `--num-subbuf`,
/// `--ftrace-clock`, `--probe-site`) against what it accepts on this machine, without creating it
/// (no side effects). The plan stage calls it for every row (and every `--vary` value), so a bad
/// value is answered before any directory exists, not by a failing cell. Options a backend does
/// not take are not its business.
pub fn validate_options(spec: &str, opts: &CreateOptions) -> Result<(), TracerError> {
    let (b, _) = backend(spec)?;
    b.knobs.iter().try_for_each(|k| k.check(spec, opts))
}

/// Whether the backend `kind` needs root whatever the machine (tracefs instances, uprobe events,
/// BPF programs), for `tracebench list`. The others run as any user (LTTng with a per-user
/// session daemon); whether one is available here is still `availability`'s answer.
pub fn needs_root(kind: &str) -> bool {
    backends::find(kind).is_some_and(|b| b.needs_root)
}

/// Checks that the backend of `spec` can record `size` bytes per event (`--payload-size`, and the
/// sweep knob `payload-size`). 4 (the iteration index) is every backend's default.
pub fn validate_payload(spec: &str, size: u32) -> Result<(), TracerError> {
    let (b, _) = backend(spec)?;
    if size == crate::payload::DEFAULT {
        return Ok(());
    }
    if let Some(check) = b.payload_check {
        // A backend that knows its own sizes (an ABI v2 plugin says its largest payload).
        return check(spec, size);
    }
    let why = match b.payload {
        Some((lo, hi)) if (lo..=hi).contains(&size) => return Ok(()),
        Some((lo, hi)) => {
            format!(
                "'{}' records {lo} to {hi} bytes per event (see `tracebench list`); pick a size in that range",
                b.name
            )
        }
        None => format!(
            "'{}' records a fixed 4-byte payload; leave --payload-size at 4 for it, or use a backend that takes a \
             payload size: {}",
            b.name,
            payload_kinds().join(", ")
        ),
    };
    Err(TracerError::Payload { size, why })
}

/// Backends whose payload size can be set.
pub fn payload_kinds() -> Vec<&'static str> {
    backends::BACKENDS.iter().filter(|b| b.payload.is_some()).map(|b| b.name).collect()
}

/// The payload sizes `kind` takes, `None` when it records only the 4-byte index.
pub fn payload_range(kind: &str) -> Option<(u32, u32)> {
    backends::find(kind).and_then(|b| b.payload)
}

/// What `tracebench list` says about a backend's payload: `[payload 1..4096 B]` or
/// `[payload 4 B fixed]`.
pub fn payload_note(kind: &str) -> String {
    match payload_range(kind) {
        Some((lo, hi)) => format!("[payload {lo}..{hi} B]"),
        None if kind == "plugin" => "[payload: ABI v2 plugins, 1..their max_payload B; v1: 4 B]".into(),
        None => "[payload 4 B fixed]".into(),
    }
}

/// The row name of a spec in results when the user gives no `--label`: the spec itself, except
/// for `plugin:PATH[:ARGS]`, whose row is the plugin's own `name` (read in a forked child, init
/// not called; see plugin::validate).
pub fn row_name(spec: &str) -> Result<String, TracerError> {
    match split(spec) {
        ("plugin", _) => Ok(plugin::validate(spec)?),
        _ => Ok(spec.to_string()),
    }
}

/// Cleans up what runs killed with SIGKILL left behind (no Drop ran in them), before any run
/// measures, whichever tracers it measures: the LTTng session daemon such a run started, its
/// sessions and snapshot directories (`lttng::reap_leftovers`), and the tracefs instances and
/// uprobe events named after a dead process (`sys::remove_stale_tracefs`). Cheap when there is
/// nothing.
pub fn reap_leftovers() {
    if crate::lttng::availability().is_ok() {
        crate::lttng::reap_leftovers();
    }
    // otf/otf2 archives of killed runs (kept ones are renamed and stay).
    crate::otf::reap_leftovers();
    // tracefs instances and uprobe events of killed runs (root only: tracefs is root's).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        if let Some(root) = crate::sys::tracefs_root_with("instances") {
            for what in crate::sys::remove_stale_tracefs(&root) {
                eprintln!("tracebench: removed {what}, left by a run that was killed");
            }
        }
    }
}

/// Waits for the teardown that parent guards left running when they were dropped (an LTTng
/// session daemon shutting down while the run writes its results). Called before the process
/// exits, so that nothing a run started outlives it.
pub fn wait_released() {
    crate::lttng::wait_stopped();
}

/// Set-up that must happen in the parent before the measuring child starts, and last for the
/// whole run (dropped after the tracer's last cell). `None` for most tracers.
pub fn parent_guard(spec: &str, opts: &CreateOptions) -> Result<Option<Box<dyn Any + Send>>, TracerError> {
    let (b, _) = backend(spec)?;
    b.guard.map(|g| g(spec, opts)).transpose()
}

/// A command (argv prefix) the measuring child must run under, e.g. `strace -f -qq -o /dev/null`.
/// Empty for most tracers.
pub fn launch_prefix(spec: &str) -> Vec<String> {
    backends::find(split(spec).0).map(|b| b.launch_prefix.iter().map(|s| s.to_string()).collect()).unwrap_or_default()
}

/// Whether `tracebench run --instructions singlestep` can step this tracer's calls:
/// `Err(why)` when it cannot. The stepper ptraces the measuring thread and single-steps it.
pub fn singlestep_support(spec: &str) -> Result<(), String> {
    match split(spec).0 {
        // strace-* rows included: anything run under strace.
        k if k.starts_with("strace") => {
            Err("it runs under strace, which already ptraces the measuring process (a thread has one tracer)".into())
        }
        // Its cost is a time (a busy-wait on the TSC), and a stepped call takes tens of us per
        // instruction, so its count would only say how slow the stepping was.
        "spin" => Err("its cost is a busy-wait for a time, which stepping stretches beyond meaning".into()),
        _ if !launch_prefix(spec).is_empty() => Err("its measuring process runs under another tool".into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_gets_the_nearest_name_and_a_far_one_none() {
        assert_eq!(did_you_mean("lttng-usst"), Some("lttng-ust"));
        assert_eq!(did_you_mean("ftrce"), Some("ftrace"));
        assert_eq!(did_you_mean("LW"), Some("lw"));
        assert_eq!(did_you_mean("quux"), None);
        assert_eq!(did_you_mean("completely-else"), None);
        let e = validate("lttng-usst").unwrap_err().to_string();
        assert!(e.contains("did you mean lttng-ust?"), "{e}");
        let e = validate("quux").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }
}
