//! What a stepped instruction is, to the stepper (kernel entries, clock reads) and to the shadow
//! call stack (calls, returns): told from its bytes by `super::arch::kind_of`. Its own module
//! because the stepper, the architectures and the shadow stack all use it.
/// What an instruction does to the kernel, from its first bytes (`super::arch::kind_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Plain,
    /// A system-call instruction (syscall, sysenter, int 0x80; arm64: svc).
    Syscall,
    /// A breakpoint placed by someone else (int3; arm64: brk): a uprobe.
    Trap,
    /// A clock read (rdtsc, rdtscp; arm64: mrs of CNTVCT_EL0).
    Clock,
    /// An instruction the kernel placed out of line (uprobes' XOL slot).
    Xol,
    /// A call (x86-64: call; arm64: bl, blr): the shadow call stack pushes its address.
    Call,
    /// A return (ret): the shadow call stack pops.
    Return,
}
