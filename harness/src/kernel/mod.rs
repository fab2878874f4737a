//! Client of kbench-module's ioctl ABI (`tracebench run --kernel`).
//!
//! The loop itself runs in the kernel (survey section 6.2, Algorithm 1: interrupts masked, NMI count checked per
//! iteration, up to 4 counters, clock, tracepoint, clock, counters); this module only configures a run, waits for
//! it, and copies the samples out in chunks. The structs mirror `kbench-module/include/kbench_abi.h` field by field
//! and are checked against its sizes and version at compile time; the ioctl numbers are computed the way the C
//! `_IOR`/`_IOWR`/`_IO` macros compute them and checked against the values the C header yields.
//!
//! API: [`run_kernel_cell`] runs one cell and returns [`KernelSamples`] (the runner's `kernel_cell` writes them
//! through `results::rows`); [`Device`] gives the lower-level calls, including the empty ioctl of
//! the system-call benchmark (survey 7.3, Table 5).

use std::fs::{File, OpenOptions};
use std::mem::size_of;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// `KBENCH_ABI_VERSION` (2: samples can be discarded for a counter that was not running).
pub const ABI_VERSION: u32 = 2;
/// Default device node of the module (`KBENCH_DEVICE`).
pub const DEVICE: &str = "/dev/kbench";
pub const MAX_COUNTERS: usize = 4;
pub const MAX_CPUS: usize = 64;
pub const MAX_RECORDS: u64 = 1 << 22;
pub const MAX_READ_CHUNK: u64 = 65536;
/// Payload sizes of the tracepoints `kbench:kbench_event_<size>`; 4 bytes is the survey's default (6.2.1).
pub const PAYLOAD_SIZES: [u32; 4] = [4, 64, 256, 1024];

mod abi;
pub use abi::*;

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("{path}: {source}; load the module first (sudo insmod kbench-module/kbench.ko) and run as root (the module also wants CAP_PERFMON)")]
    Open { path: PathBuf, source: std::io::Error },
    #[error("kbench ABI mismatch: module has version {module} ({detail}), tracebench expects {ABI_VERSION}; rebuild the module from this checkout (make -C kbench-module)")]
    Abi { module: u32, detail: String },
    #[error("kbench {op} ioctl failed: {source}")]
    Ioctl { op: &'static str, source: std::io::Error },
    #[error("kbench RUN aborted: the kernel loop found itself on another CPU than requested (a requested CPU went offline mid-run); keep the CPUs online and run again")]
    CpuLost,
    #[error("kbench RUN refused: another run of the module is in progress (one at a time); wait for it to finish")]
    Busy,
    #[error("invalid kernel cell: {0}")]
    Config(String),
    #[error("writing {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// The clock the module timed the loop with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelClock {
    /// Let the module choose: the TSC when it is stable, else ktime.
    Auto,
    /// `rdtsc_ordered()`, converted to ns with the kernel's `tsc_khz`.
    Tsc,
    /// `ktime_get_mono_fast_ns()`.
    Ktime,
}

impl KernelClock {
    fn to_abi(self) -> u32 {
        match self {
            KernelClock::Auto => CLOCK_AUTO,
            KernelClock::Tsc => CLOCK_TSC,
            KernelClock::Ktime => CLOCK_KTIME,
        }
    }
    fn from_abi(v: u32) -> Self {
        match v {
            CLOCK_TSC => KernelClock::Tsc,
            CLOCK_KTIME => KernelClock::Ktime,
            _ => KernelClock::Auto,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            KernelClock::Auto => "auto",
            KernelClock::Tsc => "tsc",
            KernelClock::Ktime => "ktime_mono_fast",
        }
    }
}

/// A counter to read around each call, as a perf_event_attr type/config pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCounter {
    /// Column name in events.csv (e.g. `instructions`).
    pub name: String,
    pub type_: u32,
    pub config: u64,
}

/// One kernel cell: a payload size, the CPUs (one kthread each, started together), the counters.
#[derive(Debug, Clone)]
pub struct KernelCellConfig {
    pub device: PathBuf,
    pub payload_size: u32,
    /// Kept samples wanted per CPU.
    pub iterations: u64,
    /// Warm-up iterations per CPU (steady state, survey 6.2.4): enough to fill the tracer's buffer at least once.
    pub warmup: u64,
    /// Per CPU; the default is 10% of `iterations` + 100.
    pub max_discarded: Option<u64>,
    pub cpus: Vec<u32>,
    pub counters: Vec<KernelCounter>,
    pub clock: KernelClock,
}

impl Default for KernelCellConfig {
    fn default() -> Self {
        KernelCellConfig {
            device: PathBuf::from(DEVICE),
            payload_size: 4,
            iterations: 5000, // the survey's 5,000 per run (6.2)
            warmup: 10_000,
            max_discarded: None,
            cpus: vec![0],
            counters: Vec::new(),
            clock: KernelClock::Auto,
        }
    }
}

