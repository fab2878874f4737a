//! The one typed table of backends: every tracer is registered here once, with everything the
//! harness needs to know about it (docs/ARCHITECTURE.md, "Adding a tracer backend"). The
//! registry's entry points (`known`, `validate`, `create`, `parent_guard`, `launch_prefix`,
//! `validate_payload`) and the sweep's knob checks all read this table; nothing else matches on
//! tracer names.
use std::any::Any;

use crate::{ftrace, hpc, lttng, open, otf, plugin, syscall, CreateOptions, Tracer, TracerError};

pub type Availability = fn() -> Result<(), (String, String)>;
pub type Create = fn(spec: &str, arg: Option<&str>, opts: &CreateOptions) -> Result<Box<dyn Tracer>, TracerError>;
pub type Guard = fn(spec: &str, opts: &CreateOptions) -> Result<Box<dyn Any + Send>, TracerError>;
/// Checks the argument of `KIND:ARG` without side effects.
pub type CheckArg = fn(spec: &str, arg: Option<&str>) -> Result<(), TracerError>;

/// Options a backend reads (the sweep's knobs); any other is refused for it up front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    SubbufSize,
    NumSubbuf,
    FtraceClock,
    ProbeSite,
    OtfBufferSize,
    Otf2ChunkSize,
    /// `--keep-trace`: a flag, not swept; declared so that a run without a tracer that writes a
    /// trace refuses it rather than ignore it.
    KeepTrace,
}

impl Knob {
    /// Checks the option's value in `opts` against what this machine accepts (no side effects).
    pub fn check(self, spec: &str, opts: &CreateOptions) -> Result<(), TracerError> {
        let bad = |why: String| TracerError::BadOption { spec: spec.into(), why };
        match self {
            Knob::SubbufSize | Knob::NumSubbuf => {
                lttng::check_buffer(opts.subbuf_size.as_deref(), opts.num_subbuf).map(|_| ()).map_err(bad)
            }
            Knob::FtraceClock => ftrace::check_clock_here(opts.ftrace_clock.as_deref()).map(|_| ()).map_err(bad),
            Knob::ProbeSite => crate::probe_site::SiteKind::parse(opts.probe_site.as_deref()).map(|_| ()),
            Knob::OtfBufferSize => {
                use otf::v1::{DEFAULT_BUFFER, MAX_BUFFER, MIN_BUFFER};
                let v = opts.otf_buffer_size.as_deref();
                otf::check_size("--otf-buffer-size", v, DEFAULT_BUFFER, MIN_BUFFER, MAX_BUFFER).map(|_| ()).map_err(bad)
            }
            Knob::KeepTrace => Ok(()),
            Knob::Otf2ChunkSize => {
                use otf::v2::{DEFAULT_CHUNK, MAX_CHUNK, MIN_CHUNK};
                let v = opts.otf2_chunk_size.as_deref();
                otf::check_size("--otf2-chunk-size", v, DEFAULT_CHUNK, MIN_CHUNK, MAX_CHUNK).map(|_| ()).map_err(bad)
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Knob::SubbufSize => "subbuf-size",
            Knob::NumSubbuf => "num-subbuf",
            Knob::FtraceClock => "ftrace-clock",
            Knob::ProbeSite => "probe-site",
            Knob::OtfBufferSize => "otf-buffer-size",
            Knob::Otf2ChunkSize => "otf2-chunk-size",
            Knob::KeepTrace => "keep-trace",
        }
    }
}

/// One backend.
pub struct Backend {
    /// The KIND of `KIND[:ARG]`, and the row name by default.
    pub name: &'static str,
    /// How to write it after `--tracer` when it takes an argument (`spin:NS[@P:SLOW]`);
    /// `None`: its name.
    pub spec_form: Option<&'static str>,
    pub description: &'static str,
    /// Whether `--tracer all` includes it (calibration backends are not tracers).
    pub in_all: bool,
    /// Whether it can run here: `Err((why, fix))` otherwise. No side effects.
    pub availability: Availability,
    /// `None`: takes no argument.
    pub arg: Option<CheckArg>,
    /// Sets the tracer up in the measuring child; its `Drop` tears it down.
    pub create: Create,
    /// Parent-side set-up held for the whole run (LTTng's session daemon).
    pub guard: Option<Guard>,
    /// A command the measuring child is started under (strace).
    pub launch_prefix: &'static [&'static str],
    pub knobs: &'static [Knob],
    /// The `--payload-size` values it accepts (inclusive); `None`: a fixed 4-byte payload.
    pub payload: Option<(u32, u32)>,
    /// Checks a `--payload-size` itself, when the sizes are the backend's own (a plugin's
    /// `max_payload`); `payload` is then `None`.
    pub payload_check: Option<fn(spec: &str, size: u32) -> Result<(), TracerError>>,
    /// Needs root whatever the machine (tracefs instances, uprobe events, BPF programs);
    /// `tracebench list` marks it.
    pub needs_root: bool,
}

