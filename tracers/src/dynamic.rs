//! Registration of the dynamic-instrumentation backends (uprobe, ebpf, perf, systemtap,
//! bpftrace), kept apart from registry.rs so that backends added elsewhere merge cleanly.
use crate::{CreateOptions, Tracer, TracerError, TracerInfo};

fn info(name: &'static str, description: &'static str, availability: Result<(), (String, String)>) -> TracerInfo {
    TracerInfo { name, spec: name, description, availability, in_all: true }
}

/// The `tracebench list` lines of these backends, with availability on this machine.
pub fn known() -> Vec<TracerInfo> {
    vec![
        info(
            "uprobe",
            "tracefs uprobe event on the probe site, private ftrace instance (16 KiB/CPU, overwrite)",
            crate::uprobe::availability(),
        ),
        info("ebpf", "BPF program on a uprobe: ktime + {ts,payload} into a per-CPU array ring", ebpf_availability()),
        info(
            "perf",
            "perf_events records the uprobe event into its mmap ring (overwrite, never read)",
            crate::perf::availability(),
        ),
        info(
            "systemtap",
            "stap probe on the site function: ts and payload into an array",
            crate::systemtap::availability(),
        ),
        info("bpftrace", "bpftrace -e on the uprobe: nsecs and payload into a map", crate::bpftrace::availability()),
    ]
}

#[cfg(feature = "ebpf")]
fn ebpf_availability() -> Result<(), (String, String)> {
    crate::ebpf::availability()
}

#[cfg(not(feature = "ebpf"))]
fn ebpf_availability() -> Result<(), (String, String)> {
    Err((
        "this build has no eBPF support (cargo feature `ebpf` off)".into(),
        "build with `make` or `cargo build --release -p tracebench --features tracebench-tracers/ebpf` \
         (needs clang, libelf-dev, zlib1g-dev, pkg-config)"
            .into(),
    ))
}

/// Creates one of these backends; `None` if `kind` is not one of them.
pub fn create(
    kind: &str,
    spec: &str,
    arg: Option<&str>,
    opts: &CreateOptions,
) -> Option<Result<Box<dyn Tracer>, TracerError>> {
    if !matches!(kind, "uprobe" | "ebpf" | "perf" | "systemtap" | "bpftrace") {
        return None;
    }
    if arg.is_some() {
        return Some(Err(TracerError::BadSpec { spec: spec.into(), why: format!("'{kind}' takes no argument") }));
    }
    if let Some(Err((why, fix))) = known().into_iter().find(|i| i.name == kind).map(|i| i.availability) {
        return Some(Err(TracerError::Unavailable { name: kind.into(), why, fix }));
    }
    let r: Result<Box<dyn Tracer>, TracerError> = match kind {
        "uprobe" => crate::uprobe::Uprobe::new(kind, opts).map(|t| Box::new(t) as Box<dyn Tracer>),
        #[cfg(feature = "ebpf")]
        "ebpf" => crate::ebpf::Ebpf::new(kind, opts).map(|t| Box::new(t) as Box<dyn Tracer>),
        "perf" => crate::perf::Perf::new(kind, opts).map(|t| Box::new(t) as Box<dyn Tracer>),
        "systemtap" => crate::systemtap::SystemTap::new(kind, opts).map(|t| Box::new(t) as Box<dyn Tracer>),
        "bpftrace" => crate::bpftrace::Bpftrace::new(kind, opts).map(|t| Box::new(t) as Box<dyn Tracer>),
        _ => unreachable!("availability check above rejects ebpf without the feature"),
    };
    Some(r)
}