/// What the module said about one requested counter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CounterStatus {
    pub name: String,
    /// `None` when it counted; else the errno perf_event_create_kernel_counter gave (e.g. ENOENT without a PMU).
    /// An unsupported counter has no column: it is reported, never written as zeros.
    pub errno: Option<i32>,
}

impl CounterStatus {
    pub fn supported(&self) -> bool {
        self.errno.is_none()
    }
}

/// Samples of one CPU of the cell, kept and discarded, in loop order.
#[derive(Debug, Clone)]
pub struct CpuSamples {
    pub cpu: u32,
    pub kept: u64,
    pub discarded: u64,
    pub samples: Vec<KbenchSample>,
}

impl CpuSamples {
    /// Discarded samples per reason bit (`SAMPLE_DISCARDED_*`); a sample with both bits counts in both.
    pub fn discarded_with(&self, flag: u32) -> u64 {
        self.samples.iter().filter(|s| s.flags & flag != 0).count() as u64
    }
}

/// Result of [`run_kernel_cell`].
#[derive(Debug, Clone)]
pub struct KernelSamples {
    pub clock: KernelClock,
    pub tsc_khz: u64,
    pub run_id: u64,
    pub payload_size: u32,
    pub warmup: u64,
    pub counters: Vec<CounterStatus>,
    pub per_cpu: Vec<CpuSamples>,
    /// Kept samples requested per CPU: a CPU with fewer (`kept < iterations`) stopped short because its record
    /// buffer (iterations + max_discarded) filled with discards first.
    pub iterations: u64,
    /// The discard budget per CPU the module was given.
    pub max_discarded: u64,
}

impl KernelSamples {
    /// Calls of the tracepoint the loop made per CPU: warm-up plus every recorded iteration. A tracer's own count of
    /// the module's events must equal the sum of these.
    pub fn fired(&self) -> u64 {
        self.per_cpu.iter().map(|c| self.warmup + c.samples.len() as u64).sum()
    }

    /// The CPUs whose run stopped short of the requested kept samples.
    pub fn short_cpus(&self) -> Vec<&CpuSamples> {
        self.per_cpu.iter().filter(|c| c.kept < self.iterations).collect()
    }
}

/// An open `/dev/kbench` whose ABI matches this build.
pub struct Device {
    file: File,
    info: KbenchInfo,
}

impl Device {
    pub fn open(path: &Path) -> Result<Device, KernelError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| KernelError::Open { path: path.to_path_buf(), source })?;
        let mut info = KbenchInfo::default();
        // SAFETY: IOC_INFO writes exactly size_of::<KbenchInfo>() bytes (the size is encoded in the number).
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), IOC_INFO as _, &mut info as *mut KbenchInfo) };
        if rc != 0 {
            return Err(KernelError::Ioctl { op: "INFO", source: std::io::Error::last_os_error() });
        }
        if info.abi_version != ABI_VERSION
            || info.config_size as usize != size_of::<KbenchConfig>()
            || info.sample_size as usize != size_of::<KbenchSample>()
            || info.read_size as usize != size_of::<KbenchRead>()
        {
            return Err(KernelError::Abi {
                module: info.abi_version,
                detail: format!(
                    "config {} B, sample {} B, read {} B",
                    info.config_size, info.sample_size, info.read_size
                ),
            });
        }
        Ok(Device { file, info })
    }

    pub fn info(&self) -> &KbenchInfo {
        &self.info
    }

    /// Whether the module found a stable TSC (constant, non-stop, trusted by the kernel).
    pub fn tsc_stable(&self) -> bool {
        self.info.flags & INFO_TSC_STABLE != 0
    }

    /// The empty system call of the syscall benchmark: the module returns at once (survey 6.2.1, Table 5).
    #[inline(always)]
    pub fn empty(&self) -> i32 {
        // SAFETY: IOC_EMPTY takes no argument.
        unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_EMPTY as _, 0) }
    }

    /// Runs the loop (blocks until every CPU has its samples) and copies the samples out.
    pub fn run(&self, cfg: &KernelCellConfig) -> Result<KernelSamples, KernelError> {
        let mut c = to_abi_config(cfg, &self.info)?;
        // SAFETY: IOC_RUN reads and writes exactly one KbenchConfig.
        let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_RUN as _, &mut c as *mut KbenchConfig) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EXDEV) => KernelError::CpuLost,
                Some(libc::EBUSY) => KernelError::Busy,
                _ => KernelError::Ioctl { op: "RUN", source: e },
            });
        }
        let mut per_cpu = Vec::with_capacity(cfg.cpus.len());
        for (i, &cpu) in cfg.cpus.iter().enumerate() {
            let samples = self.read_all(i as u32, c.records[i])?;
            per_cpu.push(CpuSamples { cpu, kept: c.kept[i], discarded: c.discarded[i], samples });
        }
        let counters = cfg
            .counters
            .iter()
            .zip(c.counters.iter())
            .map(|(req, got)| CounterStatus {
                name: req.name.clone(),
                errno: (got.status != 0).then_some(got.status as i32),
            })
            .collect();
        Ok(KernelSamples {
            clock: KernelClock::from_abi(c.clock),
            tsc_khz: c.tsc_khz,
            run_id: c.run_id,
            payload_size: cfg.payload_size,
            warmup: cfg.warmup,
            counters,
            per_cpu,
            iterations: cfg.iterations,
            max_discarded: c.max_discarded,
        })
    }

    /// Copies one CPU's records out in chunks of at most MAX_READ_CHUNK (no ring that overwrites samples).
    fn read_all(&self, cpu_index: u32, records: u64) -> Result<Vec<KbenchSample>, KernelError> {
        let mut out: Vec<KbenchSample> = Vec::with_capacity(records as usize);
        while (out.len() as u64) < records {
            let want = (records - out.len() as u64).min(MAX_READ_CHUNK);
            out.reserve(want as usize);
            let mut rd = KbenchRead {
                size: size_of::<KbenchRead>() as u32,
                cpu_index,
                offset: out.len() as u64,
                count: want,
                // SAFETY (of the ioctl below): the spare capacity holds at least `want` samples.
                buf: out.spare_capacity_mut().as_mut_ptr() as u64,
                copied: 0,
            };
            // SAFETY: the module writes at most rd.count samples at rd.buf and fills rd.copied.
            let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_READ_SAMPLES as _, &mut rd as *mut KbenchRead) };
            if rc != 0 {
                return Err(KernelError::Ioctl { op: "READ", source: std::io::Error::last_os_error() });
            }
            if rd.copied == 0 || rd.copied > want {
                return Err(KernelError::Ioctl {
                    op: "READ",
                    source: std::io::Error::other(format!("module returned {} of {want} records", rd.copied)),
                });
            }
            // SAFETY: the module initialised rd.copied (<= want <= spare capacity) samples.
            unsafe { out.set_len(out.len() + rd.copied as usize) };
        }
        Ok(out)
    }
}

