//! Per-tracer analysis of events.csv in streaming passes, holding only bounded state: pass 1
//! fills log histograms, running moments, a reservoir and the first iterations; pass 2 keeps the
//! iteration of every call above the fast path (capped) and the phase windows; pass 3 (only when a
//! period was found) counts the kept calls on each period.
//!
//! Survey section 7.1: LTTng's slow path is taken "every SUB-BUFFER_SIZE / EVENT_SIZE events". A
//! path is established by its period, not its share: a handful of slow calls exactly P apart is
//! strong evidence however rare, so periods are searched among the slow calls (search.rs), and a
//! period is claimed only when reruns of that whole search on the same calls at random positions
//! (permutation.rs) almost never find as strong a lattice. Calls in long stretches are speed phases, not
//! paths (phases.rs).
//!
//! The report (`report`) and the sweep's slow-path column (`runner/sweep.rs`) both use it, so it
//! stands beside them: it reads through `results::read` and computes with `stats`, nothing else.
pub mod attribution;
pub mod calibration_battery;
pub mod code_paths;
mod coincidence;
pub mod dated;
pub mod folded_period;
pub mod footprint;
pub mod function_profile;
pub mod irregular;
pub mod keyed;
pub mod passes;
pub mod periodic;
pub mod phases;
pub mod running;
mod sample;
mod slow_calls;
pub mod stretch;
mod stretch_starts;
mod sub_lattices;
mod tails;

use std::collections::HashMap;
use std::path::Path;

use crate::analysis::code_paths::*;
use crate::analysis::passes::{count_on_lattices, outliers_off_dropped_lattices, pass1};
use crate::analysis::periodic::search::{Call, Space, Thresholds};
use crate::analysis::periodic::{aftermath, fractional, permutation, search, search_part, sub_period};
use crate::analysis::phases::{SlowerLevel, WindowMeans, Windows};
use crate::analysis::slow_calls::{
    irregular_after_stretches, irregular_and_counts, keyed_paths, leave_out_slower_level,
};
use crate::decisions::modes::{
    INS_BW, KEEP_WIDTHS, LAT_BW, LOW_WIDTHS, MAX_SLOW_INDICES, MIN_MODE_CALLS, MIN_MODE_FRACTION, SLOW_WIDTHS,
    TIGHT_QUANTILE, TIGHT_WIDTHS,
};
use crate::decisions::phases::{PHASE_SHARE, WINDOW};
use crate::results::read::ReadError;
use crate::results::read::{Event, Events, Source};
use crate::stats::hist::{find_modes, LogHistogram, Mode, NBINS};

/// Per metric state of pass 2.
struct MetricScan {
    name: String,
    unit: &'static str,
    col: Option<usize>,
    modes: Vec<Mode>,
    dom: usize,
    bw: (f64, f64),
    th: Thresholds,
    /// Calls above `th.keep_above` or in a non-dominant mode.
    entries: Vec<SlowCall>,
    by_mode: Windows,
    /// Calls off the fast path (above the slow threshold, or in another mode) against the rest:
    /// a slower phase too broad to form one mode still holds the majority of its windows so.
    off: Windows,
    off_calls: u64,
    /// Window means of the calls at or below the slow threshold (latency only): small phases.
    means: Option<WindowMeans>,
    /// Per entry: an irregular path owns it (irregular.rs), for the tails.
    explained: Vec<bool>,
    /// Per mode: a speed phase (every call's, not a path's).
    phase: Vec<bool>,
    /// Calls pass 2 would keep at most, by pass 1's histogram (sample.rs).
    expected: u64,
    /// The sample's calls in each mode, and their histogram (sample.rs).
    sample_modes: Vec<u64>,
    sample_hist: LogHistogram,
}

