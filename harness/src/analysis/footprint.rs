//! The harness's footprint, checked in every report (docs/method.md, "The harness's footprint").
//!
//! The harness has cycles of its own in the calls it measures: its sample buffer enters a new
//! page every `sample_page` kept calls (run.json; 64 for 64 B samples in 4 KiB pages), and a
//! sentinel window comes every K-1 tracer calls (`sentinel_every` K). Work of the harness between
//! two windows that reached into the next call would gather the slow calls on a few residues of
//! such a cycle: with the sample stores drained inside the window, 49% of lttng-ust's slow calls
//! land on three residues of 64 (the even share is 4.7%). Each cycle is known
//! before the data is read, so it is tested, not searched for (`stats::cycles`).
//!
//! Which slow calls: those above the slow threshold, except the ones the tracer's own paths
//! explain (a periodic path whose period is not one of the harness's cycles, a regular irregular
//! path such as printf's flush, a speed phase): printf's flush every ~12.6 calls would otherwise
//! sit on five residues of 64. A periodic path whose period *is* a harness cycle stays in: the
//! data cannot tell it from the harness's work, and the finding says so.
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::analysis::code_paths::CodePaths;
use crate::decisions::claims::ALPHA;
use crate::decisions::footprint::{MIN_SHARE_RATIO, RESIDUES_PER_WINDOW};
use crate::results::read::{Event, Events, ReadError, Source};
use crate::stats::cycles::{worst_window, Gathering};

/// The sample page of runs whose run.json does not say it: 64 B samples in 4 KiB pages.
const DEFAULT_SAMPLE_PAGE: u64 = 64;

/// One cycle of the harness, in the numbering it runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub name: &'static str,
    pub length: u64,
    /// Counted in kept calls (the sample buffer's place) rather than in iterations.
    pub by_kept: bool,
}

/// The harness's cycles of a run, from its run.json.
pub fn cycles(run: &Value) -> Vec<Cycle> {
    // A kernel run's samples are kbench-module's, not this sample buffer's (and it has no
    // sentinels): none of these cycles is its harness's.
    if run["kernel"].as_bool() == Some(true) {
        return Vec::new();
    }
    let page = run["harness_cycles"]["sample_page"].as_u64().unwrap_or(DEFAULT_SAMPLE_PAGE);
    let mut out = vec![
        // The sample's place in the buffer is the kept call's; a tracer's own period counts
        // iterations, which discards shift against it: both numberings are tested.
        Cycle { name: "sample page", length: page, by_kept: true },
        Cycle { name: "sample page", length: page, by_kept: false },
    ];
    if let Some(k) = run["sentinel_every"].as_u64().filter(|k| *k > 1) {
        out.push(Cycle { name: "sentinel", length: k - 1, by_kept: false });
    }
    out.retain(|c| c.length > RESIDUES_PER_WINDOW);
    out
}

/// Slow calls that gather on a harness cycle: a measurement artifact, or a path of the tracer
/// with the cycle's very period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HarnessCycle {
    pub cycle: &'static str,
    pub length: u64,
    /// "kept calls" or "iterations".
    pub counted_in: &'static str,
    pub first_residue: u64,
    pub residues: u64,
    /// Distinct positions (in their sequence) holding a slow call, and those on the residues.
    pub slow_calls: u64,
    pub on_residues: u64,
    pub share: f64,
    pub even_share: f64,
    /// After the union bound over the window's positions and the cycles tested.
    pub p_value: f64,
    pub cycles_tested: u64,
    /// A periodic path of the tracer whose period is this cycle's length: the data cannot tell
    /// which of the two it is.
    pub tracer_path_with_this_period: bool,
}

