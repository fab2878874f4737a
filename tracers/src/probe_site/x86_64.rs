//! x86-64's probe sites (see the parent module for what each first instruction makes the kernel do).
std::arch::global_asm!(
    ".pushsection .text.tracebench_sites,\"ax\",@progbits",
    ".p2align 6",
    ".globl tracebench_site_nop5",
    ".type tracebench_site_nop5,@function",
    "tracebench_site_nop5:",
    // nopl 0x0(%rax,%rax,1): the 5-byte nop that 6.18 optimizes into a trampoline call.
    ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
    "ret",
    ".size tracebench_site_nop5, .-tracebench_site_nop5",
    ".p2align 6",
    ".globl tracebench_site_push",
    ".type tracebench_site_push,@function",
    "tracebench_site_push:",
    "push %rbp",
    "pop %rbp",
    "ret",
    ".size tracebench_site_push, .-tracebench_site_push",
    ".p2align 6",
    ".globl tracebench_site_ret",
    ".type tracebench_site_ret,@function",
    "tracebench_site_ret:",
    "ret",
    ".size tracebench_site_ret, .-tracebench_site_ret",
    ".popsection",
    options(att_syntax)
);

/// The first instruction of each site, as the kernel will see it, by `SiteKind as usize`.
pub const FIRST_INSTRUCTION: [&str; 3] = ["nopl 0x0(%rax,%rax,1) (0f 1f 44 00 00)", "push %rbp (55)", "ret (c3)"];

/// First byte of each site in hex, by `SiteKind as usize`.
pub const ORIGINAL: [&str; 3] = ["0f", "55", "c3"];

/// How the kernel has patched a site, from its first bytes in hex: `cc` = int3 breakpoint, `e8` =
/// call to the uprobe trampoline (6.18's optimized uprobe on a 5-byte nop).
pub fn patch_of(bytes: &str) -> Option<&'static str> {
    match bytes.get(0..2) {
        Some("cc") => Some("int3 breakpoint"),
        Some("e8") => Some("call to uprobe trampoline (optimized)"),
        _ => None,
    }
}

/// The sites' bytes in the file (tests).
#[cfg(test)]
pub const BYTES: [&[u8]; 3] = [&[0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3], &[0x55, 0x5d, 0xc3], &[0xc3]];
