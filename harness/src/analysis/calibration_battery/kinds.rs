//! The battery's kinds of run (calibration_battery/mod.rs): what each generates, the tracer's
//! calls and the reference windows its machine gives, and what it planted.
use crate::stats::rng::XorShift64Star as Rng;

/// The kinds of run in the battery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Each call slow with probability 1/500 (+2 us): the plain memoryless case.
    Bernoulli,
    /// Slow calls at geometric gaps (mean 300), costs log-uniform from +300 ns to +3 us.
    Geometric,
    /// A buffer flushed every 360..440 calls (the event size varies): a path, but no exact period.
    Drifting,
    /// The machine's speed in stretches of 300..3000 calls at +0, +40 or +80 ns, with interrupts.
    MachinePhases,
    /// strace-like levels: +0, +30 or +120 ns, changing at geometric gaps (mean 200 calls).
    Levels,
    /// One period (300..1500 calls) occurring 5 times in one sequence.
    FiveOccurrences,
    /// Two coprime periods (50..150 and 700..1700).
    Coprime,
    /// One period (60..200, even) at two phases half a period apart, +500 and +600 ns.
    Commensurate,
    /// A switch every 810 calls (+1 us) and the 300 calls after it at +150 ns: the tracer's.
    TracerStretch,
    /// A rare costly path (+3 us) every 2250..2750 calls: drifting, about 0.04 % of calls.
    DriftingRare,
    /// printf's flush as measured: at iterations 261, 716, 1162, ... (spacing 431 to 455, the
    /// same in 3 repetitions of 5000 calls), +250 to +300 ns.
    PrintfFlush,
    /// printf's flush at payload 1024: every 7 to 9 calls (12 % of calls), +900 ns.
    FlushEvery8,
    /// A path every 60..200 calls whose cost varies by +-35 % around +300..+1000 ns:
    /// one path, never its multiples (the costliest calls of a band sit on a sub-lattice by
    /// chance).
    VaryingCost,
    /// The machine's stalls: +2 us, arriving in time as a Poisson process at a rate
    /// that hits 0.25 % of 150 ns windows, on calls of 150 ns; the reference windows meet them too.
    Stalls,
    /// The stalls beside a tracer's periodic path (every 300..1500 calls, +1 us).
    StallsWithPath,
    /// A memoryless path of the tracer's: each call slow with probability 0.1 to 0.5 %, by +0.5
    /// to +2 us (the reference windows never take it), in 60,000 calls, as in the measured runs.
    Memoryless,
    /// The 300 calls after every 810th cost +150 ns, with no spike of their own: a
    /// slower stretch that recurs by call count, the tracer's, said with its period.
    CountedStretch,
    /// Speed phases of the machine in stretches of 300..3000 calls that move the tracer's calls by
    /// +20 % and the reference windows (a loop, not the tracer's code) by +4 %.
    SpeedPhases,
}

pub const NULL_KINDS: [Kind; 7] = [
    Kind::Bernoulli,
    Kind::Geometric,
    Kind::Drifting,
    Kind::MachinePhases,
    Kind::Levels,
    Kind::Stalls,
    Kind::SpeedPhases,
];
pub const PLANTED_KINDS: [Kind; 11] = [
    Kind::FiveOccurrences,
    Kind::Coprime,
    Kind::Commensurate,
    Kind::TracerStretch,
    Kind::DriftingRare,
    Kind::PrintfFlush,
    Kind::FlushEvery8,
    Kind::VaryingCost,
    Kind::StallsWithPath,
    Kind::Memoryless,
    Kind::CountedStretch,
];
/// Null kinds without any path above the fast one: an irregular path said there is false too
/// (the drifting buffer has one, without an exact period).
pub const NO_PATH_KINDS: [Kind; 6] =
    [Kind::Bernoulli, Kind::Geometric, Kind::MachinePhases, Kind::Levels, Kind::Stalls, Kind::SpeedPhases];

/// What one run planted, to judge what the analysis said.
pub(super) struct Planted {
    /// Exact periods planted (with the phase of each, for paths of one period).
    pub(super) periods: Vec<u64>,
    /// A drifting path's mean spacing.
    pub(super) spacing: Option<f64>,
    /// A memoryless path's chance per call and extra cost.
    pub(super) memoryless: Option<(f64, f64)>,
}

/// The fast path's cost in the battery (ns): `Gen::fast`'s 100 or 110.
const FAST_NS: f64 = 105.0;
/// The stalls' rate per ns of window time: 0.25 % of 150 ns windows, as measured on a VM.
const STALL_PER_NS: f64 = 0.0025 / 150.0;

pub(super) struct Gen {
    pub(super) rng: Rng,
}