fn ok() -> Result<(), (String, String)> {
    Ok(())
}

fn boxed<T: Tracer + 'static>(r: Result<T, TracerError>) -> Result<Box<dyn Tracer>, TracerError> {
    r.map(|t| Box::new(t) as Box<dyn Tracer>)
}

fn spin_arg(spec: &str, arg: Option<&str>) -> Result<(), TracerError> {
    match arg {
        Some(a) => crate::spin::Spin::parse(spec, a, 1e9).map(|_| ()),
        None => Err(TracerError::BadSpec { spec: spec.into(), why: "spin needs a cost, e.g. spin:300".into() }),
    }
}

fn plugin_arg(spec: &str, _arg: Option<&str>) -> Result<(), TracerError> {
    // Loads the library in a forked child without calling init (see plugin::validate).
    plugin::validate(spec).map(|_| ()).map_err(Into::into)
}

fn lttng_guard(spec: &str, _: &CreateOptions) -> Result<Box<dyn Any + Send>, TracerError> {
    // The UST constructor registers with the session daemon when the child loads the provider,
    // so the daemon must be up before any LTTng child starts; it is stopped after the last cell
    // only if this guard started it.
    Ok(Box::new(lttng::SessiondGuard::ensure(spec)?))
}

const NO_KNOBS: &[Knob] = &[];
const LTTNG_KNOBS: &[Knob] = &[Knob::SubbufSize, Knob::NumSubbuf];
const FTRACE_KNOBS: &[Knob] = &[Knob::FtraceClock];
const PROBE_KNOBS: &[Knob] = &[Knob::ProbeSite];
const OTF_KNOBS: &[Knob] = &[Knob::OtfBufferSize, Knob::KeepTrace];
const OTF2_KNOBS: &[Knob] = &[Knob::Otf2ChunkSize, Knob::KeepTrace];
const OPEN_NAME: Option<(u32, u32)> = Some((1, open::MAX_NAME));
// `--payload-size` ranges (payload.rs). A variable-length record in a 16 KiB ring: up to a
// quarter of it.
const RING_RECORD: Option<(u32, u32)> = Some((1, crate::payload::MAX));
// trace_marker: one print event must fit in a ring-buffer page (ftrace::MAX_MARKER); the uprobe
// event goes into ftrace's ring too.
const MARKER: Option<(u32, u32)> = Some((1, ftrace::MAX_MARKER));
// trace_marker_raw: the first 4 bytes are the record's id.
const MARKER_RAW: Option<(u32, u32)> = Some((4, ftrace::MAX_MARKER));
// A `ustring` fetch-arg stops at MAX_STRING_SIZE (4096) with its NUL; perf's trace buffer takes
// up to 8 KiB per event.
const USTRING: Option<(u32, u32)> = Some((1, crate::payload::MAX - 1));

