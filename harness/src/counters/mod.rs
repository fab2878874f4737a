//! PMU counters read around each call (survey section 6.2.5, Table 2).
//!
//! Up to four counters form one pinned perf_event group so that they are scheduled onto the PMU
//! together and their deltas describe the same call. When the kernel lets user space read them
//! (`cap_user_rdpmc` in the mmap'd page), they are read with `rdpmc` ([`rdpmc`]), a few ns and no
//! system call. Otherwise one `read()` of the group ([`group_read`], about 1 us) happens before the
//! first clock read and after the second, outside the timed window; the delta then includes the
//! tail and head of those two system calls, which the `none` row shows.
//!
//! Three rules keep the counters honest:
//! - events that do not exist on this machine (every hardware event on a VM without a virtual
//!   PMU) are reported once and left out: their CSV column is omitted, never filled with zeros;
//! - a set that cannot be scheduled on the PMU as one group is cut down at set-up ([`probe`]), and
//!   the counters cut are reported, never read as zeros;
//! - a sample during which a counter was not counting (not on the PMU, multiplexed out,
//!   reprogrammed) is discarded as `counter-not-running` and counted per counter.
use std::os::fd::AsRawFd;

pub mod group_read;
pub mod rdpmc;
pub mod table;

use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Counter, Group};
use serde::Serialize;

use crate::error::Error;

/// The survey's first counter set (Figures 3 and 7).
pub const SET1: [&str; 4] = ["cycles", "instructions", "L1-dcache-load-misses", "cache-misses"];
/// The survey's second counter set (Figure 4).
pub const SET2: [&str; 4] = ["bus-cycles", "dTLB-load-misses", "branch-misses", "branch-instructions"];
/// The most counters one group may hold: the survey's hardware limit, and our sample layout.
pub const MAX: usize = 4;

/// Names `--counters` accepts, besides `tracepoint:SUBSYS:EVENT` (the one table: `table`).
pub fn known() -> Vec<&'static str> {
    table::TABLE.iter().map(|d| d.name).collect()
}

enum Kind {
    Table(table::CounterDef),
    Tp(u64),
}

fn unknown(name: &str) -> Error {
    Error::UnknownCounter { name: name.into(), known: known().join(", ") }
}

fn kind_of(name: &str) -> Result<Kind, Error> {
    if let Some(d) = table::lookup(name) {
        return Ok(Kind::Table(d));
    }
    match name.strip_prefix("tracepoint:") {
        Some(tp) => Ok(Kind::Tp(tracepoint_id(tp).ok_or_else(|| unknown(name))?)),
        None => Err(unknown(name)),
    }
}

/// The id of tracepoint `subsys:event` (one lookup, in the tracers crate's `sys`).
pub use tracebench_tracers::sys::tracepoint_id;

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
        Kind::Table(d) => Builder::new(d),
        Kind::Tp(id) => Builder::new(Tracepoint::with_id(id)),
    };
    // Count kernel work too: a tracer that enters the kernel (trace_marker, a uprobe, strace)
    // spends most of its cost there.
    b.observe_self().any_cpu().include_kernel();
    rdpmc::request_user_access(b.attrs_mut());
    b
}

/// Availability of each requested counter, as run.json reports it.
#[derive(Debug, Clone, Serialize)]
pub struct Availability {
    pub requested: Vec<String>,
    pub available: Vec<String>,
    /// (name, why) for each that could not be opened, or did not fit on the PMU with the others.
    pub unsupported: Vec<(String, String)>,
    /// time_running / time_enabled of the whole set during the set-up check (1.0: it scheduled
    /// the whole time). None when the set is empty.
    pub scheduled_fraction: Option<f64>,
}

/// Probes which of `names` can be opened for this thread, alone and then together: a set whose
/// members each open but do not fit on the PMU at once (the NMI watchdog holds a counter, SMT
/// halves them, another perf user holds some) would read as "not running" on every call. The set
/// is cut from the end until the pinned group schedules; the counters cut are reported as
/// unsupported with the reason, and can be measured in a second set.
pub fn probe(names: &[String]) -> Result<Availability, Error> {
    validate(names)?;
    let mut av =
        Availability { requested: names.to_vec(), available: vec![], unsupported: vec![], scheduled_fraction: None };
    for n in names {
        match builder_for(kind_of(n)?).build() {
            Ok(_) => av.available.push(n.clone()),
            Err(e) => av.unsupported.push((n.clone(), describe_open_error(&e))),
        }
    }
    while !av.available.is_empty() {
        let fraction = CounterGroup::open(&av.available).ok().and_then(|mut g| g.schedules());
        match fraction {
            Some(f) if f > 0.0 => {
                av.scheduled_fraction = Some(f);
                break;
            }
            _ => {
                let cut = av.available.pop().unwrap_or_default();
                let with = av.available.join(", ");
                av.unsupported.push((
                    cut,
                    format!(
                        "opens alone but the group {{{with}{}this}} was never scheduled on the PMU (too few free \
                         counters: check the NMI watchdog, /proc/sys/kernel/nmi_watchdog, and other perf users); \
                         measure it in a second set",
                        if with.is_empty() { "" } else { ", " }
                    ),
                ));
            }
        }
    }
    Ok(av)
}

