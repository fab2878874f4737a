//! The eBPF backend's entries in the backend table (backends.rs): the `ebpf` cargo feature decides
//! whether this build has it, and without it `list` says how to build it.
use crate::{CreateOptions, Tracer, TracerError};

#[cfg(feature = "ebpf")]
pub fn ebpf_availability() -> Result<(), (String, String)> {
    crate::ebpf::availability()
}

#[cfg(not(feature = "ebpf"))]
pub fn ebpf_availability() -> Result<(), (String, String)> {
    Err((
        "this build has no eBPF support (cargo feature `ebpf` off)".into(),
        "build with `make` or `cargo build --release -p tracebench --features tracebench-tracers/ebpf` \
         (needs clang, libelf-dev, zlib1g-dev, pkg-config)"
            .into(),
    ))
}

/// Creates the eBPF backend; without the `ebpf` feature, says how to build it.
pub fn create_ebpf(_spec: &str, _arg: Option<&str>, opts: &CreateOptions) -> Result<Box<dyn Tracer>, TracerError> {
    #[cfg(feature = "ebpf")]
    {
        crate::ebpf::Ebpf::new("ebpf", opts).map(|t| Box::new(t) as Box<dyn Tracer>)
    }
    #[cfg(not(feature = "ebpf"))]
    {
        let _ = opts;
        let (why, fix) = ebpf_availability().unwrap_err();
        Err(TracerError::Unavailable { name: "ebpf".into(), why, fix })
    }
}
