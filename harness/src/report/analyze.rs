//! Per-tracer analysis of events.csv in streaming passes, holding only bounded state:
//! pass 1 fills log histograms (latency and each counter), running mean/std per counter, a
//! reservoir sample for the scatter figures and the first iterations of one sequence; pass 2
//! keeps the iteration of every call above the fast path (capped) and counts, per window of 64
//! iterations, which mode holds the majority; pass 3 (only when a period was found) counts the
//! kept calls on each period.
//!
//! Survey section 7.1 explains a tracer's code paths: LTTng's slow path is taken "every
//! SUB-BUFFER_SIZE / EVENT_SIZE events". Such a path is established by its period, not its share:
//! a handful of slow calls exactly P apart (phase included) is strong evidence however rare, so
//! periods are searched among the slow calls (interrupts mixed in), several at once. Modes whose
//! calls come in long contiguous stretches are speed phases of the machine, not paths; frequent
//! modes on no period are reported as irregular paths.
use std::collections::HashMap;
use std::path::Path;

use super::load::{Event, Events};
use super::ReportError;
use crate::stats::hist::{find_modes, LogHistogram, Mode, NBINS};
use crate::stats::period::{find_lattices, spacing, Lattice, SlowSeq};

/// Kernel width for latency modes: 5 % or 15 ns, whichever is wider (the TSC here ticks in
/// ~10 ns steps, which would otherwise split one path into a comb of modes).
const LAT_BW: (f64, f64) = (0.05, 15.0);
/// Instruction counts of one path are nearly exact (survey: 870 / 927 / 1,638): 1 % or 2.
const INS_BW: (f64, f64) = (0.01, 2.0);
/// A mode (frequent path) must hold at least this share of calls, and this many calls: rarer
/// paths are found by their period instead (LTTng's sub-buffer switch is 0.12 % of calls).
const MIN_MODE_FRACTION: f64 = 0.001;
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

/// One frequent but irregular code path of one metric (a mode of the histogram whose calls
/// follow no period, such as a printf flush whose spacing drifts with the formatted length).
#[derive(Debug, Clone)]
pub struct CodePath {
    pub mode: Mode,
    /// Median difference to the dominant path's median (ns, or counter units).
    pub delta: f64,
    /// Calls of the mode on no periodic path.
    pub calls: u64,
    /// Median spacing of consecutive calls on this path and the share within 10 % of it.
    pub spacing: Option<(f64, f64)>,
}

/// A path taken every `period` calls (survey section 7.1).
#[derive(Debug, Clone)]
pub struct PeriodicPath {
    pub period: u64,
    /// Slow calls on the lattice.
    pub hits: u64,
    /// Kept calls on the lattice (pass 3): `hits` of them were slow.
    pub slots: u64,
    /// Median extra cost of the slow calls on the lattice over the dominant path's median.
    pub extra: f64,
    /// Kept calls on the lattice above `cut` (half-way to the path's cost): those taking it.
    pub taken: u64,
    pub cut: f64,
    /// log10 of the chance of so full a lattice among randomly placed slow calls.
    pub log10_chance: f64,
    /// First iteration on the lattice in the first sequence (the phase).
    pub phase: u64,
    /// (sequence, residue) of each sequence holding the lattice.
    residues: Vec<(u64, u64)>,
    /// Calls just after this path's, on the same period and also slow: (offset, extra cost, calls),
    /// such as the call after LTTng's sub-buffer switch. One path, not two.
    pub followers: Vec<(u64, f64, u64)>,
}

/// A speed phase of the machine: a mode whose calls come in long contiguous stretches of
/// iterations (the VM drifts between speeds over seconds). Not a code path.
#[derive(Debug, Clone)]
pub struct SpeedPhase {
    pub mode: Mode,
    pub delta: f64,
    /// Maximal runs of windows where this mode holds the majority.
    pub stretches: u64,
}

