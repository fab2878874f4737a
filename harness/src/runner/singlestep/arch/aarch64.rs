//! arm64's side of the stepping: the marked call (`brk` with x9 = marker), the registers the
//! stepper reads (PTRACE_GETREGSET NT_PRSTATUS: struct user_pt_regs), and which instructions
//! enter the kernel. PTRACE_SINGLESTEP works as on x86-64 (the kernel sets MDSCR_EL1.SS and
//! SPSR.SS for the tracee), one instruction per step.
//!
//! Unlike int3, `brk` leaves the pc on itself: whoever handles the trap (the stepper, or the
//! cell's own SIGTRAP handler when the stepper is gone) moves the pc past it.
use super::kind::Kind;
use super::stepper::Regs;
use super::{tramp, MAGIC_CALL, MAGIC_DONE};

/// The immediate of our markers' `brk` (the kernel's own BRKs use 0x004-0x100 and 0x800+).
const MARKER_BRK: u32 = 0xd420_0000 | (0x7462 << 5);

/// One marked call: brk with the marker in x9, then `bl tramp`; label 2 (its address in x10) is
/// where the stepper stops counting. x0 and x1 are tramp's arguments, as rdi and rsi on x86-64.
#[inline(never)]
pub fn stepped_call(p: usize, it: u64) {
    // SAFETY: calls `tramp` with the C ABI (all caller-saved registers, x30 included, declared
    // clobbered); sp stays 16-byte aligned (no `nostack` is needed: bl pushes nothing).
    unsafe {
        core::arch::asm!(
            "adr x10, 2f",
            "brk #0x7462",
            "bl {t}",
            "2:",
            t = sym tramp,
            inout("x9") MAGIC_CALL => _,
            inout("x0") p => _,
            inout("x1") it => _,
            out("x10") _,
            clobber_abi("C"),
        );
    }
}

/// The marker after the last call: the stepper detaches.
#[inline(never)]
pub fn done_marker() {
    // SAFETY: brk with x9 set; the stepper (or `on_trap`) moves the pc past it.
    unsafe { core::arch::asm!("brk #0x7462", in("x9") MAGIC_DONE, options(nostack)) };
}

/// In the cell's SIGTRAP handler when the stepper is gone: step over our `brk` (the pc is on it)
/// and clear the single-step bit (SPSR.SS, bit 21) the dead stepper may have left set.
///
/// # Safety
/// `uc` must be the ucontext_t the kernel passed to an SA_SIGINFO handler.
pub unsafe fn recover_from_trap(uc: *mut libc::ucontext_t) {
    // SAFETY: see the caller's contract; the pc is mapped code when it reads our marker.
    unsafe {
        let m = &mut (*uc).uc_mcontext;
        if std::ptr::read_volatile(m.pc as *const u32) == MARKER_BRK {
            m.pc += 4;
        }
        m.pstate &= !(1 << 21);
    }
}

/// struct user_pt_regs (arch/arm64/include/uapi/asm/ptrace.h).
#[repr(C)]
struct UserPtRegs {
    regs: [u64; 31],
    sp: u64,
    pc: u64,
    pstate: u64,
}

const NT_PRSTATUS: usize = 1;

fn regset(tid: i32, req: libc::c_uint, r: &mut UserPtRegs) -> Result<(), std::io::Error> {
    let mut iov =
        libc::iovec { iov_base: r as *mut _ as *mut libc::c_void, iov_len: std::mem::size_of::<UserPtRegs>() };
    super::stepper::ptrace(req, tid, NT_PRSTATUS, &mut iov as *mut _ as usize)?;
    Ok(())
}

fn raw(tid: i32) -> Result<UserPtRegs, std::io::Error> {
    // SAFETY: plain data.
    let mut r: UserPtRegs = unsafe { std::mem::zeroed() };
    regset(tid, libc::PTRACE_GETREGSET, &mut r)?;
    Ok(r)
}

/// The thread's registers, in the stepper's terms. A system call in code ptrace cannot read is
/// not told apart on arm64 (it has no optimized uprobes whose trampoline makes one).
pub fn regs(tid: i32) -> Result<Regs, std::io::Error> {
    let r = raw(tid)?;
    Ok(Regs {
        pc: r.pc,
        marker: r.regs[9],
        iteration: r.regs[1],
        end: r.regs[10],
        after_syscall: false,
        sysno: r.regs[8],
        sysno_after: r.regs[8],
    })
}

/// Moves the pc past our marker's `brk`, where the thread stopped.
pub fn skip_marker(tid: i32, r: &Regs) -> Result<(), std::io::Error> {
    let mut raw = raw(tid)?;
    if raw.pc == r.pc {
        raw.pc += 4;
        regset(tid, libc::PTRACE_SETREGSET, &mut raw)?;
    }
    Ok(())
}

/// What an instruction does to the kernel, from its 4 bytes (the low half of the word).
pub fn kind_of(word: u64) -> Kind {
    let i = word as u32;
    match i {
        // svc #imm
        _ if i & 0xffe0_001f == 0xd400_0001 => Kind::Syscall,
        // brk #imm (a uprobe is brk #0x5)
        _ if i & 0xffe0_001f == 0xd420_0000 => Kind::Trap,
        // mrs xN, cntvct_el0 (the vDSO's clock read)
        _ if i & 0xffff_ffe0 == 0xd53b_e040 => Kind::Clock,
        // bl imm26; blr xN (the shadow call stack's push)
        _ if i & 0xfc00_0000 == 0x9400_0000 || i & 0xffff_fc1f == 0xd63f_0000 => Kind::Call,
        // ret {xN}
        _ if i & 0xffff_fc1f == 0xd65f_0000 => Kind::Return,
        _ => Kind::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_entries_and_clock_reads_are_told_from_their_encoding() {
        // svc #0 and svc #1, in the low half of the word (the high half is the next instruction)
        assert_eq!(kind_of(0xd65f_03c0_d400_0001), Kind::Syscall);
        assert_eq!(kind_of(0xd400_0021), Kind::Syscall);
        // brk #0x5 (a uprobe) and our marker
        assert_eq!(kind_of(0xd420_00a0), Kind::Trap);
        assert_eq!(kind_of(MARKER_BRK as u64), Kind::Trap);
        // mrs x0, cntvct_el0 and mrs x17, cntvct_el0; not mrs x0, cntfrq_el0 (d53be000)
        assert_eq!(kind_of(0xd53b_e040), Kind::Clock);
        assert_eq!(kind_of(0xd53b_e051), Kind::Clock);
        assert_eq!(kind_of(0xd53b_e000), Kind::Plain);
        // nop, ret, hvc #0 (not a system call of user space)
        assert_eq!(kind_of(0xd503_201f), Kind::Plain);
        assert_eq!(kind_of(0xd65f_03c0), Kind::Plain);
        assert_eq!(kind_of(0xd400_0002), Kind::Plain);
    }

    #[test]
    fn the_marker_brk_is_what_stepped_call_assembles() {
        // `brk #0x7462` as the assembler encodes it: the handler compares the pc's word with it.
        let f = done_marker as *const () as *const u32;
        // SAFETY: reads the first instructions of our own function.
        let words = unsafe { std::slice::from_raw_parts(f, 16) };
        assert!(words.contains(&MARKER_BRK), "{words:x?}");
    }

    #[test]
    fn user_pt_regs_is_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<UserPtRegs>(), 34 * 8);
        assert_eq!(std::mem::offset_of!(UserPtRegs, pc), 32 * 8);
    }
}
