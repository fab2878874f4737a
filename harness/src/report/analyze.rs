//! Per-tracer analysis of events.csv in streaming passes, holding only bounded state: pass 1
//! fills log histograms, running moments, a reservoir and the first iterations; pass 2 keeps the
//! iteration of every call above the fast path (capped) and the phase windows; pass 3 (only when a
//! period was found) counts the kept calls on each period.
//!
//! Survey section 7.1: LTTng's slow path is taken "every SUB-BUFFER_SIZE / EVENT_SIZE events". A
//! path is established by its period, not its share: a handful of slow calls exactly P apart is
//! strong evidence however rare, so periods are searched among the slow calls (interrupts mixed
//! in). Calls in long stretches are speed phases of the machine, not paths (phases.rs).
use std::collections::HashMap;
use std::path::Path;

use super::load::Events;
use super::passes::{count_on_lattices, pass1};
use super::paths::*;
use super::phases::{close_window, WinState, WindowMeans, PHASE_SHARE, WINDOW};
use super::ReportError;
use super::{fractional, irregular};
use crate::stats::hist::{find_modes, LogHistogram, Mode, NBINS};
use crate::stats::period::{find_lattices, Lattice, SlowSeq};

/// Kernel width for latency modes: 5 % or 15 ns, whichever is wider (the TSC here ticks in
/// ~10 ns steps, which would otherwise split one path into a comb of modes).
const LAT_BW: (f64, f64) = (0.05, 15.0);
/// Instruction counts of one path are nearly exact (survey: 870 / 927 / 1,638): 1 % or 2.
const INS_BW: (f64, f64) = (0.01, 2.0);
/// A mode (frequent path) must hold at least this share of calls, and this many calls: rarer
/// paths are found by their period instead (LTTng's sub-buffer switch is 0.12 % of calls).
const MIN_MODE_FRACTION: f64 = 0.001;
pub(super) const MIN_MODE_CALLS: u64 = 10;
/// Cap on stored slow-path indices per tracer (bounded memory whatever the file size).
const MAX_SLOW_INDICES: usize = 2_000_000;

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
    /// A third, from the fast path's own spread (tight fast paths, cheap periodic paths).
    threshold_tight: f64,
    /// Calls above this (two kernel widths) are kept too, to tell which calls on a lattice take
    /// its path: the cut between fast and slow there is half the path's extra cost.
    keep_above: f64,
    /// (sequence, iteration, value, mode) of calls above `keep_above` or in a non-dominant mode.
    entries: Vec<(u64, u64, f32, Option<usize>)>,
    wins: HashMap<u64, WinState>,
    major_calls: Vec<u64>,
    stretches: Vec<u64>,
    /// The same windows seen two ways only: calls off the fast path (above the slow threshold,
    /// or in another mode) against the rest. A slower phase too broad to form one mode still holds the
    /// majority of its windows this way.
    off: HashMap<u64, WinState>,
    off_major: [u64; 2],
    off_stretches: [u64; 2],
    off_calls: u64,
    /// Window means of the calls at or below `threshold` (latency only): small speed phases.
    means: Option<WindowMeans>,
}

