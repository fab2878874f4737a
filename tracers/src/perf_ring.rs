//! One perf helper for both sides: a tracepoint recorded by perf_event_open into perf's own mmap
//! ring, written backward and mapped read-only (perf's overwrite mode, `perf record
//! --overwrite`), which nothing consumes during the run (survey 6.2.3). The userspace `perf`
//! backend opens one per measuring thread on its uprobe event; the kernel path
//! ([`crate::kernel`]) one per CPU on kbench-module's tracepoint.

pub const PAGE: usize = 4096;

const PERF_TYPE_TRACEPOINT: u32 = 2;
pub const PERF_SAMPLE_IP: u64 = 1 << 0;
pub const PERF_SAMPLE_TID: u64 = 1 << 1;
pub const PERF_SAMPLE_TIME: u64 = 1 << 2;
pub const PERF_SAMPLE_CPU: u64 = 1 << 7;
pub const PERF_SAMPLE_RAW: u64 = 1 << 10;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_WRITE_BACKWARD: u64 = 1 << 27;
pub const PERF_RECORD_SAMPLE: u32 = 9;
pub const PERF_RECORD_LOST: u32 = 2;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// Head of `struct perf_event_mmap_page` up to the field we read (data_head at 1024).
const DATA_HEAD_OFFSET: usize = 1024;

/// `struct perf_event_attr`, PERF_ATTR_SIZE_VER8 (136 bytes).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    reserved_3: u32,
    sig_data: u64,
    config3: u64,
}
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == 136);

/// Whom a ring records: this thread (per-task mode) or every task on one CPU.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    ThisThread,
    Cpu(usize),
}

/// One tracepoint's perf event and its mapped overwrite ring; `Drop` disables, unmaps, closes.
pub struct Ring {
    fd: libc::c_int,
    base: *mut u8,
    len: usize,
    data_pages: usize,
}

// SAFETY: the mapping is only read (after the run), and the fd is plain.
unsafe impl Send for Ring {}

impl Ring {
    /// Opens tracepoint `tp_id` sampling every hit (period 1) with `sample_type`, maps
    /// `data_pages` data pages read-only, touches them (so that no page fault lands in a timed
    /// window, section 6.2.4) and enables the event.
    pub fn open(tp_id: u64, target: Target, sample_type: u64, data_pages: usize) -> Result<Ring, String> {
        let attr = PerfEventAttr {
            type_: PERF_TYPE_TRACEPOINT,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: tp_id,
            sample_period: 1,
            sample_type,
            flags: FLAG_DISABLED | FLAG_WRITE_BACKWARD,
            ..Default::default()
        };
        let (pid, cpu) = match target {
            Target::ThisThread => (0, -1),
            Target::Cpu(c) => (-1, c as libc::c_int),
        };
        // SAFETY: attr is a valid perf_event_attr of the size it declares.
        let fd = unsafe {
            libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)
        } as libc::c_int;
        if fd < 0 {
            return Err(format!(
                "perf_event_open(tracepoint {tp_id}, {target:?}): {}",
                std::io::Error::last_os_error()
            ));
        }
        let len = (1 + data_pages) * PAGE;
        // PROT_READ only: with write_backward this is the overwrite ring (no data_tail to honour).
        // SAFETY: mapping a perf fd as the kernel documents.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd, 0) };
        if base == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            // SAFETY: fd is ours.
            unsafe { libc::close(fd) };
            return Err(format!("mmap of the perf ring ({len} bytes): {e}"));
        }
        let ring = Ring { fd, base: base as *mut u8, len, data_pages };
        let _ = ring.bytes(0, data_pages * PAGE);
        // SAFETY: enabling our own event.
        if unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ENABLE as _, 0) } != 0 {
            return Err(format!("PERF_EVENT_IOC_ENABLE: {}", std::io::Error::last_os_error()));
        }
        Ok(ring)
    }

    pub fn data_bytes(&self) -> usize {
        self.data_pages * PAGE
    }

    pub fn data_head(&self) -> u64 {
        // SAFETY: the first page is the mmap control page; data_head is a u64 at offset 1024.
        unsafe { std::ptr::read_volatile(self.base.add(DATA_HEAD_OFFSET) as *const u64) }
    }

    /// Reads `n` bytes at ring position `pos` (modulo the data size).
    pub fn bytes(&self, pos: u64, n: usize) -> Vec<u8> {
        let size = self.data_bytes() as u64;
        // SAFETY: the data area is `data_pages` pages after the control page.
        (0..n as u64).map(|i| unsafe { *self.base.add(PAGE + ((pos + i) % size) as usize) }).collect()
    }

    /// Events counted by the kernel (read(2) on the event fd); None when the read fails.
    pub fn count(&self) -> Option<u64> {
        let mut v = 0u64;
        // SAFETY: reading 8 bytes into v.
        let n = unsafe { libc::read(self.fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
        (n == 8).then_some(v)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: fd and mapping were created in Ring::open and are released once.
        unsafe {
            libc::ioctl(self.fd, PERF_EVENT_IOC_DISABLE as _, 0);
            libc::munmap(self.base as *mut libc::c_void, self.len);
            libc::close(self.fd);
        }
    }
}
