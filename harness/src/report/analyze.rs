//! Per-tracer analysis of events.csv in two streaming passes, holding only fixed-size state:
//! pass 1 fills log histograms (latency and each counter), running mean/std per counter, a
//! reservoir sample for the scatter figures and the first iterations of one sequence; pass 2
//! (only when a metric has more than one mode) classifies each call into a mode and keeps the
//! iteration indices of the rarer modes, from which the period of each slow path is found
//! (survey section 7.1).
use std::collections::HashMap;
use std::path::Path;

use super::load::{Event, Events};
use super::ReportError;
use crate::stats::hist::{detect_period, find_modes, spacing, LogHistogram, Mode, Periodicity};

/// Kernel width for latency modes: 5 % or 15 ns, whichever is wider (the TSC here ticks in
/// ~10 ns steps, which would otherwise split one path into a comb of modes).
const LAT_BW: (f64, f64) = (0.05, 15.0);
/// Instruction counts of one path are nearly exact (survey: 870 / 927 / 1,638): 1 % or 2.
const INS_BW: (f64, f64) = (0.01, 2.0);
/// A path must hold at least this share of calls: LTTng's sub-buffer switch at 8 KiB / ~32 B
/// events is 0.4 %; below 0.1 % it is noise (interrupts) for a 100k-call run.
const MIN_MODE_FRACTION: f64 = 0.001;
/// ...and at least this many calls: a handful of interrupted calls is not a code path.
const MIN_MODE_CALLS: u64 = 10;
/// Cap on stored slow-path indices per tracer (bounded memory whatever the file size).
const MAX_SLOW_INDICES: usize = 2_000_000;

/// Running mean and std (Welford), for counters that are too many to keep.
#[derive(Debug, Clone, Default)]
pub struct Running {
    pub n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.mean
        }
    }
    pub fn std(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }
}

/// Uniform sample of fixed size (Algorithm R) with a fixed-seed xorshift, so reports re-made
/// from the same files draw the same points.
#[derive(Debug, Clone)]
pub struct Reservoir<T> {
    pub cap: usize,
    pub seen: u64,
    pub items: Vec<T>,
    rng: u64,
}

