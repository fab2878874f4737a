//! Which tracers exist, whether each can run here, and how to create one from its spec.
//!
//! A spec is `KIND[:ARG]` as typed after `--tracer` (`lw`, `spin:300`, `plugin:/x/lib.so:args`).
//! The harness uses four entry points, all keyed by the spec:
//! - [`known`] for `tracebench list` (availability with why/fix);
//! - [`validate`] before any cell runs (no side effects);
//! - [`parent_guard`] in the parent, once per tracer for the whole run (e.g. start a daemon that
//!   must exist before the measuring process starts); dropped after the last cell;
//! - [`launch_prefix`] in the parent: a command the measuring child is started under (strace);
//! - [`create`] in the measuring child: sets the tracer up; its `Drop` tears it down.
use std::any::Any;

use crate::{ftrace, lttng, syscall};
use crate::{hpc, lw::Lw, none::NoneTracer, plugin, printf::Printf, spin::Spin, Tracer, TracerError};

/// What the harness hands a backend at creation. Options a backend does not use are ignored.
#[derive(Debug, Clone, Default)]
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
}

fn always(name: &'static str, spec: &'static str, description: &'static str, in_all: bool) -> TracerInfo {
    TracerInfo { name, spec, description, availability: Ok(()), in_all }
}

/// Every tracer this build knows, with its availability on this machine.
pub fn known() -> Vec<TracerInfo> {
    let mut v = vec![
        always("none", "none", "empty non-inlined call: the floor", true),
        always("lw", "lw", "survey's LW-ust: per-CPU ring, clock_gettime, {id,ts,payload}", true),
        always("lw-tsc", "lw-tsc", "LW-ust with an rdtsc timestamp", true),
        always("printf", "printf", "fprintf(ts, payload) to a fully buffered FILE on /dev/null", true),
        always("spin", "spin:NS[@P:SLOW]", "calibration: busy-wait NS ns (every P-th call SLOW ns)", false),
        TracerInfo {
            name: "lttng-ust",
            spec: "lttng-ust",
            description: "LTTng-UST tracepoint, 4-byte payload, snapshot session, overwrite, 2 x 8 KiB/CPU",
            availability: lttng::availability(),
            in_all: true,
        },
        TracerInfo {
            name: "lttng-tracef",
            spec: "lttng-tracef",
            description: "lttng_ust_tracef(\"%d\", payload), same session set-up as lttng-ust",
            availability: lttng::availability(),
            in_all: true,
        },
        TracerInfo {
            name: "ftrace",
            spec: "ftrace",
            description: "write(trace_marker) of a private tracefs instance, 16 KiB/CPU, overwrite",
            availability: ftrace::availability(ftrace::Mode::Marker),
            in_all: true,
        },
        TracerInfo {
            name: "ftrace-raw",
            spec: "ftrace-raw",
            description: "write(trace_marker_raw) of {id, payload}, same instance set-up as ftrace",
            availability: ftrace::availability(ftrace::Mode::MarkerRaw),
            in_all: true,
        },
        always("syscall", "syscall", "untraced getppid(): baseline of the system-call rows", true),
        TracerInfo {
            name: "ftrace-syscall",
            spec: "ftrace-syscall",
            description: "getppid() with syscalls:sys_{enter,exit}_getppid enabled in a private instance",
            availability: ftrace::availability(ftrace::Mode::Syscall),
            in_all: true,
        },
        TracerInfo {
            name: "ftrace-raw-syscall",
            spec: "ftrace-raw-syscall",
            description: "getppid() with raw_syscalls:sys_{enter,exit} enabled in a private instance",
            availability: ftrace::availability(ftrace::Mode::RawSyscall),
            in_all: true,
        },
        TracerInfo {
            name: "strace",
            spec: "strace",
            description: "getppid() in a child run under strace -f -qq -o /dev/null",
            availability: syscall::strace_availability(),
            in_all: true,
        },
        always("plugin", "plugin:PATH[:ARGS]", "out-of-tree tracer: a .so exporting tracebench_tracer_v1", false),
    ];
    // Survey 5.2 HPC tracers: available only where the user has built them (see hpc.rs).
    v.extend(hpc::ALL.iter().map(|h| TracerInfo {
        name: h.name,
        spec: h.name,
        description: h.description,
        availability: h.availability(),
        in_all: true,
    }));
    // Dynamic instrumentation (uprobe, ebpf, perf, systemtap, bpftrace): see dynamic.rs.
    v.extend(crate::dynamic::known());
    v
}