/// Counters: probed once, reported once; unsupported ones are left out, never zero-filled.
/// Returns each set's and the union's.
pub fn probe_sets(sets: &[Vec<String>]) -> Result<(Vec<Availability>, Vec<String>), Error> {
    let mut avail = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let a = probe(set)?;
        // One line per reason: a VM without a PMU refuses every hardware event the same way.
        let mut by_why: Vec<(&str, Vec<&str>)> = Vec::new();
        for (n, why) in &a.unsupported {
            match by_why.iter_mut().find(|(w, _)| *w == why.as_str()) {
                Some((_, names)) => names.push(n),
                None => by_why.push((why, vec![n])),
            }
        }
        for (why, names) in by_why {
            let (what, col) =
                if names.len() == 1 { ("counter", "its column is") } else { ("counters", "their columns are") };
            eprintln!("tracebench: {what} {} (set {}) unavailable: {why}; {col} left out", names.join(", "), i + 1);
        }
        avail.push(a);
    }
    let columns = counter_columns(&avail);
    Ok((avail, columns))
}

/// The union of the available counters of every set, in first-seen order: the counter columns
/// of events.csv and summary.csv.
fn counter_columns(avail: &[Availability]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for a in avail {
        for c in &a.available {
            if !all.contains(c) {
                all.push(c.clone());
            }
        }
    }
    all
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

/// One end of a counter window: values plus what is needed to check they are valid.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reading {
    pub values: [u64; MAX],
    /// rdpmc: the page's lock at the start reading, the counter number and its width.
    pub seq: [u32; MAX],
    pub ecx: [u32; MAX],
    pub width: [u32; MAX],
    /// read(): the group's time_enabled and time_running.
    pub enabled: u64,
    pub running: u64,
    /// The reading itself succeeded (rdpmc: every counter on the PMU; read(): a whole answer).
    pub ok: bool,
}

/// How the timed loop reads its counters. Implementations are chosen once, outside the loop, so
/// the loop is monomorphised and has no branch on the read mode.
pub trait CounterRead {
    /// Number of counters read (0..=4).
    fn len(&self) -> usize;
    /// Just before the clock's start read.
    fn start(&self, r: &mut Reading);
    /// Just after the clock's end read.
    fn end(&self, start: &Reading, r: &mut Reading);
    /// The deltas, computed after both reads; returns the mask of counters that did not count
    /// the whole window (the sample is then discarded as `counter-not-running`).
    fn delta(&self, c0: &Reading, c1: &Reading, out: &mut [u64; MAX]) -> u8;
    /// "rdpmc", "read()" or "none", as run.json and the report say it.
    fn method(&self) -> &'static str;
}

/// No counters: nothing is read.
pub struct NoCounters;
impl CounterRead for NoCounters {
    fn len(&self) -> usize {
        0
    }
    #[inline(always)]
    fn start(&self, _: &mut Reading) {}
    #[inline(always)]
    fn end(&self, _: &Reading, _: &mut Reading) {}
    #[inline(always)]
    fn delta(&self, _: &Reading, _: &Reading, _: &mut [u64; MAX]) -> u8 {
        0
    }
    fn method(&self) -> &'static str {
        "none"
    }
}

impl<P: rdpmc::Pmc> CounterRead for rdpmc::Rdpmc<P> {
    fn len(&self) -> usize {
        rdpmc::Rdpmc::len(self)
    }
    #[inline(always)]
    fn start(&self, r: &mut Reading) {
        rdpmc::Rdpmc::start(self, r)
    }
    #[inline(always)]
    fn end(&self, start: &Reading, r: &mut Reading) {
        rdpmc::Rdpmc::end(self, start, r)
    }
    #[inline(always)]
    fn delta(&self, c0: &Reading, c1: &Reading, out: &mut [u64; MAX]) -> u8 {
        rdpmc::Rdpmc::delta(self, c0, c1, out)
    }
    fn method(&self) -> &'static str {
        "rdpmc"
    }
}

