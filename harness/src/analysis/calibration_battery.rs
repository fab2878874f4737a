//! The calibration battery of the code-path analysis (issue 23; `make calibrate`, or
//! `tracebench __calibrate`). Seeded synthetic runs, analysed in memory exactly as `report`
//! analyses an events.csv: null runs, where no exact period exists, count the runs in which a
//! period is claimed anyway (false discoveries); planted runs count the runs in which the planted
//! path is said right (power). The printed targets are the issue's; `report::tests` runs a seeded
//! subset and asserts them.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::analyze_source;
use crate::analysis::attribution::{attribute, main_slow_path, Attributions, RateTest, Reference};
use crate::analysis::code_paths::CodePaths;
use crate::analysis::dated::Attribution;
use crate::results::read::ReadError;
use crate::results::read::Source;
use crate::stats::rng::XorShift64Star as Rng;

/// The kinds of run in the battery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Each call slow with probability 1/500 (+2 us): the memoryless case.
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
    /// printf's flush (issue 24): at iterations 261, 716, 1162, ... (spacing 431 to 455, the
    /// same in 3 repetitions of 5000 calls), +250 to +300 ns.
    PrintfFlush,
    /// printf's flush at payload 1024 (issue 24): every 7 to 9 calls (12 % of calls), +900 ns.
    FlushEvery8,
    /// A path every 60..200 calls whose cost varies by +-35 % around +300..+1000 ns (issue 34):
    /// one path, never its multiples (the costliest calls of a band sit on a sub-lattice by
    /// chance).
    VaryingCost,
    /// The machine's stalls (issue 34): +2 us, arriving in time as a Poisson process at a rate
    /// that hits 0.25 % of 150 ns windows, on calls of 150 ns; the reference windows meet them too.
    Stalls,
    /// The stalls beside a tracer's periodic path (every 300..1500 calls, +1 us).
    StallsWithPath,
    /// A memoryless path of the tracer's: each call slow with probability 0.1 to 0.5 %, by +0.5
    /// to +2 us (the reference windows never take it), in 60,000 calls (issue 34's runs).
    Memoryless,
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
pub const PLANTED_KINDS: [Kind; 10] = [
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
];
/// Null kinds without any path above the fast one: an irregular path said there is false too
/// (the drifting buffer has one, without an exact period).
pub const NO_PATH_KINDS: [Kind; 6] =
    [Kind::Bernoulli, Kind::Geometric, Kind::MachinePhases, Kind::Levels, Kind::Stalls, Kind::SpeedPhases];

/// What one run planted, to judge what the analysis said.
struct Planted {
    /// Exact periods planted (with the phase of each, for paths of one period).
    periods: Vec<u64>,
    /// A drifting path's mean spacing.
    spacing: Option<f64>,
    /// A memoryless path's chance per call and extra cost.
    memoryless: Option<(f64, f64)>,
}

/// The fast path's cost in the battery (ns): `Gen::fast`'s 100 or 110.
const FAST_NS: f64 = 105.0;
/// The stalls' rate per ns of window time: 0.25 % of 150 ns windows (issue 34's measurement).
const STALL_PER_NS: f64 = 0.0025 / 150.0;