/// The modes and thresholds of one metric, from its histogram; None without a mode.
fn metric_scan(
    name: &str,
    unit: &'static str,
    col: Option<usize>,
    h: &LogHistogram,
    bw: (f64, f64),
) -> Option<MetricScan> {
    let mut modes = find_modes(h, bw.0, bw.1, MIN_MODE_FRACTION);
    modes.retain(|x| x.count >= MIN_MODE_CALLS);
    let dom = modes.iter().enumerate().max_by_key(|(_, m)| m.count).map(|(i, _)| i)?;
    let d = modes[dom].clone();
    // Slow: clearly above the fast path, four kernel widths past its median, and never past
    // the valley that separates it from the next mode up.
    let above = |widths: f64| d.median + (widths * bw.0 * d.median).max(widths * bw.1);
    let mut slow = above(SLOW_WIDTHS);
    let mut low = above(LOW_WIDTHS);
    let mut keep_above = above(KEEP_WIDTHS);
    if !d.zero && d.end_bin < NBINS {
        slow = slow.min(LogHistogram::bin_lo(d.end_bin));
        low = low.min(slow);
        keep_above = keep_above.min(low);
    }
    // A tight fast path hides a cheap periodic path inside its kernel widths: ftrace-open's
    // page crossing adds +130 ns to 1262 ns every 51 calls, and three widths are 190 ns. Its
    // calls stand above the fast path's own 90th percentile plus two absolute widths (two
    // clock steps here), so periods are searched there too (the permutation null keeps noise out).
    let q90 = if d.zero { 0.0 } else { h.quantile_in(TIGHT_QUANTILE, d.first_bin, d.end_bin) };
    let tight = (q90 + TIGHT_WIDTHS * bw.1).min(low);
    keep_above = keep_above.min(tight);
    let n = modes.len();
    let expected = sample::expected_kept(h, &d, keep_above, h.total());
    Some(MetricScan {
        name: name.into(),
        unit,
        col,
        modes,
        dom,
        bw,
        th: Thresholds { slow, low, tight, keep_above },
        entries: Vec::new(),
        by_mode: Windows::new(n),
        off: Windows::new(2),
        off_calls: 0,
        means: col.is_none().then(WindowMeans::default),
        explained: Vec::new(),
        phase: Vec::new(),
        expected,
        sample_modes: vec![0; n],
        sample_hist: LogHistogram::new(),
    })
}

/// Each sequence's first and last iteration, in sequence order.
pub(crate) struct Sequences {
    pub ids: Vec<u64>,
    pub ranges: HashMap<u64, (u64, u64)>,
    pub extents: Vec<(u64, u64)>,
}

/// Pass 2: the slow calls (and those of the non-dominant modes) of the sample with their
/// iteration, and the phase windows of every call. The sequences are the sample's.
fn pass2(
    path: &Source,
    threads: u32,
    scans: &mut [MetricScan],
    row: &mut Event,
    region: &mut sample::Region,
    level: Option<&SlowerLevel>,
) -> Result<Sequences, ReadError> {
    let mut ev = Events::from_source(path)?;
    let mut stored = 0usize;
    while ev.next_into(row)? {
        if row.threads != threads {
            continue;
        }
        if stored + scans.len() > MAX_SLOW_INDICES {
            region.close();
        }
        let kept = region.admit(row.seq, row.iteration);
        for m in scans.iter_mut() {
            let v = match m.col {
                None => phases::levelled(level, row.seq, row.iteration, row.latency),
                Some(i) => row.counters[i],
            };
            if v.is_finite() {
                observe(m, row.seq, row.iteration, v, kept, &mut stored);
            }
        }
    }
    for m in scans.iter_mut() {
        m.by_mode.close();
        m.off.close();
    }
    let ranges = std::mem::take(&mut region.taken);
    let mut ids: Vec<u64> = ranges.keys().copied().collect();
    ids.sort_unstable();
    let extents = ids.iter().map(|id| ranges[id]).collect();
    Ok(Sequences { ids, ranges, extents })
}

/// One call of pass 2 for one metric (`kept`: it is in the sample).
fn observe(m: &mut MetricScan, seq: u64, it: u64, v: f64, kept: bool, stored: &mut usize) {
    let k = m.modes.iter().position(|x| x.contains(v));
    m.by_mode.add(seq, it, k);
    // Off the fast path: above the slow threshold, or in another mode.
    let off = k != Some(m.dom) || v > m.th.slow;
    m.off.add(seq, it, Some(off as usize));
    m.off_calls += off as u64;
    if let Some(w) = m.means.as_mut().filter(|_| v <= m.th.slow) {
        w.add(seq, it, v);
    }
    if !kept {
        return;
    }
    if let Some(k) = k {
        m.sample_modes[k] += 1;
    }
    m.sample_hist.add(v);
    if v > m.th.keep_above || k.is_some_and(|k| k != m.dom) {
        m.entries.push(SlowCall { seq, it, v: v as f32, mode: k });
        *stored += 1;
    }
}

