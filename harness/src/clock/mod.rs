//! The clock of the timed window (survey Algorithm 1: `start_time = gettime()` /
//! `end_time = gettime()`).
//!
//! The default (`--clock tsc`) is the CPU's own fenced cycle-rate counter, one module per
//! architecture behind [`Clock`]: `lfence; rdtsc` on x86-64 ([`x86_64`]), `isb; mrs CNTVCT_EL0`
//! on arm64 ([`aarch64`]; the generic timer's virtual count, its frequency from CNTFRQ_EL0). The
//! timed loop sees only the trait, so no architecture test sits in it.
//!
//! x86-64: the lfence makes each read wait until every earlier instruction has completed (Intel
//! SDM, RDTSC): at the end of the window that is the tracer call; at the start, the previous
//! iteration's bookkeeping. We measured the alternatives on this VM (TSC step ~10 ns,
//! `taskset -c 1`, 200k empty windows): `lfence;rdtsc;lfence | rdtscp;lfence` (Intel's 2010 white
//! paper with lfence for cpuid) costs 26-29 ns, `rdtscp;lfence` on both sides 27-28 ns,
//! `lfence;rdtsc` on both sides 22-23 ns. The cheaper pair lets the first instructions of the call
//! overlap the start read by at most that read's latency; the `none` row pays the same, so it
//! cancels in every difference, and a lower floor leaves more of each single-call value to the
//! tracer. `rdtscp`'s free CPU number is not needed: the thread is pinned and a migration is a
//! discard (see `disturbance`).
//! `--clock monotonic` uses CLOCK_MONOTONIC_RAW through the vDSO instead, for machines without an
//! invariant TSC.
use serde::Serialize;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "aarch64")]
pub use aarch64::{calibrate_tsc, invariant_tsc, Tsc};
#[cfg(target_arch = "x86_64")]
pub mod x86_64;
#[cfg(target_arch = "x86_64")]
pub use x86_64::{calibrate_tsc, invariant_tsc, Tsc};

/// A clock as the timed loop sees it: two reads in raw units, converted to ns afterwards.
pub trait Clock: Send + Sync {
    fn start(&self) -> u64;
    fn end(&self) -> u64;
    /// `end`, plus the CPU the read ran on when the clock tells it for free (rdtscp's TSC_AUX,
    /// which Linux sets to the CPU number); `u32::MAX` when it does not.
    #[inline(always)]
    fn end_cpu(&self) -> (u64, u32) {
        (self.end(), u32::MAX)
    }
}

/// CLOCK_MONOTONIC_RAW through the vDSO (no system call). Units: ns.
pub struct Monotonic;

impl Monotonic {
    #[inline(always)]
    pub(crate) fn now() -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

impl Clock for Monotonic {
    #[inline(always)]
    fn start(&self) -> u64 {
        Self::now()
    }
    #[inline(always)]
    fn end(&self) -> u64 {
        Self::now()
    }
}

/// Which clock the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    Tsc,
    Monotonic,
}

/// What run.json says about the clock.
#[derive(Debug, Clone, Serialize)]
pub struct ClockInfo {
    pub kind: ClockKind,
    /// Raw units per second (TSC Hz, or 1e9 for monotonic).
    pub hz: f64,
    pub tsc_hz: f64,
    pub invariant_tsc: bool,
    /// Smallest non-zero step between two back-to-back reads, in ns.
    pub resolution_ns: f64,
    /// Share of back-to-back reads that returned the same value.
    pub zero_step_fraction: f64,
}

impl ClockInfo {
    pub fn to_ns(&self, units: u64) -> f64 {
        units as f64 * 1e9 / self.hz
    }
}

/// Measures the clock's resolution: the step in which it advances. Back-to-back reads cannot
/// show it directly when one read costs more than a step (here ~22 ns of reads against ~10 ns
/// steps, so consecutive reads differ by 2 or 3 steps), so we take the smallest gap between the
/// distinct differences that recur (at least twice, so one odd value cannot fake a fine clock),
/// together with the smallest non-zero difference. Also returns how often two reads were equal.
pub fn resolution<C: Clock>(clock: &C, hz: f64) -> (f64, f64) {
    const N: usize = 20_000;
    let mut deltas = Vec::with_capacity(N);
    let mut zeros = 0usize;
    let mut prev = clock.start();
    for _ in 0..N {
        let t = clock.start();
        deltas.push(t.wrapping_sub(prev));
        prev = t;
    }
    deltas.sort_unstable();
    let mut distinct: Vec<u64> = Vec::new();
    let mut i = 0;
    while i < deltas.len() {
        let v = deltas[i];
        let mut j = i;
        while j < deltas.len() && deltas[j] == v {
            j += 1;
        }
        if v == 0 {
            zeros += j - i;
        } else if j - i >= 2 {
            distinct.push(v);
        }
        i = j;
    }
    // The TSC step need not be a whole number of ticks (24.45 ticks here), so one step shows as
    // neighbouring values (73 and 74): merge values closer than 3 ticks into one cluster, and
    // take the smallest gap between cluster centres. A fine clock gives one wide cluster.
    let mut centres: Vec<f64> = Vec::new();
    let mut run: Vec<u64> = Vec::new();
    for &v in &distinct {
        if run.last().is_some_and(|&l| v - l >= 3) {
            centres.push(run.iter().sum::<u64>() as f64 / run.len() as f64);
            run.clear();
        }
        run.push(v);
    }
    if !run.is_empty() {
        centres.push(run.iter().sum::<u64>() as f64 / run.len() as f64);
    }
    let min_nonzero = distinct.first().copied().unwrap_or(1) as f64;
    let step = if centres.len() >= 2 && centres.len() < distinct.len() {
        centres.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min)
    } else {
        distinct.windows(2).map(|w| (w[1] - w[0]) as f64).fold(min_nonzero, f64::min)
    };
    let min_gap = step;
    (min_gap.min(min_nonzero) * 1e9 / hz, zeros as f64 / N as f64)
}

/// Builds the clock description for a run.
pub fn describe(kind: ClockKind) -> ClockInfo {
    let tsc_hz = calibrate_tsc();
    let (hz, (res, zero)) = match kind {
        ClockKind::Tsc => (tsc_hz, resolution(&Tsc, tsc_hz)),
        ClockKind::Monotonic => (1e9, resolution(&Monotonic, 1e9)),
    };
    ClockInfo { kind, hz, tsc_hz, invariant_tsc: invariant_tsc(), resolution_ns: res, zero_step_fraction: zero }
}

/// The empty-window cost and resolution of the clock, measured on the first measuring CPU.
/// `weak`: what the disturbance detector cannot see here (`disturbance::Sources::weak`), learnt
/// from the detector this calibration opened; not part of run.json's floor.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Floor {
    pub samples: usize,
    pub discarded: usize,
    pub median_ns: f64,
    pub mean_ns: f64,
    pub std_ns: f64,
    pub min_ns: f64,
    #[serde(skip)]
    pub weak: Option<String>,
}
