//! x86-64's side of the stepping: the marked call (int3 with rax = marker), the registers the
//! stepper reads (PTRACE_GETREGS), and which instructions enter the kernel.
use super::kind::Kind;
use super::stepper::Regs;
use super::{tramp, MAGIC_DONE};

/// One marked call: int3 with the marker in rax, then `call tramp`; label 2 (its address in rdx)
/// is where the stepper stops counting.
#[inline(never)]
pub fn stepped_call(p: usize, it: u64) {
    // SAFETY: calls `tramp` with the C ABI (all caller-saved registers declared clobbered); the
    // stack is call-aligned at the block's entry (no `nostack`).
    unsafe {
        core::arch::asm!(
            "lea rdx, [rip + 2f]",
            "int3",
            "call {t}",
            "2:",
            t = sym tramp,
            inout("rax") super::MAGIC_CALL => _,
            inout("rdi") p => _,
            inout("rsi") it => _,
            out("rdx") _,
            clobber_abi("C"),
        );
    }
}

/// The marker after the last call: the stepper detaches.
#[inline(never)]
pub fn done_marker() {
    // SAFETY: int3 with rax set; the stepper (or `on_trap`) resumes after it.
    unsafe { core::arch::asm!("int3", in("rax") MAGIC_DONE, options(nostack)) };
}

/// In the cell's SIGTRAP handler when the stepper is gone: clear the trap flag in the interrupted
/// context, or the thread would trap after every instruction once sigreturn restores it (int3
/// already left rip after itself).
///
/// # Safety
/// `uc` must be the ucontext_t the kernel passed to an SA_SIGINFO handler.
pub unsafe fn recover_from_trap(uc: *mut libc::ucontext_t) {
    // SAFETY: see the caller's contract.
    unsafe { (*uc).uc_mcontext.gregs[libc::REG_EFL as usize] &= !0x100 };
}

/// The thread's registers, in the stepper's terms.
pub fn regs(tid: i32) -> Result<Regs, std::io::Error> {
    // SAFETY: user_regs_struct is plain data; GETREGS fills it.
    let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    super::stepper::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut r as *mut _ as usize)?;
    // Right after a system call orig_rax holds its number (-1 after other instructions; the
    // uprobe call resets it), or rcx holds the return address the syscall instruction put there.
    Ok(Regs {
        pc: r.rip,
        marker: r.rax,
        iteration: r.rsi,
        end: r.rdx,
        after_syscall: r.orig_rax as i64 != -1 || r.rcx == r.rip,
        sysno: r.rax,
        sysno_after: r.orig_rax,
    })
}

/// int3 leaves rip after itself: nothing to skip.
pub fn skip_marker(_tid: i32, _r: &Regs) -> Result<(), std::io::Error> {
    Ok(())
}

/// What an instruction does to the kernel, from its first bytes.
pub fn kind_of(word: u64) -> Kind {
    let b = word.to_le_bytes();
    // Skip legacy/REX prefixes is unnecessary for these encodings, which compilers never prefix.
    match (b[0], b[1], b[2]) {
        (0x0f, 0x05, _) | (0x0f, 0x34, _) | (0xcd, 0x80, _) => Kind::Syscall,
        (0xcc, _, _) => Kind::Trap,
        (0x0f, 0x31, _) | (0x0f, 0x01, 0xf9) => Kind::Clock,
        _ => call_or_return(&b),
    }
}

/// A call or a return, for the shadow call stack: the opcode after any prefixes (operand and
/// address size, segment and notrack, rep/bnd, REX), which compilers do put before them
/// (`41 ff d3`: call r11; `3e ff e0`-style notrack; `f3 c3`: rep ret).
fn call_or_return(b: &[u8; 8]) -> Kind {
    let at = b
        .iter()
        .take(4)
        .position(|&x| !matches!(x, 0x66 | 0x67 | 0x2e | 0x3e | 0xf2 | 0xf3 | 0x40..=0x4f))
        .unwrap_or(4);
    match (b[at], b.get(at + 1).copied().unwrap_or(0)) {
        (0xe8, _) => Kind::Call,
        // ff /2: call through a register or memory (the ModRM byte's reg field is 2).
        (0xff, m) if (m >> 3) & 7 == 2 => Kind::Call,
        (0xc3, _) | (0xc2, _) => Kind::Return,
        _ => Kind::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_entries_and_clock_reads_are_told_from_their_bytes() {
        // syscall, sysenter, int 0x80 (then whatever follows in the word)
        assert_eq!(kind_of(u64::from_le_bytes([0x0f, 0x05, 0xc3, 0, 0, 0, 0, 0])), Kind::Syscall);
        assert_eq!(kind_of(u64::from_le_bytes([0x0f, 0x34, 0, 0, 0, 0, 0, 0])), Kind::Syscall);
        assert_eq!(kind_of(u64::from_le_bytes([0xcd, 0x80, 0, 0, 0, 0, 0, 0])), Kind::Syscall);
        assert_eq!(kind_of(0xcc), Kind::Trap);
        // rdtsc, rdtscp
        assert_eq!(kind_of(u64::from_le_bytes([0x0f, 0x31, 0, 0, 0, 0, 0, 0])), Kind::Clock);
        assert_eq!(kind_of(u64::from_le_bytes([0x0f, 0x01, 0xf9, 0, 0, 0, 0, 0])), Kind::Clock);
        // nopl and int 0x81 are plain; ret is a return (for the shadow call stack)
        assert_eq!(kind_of(u64::from_le_bytes([0x0f, 0x1f, 0x44, 0, 0, 0xc3, 0, 0])), Kind::Plain);
        assert_eq!(kind_of(0xc3), Kind::Return);
        assert_eq!(kind_of(u64::from_le_bytes([0xcd, 0x81, 0, 0, 0, 0, 0, 0])), Kind::Plain);
    }

    #[test]
    fn calls_and_returns_are_told_through_their_prefixes() {
        let k = |b: &[u8]| {
            let mut w = [0x90u8; 8];
            w[..b.len()].copy_from_slice(b);
            kind_of(u64::from_le_bytes(w))
        };
        assert_eq!(k(&[0xe8, 1, 2, 3, 4]), Kind::Call);
        assert_eq!(k(&[0x41, 0xff, 0xd3]), Kind::Call); // call r11
        assert_eq!(k(&[0xff, 0x50, 0x18]), Kind::Call); // call [rax+0x18]
        assert_eq!(k(&[0x3e, 0xff, 0xd0]), Kind::Call); // notrack call rax
        assert_eq!(k(&[0xff, 0xe0]), Kind::Plain); // jmp rax (ff /4)
        assert_eq!(k(&[0xc3]), Kind::Return);
        assert_eq!(k(&[0xf3, 0xc3]), Kind::Return); // rep ret
        assert_eq!(k(&[0xc2, 8, 0]), Kind::Return);
        assert_eq!(k(&[0x48, 0x89, 0xc3]), Kind::Plain); // mov rbx, rax
    }
}