/// Analyses one events.csv. `threads`: which thread count to analyse (None: the first seen).
pub fn analyze(
    path: &Path,
    threads: Option<u32>,
    points: usize,
    iterations: usize,
) -> Result<TracerAnalysis, ReadError> {
    analyze_source(&Source::File(path.to_path_buf()), threads, points, iterations)
}

/// [`analyze`] on an events.csv from a file or from memory.
pub fn analyze_source(
    path: &Source,
    threads: Option<u32>,
    points: usize,
    iterations: usize,
) -> Result<TracerAnalysis, ReadError> {
    let (mut a, mut row, ranges) = pass1(path, threads, points, iterations)?;
    if a.rows == 0 {
        return Ok(a);
    }
    let mut latency = a.latency.clone();
    let (mut scans, mut seqs, mut sampled) = search_paths(path, &mut a, &mut row, &ranges, &latency, None)?;
    // A machine that moves between two speed levels in stretches (window means, phases.rs) lifts
    // every call of the slower stretches: a path that costs less than the step hides in the
    // fast path's mode there, and the slow thresholds stand above it everywhere. The paths are
    // then searched again with each call judged against its own window's level.
    if let Some(level) = a.code_paths.first().filter(|c| c.col.is_none()).and_then(|c| c.slower_level.clone()) {
        latency = passes::levelled_histogram(path, a.threads, &level, &mut row)?;
        (scans, seqs, sampled) = search_paths(path, &mut a, &mut row, &ranges, &latency, Some(&level))?;
        // The levels stay said; the calls were judged against them.
        let cp = &mut a.code_paths[0];
        cp.levels = Some(level.levels.clone());
        cp.levelled = Some(level);
    }
    // Pass 3 drops the lattices its full count refuses: the tails index the paths that stay.
    let searched: Vec<Vec<PeriodicPath>> = a.code_paths.iter().map(|c| c.periodic.clone()).collect();
    count_on_lattices(path, &mut a, &mut row, &seqs.ranges)?;
    for ((m, cp), searched) in scans.iter_mut().zip(a.code_paths.iter_mut()).zip(&searched) {
        irregular_after_stretches(m, cp, &seqs, searched);
    }
    // A slower stretch after a path (found in pass 3) holds calls of that path, not outliers.
    for cp in a.code_paths.iter_mut() {
        let before = cp.outlier_calls.len();
        let periodic = &cp.periodic;
        cp.outlier_calls.retain(|c| !periodic.iter().any(|p| p.in_stretch(c.1, c.2)));
        cp.outliers -= (before - cp.outlier_calls.len()) as u64;
    }
    for (m, cp) in scans.iter_mut().zip(a.code_paths.iter_mut()) {
        keyed_paths(m, cp);
    }
    for ((m, cp), searched) in scans.iter().zip(a.code_paths.iter_mut()).zip(&searched) {
        let scanned =
            tails::Scanned { entries: &m.entries, modes: &m.modes, explained: &m.explained, seq_ids: &seqs.ids };
        outliers_off_dropped_lattices(cp, searched, &scanned, m.th.slow);
        if m.col.is_none() {
            cp.tails = tails::of(&scanned, cp, if sampled { &m.sample_hist } else { &latency });
        }
    }
    Ok(a)
}