struct Gen {
    rng: Rng,
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
fn reference(kind: Kind, g: &mut Gen, calls: usize) -> Vec<f64> {
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
fn generate(kind: Kind, g: &mut Gen) -> (Vec<Vec<f64>>, Planted) {
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
            while gcd(a, b) != 1 {
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
            // The flush iterations of issue 24's run: the same in every repetition.
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

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
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

/// An events.csv of the sequences (one repetition each), in memory.
fn events(seqs: &[Vec<f64>]) -> Source {
    let mut s = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
    for (r, v) in seqs.iter().enumerate() {
        for (i, x) in v.iter().enumerate() {
            let _ = writeln!(s, "battery,1,0,0,{i},{x:.1},{r},0");
        }
    }
    Source::Memory { name: PathBuf::from("battery/events.csv"), bytes: Arc::new(s.into_bytes()) }
}

/// One run's verdict: an exact period claimed where none was planted (null), or the planted
/// path said right (planted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub claimed_exact: bool,
    pub found: bool,
    /// An irregular path claimed (a path without an exact period, not a phase).
    pub irregular: bool,
}

fn judge(kind: Kind, cp: &CodePaths, attr: &Attributions, planted: &Planted) -> Verdict {
    let claimed_exact = !cp.periodic.is_empty();
    let is_tracer = |t: &RateTest| t.attribution == Attribution::Tracer;
    // A path said (not a phase, not the machine's), or any population said to be the tracer's.
    let tracer_band = attr.bands.iter().any(|b| is_tracer(&b.test));
    let irregular = cp.irregular.iter().enumerate().any(|(i, p)| !p.is_phase() && !attr.machine_path(i))
        || tracer_band
        || attr.outliers.as_ref().is_some_and(is_tracer);
    let has = |p: u64| cp.periodic.iter().any(|x| x.phases <= 1 && x.period == p);
    let main = main_slow_path(cp, Some(attr));
    let found = match kind {
        Kind::FiveOccurrences | Kind::Coprime => planted.periods.iter().all(|&p| has(p)),
        // The path, and no other exact period (its multiples were the false claims).
        Kind::VaryingCost => cp.periodic.len() == 1 && has(planted.periods[0]),
        // The path alone: the stalls are not the tracer's.
        Kind::StallsWithPath => cp.periodic.len() == 1 && has(planted.periods[0]) && !irregular,
        Kind::Commensurate => cp.periodic.iter().filter(|x| x.period == planted.periods[0]).count() == 2,
        Kind::TracerStretch => cp.periodic.iter().any(|x| x.period == 810 && x.stretch.is_some()),
        // One path, at the planted spacing (the sweep's slow period, issue 24), no exact period.
        Kind::DriftingRare | Kind::Drifting | Kind::PrintfFlush | Kind::FlushEvery8 => {
            let want = planted.spacing.unwrap_or(0.0);
            let paths = cp.irregular.iter().filter(|p| !p.is_phase()).count();
            cp.periodic.is_empty() && paths == 1 && main.is_some_and(|m| (m.mean_period - want).abs() <= 0.1 * want)
        }
        // One memoryless path of the tracer's, at its rate (within a factor of 1.5) and cost
        // (within 25 %).
        Kind::Memoryless => {
            let (chance, cost) = planted.memoryless.unwrap_or((0.0, 0.0));
            let mine: Vec<_> = attr.bands.iter().filter(|b| is_tracer(&b.test)).collect();
            cp.periodic.is_empty()
                && mine.len() == 1
                && (mine[0].extra - cost).abs() <= 0.25 * cost
                && (mine[0].excess_calls() / cp.rows as f64 / chance - 1.0).abs() <= 0.5
        }
        _ => false,
    };
    Verdict { claimed_exact, found, irregular }
}

/// Reference windows of the given latencies, binned as the runner bins them (1 tick = 0.1 ns).
fn reference_of(lat: &[f64]) -> Option<Reference> {
    let mut bins = std::collections::BTreeMap::new();
    for &v in lat {
        *bins.entry(crate::runner::reference::bin((v * 10.0) as u64)).or_insert(0u64) += 1;
    }
    let lo = |b: usize| crate::runner::reference::lo(b) as f64 / 10.0;
    Reference::of(bins.into_iter().map(|(b, n)| (lo(b), lo(b + 1), n)).collect())
}

/// Runs one seeded run of `kind`.
pub fn run_one(kind: Kind, seed: u64) -> Result<Verdict, ReadError> {
    let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1) };
    let (seqs, planted) = generate(kind, &mut g);
    let calls = seqs.iter().map(Vec::len).sum();
    let r = reference_of(&reference(kind, &mut g, calls));
    let a = analyze_source(&events(&seqs), None, 0, 0)?;
    let cp = a.code_paths.iter().find(|c| c.metric == "latency");
    Ok(cp.and_then(|cp| attribute(cp, r.as_ref()).map(|attr| judge(kind, cp, &attr, &planted))).unwrap_or(Verdict {
        claimed_exact: false,
        found: false,
        irregular: false,
    }))
}

/// Counts per kind: runs, runs with an exact-period claim, runs with the planted path found.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    pub runs: u32,
    pub claimed: u32,
    pub found: u32,
    /// Runs with an irregular path claimed (said as a path, not a phase).
    pub irregular: u32,
    /// Seconds this kind's runs took (one thread each).
    pub secs: f64,
}

/// Runs `runs` seeded runs of each kind (one thread per kind: the runs are independent, and the
/// tallies do not depend on the order they finish in).
pub fn run(runs: u32, seed: u64) -> Result<Vec<(Kind, Tally)>, ReadError> {
    let kinds: Vec<Kind> = NULL_KINDS.iter().chain(&PLANTED_KINDS).copied().collect();
    let one_kind = |k: usize, kind: Kind| -> Result<Tally, ReadError> {
        let mut t = Tally::default();
        let t0 = std::time::Instant::now();
        for r in 0..runs {
            let v = run_one(kind, seed ^ ((k as u64) << 40) ^ r as u64)?;
            t.runs += 1;
            t.claimed += v.claimed_exact as u32;
            t.found += v.found as u32;
            t.irregular += v.irregular as u32;
        }
        t.secs = t0.elapsed().as_secs_f64();
        Ok(t)
    };
    let tallies: Vec<Result<Tally, ReadError>> = std::thread::scope(|s| {
        let hs: Vec<_> = kinds.iter().enumerate().map(|(k, &kind)| s.spawn(move || one_kind(k, kind))).collect();
        hs.into_iter().map(|h| h.join().expect("battery thread panicked")).collect()
    });
    kinds.into_iter().zip(tallies).map(|(k, t)| t.map(|t| (k, t))).collect()
}