/// Creates the tracer named by `spec` (e.g. `lw`, `spin:300`, `spin:100@64:1000`).
pub fn create(spec: &str, opts: &CreateOptions) -> Result<Box<dyn Tracer>, TracerError> {
    let (kind, arg) = split(spec);
    let no_arg = |t: Box<dyn Tracer>| -> Result<Box<dyn Tracer>, TracerError> {
        match arg {
            None => Ok(t),
            Some(_) => Err(TracerError::BadSpec { spec: spec.into(), why: format!("'{kind}' takes no argument") }),
        }
    };
    match kind {
        "none" => no_arg(Box::new(NoneTracer)),
        "lw" => no_arg(Box::new(Lw::new("lw", false))),
        "lw-tsc" => no_arg(Box::new(Lw::new("lw-tsc", true))),
        "printf" => no_arg(Box::new(Printf::new()?)),
        "spin" => match arg {
            Some(a) => Ok(Box::new(Spin::parse(spec, a, opts.tsc_hz)?)),
            None => Err(TracerError::BadSpec { spec: spec.into(), why: "spin needs a cost, e.g. spin:300".into() }),
        },
        "lttng-ust" => no_arg(Box::new(lttng::Lttng::new(lttng::Mode::Tracepoint, opts)?)),
        "lttng-tracef" => no_arg(Box::new(lttng::Lttng::new(lttng::Mode::Tracef, opts)?)),
        "ftrace" => no_arg(Box::new(ftrace::Ftrace::new(ftrace::Mode::Marker, opts)?)),
        "ftrace-raw" => no_arg(Box::new(ftrace::Ftrace::new(ftrace::Mode::MarkerRaw, opts)?)),
        "ftrace-syscall" => no_arg(Box::new(ftrace::Ftrace::new(ftrace::Mode::Syscall, opts)?)),
        "ftrace-raw-syscall" => no_arg(Box::new(ftrace::Ftrace::new(ftrace::Mode::RawSyscall, opts)?)),
        "syscall" => no_arg(Box::new(syscall::Syscall::new(syscall::Mode::Plain)?)),
        "strace" => no_arg(Box::new(syscall::Syscall::new(syscall::Mode::Strace)?)),
        "plugin" => Ok(Box::new(plugin::Plugin::create(spec)?)),
        "extrae" => no_arg(Box::new(hpc::create(&hpc::EXTRAE)?)),
        "scorep" => no_arg(Box::new(hpc::create(&hpc::SCOREP)?)),
        "vampirtrace" => no_arg(Box::new(hpc::create(&hpc::VAMPIRTRACE)?)),
        _ => match crate::dynamic::create(kind, spec, arg, opts) {
            Some(r) => r,
            None => Err(TracerError::Unknown(spec.to_string())),
        },
    }
}

/// `KIND[:ARG]`.
pub fn split(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (spec, None),
    }
}

/// Checks a spec without creating the tracer (no side effects), for validating a command line
/// before any cell runs.
pub fn validate(spec: &str) -> Result<(), TracerError> {
    let (kind, arg) = split(spec);
    let info = known().into_iter().find(|i| i.name == kind).ok_or_else(|| TracerError::Unknown(spec.to_string()))?;
    if let Err((why, fix)) = info.availability {
        return Err(TracerError::Unavailable { name: kind.into(), why, fix });
    }
    match (kind, arg) {
        // Loads the library in a forked child without calling init (see plugin::validate).
        ("plugin", _) => plugin::validate(spec).map(|_| ()).map_err(Into::into),
        ("spin", Some(a)) => Spin::parse(spec, a, 1e9).map(|_| ()),
        ("spin", None) => {
            Err(TracerError::BadSpec { spec: spec.into(), why: "spin needs a cost, e.g. spin:300".into() })
        }
        (_, Some(_)) => Err(TracerError::BadSpec { spec: spec.into(), why: format!("'{kind}' takes no argument") }),
        _ => Ok(()),
    }
}

/// Checks that the backend of `spec` can record `size` bytes per event (`--payload-size`, and the
/// sweep knob `payload-size`). 4 (the iteration index) is every backend's default.
pub fn validate_payload(spec: &str, size: u32) -> Result<(), TracerError> {
    let kind = split(spec).0;
    if size == 4 || PAYLOAD_KINDS.contains(&kind) {
        return Ok(());
    }
    Err(TracerError::BadSpec {
        spec: spec.into(),
        why: format!(
            "'{kind}' records a fixed 4-byte payload, so --payload-size {size} cannot apply to it (backends that take \
             a payload size: {})",
            if PAYLOAD_KINDS.is_empty() { "none yet".to_string() } else { PAYLOAD_KINDS.join(", ") }
        ),
    })
}

/// Backends whose payload size can be set.
pub const PAYLOAD_KINDS: &[&str] = &[];

/// The row name of a spec in results when the user gives no `--label`: the spec itself, except
/// for `plugin:PATH[:ARGS]`, whose row is the plugin's own `name` (read in a forked child, init
/// not called; see plugin::validate).
pub fn row_name(spec: &str) -> Result<String, TracerError> {
    match split(spec) {
        ("plugin", _) => Ok(plugin::validate(spec)?),
        _ => Ok(spec.to_string()),
    }
}

/// Set-up that must happen in the parent before the measuring child starts, and last for the
/// whole run (dropped after the tracer's last cell). `None` for most tracers.
pub fn parent_guard(spec: &str, _opts: &CreateOptions) -> Result<Option<Box<dyn Any + Send>>, TracerError> {
    match split(spec).0 {
        // The UST constructor registers with the session daemon when the child loads the
        // provider, so the daemon must be up before any LTTng child starts; it is stopped after
        // the last cell only if this guard started it.
        "lttng-ust" | "lttng-tracef" => Ok(Some(Box::new(lttng::SessiondGuard::ensure(spec)?))),
        _ => Ok(None),
    }
}

/// A command (argv prefix) the measuring child must run under, e.g. `strace -f -qq -o /dev/null`.
/// Empty for most tracers.
pub fn launch_prefix(spec: &str) -> Vec<String> {
    match split(spec).0 {
        "strace" => syscall::STRACE_PREFIX.iter().map(|s| s.to_string()).collect(),
        _ => Vec::new(),
    }
}

/// Whether `tracebench run --instructions singlestep` can step this tracer's calls (issue 19):
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