/// Counters read with one read() of the whole group.
pub struct Syscall {
    fd: i32,
    layout: group_read::Layout,
}

impl Syscall {
    #[inline(always)]
    fn read_into(&self, r: &mut Reading) {
        let mut buf = [0u64; group_read::WORDS];
        // SAFETY: buf holds WORDS u64s, and we ask for at most layout.bytes() <= WORDS * 8.
        let n = unsafe { libc::read(self.fd, buf.as_mut_ptr() as *mut libc::c_void, self.layout.bytes()) };
        group_read::parse(&self.layout, &buf, n, r);
    }
}

impl CounterRead for Syscall {
    fn len(&self) -> usize {
        self.layout.members
    }
    #[inline(always)]
    fn start(&self, r: &mut Reading) {
        self.read_into(r)
    }
    #[inline(always)]
    fn end(&self, _: &Reading, r: &mut Reading) {
        self.read_into(r)
    }
    #[inline(always)]
    fn delta(&self, c0: &Reading, c1: &Reading, out: &mut [u64; MAX]) -> u8 {
        group_read::delta(self.layout.members, c0, c1, out)
    }
    fn method(&self) -> &'static str {
        "read()"
    }
}

/// An open, enabled, pinned group of counters for the calling thread.
pub struct CounterGroup {
    group: Group,
    members: Vec<Counter>,
    /// A dummy event added after the members; see [`group_read`] for why.
    _trailer: Counter,
    maps: Vec<(*mut libc::c_void, usize)>,
}

// SAFETY: the group is created, used and dropped by one measuring thread; the raw mapping
// pointers are only dereferenced there.
unsafe impl Send for CounterGroup {}

impl CounterGroup {
    /// Opens `names` (all must be available; see [`probe`]) as one pinned group on this thread.
    /// Pinned: a group that cannot stay on the PMU goes to the error state (its read() returns 0
    /// bytes, which the readers treat as a failed reading) instead of being silently multiplexed.
    pub fn open(names: &[String]) -> Result<Self, Error> {
        let mut gb = Group::builder();
        gb.observe_self().any_cpu().pinned(true);
        let mut group = gb.build_group().map_err(|e| Error::Counters(format!("group leader: {e}")))?;
        let mut members = Vec::new();
        for n in names {
            let c = builder_for(kind_of(n)?)
                .build_with_group(&mut group)
                .map_err(|e| Error::Counters(format!("{n}: {}", describe_open_error(&e))))?;
            members.push(c);
        }
        let trailer = Builder::new(Software::DUMMY)
            .observe_self()
            .any_cpu()
            .build_with_group(&mut group)
            .map_err(|e| Error::Counters(format!("trailing dummy event: {e}")))?;
        group.enable().map_err(|e| Error::Counters(format!("enable: {e}")))?;
        Ok(CounterGroup { group, members, _trailer: trailer, maps: vec![] })
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// time_running / time_enabled of the group since it was enabled, or None when it cannot be
    /// read (a pinned group in the error state reads 0 bytes).
    pub fn scheduled_fraction(&self) -> Option<f64> {
        let mut r = Reading::default();
        self.syscall().read_into(&mut r);
        (r.ok && r.enabled > 0).then(|| r.running as f64 / r.enabled as f64)
    }

    /// Runs ~1 ms of work with the group enabled and returns its scheduled fraction.
    fn schedules(&mut self) -> Option<f64> {
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(1) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        self.scheduled_fraction()
    }

    /// The rdpmc reader, if the kernel allows user-space reads of every member right now.
    pub fn rdpmc(&mut self) -> Option<rdpmc::Rdpmc> {
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
        let pages: Vec<*const rdpmc::MmapPage> = self.maps.iter().map(|(p, _)| *p as *const rdpmc::MmapPage).collect();
        // SAFETY: the pages were just mapped.
        let ok = pages.iter().all(|p| unsafe {
            let caps = std::ptr::read_volatile(std::ptr::addr_of!((**p).capabilities));
            caps & rdpmc::CAP_USER_RDPMC != 0 && std::ptr::read_volatile(std::ptr::addr_of!((**p).index)) != 0
        });
        // SAFETY: the pages stay mapped until this group is dropped, after the reader's use.
        ok.then(|| unsafe { rdpmc::Rdpmc::new(&pages, rdpmc::HwPmc) })
    }

    /// The read() reader.
    pub fn syscall(&self) -> Syscall {
        let mut ids = [0u64; MAX];
        for (k, c) in self.members.iter().enumerate() {
            ids[k] = c.id();
        }
        Syscall {
            fd: self.group.as_counter().as_raw_fd(),
            layout: group_read::Layout { members: self.members.len(), ids },
        }
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