impl Gen {
    fn unit(&mut self) -> f64 {
        (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.rng.below(hi - lo + 1)
    }
    /// The fast path: 100 ns with one clock step of jitter, and interrupt-like outliers.
    fn fast(&mut self, outlier_rate: f64) -> f64 {
        let mut v = 100.0 + 10.0 * (self.rng.next() & 1) as f64;
        if self.unit() < outlier_rate {
            v += 200.0 * 15f64.powf(self.unit());
        }
        v
    }
    fn geometric(&mut self, mean: f64) -> u64 {
        (-mean * (1.0 - self.unit()).ln()).ceil().max(1.0) as u64
    }
    /// A stall of +2 us (+-10 %) with the chance a window of `ns` has of meeting one.
    fn stall(&mut self, ns: f64) -> f64 {
        if self.unit() < 1.0 - (-STALL_PER_NS * ns).exp() {
            2000.0 * (0.9 + 0.2 * self.unit())
        } else {
            0.0
        }
    }
}

/// The reference windows of a run of `calls` calls (one per call, `--reference-every 2`): what the
/// machine does in the run's kind without the tracer's paths.
pub(super) fn reference(kind: Kind, g: &mut Gen, calls: usize) -> Vec<f64> {
    match kind {
        Kind::Bernoulli => (0..calls).map(|_| g.fast(0.0) + if g.unit() < 0.002 { 2000.0 } else { 0.0 }).collect(),
        Kind::Geometric => {
            let mut v: Vec<f64> = (0..calls).map(|_| g.fast(0.0)).collect();
            let mut i = g.geometric(300.0) as usize;
            while i < v.len() {
                v[i] += 300.0 * 10f64.powf(g.unit());
                i += g.geometric(300.0) as usize;
            }
            v
        }
        Kind::MachinePhases => stretches(g, (300, 3000), &[0.0, 40.0, 80.0], true).concat(),
        Kind::SpeedPhases => stretches(g, (300, 3000), &[0.0, 0.04 * FAST_NS], true).concat(),
        Kind::Stalls | Kind::StallsWithPath => (0..calls).map(|_| g.fast(0.0) + g.stall(FAST_NS)).collect(),
        Kind::Levels => (0..calls).map(|_| g.fast(0.0015)).collect(),
        _ => (0..calls).map(|_| g.fast(0.001)).collect(),
    }
}

/// The sequences of one run (latency per iteration) and what was planted.
pub(super) fn generate(kind: Kind, g: &mut Gen) -> (Vec<Vec<f64>>, Planted) {
    let none = Planted { periods: vec![], spacing: None, memoryless: None };
    match kind {
        Kind::Bernoulli => {
            let seqs = (0..3)
                .map(|_| (0..8000).map(|_| g.fast(0.0) + if g.unit() < 0.002 { 2000.0 } else { 0.0 }).collect())
                .collect();
            (seqs, none)
        }
        Kind::Geometric => {
            let seqs = (0..3)
                .map(|_| {
                    let mut v: Vec<f64> = (0..8000).map(|_| g.fast(0.0)).collect();
                    let mut i = g.geometric(300.0) as usize;
                    while i < v.len() {
                        v[i] += 300.0 * 10f64.powf(g.unit());
                        i += g.geometric(300.0) as usize;
                    }
                    v
                })
                .collect();
            (seqs, none)
        }
        Kind::Drifting => (flushes(g, 3, 8000, (360, 440), 400.0), Planted { spacing: Some(400.0), ..none }),
        Kind::MachinePhases => (stretches(g, (300, 3000), &[0.0, 40.0, 80.0], true), none),
        Kind::Levels => (stretches(g, (0, 0), &[0.0, 30.0, 120.0], false), none),
        Kind::Stalls => {
            let seqs = (0..3).map(|_| (0..8000).map(|_| g.fast(0.0) + g.stall(FAST_NS)).collect()).collect();
            (seqs, none)
        }
        Kind::SpeedPhases => (stretches(g, (300, 3000), &[0.0, 0.2 * FAST_NS], true), none),
        _ => planted(kind, g),
    }
}

/// The planted kinds of [`generate`].
fn planted(kind: Kind, g: &mut Gen) -> (Vec<Vec<f64>>, Planted) {
    let none = Planted { periods: vec![], spacing: None, memoryless: None };
    match kind {
        Kind::FiveOccurrences => {
            let p = g.range(300, 1500);
            let ph = g.range(0, p - 1);
            let cost = 500.0 + 1500.0 * g.unit();
            let v = (0..5 * p)
                .map(|i| g.fast(0.001) + if i % p == ph { cost * (0.95 + 0.1 * g.unit()) } else { 0.0 })
                .collect();
            (vec![v], Planted { periods: vec![p], ..none })
        }
        Kind::Coprime => {
            let (mut a, mut b) = (g.range(50, 150), g.range(700, 1700));
            while crate::stats::period::gcd(a, b) != 1 {
                (a, b) = (g.range(50, 150), g.range(700, 1700));
            }
            let (pa, pb) = (g.range(0, a - 1), g.range(0, b - 1));
            let seqs = (0..3)
                .map(|_| {
                    (0..6000u64)
                        .map(|i| {
                            g.fast(0.001)
                                + if i % a == pa { 300.0 } else { 0.0 }
                                + if i % b == pb { 1200.0 } else { 0.0 }
                        })
                        .collect()
                })
                .collect();
            (seqs, Planted { periods: vec![a, b], ..none })
        }
        Kind::Commensurate => {
            let p = 2 * g.range(30, 100);
            let ph = g.range(0, p / 2 - 1);
            let seqs = (0..3)
                .map(|_| {
                    (0..6000u64)
                        .map(|i| {
                            let r = i % p;
                            g.fast(0.001)
                                + if r == ph {
                                    500.0
                                } else if r == ph + p / 2 {
                                    600.0
                                } else {
                                    0.0
                                }
                        })
                        .collect()
                })
                .collect();
            (seqs, Planted { periods: vec![p, p], ..none })
        }
        Kind::TracerStretch => {
            let ph = g.range(0, 809);
            let seqs = (0..3)
                .map(|_| {
                    (0..6000u64)
                        .map(|i| {
                            let since = (i + 810 - ph) % 810;
                            g.fast(0.001)
                                + if since == 0 {
                                    1000.0
                                } else if since <= 300 {
                                    150.0
                                } else {
                                    0.0
                                }
                        })
                        .collect()
                })
                .collect();
            (seqs, Planted { periods: vec![810], ..none })
        }
        Kind::DriftingRare => (flushes(g, 3, 20000, (2250, 2750), 3000.0), Planted { spacing: Some(2500.0), ..none }),
        Kind::PrintfFlush => {
            // The flush iterations of a measured printf run: the same in every repetition.
            let at = [261u64, 716, 1162, 1593, 2024, 2455, 2887, 3318, 3749, 4180, 4611];
            let seqs = (0..3)
                .map(|_| {
                    (0..5000u64)
                        .map(|i| g.fast(0.001) + if at.contains(&i) { 250.0 + 50.0 * g.unit() } else { 0.0 })
                        .collect()
                })
                .collect();
            (seqs, Planted { spacing: Some(431.0), ..none })
        }
        Kind::FlushEvery8 => (flushes(g, 3, 5000, (7, 9), 900.0), Planted { spacing: Some(8.0), ..none }),
        Kind::VaryingCost => {
            let p = g.range(60, 200);
            let ph = g.range(0, p - 1);
            let cost = 300.0 + 700.0 * g.unit();
            let v = (0..5000u64)
                .map(|i| g.fast(0.001) + if i % p == ph { cost * (0.65 + 0.7 * g.unit()) } else { 0.0 })
                .collect();
            (vec![v], Planted { periods: vec![p], ..none })
        }
        Kind::CountedStretch => {
            let ph = g.range(0, 809);
            let seqs = (0..3)
                .map(|_| {
                    (0..6000u64).map(|i| g.fast(0.001) + if (i + 810 - ph) % 810 < 300 { 150.0 } else { 0.0 }).collect()
                })
                .collect();
            (seqs, Planted { periods: vec![810], ..none })
        }
        Kind::StallsWithPath => {
            let p = g.range(300, 1500);
            let ph = g.range(0, p - 1);
            let seqs = (0..3)
                .map(|_| {
                    (0..8000u64)
                        .map(|i| g.fast(0.0) + g.stall(FAST_NS) + if i % p == ph { 1000.0 } else { 0.0 })
                        .collect()
                })
                .collect();
            (seqs, Planted { periods: vec![p], ..none })
        }
        Kind::Memoryless => {
            let chance = 0.001 + 0.004 * g.unit();
            let cost = 500.0 * 4f64.powf(g.unit());
            let seqs = (0..3)
                .map(|_| {
                    (0..20000)
                        .map(|_| g.fast(0.001) + if g.unit() < chance { cost * (0.95 + 0.1 * g.unit()) } else { 0.0 })
                        .collect()
                })
                .collect();
            (seqs, Planted { memoryless: Some((chance, cost)), ..none })
        }
        _ => unreachable!("null kinds are generated in generate()"),
    }
}

/// `seqs` sequences of `n` calls with a flush (+`cost`) at gaps drawn in `gap`.
fn flushes(g: &mut Gen, seqs: usize, n: usize, gap: (u64, u64), cost: f64) -> Vec<Vec<f64>> {
    (0..seqs)
        .map(|_| {
            let mut v: Vec<f64> = (0..n).map(|_| g.fast(0.001)).collect();
            let mut i = g.range(0, gap.1) as usize;
            while i < n {
                v[i] += cost * (0.9 + 0.2 * g.unit());
                i += g.range(gap.0, gap.1) as usize;
            }
            v
        })
        .collect()
}

/// Three sequences of 8000 calls whose speed level changes: in stretches of `len` calls
/// (uniform), or at geometric gaps of mean 200 when `len` is (0, 0).
fn stretches(g: &mut Gen, len: (u64, u64), levels: &[f64], outliers: bool) -> Vec<Vec<f64>> {
    (0..3)
        .map(|_| {
            let (mut left, mut level) = (0u64, 0.0);
            (0..8000)
                .map(|_| {
                    if left == 0 {
                        level = levels[g.rng.below(levels.len() as u64) as usize];
                        left = if len.1 == 0 { g.geometric(200.0) } else { g.range(len.0, len.1) };
                    }
                    left -= 1;
                    g.fast(if outliers { 0.001 } else { 0.0015 }) + level
                })
                .collect()
        })
        .collect()
}
