//! Builds libtb_lttng.so (the LTTng-UST tracepoint provider and the `tb_lttng_*` entry points in
//! c/) when liblttng-ust-dev is installed, and tells the crate where it is through
//! `TB_LTTNG_SO`. When it is not installed nothing is built and the `lttng-*` backends report
//! themselves unavailable, so the rest of tracebench still builds and runs.
//!
//! A shared object, not a static library linked into the binary: loading liblttng-ust runs its
//! constructor (sessiond registration, listener threads), which only the LTTng backends' measuring
//! child should carry. The backend dlopen()s it when it is created.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=c/tb_lttng.c");
    println!("cargo:rerun-if-changed=c/tb_lttng_tracef.c");
    println!("cargo:rerun-if-changed=c/tb_lttng_tp.h");
    println!("cargo:rerun-if-env-changed=TB_NO_LTTNG");
    println!("cargo:rustc-check-cfg=cfg(tb_lttng)");

    if std::env::var_os("TB_NO_LTTNG").is_some() {
        println!("cargo:warning=TB_NO_LTTNG set: the lttng-ust and lttng-tracef backends are not built");
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
