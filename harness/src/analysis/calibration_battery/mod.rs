//! The calibration battery of the code-path analysis (`make calibrate`, or
//! `tracebench __calibrate`). Seeded synthetic runs, analysed in memory exactly as `report`
//! analyses an events.csv: null runs, where no exact period exists, count the runs in which a
//! period is claimed anyway (false discoveries); planted runs count the runs in which the planted
//! path is said right (power). The printed targets are [`POWER`], [`MAX_EXACT`] and
//! [`MAX_IRREGULAR`] (`decisions::findings`); `report::tests` runs a seeded subset and asserts them.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::analyze_source;
use crate::analysis::attribution::{attribute, main_slow_path, Attributions, RateTest, Reference};
use crate::analysis::code_paths::CodePaths;
use crate::analysis::dated::Attribution;
use crate::decisions::claims::ALPHA;
use crate::decisions::findings::{MAX_EXACT, MAX_IRREGULAR};
use crate::results::read::ReadError;
use crate::results::read::Source;
use crate::stats::rng::XorShift64Star as Rng;

mod by_size;
pub mod generative;
mod grammar;
mod kinds;
pub mod planted;
use kinds::{generate, reference, Gen, Planted};
pub use kinds::{Kind, NO_PATH_KINDS, NULL_KINDS, PLANTED_KINDS};

/// An events.csv of the sequences (one repetition each), in memory.
pub(crate) fn events(seqs: &[Vec<f64>]) -> Source {
    let mut s = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
    for (r, v) in seqs.iter().enumerate() {
        for (i, x) in v.iter().enumerate() {
            let _ = writeln!(s, "battery,1,0,0,{i},{x:.1},{r},0");
        }
    }
    Source::Memory { name: PathBuf::from("battery/events.csv"), bytes: Arc::new(s.into_bytes()) }
}

/// The latency row's code paths of the sequences, and its periodic paths as a test prints them
/// ("every P (+E ns) at [residues]").
#[cfg(test)]
pub(crate) fn latency_paths(seqs: &[Vec<f64>]) -> (CodePaths, Vec<String>) {
    let a = crate::analysis::analyze_source(&events(seqs), None, 0, 0).unwrap();
    let cp = a.code_paths.into_iter().find(|c| c.metric == "latency").unwrap();
    let said =
        cp.periodic.iter().map(|p| format!("every {} (+{:.0} ns) at {:?}", p.period, p.extra, p.residues)).collect();
    (cp, said)
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
    let irregular = cp.irregular.iter().enumerate().any(|(i, p)| !p.is_phase() && !attr.not_tracers(i))
        || cp.phases.iter().any(|p| p.start_every.is_some())
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
        // The stretches' period said, within 2 % of 810, and no exact period claimed.
        Kind::CountedStretch => {
            cp.periodic.is_empty() && cp.phases.iter().any(|p| p.start_every.is_some_and(|e| (e - 810.0).abs() <= 16.2))
        }
        // One path, at the planted spacing (the sweep's slow period), no exact period.
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
        *bins.entry(crate::stats::tick_bins::bin((v * 10.0) as u64)).or_insert(0u64) += 1;
    }
    let lo = |b: usize| crate::stats::tick_bins::lo(b) as f64 / 10.0;
    Reference::of(bins.into_iter().map(|(b, n)| (lo(b), lo(b + 1), n)).collect())
}

/// One seeded run of `kind` as the runner would record it: each sequence's latencies (ns) and
/// the reference windows' (ns), for tests that write it as a results directory.
pub fn sequences(kind: Kind, seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1) };
    let (seqs, _) = generate(kind, &mut g);
    let calls = seqs.iter().map(Vec::len).sum();
    let r = reference(kind, &mut g, calls);
    (seqs, r)
}

/// One run composed at random from `seed` (the generative battery's grammar), of at most
/// `max_calls` calls, as a clock of `step` ns records it (this VM's TSC moves in 10 ns steps, so
/// many calls share one value): each sequence's latencies and the reference windows'.
pub fn composed_sequences(seed: u64, max_calls: u64, step: f64) -> (Vec<Vec<f64>>, Vec<f64>) {
    let run = grammar::compose(seed, max_calls);
    let q = |x: &f64| (x / step).round() * step;
    (run.seqs.iter().map(|v| v.iter().map(q).collect()).collect(), run.reference.iter().map(q).collect())
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
pub struct KindTally {
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
pub fn run(runs: u32, seed: u64) -> Result<Vec<(Kind, KindTally)>, ReadError> {
    let kinds: Vec<Kind> = NULL_KINDS.iter().chain(&PLANTED_KINDS).copied().collect();
    let one_kind = |k: usize, kind: Kind| -> Result<KindTally, ReadError> {
        let mut t = KindTally::default();
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
    let tallies: Vec<Result<KindTally, ReadError>> = std::thread::scope(|s| {
        let hs: Vec<_> = kinds.iter().enumerate().map(|(k, &kind)| s.spawn(move || one_kind(k, kind))).collect();
        hs.into_iter().map(|h| h.join().expect("battery thread panicked")).collect()
    });
    kinds.into_iter().zip(tallies).map(|(k, t)| t.map(|t| (k, t))).collect()
}

fn rate(n: u32, d: u32) -> String {
    format!("{n}/{d} ({:.1}%)", 100.0 * n as f64 / d.max(1) as f64)
}

/// What each planted kind must show, and the share of runs the targets ask for (95 % for
/// periods at 5 occurrences and for tracer stretches; printf's flush as one path).
pub const POWER: [(Kind, &str, f64); 12] = [
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
    (Kind::CountedStretch, "stretches every 810 calls, no spike: their period", 0.95),
];

/// The tables of false discoveries (per null kind) and of power (per planted kind), and whether
/// every target is met.
pub fn table(res: &[(Kind, KindTally)], seed: u64, secs: f64) -> (String, bool) {
    let get = |k: Kind| res.iter().find(|r| r.0 == k).map(|r| r.1).unwrap_or_default();
    let mut s = String::new();
    let mut ok = true;
    let _ = writeln!(s, "calibration battery: seed {seed}, {secs:.1} s; a period is claimed below p = {ALPHA}");
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
