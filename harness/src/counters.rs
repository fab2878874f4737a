//! PMU counters read around each call (survey section 6.2.5, Table 2).
//!
//! Up to four counters form one perf_event group so that they are scheduled onto the PMU
//! together and their deltas describe the same call. When the kernel lets user space read them
//! (`cap_user_rdpmc` in the mmap'd page), they are read with `rdpmc`, a few ns and no system call.
//! Otherwise one `read()` of the group (about 1 us) happens before the first clock read and after
//! the second, outside the timed window; the delta then includes the tail and head of those two
//! system calls, which the `none` row shows.
//!
//! Events that do not exist on this machine (every hardware event on a VM without a virtual
//! PMU) are reported once and left out: their CSV column is omitted, never filled with zeros.
use std::os::fd::AsRawFd;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software, Tracepoint};
use perf_event::{Builder, Counter, Group, ReadFormat};
use serde::Serialize;

use crate::error::Error;

/// The survey's first counter set (Figures 3 and 7).
pub const SET1: [&str; 4] = ["cycles", "instructions", "L1-dcache-load-misses", "cache-misses"];
/// The survey's second counter set (Figure 4).
pub const SET2: [&str; 4] = ["bus-cycles", "dTLB-load-misses", "branch-misses", "branch-instructions"];
/// The most counters one group may hold: the survey's hardware limit, and our sample layout.
pub const MAX: usize = 4;

/// Names `--counters` accepts, besides `tracepoint:SUBSYS:EVENT`.
pub const KNOWN: &[&str] = &[
    "cycles",
    "instructions",
    "cache-misses",
    "cache-references",
    "branch-misses",
    "branch-instructions",
    "bus-cycles",
    "ref-cycles",
    "L1-dcache-load-misses",
    "L1-dcache-loads",
    "L1-icache-load-misses",
    "LLC-load-misses",
    "dTLB-load-misses",
    "iTLB-load-misses",
    "page-faults",
    "minor-faults",
    "major-faults",
    "context-switches",
    "cpu-migrations",
    "task-clock",
];

enum Kind {
    Hw(Hardware),
    Cache(Cache),
    Sw(Software),
    Tp(u64),
}

fn cache(which: CacheId, op: CacheOp, result: CacheResult) -> Kind {
    Kind::Cache(Cache { which, operation: op, result })
}

fn kind_of(name: &str) -> Result<Kind, Error> {
    const ACCESS: CacheResult = CacheResult::ACCESS;
    const MISS: CacheResult = CacheResult::MISS;
    Ok(match name {
        "cycles" => Kind::Hw(Hardware::CPU_CYCLES),
        "instructions" => Kind::Hw(Hardware::INSTRUCTIONS),
        "cache-misses" => Kind::Hw(Hardware::CACHE_MISSES),
        "cache-references" => Kind::Hw(Hardware::CACHE_REFERENCES),
        "branch-misses" => Kind::Hw(Hardware::BRANCH_MISSES),
        "branch-instructions" => Kind::Hw(Hardware::BRANCH_INSTRUCTIONS),
        "bus-cycles" => Kind::Hw(Hardware::BUS_CYCLES),
        "ref-cycles" => Kind::Hw(Hardware::REF_CPU_CYCLES),
        "L1-dcache-load-misses" => cache(CacheId::L1D, CacheOp::READ, MISS),
        "L1-dcache-loads" => cache(CacheId::L1D, CacheOp::READ, ACCESS),
        "L1-icache-load-misses" => cache(CacheId::L1I, CacheOp::READ, MISS),
        "LLC-load-misses" => cache(CacheId::LL, CacheOp::READ, MISS),
        "dTLB-load-misses" => cache(CacheId::DTLB, CacheOp::READ, MISS),
        "iTLB-load-misses" => cache(CacheId::ITLB, CacheOp::READ, MISS),
        "page-faults" => Kind::Sw(Software::PAGE_FAULTS),
        "minor-faults" => Kind::Sw(Software::PAGE_FAULTS_MIN),
        "major-faults" => Kind::Sw(Software::PAGE_FAULTS_MAJ),
        "context-switches" => Kind::Sw(Software::CONTEXT_SWITCHES),
        "cpu-migrations" => Kind::Sw(Software::CPU_MIGRATIONS),
        "task-clock" => Kind::Sw(Software::TASK_CLOCK),
        other => match other.strip_prefix("tracepoint:") {
            Some(tp) => Kind::Tp(tracepoint_id(tp).ok_or_else(|| Error::UnknownCounter(other.into()))?),
            None => return Err(Error::UnknownCounter(other.into())),
        },
    })
}