impl<T> Reservoir<T> {
    pub fn new(cap: usize) -> Self {
        Reservoir { cap, seen: 0, items: Vec::with_capacity(cap.min(1 << 16)), rng: 0x9E3779B97F4A7C15 }
    }
    pub fn add(&mut self, x: T) {
        self.seen += 1;
        if self.items.len() < self.cap {
            self.items.push(x);
            return;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let j = self.rng % self.seen;
        if (j as usize) < self.cap {
            self.items[j as usize] = x;
        }
    }
}

/// One code path of one metric.
#[derive(Debug, Clone)]
pub struct CodePath {
    pub mode: Mode,
    /// Median difference to the dominant path's median (ns, or counter units).
    pub delta: f64,
    pub period: Option<Periodicity>,
    /// Median spacing of consecutive calls on this path and the share within 10 % of it.
    pub spacing: Option<(f64, f64)>,
}

/// Code paths of one metric (latency, or instructions when a PMU exists).
#[derive(Debug, Clone)]
pub struct CodePaths {
    pub metric: String,
    pub unit: &'static str,
    /// Index of the dominant (most frequent) path in `paths`.
    pub dominant: usize,
    pub paths: Vec<CodePath>,
    /// Calls outside every path (noise below `MIN_MODE_FRACTION`).
    pub other_fraction: f64,
}

#[derive(Debug, Clone)]
pub struct CounterStats {
    pub name: String,
    pub running: Running,
    pub hist: LogHistogram,
    /// (counter value, latency ns) pairs for the Figure 3/4/7 scatter.
    pub sample: Reservoir<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct TracerAnalysis {
    /// Thread count analysed (the smallest in the file: code paths are a single-thread matter).
    pub threads: u32,
    pub rows: u64,
    pub latency: LogHistogram,
    pub latency_running: Running,
    pub counters: Vec<CounterStats>,
    /// The first iterations of the first sequence (thread, repetition, counter set).
    pub first_iterations: Vec<(u64, f64)>,
    pub code_paths: Vec<CodePaths>,
}

/// Analyses one events.csv. `threads`: which thread count to analyse (None: the first seen).
pub fn analyze(
    path: &Path,
    threads: Option<u32>,
    points: usize,
    iterations: usize,
) -> Result<TracerAnalysis, ReportError> {
    // Pass 1.
    let mut ev = Events::open(path)?;
    let names: Vec<String> = ev.cols.counters.iter().map(|c| c.1.clone()).collect();
    let mut a = TracerAnalysis {
        threads: threads.unwrap_or(0),
        rows: 0,
        latency: LogHistogram::new(),
        latency_running: Running::default(),
        counters: names
            .iter()
            .map(|n| CounterStats {
                name: n.clone(),
                running: Running::default(),
                hist: LogHistogram::new(),
                sample: Reservoir::new(points),
            })
            .collect(),
        first_iterations: Vec::new(),
        code_paths: Vec::new(),
    };
    let mut row = Event::default();
    let mut first_seq: Option<u64> = None;
    let mut want = threads;
    while ev.next_into(&mut row)? {
        let t = *want.get_or_insert(row.threads);
        if row.threads != t {
            continue;
        }
        a.rows += 1;
        a.latency.add(row.latency);
        a.latency_running.add(row.latency);
        for (c, &v) in a.counters.iter_mut().zip(&row.counters) {
            if v.is_finite() {
                c.running.add(v);
                c.hist.add(v);
                c.sample.add((v, row.latency));
            }
        }
        if *first_seq.get_or_insert(row.seq) == row.seq && a.first_iterations.len() < iterations {
            a.first_iterations.push((row.iteration, row.latency));
        }
    }
    a.threads = want.unwrap_or(0);
    a.first_iterations.sort_by_key(|p| p.0);

    // Modes per metric: latency always, instructions when the PMU gave them.
    let modes_of = |h: &LogHistogram, bw: (f64, f64)| {
        let mut m = find_modes(h, bw.0, bw.1, MIN_MODE_FRACTION);
        m.retain(|x| x.count >= MIN_MODE_CALLS);
        m
    };
    let mut metrics: Vec<(String, &'static str, Option<usize>, Vec<Mode>)> = Vec::new();
    metrics.push(("latency".into(), "ns", None, modes_of(&a.latency, LAT_BW)));
    if let Some(i) = a.counters.iter().position(|c| c.name == "instructions" && c.running.n > 0) {
        metrics.push(("instructions".into(), "instructions", Some(i), modes_of(&a.counters[i].hist, INS_BW)));
    }

    // Pass 2: iteration indices of the non-dominant modes, per sequence.
    let need_pass2 = metrics.iter().any(|m| m.3.len() > 1);
    // key: (metric index, mode index, sequence) -> indices
    let mut slow: HashMap<(usize, usize, u64), Vec<u64>> = HashMap::new();
    if need_pass2 {
        let dominant: Vec<usize> = metrics.iter().map(|m| dominant_of(&m.3)).collect();
        let mut ev = Events::open(path)?;
        let mut stored = 0usize;
        while ev.next_into(&mut row)? {
            if row.threads != a.threads || stored >= MAX_SLOW_INDICES {
                continue;
            }
            for (mi, (_, _, ci, modes)) in metrics.iter().enumerate() {
                if modes.len() < 2 {
                    continue;
                }
                let v = match ci {
                    None => row.latency,
                    Some(i) => row.counters[*i],
                };
                if let Some(k) = modes.iter().position(|m| m.contains(v)) {
                    if k != dominant[mi] {
                        slow.entry((mi, k, row.seq)).or_default().push(row.iteration);
                        stored += 1;
                    }
                }
            }
        }
    }
    for (mi, (metric, unit, ci, modes)) in metrics.into_iter().enumerate() {
        if modes.is_empty() {
            continue;
        }
        let total = match ci {
            None => a.latency.total(),
            Some(i) => a.counters[i].hist.total(),
        };
        let dom = dominant_of(&modes);
        let base = modes[dom].median;
        let covered: u64 = modes.iter().map(|m| m.count).sum();
        let paths = modes
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let (period, spacing) = if k == dom {
                    (None, None)
                } else {
                    let mut seqs: Vec<Vec<u64>> =
                        slow.iter().filter(|((x, y, _), _)| *x == mi && *y == k).map(|(_, v)| v.clone()).collect();
                    for s in &mut seqs {
                        s.sort_unstable();
                    }
                    seqs.sort();
                    (detect_period(&seqs), spacing(&seqs))
                };
                CodePath { mode: m.clone(), delta: m.median - base, period, spacing }
            })
            .collect();
        a.code_paths.push(CodePaths {
            metric,
            unit,
            dominant: dom,
            paths,
            other_fraction: 1.0 - covered as f64 / total.max(1) as f64,
        });
    }
    Ok(a)
}

fn dominant_of(modes: &[Mode]) -> usize {
    modes.iter().enumerate().max_by_key(|(_, m)| m.count).map(|(i, _)| i).unwrap_or(0)
}

fn fmt_val(v: f64, unit: &str) -> String {
    let s = if v.abs() >= 100.0 { format!("{:.0}", v) } else { format!("{:.1}", v) };
    if unit == "ns" {
        format!("{s} ns")
    } else {
        s
    }
}

/// The survey-style line, e.g. "lttng-ust: fast path 97.0% (~158 ns), slow path 0.4% every 256
/// events (+700 ns)".
pub fn describe(tracer: &str, cp: &CodePaths) -> String {
    let what = if cp.metric == "latency" { String::new() } else { format!(" [{}]", cp.metric) };
    let dom = &cp.paths[cp.dominant];
    if cp.paths.len() == 1 {
        return format!(
            "{tracer}{what}: single code path ({:.1}% of calls, median {})",
            100.0 * dom.mode.fraction,
            fmt_val(dom.mode.median, cp.unit)
        );
    }
    let above: Vec<usize> = (0..cp.paths.len()).filter(|&k| k != cp.dominant).collect();
    let mut parts =
        vec![format!("fast path {:.1}% (median {})", 100.0 * dom.mode.fraction, fmt_val(dom.mode.median, cp.unit))];
    for (n, &k) in above.iter().enumerate() {
        let p = &cp.paths[k];
        let name = match (above.len(), n) {
            (1, _) => "slow path".to_string(),
            (2, 0) => "middle path".to_string(),
            (2, 1) => "slow path".to_string(),
            _ => format!("path {}", n + 2),
        };
        let name = if p.delta < 0.0 { "faster path".to_string() } else { name };
        let sign = if p.delta >= 0.0 { "+" } else { "-" };
        let when = match &p.period {
            Some(per) if per.on_lattice >= 0.95 => format!("every {} events", per.period),
            Some(per) => format!("every {} events ({:.0}% of them on that period)", per.period, 100.0 * per.on_lattice),
            None => match p.spacing {
                Some((med, near)) if near >= 0.5 => format!(
                    "about every {med:.0} events (no exact period; {:.0}% of spacings within 10% of that)",
                    100.0 * near
                ),
                _ => format!("irregular, about 1 in {:.0} events", 1.0 / p.mode.fraction.max(1e-12)),
            },
        };
        parts.push(format!(
            "{name} {:.1}% {when} ({sign}{})",
            100.0 * p.mode.fraction,
            fmt_val(p.delta.abs(), cp.unit)
        ));
    }
    let mut s = format!("{tracer}{what}: {}", parts.join(", "));
    if cp.other_fraction >= 0.0005 {
        s.push_str(&format!("; {:.2}% outliers in no path", 100.0 * cp.other_fraction));
    }
    s
}