/// Modes and thresholds per metric (latency's from `latency`: pass 1's histogram, or the levelled
/// one), pass 2, and each metric's code paths into `a.code_paths`. `level`: the windows whose
/// latency is taken down by the step (None: every call as measured). Returns the scans, the
/// sequences and whether pass 2 read a sample.
fn search_paths(
    path: &Source,
    a: &mut TracerAnalysis,
    row: &mut Event,
    ranges: &passes::Ranges,
    latency: &LogHistogram,
    level: Option<&SlowerLevel>,
) -> Result<(Vec<MetricScan>, Sequences, bool), ReadError> {
    // Modes per metric: latency always, instructions when the PMU gave them.
    let mut scans: Vec<MetricScan> = Vec::new();
    scans.extend(metric_scan("latency", "ns", None, latency, LAT_BW));
    if let Some(i) = a.counters.iter().position(|c| c.name == "instructions" && c.running.n > 0) {
        scans.extend(metric_scan("instructions", "instructions", Some(i), &a.counters[i].hist, INS_BW));
    }
    let mut region = sample::Region::plan(ranges, scans.iter().map(|m| m.expected).sum());
    let seqs = pass2(path, a.threads, &mut scans, row, &mut region, level)?;
    let sampled = region.partial(a.rows);
    let rows = if sampled { region.rows } else { a.rows };
    a.code_paths.clear();
    for m in scans.iter_mut() {
        let mut cp = code_paths(m, &seqs, rows, sampled);
        cp.mean = m.col.map_or(&a.latency_running, |i| &a.counters[i].running).mean();
        a.code_paths.push(cp);
    }
    Ok((scans, seqs, sampled))
}

/// The code paths of one metric from its pass-2 state, of `rows` calls (`sampled`: the sample's).
fn code_paths(m: &mut MetricScan, seqs: &Sequences, rows: u64, sampled: bool) -> CodePaths {
    // Speed phases are of every call (their windows are); the paths are of the sample's calls.
    let phase: Vec<bool> = m
        .modes
        .iter()
        .enumerate()
        .map(|(k, x)| {
            k != m.dom && x.count >= 2 * WINDOW && m.by_mode.major_calls[k] as f64 >= PHASE_SHARE * x.count as f64
        })
        .collect();
    if sampled {
        for (x, &c) in m.modes.iter_mut().zip(&m.sample_modes) {
            x.count = c;
            x.fraction = c as f64 / rows.max(1) as f64;
        }
    }
    let dom = m.modes[m.dom].clone();
    let base = dom.median;
    m.entries.sort_by_key(|e| (e.seq, e.it));
    let sp = Space { extents: seqs.extents.clone(), rows, base, bw: m.bw, th: m.th };
    let (periodic, rejected) = periodic_paths(m, &sp, seqs, &phase);
    m.phase = phase.clone();
    let (irregular, explained, counts) = irregular_and_counts(m, seqs, rows, &periodic, |_, _| false);
    let phases = m
        .modes
        .iter()
        .enumerate()
        .filter(|(k, _)| phase[*k])
        .map(|(k, x)| SpeedPhase {
            mode: x.clone(),
            delta: x.median - base,
            stretches: m.by_mode.stretches[k],
            start_every: stretch_starts::period(&m.entries, &seqs.ids, k),
        })
        .collect();
    let means = m.means.take();
    let levels = means.as_ref().and_then(WindowMeans::levels);
    let slower_level = means.as_ref().zip(levels.as_ref()).map(|(w, l)| SlowerLevel::of(w, l));
    let mut cp = CodePaths {
        metric: m.name.clone(),
        unit: m.unit,
        fast_fraction: (dom.count - counts.slow_in_dom.min(dom.count)) as f64 / rows as f64,
        dominant: dom,
        threshold: m.th.slow,
        periodic,
        rejected,
        irregular,
        phases,
        outliers: counts.outliers,
        outlier_calls: counts.calls,
        explained_extras: counts.explained,
        tails: Vec::new(),
        // Calls off the dominant mode that hold the majority of their windows, in stretches: a
        // slower phase too broad to form one mode, not scattered noise.
        levels,
        slower_level,
        levelled: None,
        outliers_in_stretches: (m.off_calls >= 2 * WINDOW
            && m.off.major_calls[1] as f64 >= PHASE_SHARE * m.off_calls as f64)
            .then_some(m.off.stretches[1]),
        rows,
        mean: f64::NAN,
        seq_len: seqs.extents.iter().map(|r| r.1 - r.0 + 1).min().unwrap_or(0),
        sequences: seqs.extents.len() as u64,
        extents: seqs.ids.iter().zip(&seqs.extents).map(|(&id, &(lo, hi))| (id, lo, hi)).collect(),
        col: m.col,
    };
    leave_out_slower_level(&mut cp);
    m.explained = explained;
    cp
}