/// The id of tracepoint `subsys:event`, read from tracefs (perf-event2's `with_name` looks
/// under /sys/kernel/debug, which is not mounted on many machines).
pub fn tracepoint_id(spec: &str) -> Option<u64> {
    let (sys, ev) = spec.split_once(':')?;
    if sys.contains('/') || ev.contains('/') || sys.contains("..") || ev.contains("..") {
        return None;
    }
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|root| std::fs::read_to_string(format!("{root}/events/{sys}/{ev}/id")).ok())
        .and_then(|s| s.trim().parse().ok())
}

/// Checks that every name is one we know (an unknown name is a usage error).
pub fn validate(names: &[String]) -> Result<(), Error> {
    if names.len() > MAX {
        return Err(Error::Usage(format!(
            "--counters takes at most {MAX} events per set (the PMU limit the survey works with); got {}",
            names.len()
        )));
    }
    for n in names {
        kind_of(n)?;
    }
    Ok(())
}

fn builder_for(kind: Kind) -> Builder<'static> {
    let mut b = match kind {
        Kind::Hw(e) => Builder::new(e),
        Kind::Cache(e) => Builder::new(e),
        Kind::Sw(e) => Builder::new(e),
        Kind::Tp(id) => Builder::new(Tracepoint::with_id(id)),
    };
    // Count kernel work too: a tracer that enters the kernel (trace_marker, a uprobe, strace)
    // spends most of its cost there.
    b.observe_self().any_cpu().include_kernel();
    b
}

/// Availability of each requested counter, as run.json reports it.
#[derive(Debug, Clone, Serialize)]
pub struct Availability {
    pub requested: Vec<String>,
    pub available: Vec<String>,
    /// (name, why) for each that could not be opened.
    pub unsupported: Vec<(String, String)>,
}

/// Probes which of `names` can be opened for this thread, without keeping them.
pub fn probe(names: &[String]) -> Result<Availability, Error> {
    validate(names)?;
    let mut av = Availability { requested: names.to_vec(), available: vec![], unsupported: vec![] };
    for n in names {
        match builder_for(kind_of(n)?).build() {
            Ok(_) => av.available.push(n.clone()),
            Err(e) => av.unsupported.push((n.clone(), describe_open_error(&e))),
        }
    }
    Ok(av)
}

fn describe_open_error(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => {
            format!("not supported by this CPU/PMU ({e}); a VM without a virtual PMU has no hardware events")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("permission denied ({e}); run as root or lower /proc/sys/kernel/perf_event_paranoid")
        }
        _ => e.to_string(),
    }
}

/// How the timed loop reads its counters. Implementations are chosen once, outside the loop, so
/// the loop is monomorphised and has no branch on the read mode.
pub trait CounterRead {
    /// Number of counters read (0..=4).
    fn len(&self) -> usize;
    fn read(&self, out: &mut [u64; MAX]);
}

/// No counters: nothing is read.
pub struct NoCounters;
impl CounterRead for NoCounters {
    fn len(&self) -> usize {
        0
    }
    #[inline(always)]
    fn read(&self, _out: &mut [u64; MAX]) {}
}

/// The start of `struct perf_event_mmap_page` (include/uapi/linux/perf_event.h), the part the
/// rdpmc protocol needs. The layout is a stable kernel ABI.
#[repr(C)]
struct MmapPage {
    version: u32,
    compat_version: u32,
    lock: u32,
    index: u32,
    offset: i64,
    time_enabled: u64,
    time_running: u64,
    capabilities: u64,
    pmc_width: u16,
}
const CAP_USER_RDPMC: u64 = 1 << 2;

/// Counters read in user space with `rdpmc`, under the mmap page's sequence lock.
pub struct Rdpmc {
    pages: Vec<*const MmapPage>,
    len: usize,
}