/// Code paths of one metric (latency, or instructions when a PMU exists).
#[derive(Debug, Clone)]
pub struct CodePaths {
    pub metric: String,
    pub unit: &'static str,
    /// The dominant (most frequent) mode and the share of calls in it at or below `threshold`.
    pub dominant: Mode,
    pub fast_fraction: f64,
    /// Calls above this value count as slow (candidates for a periodic path).
    pub threshold: f64,
    pub periodic: Vec<PeriodicPath>,
    pub irregular: Vec<CodePath>,
    pub phases: Vec<SpeedPhase>,
    /// Slow calls on no path (interrupts and other noise), and the calls analysed.
    pub outliers: u64,
    pub rows: u64,
    /// Calls per sequence (the shortest sequence's extent, in iterations).
    pub seq_len: u64,
    /// The metric's column (None: latency).
    col: Option<usize>,
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

/// Phase windows: a mode holding the majority of WINDOW consecutive iterations in stretches
/// covering most of its calls is a phase of the machine, not a path. A path of share f < 1/2
/// taken independently of its neighbours almost never holds a 64-call window.
const WINDOW: u64 = 64;
/// Share of a mode's calls inside its majority windows above which it is a phase.
const PHASE_SHARE: f64 = 0.6;

#[derive(Default)]
struct WinState {
    win: u64,
    counts: Vec<u32>,
    prev_major: Option<usize>,
}

/// Per metric state of pass 2.
struct MetricScan {
    name: String,
    unit: &'static str,
    col: Option<usize>,
    modes: Vec<Mode>,
    dom: usize,
    bw: (f64, f64),
    threshold: f64,
    /// A second, lower threshold (three kernel widths) for cheap paths.
    threshold_low: f64,
    /// Calls above this (two kernel widths) are kept too, to tell which calls on a lattice take
    /// its path: the cut between fast and slow there is half the path's extra cost.
    keep_above: f64,
    /// (sequence, iteration, value, mode) of calls above `keep_above` or in a non-dominant mode.
    entries: Vec<(u64, u64, f32, Option<usize>)>,
    wins: HashMap<u64, WinState>,
    major_calls: Vec<u64>,
    stretches: Vec<u64>,
}

impl MetricScan {
    fn close_window(w: &mut WinState, major_calls: &mut [u64], stretches: &mut [u64]) {
        let n: u32 = w.counts.iter().sum();
        let major = w.counts.iter().enumerate().find(|(_, &c)| 2 * c > n && n as u64 >= WINDOW / 2).map(|(k, _)| k);
        if let Some(k) = major {
            major_calls[k] += w.counts[k] as u64;
            if w.prev_major != Some(k) {
                stretches[k] += 1;
            }
        }
        w.prev_major = major;
        w.counts.iter_mut().for_each(|c| *c = 0);
    }
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
    if a.rows == 0 {
        return Ok(a);
    }

    // Modes per metric: latency always, instructions when the PMU gave them.
    let modes_of = |h: &LogHistogram, bw: (f64, f64)| {
        let mut m = find_modes(h, bw.0, bw.1, MIN_MODE_FRACTION);
        m.retain(|x| x.count >= MIN_MODE_CALLS);
        m
    };
    let mut scans: Vec<MetricScan> = Vec::new();
    let mut add = |name: &str, unit: &'static str, col: Option<usize>, h: &LogHistogram, bw: (f64, f64)| {
        let modes = modes_of(h, bw);
        if modes.is_empty() {
            return;
        }
        let dom = dominant_of(&modes);
        let d = &modes[dom];
        // Slow: clearly above the fast path, four kernel widths past its median, and never past
        // the valley that separates it from the next mode up.
        let mut threshold = d.median + (4.0 * bw.0 * d.median).max(4.0 * bw.1);
        let mut threshold_low = d.median + (3.0 * bw.0 * d.median).max(3.0 * bw.1);
        let mut keep_above = d.median + (2.0 * bw.0 * d.median).max(2.0 * bw.1);
        if !d.zero && d.end_bin < NBINS {
            threshold = threshold.min(LogHistogram::bin_lo(d.end_bin));
            threshold_low = threshold_low.min(threshold);
            keep_above = keep_above.min(threshold_low);
        }
        let n = modes.len();
        scans.push(MetricScan {
            name: name.into(),
            unit,
            col,
            modes,
            dom,
            bw,
            threshold,
            threshold_low,
            keep_above,
            entries: Vec::new(),
            wins: HashMap::new(),
            major_calls: vec![0; n],
            stretches: vec![0; n],
        });
    };
    add("latency", "ns", None, &a.latency, LAT_BW);
    if let Some(i) = a.counters.iter().position(|c| c.name == "instructions" && c.running.n > 0) {
        add("instructions", "instructions", Some(i), &a.counters[i].hist, INS_BW);
    }