/// The calls of each sequence as the search sees them: a call is a speed phase's where its cost
/// is in the phase's mode and its time in or beside the phase's windows.
fn calls_by_seq(m: &MetricScan, seqs: &Sequences, phase: &[bool]) -> Vec<Vec<Call>> {
    seqs.ids
        .iter()
        .map(|id| {
            let lo = m.entries.partition_point(|e| e.seq < *id);
            let hi = m.entries.partition_point(|e| e.seq <= *id);
            m.entries[lo..hi]
                .iter()
                .map(|e| {
                    let in_phase = e.mode.is_some_and(|k| phase[k]);
                    Call { it: e.it, v: e.v, phase: in_phase && m.by_mode.near_majority(e.seq, e.it, |k| phase[k]) }
                })
                .collect()
        })
        .collect()
}

/// The periodic paths the search finds and the null confirms, and the lattices it refused.
fn periodic_paths(
    m: &MetricScan,
    sp: &Space,
    seqs: &Sequences,
    phase: &[bool],
) -> (Vec<PeriodicPath>, Vec<RejectedLattice>) {
    let all = calls_by_seq(m, seqs, phase);
    let parts = search_part::of(&all, sp);
    let found =
        parts.iter().enumerate().flat_map(|(i, p)| search::search(&p.space, &p.calls).into_iter().map(move |l| (i, l)));
    let seed = sp.rows ^ (m.entries.len() as u64).rotate_left(32) ^ 0x9E3779B97F4A7C15;
    let mut tested = permutation::test(&parts, found.collect(), seed);
    // A lattice on a claimed path's own lattice needs the null that permutes that path's costs
    // (a varying cost's dearest calls land on a multiple by chance; sub_period.rs).
    for (i, p) in parts.iter().enumerate() {
        let lo = tested.partition_point(|t| t.part < i);
        let hi = tested.partition_point(|t| t.part <= i);
        sub_period::test(&p.space, &p.calls, &mut tested[lo..hi], seed.rotate_left(7));
    }
    let mut periodic = Vec::new();
    let mut rejected = Vec::new();
    for t in tested {
        let l = &t.lattice;
        if !t.claimed() {
            rejected.push(RejectedLattice { period: l.period, hits: l.hits as u64, p: t.p(), null_runs: t.runs });
            continue;
        }
        let pick = &parts[t.part].pick;
        let (med, cut) = search::cost_and_cut(sp, l);
        let phase = l
            .residues
            .iter()
            .zip(pick)
            .find_map(|(r, &k)| {
                let first = seqs.extents[k].0;
                r.map(|r| first + (r + l.period - first % l.period) % l.period)
            })
            .unwrap_or(0);
        periodic.push(PeriodicPath {
            period: l.period,
            phases: 1,
            hits: l.hits as u64,
            slots: l.slots,
            extra: med - sp.base,
            cut,
            taken: 0,
            log10_chance: l.log10_chance,
            p_value: t.p(),
            null_runs: t.runs,
            phase,
            // The searched sequences' phases, then the phase of each sequence left out of the
            // search where its own calls hold the lattice.
            residues: l
                .residues
                .iter()
                .zip(pick)
                .filter_map(|(r, &k)| r.map(|residue| Residue { seq: seqs.ids[k], residue }))
                .chain((0..all.len()).filter(|k| !pick.contains(k)).filter_map(|k| {
                    search::residue_beyond(&all[k], seqs.extents[k], l.period, cut)
                        .map(|residue| Residue { seq: seqs.ids[k], residue })
                }))
                .collect(),
            followers: Vec::new(),
            profile: None,
            stretch: None,
            counted_in: Vec::new(),
            slots_at: Vec::new(),
        });
    }
    // A path's aftermath on its own period (the call after it, a stretch) is said with it.
    let periodic = aftermath::at_heads(periodic, &m.entries, &seqs.ranges);
    let periodic = aftermath::fold(periodic, &m.entries, &seqs.ranges);
    // A real-valued period shows as several lattices of one multiple: one path.
    (fractional::fold(periodic, &m.entries, &seqs.ranges), rejected)
}

#[cfg(test)]
#[path = "speed_phase_tests.rs"]
mod speed_phase_tests;
#[cfg(test)]
#[path = "stretch_after_tests.rs"]
mod stretch_after_tests;