fn unset(_: &str, _: Option<&str>, _: &CreateOptions) -> Result<Box<dyn Tracer>, TracerError> {
    unreachable!("every backend sets `create`")
}

/// The defaults of an entry: a tracer of `--tracer all`, no argument, no parent set-up, no
/// launch prefix, no knobs, a fixed 4-byte payload.
const BASE: Backend = Backend {
    name: "",
    spec_form: None,
    description: "",
    in_all: true,
    availability: ok,
    arg: None,
    create: unset,
    guard: None,
    launch_prefix: &[],
    knobs: NO_KNOBS,
    payload: None,
    payload_check: None,
    needs_root: false,
};

macro_rules! backend {
    ($name:expr, $desc:expr, $avail:expr, $create:expr $(, $field:ident : $v:expr)* $(,)?) => {
        Backend { name: $name, description: $desc, availability: $avail, create: $create, $($field: $v,)* ..BASE }
    };
}

impl Backend {
    /// How to write it after `--tracer`.
    pub fn spec(&self) -> &'static str {
        self.spec_form.unwrap_or(self.name)
    }
}

/// Every backend this build knows, in `tracebench list` order.
pub static BACKENDS: &[Backend] = &[
    backend!("none", "empty non-inlined call: the floor", ok, |_, _, _| Ok(Box::new(crate::none::NoneTracer))),
    backend!(
        "lw",
        "survey's LW-ust: per-CPU ring, clock_gettime, {id,ts,payload}",
        ok,
        |_, _, o| Ok(Box::new(crate::lw::Lw::new("lw", false, o.payload_size))),
        payload: RING_RECORD,
    ),
    backend!(
        "lw-tsc",
        "LW-ust with an rdtsc timestamp",
        ok,
        |_, _, o| Ok(Box::new(crate::lw::Lw::new("lw-tsc", true, o.payload_size))),
        payload: RING_RECORD,
    ),
    backend!(
        "printf",
        "fprintf(ts, payload) to a fully buffered FILE on /dev/null",
        ok,
        |_, _, o| boxed(crate::printf::Printf::new(o.payload_size)),
        payload: RING_RECORD,
    ),
    backend!(
        "spin",
        "calibration: busy-wait NS ns (every P-th call SLOW ns; ~N: 1 call in N at random)",
        ok,
        |spec, arg, o| boxed(crate::spin::Spin::parse(spec, arg.unwrap_or_default(), o.tsc_hz)),
        spec_form: Some("spin:NS[@P|~N:SLOW]"),
        in_all: false,
        arg: Some(spin_arg),
    ),
    backend!(
        "lttng-ust",
        "LTTng-UST tracepoint, 4-byte payload, snapshot session, overwrite, 2 x 8 KiB/CPU",
        lttng::availability,
        |_, _, o| boxed(lttng::Lttng::new(lttng::Mode::Tracepoint, o)),
        guard: Some(lttng_guard),
        knobs: LTTNG_KNOBS,
        payload: RING_RECORD,
    ),
    backend!(
        "lttng-tracef",
        "lttng_ust_tracef(\"%d\", payload), same session set-up as lttng-ust",
        lttng::availability,
        |_, _, o| boxed(lttng::Lttng::new(lttng::Mode::Tracef, o)),
        guard: Some(lttng_guard),
        knobs: LTTNG_KNOBS,
        payload: RING_RECORD,
    ),
    backend!(
        "ftrace",
        "write(trace_marker) of a private tracefs instance, 16 KiB/CPU, overwrite",
        || ftrace::availability(ftrace::Mode::Marker),
        |_, _, o| boxed(ftrace::Ftrace::new(ftrace::Mode::Marker, o)),
        knobs: FTRACE_KNOBS,
        payload: MARKER,
        needs_root: true,
    ),
    backend!(
        "ftrace-raw",
        "write(trace_marker_raw) of {id, payload}, same instance set-up as ftrace",
        || ftrace::availability(ftrace::Mode::MarkerRaw),
        |_, _, o| boxed(ftrace::Ftrace::new(ftrace::Mode::MarkerRaw, o)),
        knobs: FTRACE_KNOBS,
        payload: MARKER_RAW,
        needs_root: true,
    ),
    backend!("syscall", "untraced getppid(): baseline of the system-call rows", ok, |_, _, _| {
        boxed(syscall::Syscall::new(syscall::Mode::Plain))
    }),
    backend!(
        "ftrace-syscall",
        "getppid() with syscalls:sys_{enter,exit}_getppid enabled in a private instance",
        || ftrace::availability(ftrace::Mode::Syscall),
        |_, _, o| boxed(ftrace::Ftrace::new(ftrace::Mode::Syscall, o)),
        knobs: FTRACE_KNOBS,
        needs_root: true,
    ),
    backend!(
        "ftrace-raw-syscall",
        "getppid() with raw_syscalls:sys_{enter,exit} enabled in a private instance",
        || ftrace::availability(ftrace::Mode::RawSyscall),
        |_, _, o| boxed(ftrace::Ftrace::new(ftrace::Mode::RawSyscall, o)),
        knobs: FTRACE_KNOBS,
        needs_root: true,
    ),
    backend!(
        "strace",
        "getppid() in a child run under strace -f -qq -o /dev/null",
        syscall::strace_availability,
        |_, _, _| boxed(syscall::Syscall::new(syscall::Mode::Strace)),
        launch_prefix: syscall::STRACE_PREFIX,
    ),
    backend!(
        "open",
        "untraced open() of a missing name of --payload-size bytes: baseline of *-open",
        ok,
        |_, _, o| boxed(open::Open::new(false, o)),
        payload: OPEN_NAME,
    ),
    backend!(
        "ftrace-open",
        "open() with syscalls:sys_{enter,exit}_openat enabled (records the name's pointer)",
        || ftrace::availability(ftrace::Mode::OpenSyscall),
        |_, _, o| boxed(ftrace::Ftrace::new(ftrace::Mode::OpenSyscall, o)),
        knobs: FTRACE_KNOBS,
        payload: OPEN_NAME,
        needs_root: true,
    ),
    backend!(
        "strace-open",
        "open() in a child run under strace -f -qq -s 4096 -o /dev/null (reads the whole name)",
        syscall::strace_availability,
        |_, _, o| boxed(open::Open::new(true, o)),
        launch_prefix: syscall::STRACE_OPEN_PREFIX,
        payload: OPEN_NAME,
    ),
    backend!(
        "plugin",
        "out-of-tree tracer: a .so exporting tracebench_tracer_v2 (or v1)",
        ok,
        |spec, _, o| boxed(plugin::Plugin::create(spec, o.payload_size).map_err(TracerError::from)),
        spec_form: Some("plugin:PATH[:ARGS]"),
        in_all: false,
        arg: Some(plugin_arg),
        payload_check: Some(|spec, size| plugin::validate_payload(spec, size).map_err(Into::into)),
    ),
    // Survey 5.2 HPC tracers: available only where the user has built them (see hpc.rs).
    backend!("extrae", hpc::EXTRAE.description, || hpc::EXTRAE.availability(), |_, _, _| {
        boxed(hpc::create(&hpc::EXTRAE))
    }),
    backend!("scorep", hpc::SCOREP.description, || hpc::SCOREP.availability(), |_, _, _| {
        boxed(hpc::create(&hpc::SCOREP))
    }),
    backend!("vampirtrace", hpc::VAMPIRTRACE.description, || hpc::VAMPIRTRACE.availability(), |_, _, _| {
        boxed(hpc::create(&hpc::VAMPIRTRACE))
    }),
    // The trace writers of VampirTrace's and Score-P's formats, from Debian (otf/mod.rs).
    backend!(
        "otf",
        "the OTF 1 event writer (VampirTrace's trace format), not VampirTrace: OTF_Writer_writeEnter, 8 KiB buffer",
        || otf::OTF.availability(),
        |_, _, o| boxed(otf::v1::Otf::new(o)),
        knobs: OTF_KNOBS,
    ),
    backend!(
        "otf2",
        "the OTF2 event writer (Score-P's trace format), not Score-P's measurement system: OTF2_EvtWriter_Enter, 256 KiB chunk",
        || otf::OTF2.availability(),
        |_, _, o| boxed(otf::v2::Otf2::new(o)),
        knobs: OTF2_KNOBS,
    ),
    // Dynamic instrumentation on the probe site (probe_site.rs).
    backend!(
        "uprobe",
        "tracefs uprobe event on the probe site, private ftrace instance (16 KiB/CPU, overwrite)",
        crate::uprobe::availability,
        |_, _, o| boxed(crate::uprobe::Uprobe::new("uprobe", o)),
        knobs: PROBE_KNOBS,
        payload: MARKER,
        needs_root: true,
    ),
    backend!(
        "ebpf",
        "BPF program on a uprobe: ktime + {ts,payload} into a per-CPU array ring",
        crate::dynamic::ebpf_availability,
        crate::dynamic::create_ebpf,
        knobs: PROBE_KNOBS,
        payload: RING_RECORD,
        needs_root: true,
    ),
    backend!(
        "perf",
        "perf_events records the uprobe event into its mmap ring (overwrite, never read)",
        crate::perf::availability,
        |_, _, o| boxed(crate::perf::Perf::new("perf", o)),
        knobs: PROBE_KNOBS,
        payload: USTRING,
        needs_root: true,
    ),
    backend!(
        "systemtap",
        "stap probe on the site function: ts and payload into an array",
        crate::systemtap::availability,
        |_, _, o| boxed(crate::systemtap::SystemTap::new("systemtap", o)),
        knobs: PROBE_KNOBS,
        needs_root: true,
    ),
    backend!(
        "bpftrace",
        "bpftrace -e on the uprobe: nsecs and payload into a map",
        crate::bpftrace::availability,
        |_, _, o| boxed(crate::bpftrace::Bpftrace::new("bpftrace", o)),
        knobs: PROBE_KNOBS,
        needs_root: true,
    ),
];

