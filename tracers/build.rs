//! Build steps of the tracers crate, each independent of the other:
//! - [`build_lttng`]: libtb_lttng.so, the LTTng-UST provider of the `lttng-*` backends, when
//!   liblttng-ust-dev is installed;
//! - [`build_bpf`]: the eBPF backend's program (tracers/bpf/site.bpf.c), when the `ebpf` feature
//!   is on.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    build_lttng();
    build_bpf();
}

/// Builds libtb_lttng.so (the LTTng-UST tracepoint provider and the `tb_lttng_*` entry points in
/// c/) when liblttng-ust-dev is installed, and tells the crate where it is through
/// `TB_LTTNG_SO`. When it is not installed nothing is built and the `lttng-*` backends report
/// themselves unavailable, so the rest of tracebench still builds and runs.
///
/// A shared object, not a static library linked into the binary: loading liblttng-ust runs its
/// constructor (sessiond registration, listener threads), which only the LTTng backends' measuring
/// child should carry. The backend dlopen()s it when it is created.
fn build_lttng() {
    println!("cargo:rerun-if-changed=c/tb_lttng.c");
    println!("cargo:rerun-if-changed=c/tb_lttng_tracef.c");
    println!("cargo:rerun-if-changed=c/tb_lttng_tp.h");
    println!("cargo:rerun-if-env-changed=TB_NO_LTTNG");
    println!("cargo:rustc-check-cfg=cfg(tb_lttng)");

    if std::env::var_os("TB_NO_LTTNG").is_some() {
        println!("cargo:warning=TB_NO_LTTNG set: the lttng-ust and lttng-tracef backends are not built");
        return;
    }
    // A cross build (arm64 on x86-64) must not take the host's liblttng-ust for the target's: without
    // PKG_CONFIG_LIBDIR pointing at the target's libraries (scripts/arm64-lab/build.sh sets it) the
    // provider is left out and the backends say so in `tracebench list`.
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");
    let cross = std::env::var("TARGET").ok() != std::env::var("HOST").ok();
    if cross && std::env::var_os("PKG_CONFIG_LIBDIR").is_none() {
        println!(
            "cargo:warning=cross build without PKG_CONFIG_LIBDIR: the lttng-ust and lttng-tracef backends are not \
             built (scripts/arm64-lab/build.sh builds them against the target's liblttng-ust)"
        );
        return;
    }
    let have_ust =
        Command::new("pkg-config").args(["--exists", "lttng-ust"]).status().map(|s| s.success()).unwrap_or(false);
    if !have_ust {
        // Not an error: the backends say why and how to fix it in `tracebench list`.
        return;
    }

    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let so = out.join("libtb_lttng.so");
    let compiler = cc::Build::new().get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-O2", "-g", "-fPIC", "-shared", "-Wall", "-Wextra", "-Ic"])
        .args(["c/tb_lttng.c", "c/tb_lttng_tracef.c", "-o"])
        .arg(&so)
        .args(["-llttng-ust", "-ldl"])
        // Without it the linker garbage-collects the __tracepoints_ptrs section and the
        // tracepoints are silently dropped (LTTng-UST with binutils >= 2.37).
        .arg("-Wl,-z,nostart-stop-gc");
    let status = cmd.status().expect("run the C compiler");
    if !status.success() {
        panic!("building libtb_lttng.so failed: {cmd:?}");
    }
    println!("cargo:rustc-env=TB_LTTNG_SO={}", so.display());
    println!("cargo:rustc-cfg=tb_lttng");
}

/// Compiles the eBPF backend's program (tracers/bpf/site.bpf.c) with clang when the `ebpf`
/// feature is on; the default build does nothing here and needs no clang.
fn build_bpf() {
    println!("cargo:rerun-if-changed=bpf/site.bpf.c");
    println!("cargo:rerun-if-env-changed=CLANG");
    if std::env::var_os("CARGO_FEATURE_EBPF").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("site.bpf.o");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    // -I/usr/include/x86_64-linux-gnu: the BPF target has no multiarch include path of its own,
    // and <asm/ptrace.h> (struct pt_regs, the uprobe context) lives there on Debian.
    let status = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .args(["-I/usr/include/x86_64-linux-gnu", "-c", "bpf/site.bpf.c", "-o"])
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            panic!("{clang} failed ({s}) compiling bpf/site.bpf.c: the `ebpf` feature needs clang and linux-libc-dev")
        }
        Err(e) => panic!(
            "cannot run {clang} ({e}): the `ebpf` feature needs clang (apt-get install clang libelf-dev zlib1g-dev \
             pkg-config), or build without it"
        ),
    }
}
