//! The eBPF backend's entries in the backend table (backends.rs): the `ebpf` cargo feature decides
//! whether this build has it, and without it `list` says how to build it.
use crate::{CreateOptions, Tracer, TracerError};

#[cfg(feature = "ebpf")]
pub fn ebpf_availability() -> Result<(), (String, String)> {
    crate::ebpf::availability()
}

#[cfg(all(not(feature = "ebpf"), target_arch = "aarch64"))]
pub fn ebpf_availability() -> Result<(), (String, String)> {
    Err((
        "not on arm64 yet: its probe program reads x86-64 registers (ctx->rdi, rsi, rdx) and the cross build \
         has no arm64 libelf for libbpf"
            .into(),
        "measure eBPF on x86-64; arm64 needs site.bpf.c with user_pt_regs (regs[0..2]) and a native build \
         with the `ebpf` feature (docs/arm64.md)"
            .into(),
    ))
}

#[cfg(all(not(feature = "ebpf"), not(target_arch = "aarch64")))]
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