/// The backend of a KIND.
pub fn find(kind: &str) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| b.name == kind)
}

/// Names of the backends that read `knob` (a sweep knob name).
pub fn with_knob(knob: &str) -> Vec<&'static str> {
    BACKENDS.iter().filter(|b| b.knobs.iter().any(|k| k.name() == knob)).map(|b| b.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_knobs_are_known() {
        for (i, b) in BACKENDS.iter().enumerate() {
            assert!(BACKENDS[i + 1..].iter().all(|o| o.name != b.name), "{} registered twice", b.name);
            assert!(b.spec().starts_with(b.name), "{}", b.name);
            assert!(b.create as *const () != unset as *const (), "{}", b.name);
            // A range holds the default 4-byte payload (what every run records without
            // --payload-size) and no size a payload cannot have.
            if let Some((lo, hi)) = b.payload {
                assert!((lo..=hi).contains(&crate::payload::DEFAULT), "{}: {lo}..={hi}", b.name);
                assert!(lo >= 1 && hi <= crate::payload::MAX, "{}: {lo}..={hi}", b.name);
                assert!(b.payload_check.is_none(), "{}: a range and its own check", b.name);
            }
        }
        assert_eq!(with_knob("subbuf-size"), ["lttng-ust", "lttng-tracef"]);
        assert_eq!(with_knob("otf-buffer-size"), ["otf"]);
        assert_eq!(with_knob("otf2-chunk-size"), ["otf2"]);
        assert_eq!(with_knob("keep-trace"), ["otf", "otf2"]);
        assert!(with_knob("ftrace-clock").contains(&"ftrace-open"));
        assert!(with_knob("payload-size").is_empty(), "payload-size is a range, not a knob flag");
    }
}
