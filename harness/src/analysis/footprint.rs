//! The harness's footprint, checked in every report (docs/method.md, "The harness's footprint").
//!
//! The harness has cycles of its own in the calls it measures: its sample buffer enters a new
//! page every `sample_page` kept calls (run.json; 64 for 64 B samples in 4 KiB pages), and a
//! sentinel window comes every K-1 tracer calls (`sentinel_every` K). Work of the harness between
//! two windows that reached into the next call would gather the slow calls on a few residues of
//! such a cycle: issue 33 found 49% of lttng-ust's slow calls on three residues of 64 (the even
//! share is 4.7%) before the sample stores were drained outside the window. Each cycle is known
//! before the data is read, so it is tested, not searched for (`stats::cycles`).
//!
//! Which slow calls: those above the slow threshold, except the ones the tracer's own paths
//! explain (a periodic path whose period is not one of the harness's cycles, a regular irregular
//! path such as printf's flush, a speed phase): printf's flush every ~12.6 calls would otherwise
//! sit on five residues of 64. A periodic path whose period *is* a harness cycle stays in: the
//! data cannot tell it from the harness's work, and the finding says so.
use serde::Serialize;
use serde_json::Value;

use crate::analysis::code_paths::CodePaths;
use crate::results::read::{Event, Events, ReadError, Source};
use crate::stats::cycles::{worst_window, Gathering};

/// A claim needs p below this after the union bound over residues and cycles (the report's other
/// claims stand at 0.001 too) ...
const P_CLAIM: f64 = 0.001;
/// ... and the window to hold at least this multiple of its even share of the slow calls (a long
/// run makes any small unevenness significant; issue 33's target is twice the even share).
const MIN_RATIO: f64 = 2.0;
/// Residues per window: a miss that spills over lands on the call after the harness's work or
/// one or two later.
const WIDTH: u64 = 3;
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
    out.retain(|c| c.length > WIDTH);
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

/// Tests every cycle on the latency's slow calls of one events.csv (one more pass over it).
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
        let Some(g) = worst_window(r, s, c.length, WIDTH) else { continue };
        let p = (g.p_value * tests).min(1.0);
        if p < P_CLAIM && g.share >= MIN_RATIO * g.even {
            out.push(finding(c, &g, p, tests as u64, cp.periodic.iter().any(|x| x.phases <= 1 && x.period == c.length)));
        }
    }
    // One cycle said once: the numbering with the stronger evidence.
    out.sort_by(|a, b| a.p_value.total_cmp(&b.p_value));
    out.dedup_by(|a, b| a.cycle == b.cycle && a.length == b.length);
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

/// Positions in both numberings, each sequence laid after the last (so one residue count serves
/// all sequences: each starts at a multiple of every cycle's length, the product of them).
#[derive(Default)]
struct Numbered<T> {
    kept: T,
    iteration: T,
}

fn slow_calls(
    path: &Source,
    threads: u32,
    cp: &CodePaths,
    lengths: &[u64],
) -> Result<(Numbered<Vec<(u64, u64)>>, Numbered<Vec<u64>>), ReadError> {
    // Sequences are laid one after another at offsets that are multiples of every length, so
    // that a residue means the same in each.
    let stride: u64 = lengths.iter().product::<u64>().max(1);
    let mut seqs: Vec<(u64, u64, u64, u64)> = Vec::new(); // (seq, kept so far, first it, last it)
    let mut slow: Vec<(usize, u64, u64)> = Vec::new(); // (sequence index, kept index, iteration)
    let mut ev = Events::from_source(path)?;
    let mut row = Event::default();
    while ev.next_into(&mut row)? {
        if row.threads != threads {
            continue;
        }
        let i = match seqs.iter().position(|s| s.0 == row.seq) {
            Some(i) => i,
            None => {
                seqs.push((row.seq, 0, row.iteration, row.iteration));
                seqs.len() - 1
            }
        };
        let s = &mut seqs[i];
        let kept = s.1;
        s.1 += 1;
        s.2 = s.2.min(row.iteration);
        s.3 = s.3.max(row.iteration);
        if is_unexplained_slow(cp, lengths, row.seq, row.iteration, row.latency) {
            slow.push((i, kept, row.iteration));
        }
    }
    let base = |i: usize, span: u64| (i as u64) * span.div_ceil(stride).max(1) * stride;
    let kept_span = seqs.iter().map(|s| s.1).max().unwrap_or(0);
    let it_span = seqs.iter().map(|s| s.3 + 1).max().unwrap_or(0);
    let ranges = Numbered {
        kept: seqs.iter().enumerate().map(|(i, s)| (base(i, kept_span), base(i, kept_span) + s.1 - 1)).collect(),
        iteration: seqs.iter().enumerate().map(|(i, s)| (base(i, it_span) + s.2, base(i, it_span) + s.3)).collect(),
    };
    let marked = Numbered {
        kept: slow.iter().map(|&(i, k, _)| base(i, kept_span) + k).collect(),
        iteration: slow.iter().map(|&(i, _, it)| base(i, it_span) + it).collect(),
    };
    Ok((ranges, marked))
}

/// A slow call that no path of the tracer explains (see the module doc).
fn is_unexplained_slow(cp: &CodePaths, lengths: &[u64], seq: u64, it: u64, v: f64) -> bool {
    v.is_finite()
        && v > cp.threshold
        && !cp.periodic.iter().any(|p| !(p.phases <= 1 && lengths.contains(&p.period)) && p.on(seq, it))
        && !cp.phases.iter().any(|p| p.mode.contains(v))
        && !cp.irregular.iter().any(|p| (p.spacing.is_some() || p.is_phase()) && p.mode.contains(v))
}
