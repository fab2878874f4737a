//! Compiles the eBPF backend's program (tracers/bpf/site.bpf.c) with clang when the `ebpf`
//! feature is on; the default build does nothing here and needs no clang.
use std::path::PathBuf;
use std::process::Command;

fn main() {
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