/// Tests every cycle on the latency's slow calls of one events.csv (one more pass over it): the
/// distinct positions in their sequence that hold one (see `slow_calls`).
pub fn check(path: &Source, threads: u32, cp: &CodePaths, cycles: &[Cycle]) -> Result<Vec<HarnessCycle>, ReadError> {
    if cycles.is_empty() || cp.col.is_some() {
        return Ok(Vec::new());
    }
    let lengths: Vec<u64> = cycles.iter().map(|c| c.length).collect();
    let (ranges, slow) = slow_calls(path, threads, cp, &lengths)?;
    let tests = cycles.len() as f64;
    let mut out = Vec::new();
    for c in cycles {
        let (r, s) = if c.by_kept { (&ranges.kept, &slow.kept) } else { (&ranges.iteration, &slow.iteration) };
        let Some(g) = worst_window(r, s, c.length, RESIDUES_PER_WINDOW) else { continue };
        let p = (g.p_value * tests).min(1.0);
        if p < ALPHA && g.share >= MIN_SHARE_RATIO * g.even {
            out.push(finding(
                c,
                &g,
                p,
                tests as u64,
                cp.periodic.iter().any(|x| x.phases <= 1 && x.period == c.length),
            ));
        }
    }
    // One cycle said once: the numbering with the stronger evidence.
    out.sort_by(|a, b| a.p_value.total_cmp(&b.p_value));
    let mut said = Vec::new();
    out.retain(|h| {
        let new = !said.contains(&(h.cycle, h.length));
        said.push((h.cycle, h.length));
        new
    });
    Ok(out)
}

fn finding(c: &Cycle, g: &Gathering, p: f64, tests: u64, tracer_path: bool) -> HarnessCycle {
    HarnessCycle {
        cycle: c.name,
        length: c.length,
        counted_in: if c.by_kept { "kept calls" } else { "iterations" },
        first_residue: g.first,
        residues: g.width,
        slow_calls: g.marked,
        on_residues: g.on,
        share: g.share,
        even_share: g.even,
        p_value: p,
        cycles_tested: tests,
        tracer_path_with_this_period: tracer_path,
    }
}

/// Positions in both numberings.
#[derive(Default)]
struct Numbered<T> {
    kept: T,
    iteration: T,
}

/// The positions, within their sequence, of the slow calls the tracer's paths do not explain,
/// each position once however many sequences have a slow call there, and the span of positions.
/// Once: every repetition is a process of its own that reaches the timed loop after the same
/// number of the tracer's calls, so a tracer's own slow call (printf's flush at calls 201 and 656
/// of each of ten 1000-call repetitions) sits at the same place in every sequence and would pile
/// on one residue of any cycle. The harness's cycle comes back at every one of its periods:
/// many distinct positions.
fn slow_calls(
    path: &Source,
    threads: u32,
    cp: &CodePaths,
    lengths: &[u64],
) -> Result<(Numbered<Vec<(u64, u64)>>, Numbered<Vec<u64>>), ReadError> {
    let mut kept_so_far: HashMap<u64, u64> = HashMap::new(); // kept calls so far, by sequence
    let mut slow = Numbered::<Vec<u64>>::default();
    let (mut longest, mut first_it, mut last_it) = (0u64, u64::MAX, 0u64);
    let mut ev = Events::from_source(path)?;
    let mut row = Event::default();
    while ev.next_into(&mut row)? {
        if row.threads != threads {
            continue;
        }
        let n = kept_so_far.entry(row.seq).or_insert(0);
        let kept = *n;
        *n += 1;
        longest = longest.max(kept + 1);
        first_it = first_it.min(row.iteration);
        last_it = last_it.max(row.iteration);
        if is_unexplained_slow(cp, lengths, row.seq, row.iteration, row.latency) {
            slow.kept.push(kept);
            slow.iteration.push(row.iteration);
        }
    }
    for v in [&mut slow.kept, &mut slow.iteration] {
        v.sort_unstable();
        v.dedup();
    }
    let ranges = Numbered {
        kept: if longest > 0 { vec![(0, longest - 1)] } else { Vec::new() },
        iteration: if first_it <= last_it { vec![(first_it, last_it)] } else { Vec::new() },
    };
    Ok((ranges, slow))
}

/// A slow call that no path of the tracer explains (see the module doc).
fn is_unexplained_slow(cp: &CodePaths, lengths: &[u64], seq: u64, it: u64, v: f64) -> bool {
    v.is_finite()
        && v > cp.threshold
        && !cp.periodic.iter().any(|p| !(p.phases <= 1 && lengths.contains(&p.period)) && p.on(seq, it))
        && !cp.phases.iter().any(|p| p.mode.contains(v))
        && !cp.irregular.iter().any(|p| (p.spacing.is_some() || p.is_phase()) && p.mode.contains(v))
}