/// Checks a cell against the ABI's limits (the module checks again) and builds the ABI struct.
fn to_abi_config(cfg: &KernelCellConfig, info: &KbenchInfo) -> Result<KbenchConfig, KernelError> {
    let bad = |m: String| Err(KernelError::Config(m));
    if !PAYLOAD_SIZES.contains(&cfg.payload_size) {
        return bad(format!("payload size {} B; use one of 4, 64, 256, 1024", cfg.payload_size));
    }
    if cfg.cpus.is_empty() || cfg.cpus.len() > MAX_CPUS {
        return bad(format!("{} CPUs; use 1 to {MAX_CPUS}", cfg.cpus.len()));
    }
    let mut seen = cfg.cpus.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != cfg.cpus.len() {
        return bad("a CPU is listed twice".into());
    }
    if let Some(&c) = cfg.cpus.iter().find(|&&c| c >= info.nr_cpu_ids.max(1)) {
        return bad(format!("CPU {c} does not exist (the kernel has {} CPU ids)", info.nr_cpu_ids));
    }
    if cfg.counters.len() > MAX_COUNTERS {
        return bad(format!(
            "{} counters; the survey's method reads at most {MAX_COUNTERS} at once",
            cfg.counters.len()
        ));
    }
    let max_discarded = cfg.max_discarded.unwrap_or(cfg.iterations / 10 + 100);
    let per_cpu = cfg.iterations.saturating_add(max_discarded);
    if cfg.iterations == 0 || per_cpu.saturating_mul(cfg.cpus.len() as u64) > MAX_RECORDS {
        return bad(format!(
            "{} iterations (+{max_discarded} discards) x {} CPUs; the module keeps at most {MAX_RECORDS} records per run",
            cfg.iterations,
            cfg.cpus.len()
        ));
    }
    if cfg.clock == KernelClock::Tsc && info.flags & INFO_TSC_STABLE == 0 {
        return bad("the TSC is not stable on this machine; use the auto or ktime clock".into());
    }
    let mut c = KbenchConfig {
        abi_version: ABI_VERSION,
        size: size_of::<KbenchConfig>() as u32,
        payload_size: cfg.payload_size,
        clock: cfg.clock.to_abi(),
        iterations: cfg.iterations,
        warmup: cfg.warmup,
        max_discarded,
        n_counters: cfg.counters.len() as u32,
        n_cpus: cfg.cpus.len() as u32,
        counters: [KbenchCounter::default(); MAX_COUNTERS],
        cpus: [0; MAX_CPUS],
        records: [0; MAX_CPUS],
        kept: [0; MAX_CPUS],
        discarded: [0; MAX_CPUS],
        tsc_khz: 0,
        run_id: 0,
    };
    for (dst, src) in c.counters.iter_mut().zip(&cfg.counters) {
        *dst = KbenchCounter { type_: src.type_, status: 0, config: src.config };
    }
    c.cpus[..cfg.cpus.len()].copy_from_slice(&cfg.cpus);
    Ok(c)
}

/// Runs one kernel cell through `/dev/kbench` (or `cfg.device`).
pub fn run_kernel_cell(cfg: &KernelCellConfig) -> Result<KernelSamples, KernelError> {
    Device::open(&cfg.device)?.run(cfg)
}

#[cfg(test)]
mod tests;
