//! arm64's probe sites. The names stay those of x86-64 (`--probe-site nop5|push|ret`) and mean
//! the nearest arm64 instruction, each handled by the kernel differently after the BRK trap
//! (arch/arm64/kernel/probes/decode-insn.c):
//! - `nop5`: `nop` (d503201f). Stepped out of line on older kernels, simulated on newer ones
//!   (6.13 simulates nop); arm64 has no optimized (trampoline) uprobes.
//! - `push`: `stp x29, x30, [sp, #-16]!`, the usual frame push: stepped out of line (newer
//!   kernels may simulate it too).
//! - `ret`: `ret` (d65f03c0): a branch, always simulated in the kernel (never stepped).
//! The payload is in w0 (AAPCS64 first argument), the payload's bytes and length in x1 and x2.
std::arch::global_asm!(
    ".pushsection .text.tracebench_sites,\"ax\",%progbits",
    ".p2align 6",
    ".globl tracebench_site_nop5",
    ".type tracebench_site_nop5,%function",
    "tracebench_site_nop5:",
    "nop",
    "ret",
    ".size tracebench_site_nop5, .-tracebench_site_nop5",
    ".p2align 6",
    ".globl tracebench_site_push",
    ".type tracebench_site_push,%function",
    "tracebench_site_push:",
    "stp x29, x30, [sp, #-16]!",
    "ldp x29, x30, [sp], #16",
    "ret",
    ".size tracebench_site_push, .-tracebench_site_push",
    ".p2align 6",
    ".globl tracebench_site_ret",
    ".type tracebench_site_ret,%function",
    "tracebench_site_ret:",
    "ret",
    ".size tracebench_site_ret, .-tracebench_site_ret",
    ".popsection",
);

/// The first instruction of each site, as the kernel will see it, by `SiteKind as usize`.
pub const FIRST_INSTRUCTION: [&str; 3] = ["nop (d503201f)", "stp x29, x30, [sp, #-16]! (a9bf7bfd)", "ret (d65f03c0)"];

/// First byte of each site in hex (little-endian: the instruction's low byte), by `SiteKind as usize`.
pub const ORIGINAL: [&str; 3] = ["1f", "fd", "c0"];

/// How the kernel has patched a site, from its first bytes in hex: `a0 00 20 d4` is
/// `brk #0x5`, the uprobe breakpoint (UPROBES_BRK_IMM).
pub fn patch_of(bytes: &str) -> Option<&'static str> {
    bytes.starts_with("a0 00 20 d4").then_some("brk #0x5 breakpoint")
}

/// The sites' bytes in the file (tests).
#[cfg(test)]
pub const BYTES: [&[u8]; 3] = [
    &[0x1f, 0x20, 0x03, 0xd5, 0xc0, 0x03, 0x5f, 0xd6],
    &[0xfd, 0x7b, 0xbf, 0xa9, 0xfd, 0x7b, 0xc1, 0xa8, 0xc0, 0x03, 0x5f, 0xd6],
    &[0xc0, 0x03, 0x5f, 0xd6],
];