/// Analyses one events.csv. `threads`: which thread count to analyse (None: the first seen).
pub fn analyze(
    path: &Path,
    threads: Option<u32>,
    points: usize,
    iterations: usize,
) -> Result<TracerAnalysis, ReportError> {
    let (mut a, mut row) = pass1(path, threads, points, iterations)?;
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
        let dom = modes.iter().enumerate().max_by_key(|(_, m)| m.count).map(|(i, _)| i).unwrap_or(0);
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
        // A tight fast path hides a cheap periodic path inside its kernel widths: ftrace-open's
        // page crossing adds +130 ns to 1262 ns every 51 calls, and three widths are 190 ns. Its
        // calls stand above the fast path's own 90th percentile plus two absolute widths (two
        // clock steps here), so periods are searched there too (the chance test and the 80 %
        // rule below keep noise out).
        let q90 = if d.zero { 0.0 } else { h.quantile_in(0.9, d.first_bin, d.end_bin) };
        let threshold_tight = (q90 + 2.0 * bw.1).min(threshold_low);
        keep_above = keep_above.min(threshold_tight);
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
            threshold_tight,
            keep_above,
            entries: Vec::new(),
            wins: HashMap::new(),
            major_calls: vec![0; n],
            stretches: vec![0; n],
            off: HashMap::new(),
            off_major: [0; 2],
            off_stretches: [0; 2],
            off_calls: 0,
            means: col.is_none().then(WindowMeans::default),
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
                close_window(w, &mut m.major_calls, &mut m.stretches);
                w.win = row.iteration / WINDOW;
            }
            if let Some(k) = k {
                w.counts[k] += 1;
            }
            let o = m.off.entry(row.seq).or_insert_with(|| WinState {
                win: row.iteration / WINDOW,
                counts: vec![0; 2],
                prev_major: None,
            });
            if row.iteration / WINDOW != o.win {
                close_window(o, &mut m.off_major, &mut m.off_stretches);
                o.win = row.iteration / WINDOW;
            }
            // Off the fast path: above the slow threshold, or in another mode.
            let off = k != Some(m.dom) || v > m.threshold;
            o.counts[off as usize] += 1;
            m.off_calls += off as u64;
            if let Some(w) = m.means.as_mut().filter(|_| v <= m.threshold) {
                w.add(row.seq, row.iteration, v);
            }
            if (v > m.keep_above || k.is_some_and(|k| k != m.dom)) && stored < MAX_SLOW_INDICES {
                m.entries.push((row.seq, row.iteration, v as f32, k));
                stored += 1;
            }
        }
    }
    for m in scans.iter_mut() {
        for w in m.wins.values_mut() {
            close_window(w, &mut m.major_calls, &mut m.stretches);
        }
        for o in m.off.values_mut() {
            close_window(o, &mut m.off_major, &mut m.off_stretches);
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
        if m.threshold_tight < m.threshold_low {
            lattices.extend(find_lattices(&slow_above(m.threshold_tight), a.rows, 4));
        }
        // Costlier bands alone: a rare costly path among many slower-phase calls (LTTng's +1 us
        // switch among 700 calls at +50 ns) is weighed against the calls as costly as it.
        let mut t = base + 2.0 * (m.threshold - base);
        while m.entries.iter().filter(|e| e.2 as f64 > t).count() >= 4 {
            lattices.extend(find_lattices(&slow_above(t), a.rows, 2));
            t = base + 2.0 * (t - base);
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
            // Found again (in a costlier band): one path, with the strongest evidence for it.
            if let Some(k) = kept.iter_mut().find(|k| k.period == l.period && k.residues == l.residues) {
                k.log10_chance = k.log10_chance.min(l.log10_chance);
            } else if n as f64 >= 0.8 * slots as f64 {
                kept.push(l);
            }
        }
        let lattices = kept;
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
                    phases: 1,
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
        // A real-valued period shows as several lattices of one multiple: one path.
        let periodic = fractional::fold(periodic, &m.entries, &ranges);
        let on_lattice = |seq_pos: usize, it: u64| {
            periodic.iter().any(|p| p.residues.iter().any(|(s, r)| *s == seq_ids[seq_pos] && it % p.period == *r))
        };
        // Frequent modes that the lattices do not explain: irregular paths (irregular.rs).
        let scan = irregular::Scan { entries: &m.entries, seq_ids: &seq_ids, ranges: &ranges, rows: a.rows };
        let (irregular, explained) =
            irregular::paths(&scan, &m.modes, |k| k == m.dom || phase[k], m.threshold, base, &on_lattice);
        let mut outliers = 0u64;
        let mut slow_in_dom = 0u64;
        for (pos, id) in seq_ids.iter().enumerate() {
            let lo = m.entries.partition_point(|e| e.0 < *id);
            let hi = m.entries.partition_point(|e| e.0 <= *id);
            for (j, e) in m.entries[lo..hi].iter().enumerate() {
                // The fast path's share leaves out its calls that take a periodic path (some
                // sit below `threshold`: cheap paths are found with a lower one).
                let taking = periodic
                    .iter()
                    .any(|p| p.residues.iter().any(|(s, r)| *s == *id && e.1 % p.period == *r) && e.2 as f64 > p.cut);
                if e.3 == Some(m.dom) && (taking || e.2 as f64 > m.threshold) {
                    slow_in_dom += 1;
                }
                if e.2 as f64 <= m.threshold {
                    continue;
                }
                if !explained[lo + j] && !e.3.is_some_and(|k| phase[k]) && !on_lattice(pos, e.1) {
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
            // Calls off the dominant mode that hold the majority of their windows, in
            // stretches: a phase of the machine too broad to form one mode, not scattered noise.
            levels: m.means.take().and_then(WindowMeans::levels),
            outliers_in_stretches: (m.off_calls >= 2 * WINDOW
                && m.off_major[1] as f64 >= PHASE_SHARE * m.off_calls as f64)
                .then_some(m.off_stretches[1]),
            rows: a.rows,
            seq_len,
            col: m.col,
        });
    }

    count_on_lattices(path, &mut a, &mut row)?;
    Ok(a)
}