impl Rdpmc {
    #[inline(always)]
    fn read_one(page: *const MmapPage) -> u64 {
        use std::ptr::{addr_of, read_volatile};
        use std::sync::atomic::{compiler_fence, Ordering};
        loop {
            // SAFETY: page is a live mapping of a perf event fd (see CounterGroup::rdpmc).
            unsafe {
                let seq = read_volatile(addr_of!((*page).lock));
                compiler_fence(Ordering::SeqCst);
                let idx = read_volatile(addr_of!((*page).index));
                let mut count = read_volatile(addr_of!((*page).offset));
                if idx != 0 {
                    let width = read_volatile(addr_of!((*page).pmc_width)) as u32;
                    let pmc = rdpmc(idx - 1) as i64;
                    count = count.wrapping_add((pmc << (64 - width)) >> (64 - width));
                }
                compiler_fence(Ordering::SeqCst);
                if read_volatile(addr_of!((*page).lock)) == seq {
                    return count as u64;
                }
            }
        }
    }
}

#[inline(always)]
unsafe fn rdpmc(counter: u32) -> u64 {
    let (lo, hi): (u32, u32);
    core::arch::asm!("rdpmc", in("ecx") counter, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags));
    ((hi as u64) << 32) | lo as u64
}

impl CounterRead for Rdpmc {
    fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn read(&self, out: &mut [u64; MAX]) {
        for (i, p) in self.pages.iter().enumerate() {
            out[i] = Self::read_one(*p);
        }
    }
}

/// Counters read with one read() of the whole group.
pub struct Syscall {
    fd: i32,
    len: usize,
}

impl CounterRead for Syscall {
    fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn read(&self, out: &mut [u64; MAX]) {
        // read_format = GROUP: { nr, value[nr] }; value[0] is the dummy leader.
        let mut buf = [0u64; 2 + MAX];
        // SAFETY: buf is large enough for nr = 1 + len values.
        unsafe { libc::read(self.fd, buf.as_mut_ptr() as *mut libc::c_void, (2 + self.len) * 8) };
        out[..self.len].copy_from_slice(&buf[2..2 + self.len]);
    }
}

/// An open, enabled group of counters for the calling thread.
pub struct CounterGroup {
    group: Group,
    members: Vec<Counter>,
    maps: Vec<(*mut libc::c_void, usize)>,
}

// SAFETY: the group is created, used and dropped by one measuring thread; the raw mapping
// pointers are only dereferenced there.
unsafe impl Send for CounterGroup {}

impl CounterGroup {
    /// Opens `names` (all must be available; see [`probe`]) as one group on this thread.
    pub fn open(names: &[String]) -> Result<Self, Error> {
        let mut gb = Group::builder();
        gb.read_format(ReadFormat::GROUP).observe_self().any_cpu();
        let mut group = gb.build_group().map_err(|e| Error::Counters(format!("group leader: {e}")))?;
        let mut members = Vec::new();
        for n in names {
            let c = builder_for(kind_of(n)?)
                .build_with_group(&mut group)
                .map_err(|e| Error::Counters(format!("{n}: {}", describe_open_error(&e))))?;
            members.push(c);
        }
        group.enable().map_err(|e| Error::Counters(format!("enable: {e}")))?;
        Ok(CounterGroup { group, members, maps: vec![] })
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The rdpmc reader, if the kernel allows user-space reads of every member right now.
    pub fn rdpmc(&mut self) -> Option<Rdpmc> {
        if self.members.is_empty() {
            return None;
        }
        for c in &self.members {
            // SAFETY: mapping one read-only page of a perf event fd is how the ABI exposes the
            // user page; it is unmapped in Drop.
            let p =
                unsafe { libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ, libc::MAP_SHARED, c.as_raw_fd(), 0) };
            if p == libc::MAP_FAILED {
                return None;
            }
            self.maps.push((p, 4096));
        }
        let pages: Vec<*const MmapPage> = self.maps.iter().map(|(p, _)| *p as *const MmapPage).collect();
        // SAFETY: the pages were just mapped.
        let ok = pages.iter().all(|p| unsafe {
            let caps = std::ptr::read_volatile(std::ptr::addr_of!((**p).capabilities));
            caps & CAP_USER_RDPMC != 0 && std::ptr::read_volatile(std::ptr::addr_of!((**p).index)) != 0
        });
        ok.then(|| Rdpmc { len: pages.len(), pages })
    }

    /// The read() reader.
    pub fn syscall(&self) -> Syscall {
        Syscall { fd: self.group.as_counter().as_raw_fd(), len: self.members.len() }
    }
}

impl Drop for CounterGroup {
    fn drop(&mut self) {
        for (p, len) in self.maps.drain(..) {
            // SAFETY: mapped in `rdpmc`.
            unsafe { libc::munmap(p, len) };
        }
    }
}