fn rate(n: u32, d: u32) -> String {
    format!("{n}/{d} ({:.1}%)", 100.0 * n as f64 / d.max(1) as f64)
}

/// What each planted kind must show, and the share of runs the targets ask for (issue 23: 95 %
/// for periods at 5 occurrences and for tracer stretches; issue 24's printf flush as one path).
pub const POWER: [(Kind, &str, f64); 11] = [
    (Kind::FiveOccurrences, "a period at 5 occurrences, found exactly", 0.95),
    (Kind::Coprime, "two coprime periods, both found", 0.0),
    (Kind::Commensurate, "one period at two phases (+500/+600 ns): two paths", 0.0),
    (Kind::TracerStretch, "a tracer stretch said with its path", 0.95),
    (Kind::DriftingRare, "a rare drifting path (0.04%): one path", 0.0),
    (Kind::Drifting, "a drifting flush (null kind above): one path", 0.0),
    (Kind::PrintfFlush, "printf's flush, spacing 431-455 x3: one path ~431", 0.95),
    (Kind::FlushEvery8, "a flush every 7-9 calls (12%): one path ~8", 0.95),
    (Kind::VaryingCost, "a path of varying cost (+-35%): it alone", 0.95),
    (Kind::StallsWithPath, "a path beside the machine's stalls: it alone", 0.95),
    (Kind::Memoryless, "a memoryless path (0.1-0.5%): the tracer's", 0.95),
];

/// The share of null runs with a false claim the targets allow: exact periods (issue 23), and
/// irregular paths or populations said to be the tracer's on runs that hold no path at all
/// (issue 34: at most 1 % per null kind).
pub const MAX_EXACT: f64 = 0.01;
pub const MAX_IRREGULAR: f64 = 0.01;

/// The tables of false discoveries (per null kind) and of power (per planted kind), and whether
/// every target is met.
pub fn table(res: &[(Kind, Tally)], seed: u64, secs: f64) -> (String, bool) {
    let get = |k: Kind| res.iter().find(|r| r.0 == k).map(|r| r.1).unwrap_or_default();
    let mut s = String::new();
    let mut ok = true;
    let _ = writeln!(s, "calibration battery: seed {seed}, {secs:.1} s; a period is claimed below p = 0.001");
    let _ = writeln!(s, "\nfalse discoveries (null runs: no exact period anywhere; targets per kind)");
    let _ = writeln!(
        s,
        "{:<16} {:>5} {:>18} {:>24} {:>8}  {}",
        "kind", "runs", "exact-period claim", "a path or \"the tracer's\"", "s/run", "target"
    );
    // A kind's false claims within the target: at most MAX of its runs (none in under 100).
    let within = |n: u32, d: u32, max: f64| n as f64 <= (max * d as f64).floor();
    for k in NULL_KINDS {
        let t = get(k);
        let no_path = NO_PATH_KINDS.contains(&k);
        let irr = if no_path { rate(t.irregular, t.runs) } else { "(has one)".into() };
        let met = within(t.claimed, t.runs, MAX_EXACT) && (!no_path || within(t.irregular, t.runs, MAX_IRREGULAR));
        ok &= met;
        let per = t.secs / t.runs.max(1) as f64;
        let _ = writeln!(
            s,
            "{:<16} {:>5} {:>18} {:>24} {per:>8.2}  <= {:.0}% {}",
            format!("{k:?}"),
            t.runs,
            rate(t.claimed, t.runs),
            irr,
            100.0 * MAX_EXACT,
            if met { "ok" } else { "MISSED" }
        );
    }
    let mut line = |s: &mut String, what: &str, n: u32, d: u32, target: String, met: bool| {
        ok &= met;
        let _ = writeln!(s, "{what:<52} {:>16}  {target:<7} {}", rate(n, d), if met { "ok" } else { "MISSED" });
    };
    let _ = writeln!(s, "\npower (planted runs: the planted path said right)");
    for (k, what, target) in POWER {
        let t = get(k);
        let tt = if target > 0.0 { format!(">= {:.0}%", 100.0 * target) } else { "-".into() };
        line(&mut s, what, t.found, t.runs, tt, t.found as f64 >= target * t.runs as f64);
    }
    let _ = writeln!(s, "{}", if ok { "all targets met" } else { "TARGETS MISSED" });
    (s, ok)
}

/// `tracebench __calibrate`: the battery, its table on stdout; exit 1 when a target is missed.
pub fn main(runs: u32, seed: u64) -> Result<i32, ReadError> {
    let t0 = std::time::Instant::now();
    let res = run(runs, seed)?;
    let (s, ok) = table(&res, seed, t0.elapsed().as_secs_f64());
    print!("{s}");
    Ok(if ok { 0 } else { 1 })
}