    // Pass 2: the slow calls (and those of the non-dominant modes) with their iteration, and
    // the phase windows.
    let mut ranges: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut ev = Events::open(path)?;
    let mut stored = 0usize;
    while ev.next_into(&mut row)? {
        if row.threads != a.threads {
            continue;
        }
        let r = ranges.entry(row.seq).or_insert((row.iteration, row.iteration));
        r.0 = r.0.min(row.iteration);
        r.1 = r.1.max(row.iteration);
        for m in scans.iter_mut() {
            let v = match m.col {
                None => row.latency,
                Some(i) => row.counters[i],
            };
            if !v.is_finite() {
                continue;
            }
            let k = m.modes.iter().position(|x| x.contains(v));
            let nm = m.modes.len();
            let w = m.wins.entry(row.seq).or_insert_with(|| WinState {
                win: row.iteration / WINDOW,
                counts: vec![0; nm],
                prev_major: None,
            });
            if row.iteration / WINDOW != w.win {
                MetricScan::close_window(w, &mut m.major_calls, &mut m.stretches);
                w.win = row.iteration / WINDOW;
            }
            if let Some(k) = k {
                w.counts[k] += 1;
            }
            if (v > m.keep_above || k.is_some_and(|k| k != m.dom)) && stored < MAX_SLOW_INDICES {
                m.entries.push((row.seq, row.iteration, v as f32, k));
                stored += 1;
            }
        }
    }
    for m in scans.iter_mut() {
        for w in m.wins.values_mut() {
            MetricScan::close_window(w, &mut m.major_calls, &mut m.stretches);
        }
    }
    let mut seq_ids: Vec<u64> = ranges.keys().copied().collect();
    seq_ids.sort_unstable();
    let seq_len = ranges.values().map(|r| r.1 - r.0 + 1).min().unwrap_or(0);

    for m in scans.iter_mut() {
        let dom = &m.modes[m.dom];
        let base = dom.median;
        let phase: Vec<bool> = m
            .modes
            .iter()
            .enumerate()
            .map(|(k, x)| {
                k != m.dom && x.count >= 2 * WINDOW && m.major_calls[k] as f64 >= PHASE_SHARE * x.count as f64
            })
            .collect();
        m.entries.sort_by_key(|e| (e.0, e.1));
        // Slow calls outside any phase mode, per sequence.
        let slow_above = |t: f64| -> Vec<SlowSeq> {
            seq_ids
                .iter()
                .map(|id| {
                    let (first, last) = ranges[id];
                    let lo = m.entries.partition_point(|e| e.0 < *id);
                    let hi = m.entries.partition_point(|e| e.0 <= *id);
                    let calls = m.entries[lo..hi]
                        .iter()
                        .filter(|e| e.2 as f64 > t && !e.3.is_some_and(|k| phase[k]))
                        .map(|e| (e.1, e.2))
                        .collect();
                    SlowSeq { first, last, calls }
                })
                .collect()
        };
        let slow_seqs = slow_above(m.threshold);
        let mut lattices = find_lattices(&slow_seqs, a.rows, 4);
        // Again among calls three kernel widths up (cheap paths: ftrace's page crossing adds
        // ~100 ns to ~600): the slow calls of the dominant mode's own tail are more there, but
        // a path's calls are all there. Duplicates are removed below.
        if m.threshold_low < m.threshold {
            lattices.extend(find_lattices(&slow_above(m.threshold_low), a.rows, 4));
        }
        // A costlier path on a multiple of a cheaper one's period (the sub-buffer switch on a
        // page crossing): split a lattice whose slow calls form two cost modes.
        let mut extra_lattices = Vec::new();
        for l in lattices.iter_mut() {
            if l.hits < 8 {
                continue;
            }
            let mut h = LogHistogram::new();
            l.calls.iter().flatten().for_each(|c| h.add(c.1 as f64));
            let mut cm = find_modes(&h, m.bw.0, m.bw.1, 0.0);
            cm.retain(|x| x.count >= 4);
            if cm.len() < 2 {
                continue;
            }
            let top = cm.last().unwrap().clone();
            let sub: Vec<SlowSeq> = slow_seqs
                .iter()
                .zip(&l.calls)
                .map(|(s, c)| SlowSeq {
                    first: s.first,
                    last: s.last,
                    calls: c.iter().filter(|x| top.contains(x.1 as f64)).copied().collect(),
                })
                .collect();
            if let Some(n) = find_lattices(&sub, a.rows, 1).pop() {
                if n.period > l.period && n.period % l.period == 0 {
                    for (c, r) in l.calls.iter_mut().zip(&n.residues) {
                        if let Some(r) = r {
                            c.retain(|x| x.0 % n.period != *r);
                        }
                    }
                    l.hits = l.calls.iter().map(Vec::len).sum();
                    extra_lattices.push(n);
                }
            }
        }
        lattices.extend(extra_lattices);
        // A period is exact only if nearly every call on it takes the path: a call takes it
        // when it is closer to the path's cost than to the fast path's. A lattice that most of
        // its calls skip (a page crossed every 83.4 events lands on no single integer period)
        // is dropped, and its calls count as on no path.
        let cut_of = |l: &Lattice| {
            let mut v: Vec<f32> = l.calls.iter().flatten().map(|c| c.1).collect();
            v.sort_by(|a, b| a.total_cmp(b));
            let med = v.get(v.len() / 2).copied().unwrap_or(f32::NAN) as f64;
            (med, (base + 0.5 * (med - base)).max(m.keep_above))
        };
        // Calls above `cut` on the lattice (period, residues), as (iteration, value) per sequence,
        // and the lattice's slots.
        let taken_on = |period: u64, residues: &[Option<u64>], cut: f64| {
            let mut slots = 0u64;
            let calls: Vec<Vec<(u64, f32)>> = seq_ids
                .iter()
                .zip(residues)
                .map(|(id, r)| {
                    let Some(r) = r else { return Vec::new() };
                    let (first, last) = ranges[id];
                    let on = first + (r + period - first % period) % period;
                    slots += if on > last { 0 } else { (last - on) / period + 1 };
                    let lo = m.entries.partition_point(|e| e.0 < *id);
                    let hi = m.entries.partition_point(|e| e.0 <= *id);
                    m.entries[lo..hi]
                        .iter()
                        .filter(|e| e.1 % period == *r && e.2 as f64 > cut)
                        .map(|e| (e.1, e.2))
                        .collect()
                })
                .collect();
            (calls, slots)
        };
        let mut kept: Vec<Lattice> = Vec::new();
        for mut l in lattices {
            let (_, cut) = cut_of(&l);
            // The path may come every d calls for a divisor d of the period found: the threshold
            // that picked the lattice's calls can miss some of a cheap path's calls, and a
            // multiple of the true period then fills best. The smallest divisor on which the
            // path is still taken nearly every time is the period.
            let mut divs: Vec<u64> = (2..=(l.period as f64).sqrt() as u64)
                .filter(|d| l.period % d == 0)
                .flat_map(|d| [d, l.period / d])
                .collect();
            divs.sort_unstable();
            divs.dedup();
            for d in divs {
                let res: Vec<Option<u64>> = l.residues.iter().map(|r| r.map(|r| r % d)).collect();
                let (calls, slots) = taken_on(d, &res, cut);
                let n: usize = calls.iter().map(Vec::len).sum();
                if n >= 4 && n as f64 >= 0.8 * slots as f64 {
                    l.period = d;
                    l.residues = res;
                    l.hits = n;
                    l.calls = calls;
                    l.slots = slots;
                    break;
                }
            }
            let (calls, slots) = taken_on(l.period, &l.residues, cut);
            let n: usize = calls.iter().map(Vec::len).sum();
            let dup = kept.iter().any(|k| k.period == l.period && k.residues == l.residues);
            if !dup && n as f64 >= 0.8 * slots as f64 {
                kept.push(l);
            }
        }
        let lattices = kept;
        let on_lattice = |seq_pos: usize, it: u64, ls: &[Lattice]| {
            ls.iter().any(|l| l.residues[seq_pos].is_some_and(|r| it % l.period == r))
        };
        let mut periodic: Vec<PeriodicPath> = lattices
            .iter()
            .map(|l| {
                let (med, cut) = cut_of(l);
                let phase = l
                    .residues
                    .iter()
                    .zip(&seq_ids)
                    .find_map(|(r, id)| r.map(|r| ranges[id].0 + (r + l.period - ranges[id].0 % l.period) % l.period))
                    .unwrap_or(0);
                PeriodicPath {
                    period: l.period,
                    hits: l.hits as u64,
                    slots: l.slots,
                    extra: med - base,
                    cut,
                    taken: 0,
                    log10_chance: l.log10_chance,
                    phase,
                    residues: l.residues.iter().zip(&seq_ids).filter_map(|(r, id)| r.map(|r| (*id, r))).collect(),
                    followers: Vec::new(),
                }
            })
            .collect();
        // Fold a lattice that trails a costlier one of the same period by one to three calls in
        // every sequence into it: the same event's aftermath, not a second path.
        periodic.sort_by(|a, b| b.extra.total_cmp(&a.extra));
        let mut k = 1;
        while k < periodic.len() {
            let lead = (0..k).find(|&j| {
                let (a, b) = (&periodic[j], &periodic[k]);
                a.period == b.period
                    && a.residues.len() == b.residues.len()
                    && a.residues
                        .iter()
                        .zip(&b.residues)
                        .all(|(x, y)| x.0 == y.0 && (1..=3).contains(&((y.1 + a.period - x.1) % a.period)))
            });
            if let Some(j) = lead {
                let f = periodic.remove(k);
                let off = (f.residues[0].1 + f.period - periodic[j].residues[0].1) % f.period;
                periodic[j].followers.push((off, f.extra, f.hits));
            } else {
                k += 1;
            }
        }
        periodic.sort_by_key(|p| p.period);
        // Frequent modes that the lattices do not explain: irregular paths.
        let mut irregular = Vec::new();
        let mut explained = vec![false; m.entries.len()];
        for (k, x) in m.modes.iter().enumerate() {
            if k == m.dom || phase[k] {
                continue;
            }
            let mut seqs: Vec<Vec<u64>> = Vec::new();
            let mut idx = Vec::new();
            for (pos, id) in seq_ids.iter().enumerate() {
                let lo = m.entries.partition_point(|e| e.0 < *id);
                let hi = m.entries.partition_point(|e| e.0 <= *id);
                let mut s = Vec::new();
                for (j, e) in m.entries[lo..hi].iter().enumerate() {
                    if e.3 == Some(k) && !on_lattice(pos, e.1, &lattices) {
                        s.push(e.1);
                        idx.push(lo + j);
                    }
                }
                seqs.push(s);
            }
            let calls = idx.len() as u64;
            if calls >= MIN_MODE_CALLS && calls as f64 >= 0.2 * x.count as f64 {
                idx.iter().for_each(|&i| explained[i] = true);
                irregular.push(CodePath { mode: x.clone(), delta: x.median - base, calls, spacing: spacing(&seqs) });
            }
        }
        let mut outliers = 0u64;
        let mut slow_in_dom = 0u64;
        let cuts: Vec<f64> = lattices.iter().map(|l| cut_of(l).1).collect();
        for (pos, id) in seq_ids.iter().enumerate() {
            let lo = m.entries.partition_point(|e| e.0 < *id);
            let hi = m.entries.partition_point(|e| e.0 <= *id);
            for (j, e) in m.entries[lo..hi].iter().enumerate() {
                // The fast path's share leaves out its calls that take a periodic path (some
                // sit below `threshold`: cheap paths are found with a lower one).
                let taking = lattices
                    .iter()
                    .zip(&cuts)
                    .any(|(l, cut)| l.residues[pos].is_some_and(|r| e.1 % l.period == r) && e.2 as f64 > *cut);
                if e.3 == Some(m.dom) && (taking || e.2 as f64 > m.threshold) {
                    slow_in_dom += 1;
                }
                if e.2 as f64 <= m.threshold {
                    continue;
                }
                if !explained[lo + j] && !e.3.is_some_and(|k| phase[k]) && !on_lattice(pos, e.1, &lattices) {
                    outliers += 1;
                }
            }
        }
        let phases = m
            .modes
            .iter()
            .enumerate()
            .filter(|(k, _)| phase[*k])
            .map(|(k, x)| SpeedPhase { mode: x.clone(), delta: x.median - base, stretches: m.stretches[k] })
            .collect();
        a.code_paths.push(CodePaths {
            metric: m.name.clone(),
            unit: m.unit,
            dominant: dom.clone(),
            fast_fraction: (dom.count - slow_in_dom.min(dom.count)) as f64 / a.rows as f64,
            threshold: m.threshold,
            periodic,
            irregular,
            phases,
            outliers,
            rows: a.rows,
            seq_len,
            col: m.col,
        });
    }

    // Pass 3 (only when a lattice was found): how many kept calls sit on each lattice, so the
    // report can say "6 of 6 calls on that period were slow" (discarded calls leave slots empty).
    if a.code_paths.iter().any(|c| !c.periodic.is_empty()) {
        for c in a.code_paths.iter_mut() {
            c.periodic.iter_mut().for_each(|p| {
                p.slots = 0;
                p.taken = 0;
            });
        }
        let mut ev = Events::open(path)?;
        while ev.next_into(&mut row)? {
            if row.threads != a.threads {
                continue;
            }
            for c in a.code_paths.iter_mut() {
                let v = match c.col {
                    None => row.latency,
                    Some(i) => row.counters[i],
                };
                for p in c.periodic.iter_mut() {
                    if p.residues.iter().any(|(s, r)| *s == row.seq && row.iteration % p.period == *r) {
                        p.slots += 1;
                        if v > p.cut {
                            p.taken += 1;
                        }
                    }
                }
            }
        }
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

/// The period a tracer's own geometry predicts for its slow path (survey section 7.1: "the slow
/// path every SUB-BUFFER_SIZE / EVENT_SIZE events"), and how it was computed.
#[derive(Debug, Clone)]
pub struct Expected {
    pub period: f64,
    /// e.g. "sub-buffer 8192 B (84 B header) / event 10.0 B = 810".
    pub how: String,
}

/// A share in percent with one decimal, or more where one decimal would round a share below
/// 100 % up to "100.0" (a line must not say all calls when a few are elsewhere).
fn pct(f: f64) -> String {
    let p = 100.0 * f;
    let mut d = 1;
    while d < 4 && p < 100.0 && format!("{p:.d$}").starts_with("100") {
        d += 1;
    }
    format!("{p:.d$}")
}

fn chance(log10: f64) -> String {
    if log10 <= -12.0 {
        "chance < 1e-12".into()
    } else {
        format!("chance < 1e{}", log10.ceil() as i64)
    }
}

/// The survey-style line, e.g. "lttng-ust: fast path 99.8% (median 70.1 ns), slow path every
/// 810 events (6 calls, +990 ns; ...)". `expected`: the period the tracer's geometry predicts,
/// printed beside the measured one.
pub fn describe(tracer: &str, cp: &CodePaths, expected: Option<&Expected>) -> String {
    let what = if cp.metric == "latency" { String::new() } else { format!(" [{}]", cp.metric) };
    let sign = |d: f64| if d >= 0.0 { "+" } else { "-" };
    // Paths above the fast one, cheapest first: (extra cost, text).
    let mut above: Vec<(f64, String)> = Vec::new();
    let closest = expected.and_then(|e| {
        cp.periodic
            .iter()
            .enumerate()
            .min_by(|a, b| (a.1.period as f64 - e.period).abs().total_cmp(&(b.1.period as f64 - e.period).abs()))
    });
    for (i, p) in cp.periodic.iter().enumerate() {
        let mut t = format!(
            "every {} events (from iteration {}; {} calls, {}{}; {} of {} kept calls on that period take it, {})",
            p.period,
            p.phase,
            p.taken,
            sign(p.extra),
            fmt_val(p.extra.abs(), cp.unit),
            p.taken,
            p.slots,
            chance(p.log10_chance)
        );
        for (off, extra, n) in &p.followers {
            t.push_str(&format!(
                ", and the call {} after it costs {}{} too ({n} calls)",
                if *off == 1 { "just".to_string() } else { format!("{off} calls") },
                sign(*extra),
                fmt_val(extra.abs(), cp.unit)
            ));
        }
        if let (Some(e), Some((j, _))) = (expected, closest) {
            if i == j {
                t.push_str(&format!(" [expected: {}]", e.how));
            }
        }
        above.push((p.extra, t));
    }
    for p in &cp.irregular {
        let when = match p.spacing {
            Some((med, near)) if near >= 0.5 && med >= 2.0 => format!(
                "about every {med:.0} events (no exact period; {:.0}% of spacings within 10% of that)",
                100.0 * near
            ),
            _ => format!("irregular, about 1 in {:.0} events", cp.rows as f64 / p.calls.max(1) as f64),
        };
        above.push((
            p.delta,
            format!(
                "{:.1}% {when} ({}{})",
                100.0 * p.calls as f64 / cp.rows.max(1) as f64,
                sign(p.delta),
                fmt_val(p.delta.abs(), cp.unit)
            ),
        ));
    }
    above.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n_up = above.iter().filter(|a| a.0 >= 0.0).count();
    let mut parts = Vec::new();
    let dom = &cp.dominant;
    if above.is_empty() {
        parts.push(format!(
            "single code path ({}% of calls, median {})",
            pct(cp.fast_fraction),
            fmt_val(dom.median, cp.unit)
        ));
    } else {
        parts.push(format!("fast path {}% (median {})", pct(cp.fast_fraction), fmt_val(dom.median, cp.unit)));
        let mut up = 0;
        for (d, t) in above {
            let name = if d < 0.0 {
                "faster path".to_string()
            } else {
                up += 1;
                match (n_up, up) {
                    (1, _) => "slow path".into(),
                    (2, 1) => "middle path".into(),
                    (2, 2) => "slow path".into(),
                    _ => format!("path {}", up + 1),
                }
            };
            parts.push(format!("{name} {t}"));
        }
    }
    let mut s = format!("{tracer}{what}: {}", parts.join(", "));
    if let Some(e) = expected.filter(|_| cp.periodic.is_empty()) {
        s.push_str(&format!("; no periodic path found [expected: {}]", e.how));
    }
    if !cp.phases.is_empty() {
        let ph: Vec<String> = cp
            .phases
            .iter()
            .map(|p| {
                format!(
                    "{:.1}% of calls at {}{} in {} stretch{}",
                    100.0 * p.mode.fraction,
                    sign(p.delta),
                    fmt_val(p.delta.abs(), cp.unit),
                    p.stretches,
                    if p.stretches == 1 { "" } else { "es" }
                )
            })
            .collect();
        s.push_str(&format!(
            "; {} speed phases of the machine, not code paths ({})",
            if cp.phases.len() == 1 { "two".to_string() } else { (cp.phases.len() + 1).to_string() },
            ph.join(", ")
        ));
    }
    if cp.outliers > 0 {
        let pct = 100.0 * cp.outliers as f64 / cp.rows.max(1) as f64;
        // Two decimals, or the first significant digit of a smaller share (0.004%).
        let digits = ((-pct.log10().floor()) as usize).clamp(2, 9);
        s.push_str(&format!(
            "; {} outlier{} ({pct:.digits$}%) on no path",
            cp.outliers,
            if cp.outliers == 1 { "" } else { "s" },
        ));
    }
    s
}
