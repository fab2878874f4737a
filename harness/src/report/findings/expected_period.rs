//! The slow-path period a tracer's own geometry predicts (survey section 7.1), from run.json's
//! end-of-run snapshot of the tracer, and how many calls a run needs to show it.
use serde_json::Value;

use crate::analysis::code_paths;
use crate::decisions::claims::ALPHA;
use crate::decisions::findings::MIN_ON_LATTICE;
use crate::report::findings::survey_reference;
use crate::report::model::TracerReport;

/// A run length (calls) that holds at least five periods of `period`, rounded up to 1, 2 or 5
/// times a power of ten (what to pass to `-n`).
pub(crate) fn calls_for(period: f64) -> u64 {
    let want = (5.0 * period).ceil().max(10.0) as u64;
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if m * p >= want {
                return m * p;
            }
        }
        p *= 10;
    }
}

/// The `after_run` object of a tracer's first cell in run.json.
pub(crate) fn after_run<'a>(run: &'a Value, name: &str) -> Option<&'a Value> {
    run.get("tracers")?
        .as_array()?
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))?
        .get("cells")?
        .as_array()?
        .iter()
        .find_map(|c| c.get("after_run").filter(|a| a.is_object()))
}

/// The slow-path period a tracer's own geometry predicts (survey section 7.1): LTTng-UST's
/// events per full sub-buffer, read from its end-of-run snapshot; ftrace's events per ring-buffer
/// page from its per-CPU `bytes` / `entries`; else a declared `geometry.events_per_flush` (otf*);
/// for a plugin without those, the events its buffer holds (its `buffer_events`): a ring that
/// does work when it wraps does it once per that many calls.
pub(crate) fn expected_period(run: &Value, t: &TracerReport) -> Option<code_paths::Expected> {
    expected_of(run, &t.name, &t.spec, &t.config)
}

/// [`expected_period`] from a row's name, spec and config (before its report is assembled).
pub(crate) fn expected_of(run: &Value, name: &str, spec: &str, config: &Value) -> Option<code_paths::Expected> {
    let kind = survey_reference::kind(spec);
    let Some(ar) = after_run(run, name) else { return plugin_buffer(run, name, spec) };
    if let Some(g) = ar.get("geometry").filter(|g| g.get("events_per_flush").is_some()) {
        let f = |k: &str| g.get(k).and_then(Value::as_f64).filter(|v| *v > 0.0);
        let (buf, rec, per) = (f("buffer_bytes")?, f("record_bytes")?, f("events_per_flush")?);
        return Some(code_paths::Expected {
            period: per,
            how: format!("buffer {buf:.0} B / record {rec:.0} B = {per:.0}"),
        });
    }
    if kind.starts_with("lttng") {
        let g = ar.get("geometry")?;
        let f = |k: &str| g.get(k).and_then(Value::as_f64);
        let (sub, ev, hdr) = (f("subbuf_bytes")?, f("event_bytes")?, f("header_bytes").unwrap_or(0.0));
        let per = f("events_per_subbuf")?;
        if ev <= 0.0 || per <= 0.0 {
            return None;
        }
        return Some(code_paths::Expected {
            period: per,
            how: format!(
                "sub-buffer {sub:.0} B ({hdr:.0} B header) / event {ev:.1} B = {:.0} events per sub-buffer",
                ((sub - hdr) / ev).floor()
            ),
        });
    }
    if kind.starts_with("ftrace") {
        let page = config.get("ring_page_data_bytes").and_then(Value::as_f64)?;
        let stats = ar.get("per_cpu_stats")?;
        let cpu = ar.get("measuring_cpus")?.as_array()?.first()?.as_u64()?;
        let s = stats.get(cpu.to_string())?;
        let (bytes, entries) = (s.get("bytes")?.as_f64()?, s.get("entries")?.as_f64()?);
        if entries <= 0.0 || bytes <= 0.0 {
            return None;
        }
        let ev = bytes / entries;
        // The syscall rows write two events per call (enter and exit).
        let per_call = config.get("events").and_then(Value::as_array).map(|a| a.len()).filter(|&n| n > 1);
        return Some(match per_call {
            None => code_paths::Expected {
                period: (page / ev).floor(),
                how: format!("ring-buffer page {page:.0} B / event {ev:.1} B = {:.0} events per page", (page / ev).floor()),
            },
            Some(k) => code_paths::Expected {
                period: page / ev / k as f64,
                how: format!(
                    "ring-buffer page {page:.0} B / event {ev:.1} B = {:.0} events per page, {k} events per call: one page every {:.1} calls",
                    (page / ev).floor(),
                    page / ev / k as f64
                ),
            },
        });
    }
    plugin_buffer(run, name, spec)
}

/// Whether a path of mean period `mean` is the one the geometry's `expected` period predicts:
/// within 2% (at least 2 calls), as a switch every 810 calls reads 809 to 811 when the event size
/// shifts by a byte over the run. Farther, it is another path, and the expectation is unmet.
pub(crate) fn near_expected(mean: f64, expected: f64) -> bool {
    (mean - expected).abs() <= (0.02 * expected).max(2.0)
}

/// The spacings of the irregular paths among `f` that recur about every N calls (the table's
/// "~N"): beside them, "no periodic path" would deny what the table shows.
pub fn about_every(f: &[super::Finding]) -> Vec<f64> {
    f.iter()
        .filter_map(|x| match x {
            super::Finding::IrregularPath(super::IrregularPath { spacing: Some(s), .. }) => Some(s.median),
            _ => None,
        })
        .collect()
}

/// A plugin's `buffer_events` (run.json's `tracers[].buffer_events`), when it declares a buffer.
fn plugin_buffer(run: &Value, name: &str, spec: &str) -> Option<code_paths::Expected> {
    if !spec.starts_with("plugin:") {
        return None;
    }
    let n = run
        .get("tracers")?
        .as_array()?
        .iter()
        .find(|x| x.get("name").and_then(Value::as_str) == Some(name))?
        .get("buffer_events")?
        .as_f64()
        .filter(|n| *n >= 2.0)?;
    Some(code_paths::Expected { period: n, how: format!("the plugin's buffer_events = {n:.0} events per buffer") })
}

/// Outliers that lie exactly the expected period apart, when the search claimed no period: what
/// the data show at the period the tracer's geometry predicts, said as a fact and never as a path.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OnLattice {
    pub period: u64,
    /// Outliers on the best phase of one sequence, and the first and last of them.
    pub calls: u64,
    pub first: u64,
    pub last: u64,
    /// The lattice's slots in that sequence's whole extent.
    pub slots: u64,
    /// Their extra cost over the fast path, lowest and highest.
    pub extra: (f64, f64),
}

/// The phase of `period` (one sequence's) that holds the most outliers, from their
/// (extra cost, sequence, iteration); `extents` holds each sequence's (id, first iteration, last
/// iteration). The slots are counted in the chosen sequence's own extent: sequences end at
/// different iterations (a discarded iteration is not a call, and runs differ in length), so a
/// shared length would count slots some sequences do not have and miss slots others do. A
/// sequence is named by a hash (results/read.rs), so the count of sequences comes from
/// `extents`: neither the largest id nor the ids among the outliers is it.
pub(crate) fn on_lattice(outliers: &[(f32, u64, u64)], period: f64, extents: &[(u64, u64, u64)]) -> Option<OnLattice> {
    let p = period.round() as u64;
    let calls_in_run: u64 = extents.iter().map(|e| e.2.saturating_sub(e.1) + 1).sum();
    if p < 2 || calls_in_run == 0 {
        return None;
    }
    let mut by_phase: std::collections::BTreeMap<(u64, u64), Vec<(f32, u64)>> = Default::default();
    for &(extra, seq, it) in outliers {
        by_phase.entry((seq, it % p)).or_default().push((extra, it));
    }
    // One call per iteration (a sequence holds each once; a repeated entry must not count twice).
    by_phase.values_mut().for_each(|v| {
        v.sort_by_key(|c| c.1);
        v.dedup_by_key(|c| c.1);
    });
    let ((seq, residue), calls) = by_phase.into_iter().max_by_key(|(k, v)| (v.len(), std::cmp::Reverse(*k)))?;
    if calls.len() < MIN_ON_LATTICE {
        return None;
    }
    // The sequence's own extent; an outlier of a sequence `extents` does not hold (never so for
    // an analysis's own outliers) widens it to the outliers' span.
    let (from, to) = extents.iter().find(|e| e.0 == seq).map_or((calls[0].1, 0), |e| (e.1, e.2));
    let slots = slots_of(from.min(calls[0].1), to.max(calls[calls.len() - 1].1), p, residue);
    // As many on one phase must be rare for outliers at random positions (over every phase and
    // sequence): with hundreds of outliers, three on some phase is no pattern.
    let distinct = outliers.iter().map(|o| o.1).collect::<std::collections::BTreeSet<_>>().len();
    let sequences = extents.len().max(distinct).max(1) as f64;
    let rate = outliers.len() as f64 / calls_in_run as f64;
    let chance = p as f64 * sequences * crate::stats::binomial::upper_tail(slots, calls.len() as u64, rate.min(1.0));
    if chance >= ALPHA {
        return None;
    }
    let first = calls.iter().map(|c| c.1).min()?;
    let last = calls.iter().map(|c| c.1).max()?;
    let lo = calls.iter().map(|c| c.0).fold(f32::INFINITY, f32::min) as f64;
    let hi = calls.iter().map(|c| c.0).fold(f32::NEG_INFINITY, f32::max) as f64;
    Some(OnLattice { period: p, calls: calls.len() as u64, first, last, slots, extra: (lo, hi) })
}

/// The iterations in `lo..=hi` that are `residue` modulo `p`.
fn slots_of(lo: u64, hi: u64, p: u64, residue: u64) -> u64 {
    let first = lo + (residue + p - lo % p) % p;
    if first > hi {
        0
    } else {
        (hi - first) / p + 1
    }
}

#[cfg(test)]
mod on_lattice_tests {
    use super::on_lattice;

    /// LTTng-tracef at 5000 calls: a switch every 581 calls while payloads have three digits,
    /// every 579 after; the outliers on 579's best phase are said, with the slots they leave.
    #[test]
    fn outliers_on_the_expected_period_are_found_with_their_span() {
        let mut o: Vec<(f32, u64, u64)> =
            [1542u64, 2121, 2700, 3279, 3858, 4437].iter().map(|&i| (1500.0, 0, i)).collect();
        o.extend([(1700.0, 0, 338), (1500.0, 0, 961), (300.0, 0, 1768), (400.0, 0, 2337), (41000.0, 0, 1995)]);
        let l = on_lattice(&o, 579.0, &[(0, 0, 4999)]).unwrap();
        assert_eq!((l.period, l.calls, l.first, l.last, l.slots), (579, 6, 1542, 4437, 8));
        assert_eq!(l.extra, (1500.0, 1500.0));
        // Two outliers on one phase are not a lattice worth saying.
        assert_eq!(on_lattice(&o[..2], 579.0, &[(0, 0, 4999)]), None);
        // Nor are three on one phase among 1500 outliers in 5000 calls (iterations 0 to 1499: the
        // phases below 342 hold three each): that many is chance.
        let many: Vec<(f32, u64, u64)> = (0..1500u64).map(|i| (500.0, 0, i)).collect();
        assert_eq!(on_lattice(&many, 579.0, &[(0, 0, 4999)]), None);
    }

    /// Outliers at random positions (a seeded null battery: 4000 rows of 4 to 300 outliers in
    /// 5000 calls, periods 97 to 2000) are said to lie on the expected period at most at the rate
    /// the guard allows (0.1%), plus a few runs.
    #[test]
    fn outliers_at_random_positions_are_almost_never_said_to_lie_on_it() {
        let mut rng = crate::stats::rng::SplitMix64(7);
        let mut said = 0;
        let runs = 4000;
        for _ in 0..runs {
            let n = 4 + rng.below(297);
            let period = [97.0, 331.0, 579.0, 810.0, 2000.0][rng.below(5)];
            // Distinct positions, as a run's outliers are.
            let mut at: Vec<u64> = (0..n).map(|_| rng.below(5000) as u64).collect();
            at.sort_unstable();
            at.dedup();
            let o: Vec<(f32, u64, u64)> = at.into_iter().map(|i| (800.0, 0, i)).collect();
            said += usize::from(on_lattice(&o, period, &[(0, 0, 4999)]).is_some());
        }
        eprintln!("null rows said: {said} of {runs}");
        assert!(said <= runs / 1000 + 5, "{said} of {runs} null rows said to lie on the period");
    }

    /// Sequences are named by a hash of (thread, repetition, counter set), so the ids are large
    /// and sparse. A null battery over five such sequences: the chance must count five sequences,
    /// not the largest id plus one (which overflows, and makes any three outliers on a phase look
    /// rare).
    #[test]
    fn hashed_sequence_ids_count_as_the_sequences_they_are() {
        let mut rng = crate::stats::rng::SplitMix64(11);
        let ids: Vec<u64> = (0..5).map(|_| rng.next_u64() | 1 << 63).collect();
        let extents: Vec<(u64, u64, u64)> = ids.iter().map(|&id| (id, 0, 4999)).collect();
        let (mut said, runs) = (0, 2000);
        for _ in 0..runs {
            let n = 4 + rng.below(120);
            let period = [97.0, 331.0, 579.0, 810.0][rng.below(4)];
            let mut o: Vec<(f32, u64, u64)> = Vec::new();
            for &id in &ids {
                let mut at: Vec<u64> = (0..n).map(|_| rng.below(5000) as u64).collect();
                at.sort_unstable();
                at.dedup();
                o.extend(at.into_iter().map(|i| (800.0, id, i)));
            }
            said += usize::from(on_lattice(&o, period, &extents).is_some());
        }
        eprintln!("null rows said over hashed sequences: {said} of {runs}");
        assert!(said <= runs / 1000 + 3, "{said} of {runs} null rows said to lie on the period");
        // A real lattice in one of them is still found.
        let mut o: Vec<(f32, u64, u64)> = (0..8u64).map(|k| (1500.0, ids[2], 300 + 579 * k)).collect();
        o.extend((0..40u64).map(|k| (700.0, ids[k as usize % 5], 17 + 113 * k)));
        let l = on_lattice(&o, 579.0, &extents).expect("eight outliers on one phase of 579");
        assert_eq!((l.calls, l.first), (8, 300));
    }

    /// Sequences of different lengths (generated: 1 to 6 sequences, each with its own first and
    /// last iteration), one lattice planted on every slot of one phase of one of them, beside
    /// outliers at random: the slots said are that sequence's own (counted here one by one), so
    /// a full lattice reads "N of the N slots", never more calls than slots.
    #[test]
    fn slots_are_counted_in_the_lattices_own_sequence() {
        let mut rng = crate::stats::rng::SplitMix64(23);
        for case in 0..500 {
            let k = 1 + rng.below(6);
            let extents: Vec<(u64, u64, u64)> = (0..k)
                .map(|_| {
                    let lo = rng.below(12) as u64;
                    (rng.next_u64(), lo, lo + 1500 + rng.below(6000) as u64)
                })
                .collect();
            let p = 20 + rng.below(600) as u64;
            let (id, lo, hi) = extents[rng.below(k)];
            let residue = rng.below(p as usize) as u64;
            let mut o: Vec<(f32, u64, u64)> = (lo..=hi).filter(|i| i % p == residue).map(|i| (1500.0, id, i)).collect();
            let planted = o.len() as u64;
            for &(sid, slo, shi) in &extents {
                o.extend((0..3).map(|_| (300.0, sid, slo + rng.below((shi - slo + 1) as usize) as u64)));
            }
            let Some(l) = on_lattice(&o, p as f64, &extents) else {
                assert!(planted < 3, "case {case}: {planted} calls on every slot of {p} not found");
                continue;
            };
            let by_hand = (lo..=hi).filter(|i| i % p == l.first % p).count() as u64;
            assert_eq!(l.slots, by_hand, "case {case}: period {p}, extent {lo}..={hi}");
            assert!(l.calls <= l.slots, "case {case}: {} of the {} slots", l.calls, l.slots);
            assert!(l.calls >= planted, "case {case}: {} of {planted} planted calls", l.calls);
        }
    }

    /// A plugin's `buffer_events` is its expected period, as a built-in tracer's geometry is; a
    /// plugin that declares no buffer (0) and a built-in row get none from it.
    #[test]
    fn a_plugins_buffer_events_is_its_expected_period() {
        let t = |spec: &str| crate::report::tests::tracer_row("ring", spec, &[]);
        let run = |n: u64| serde_json::json!({"tracers": [{"name": "ring", "buffer_events": n, "cells": []}]});
        let e = super::expected_period(&run(4096), &t("plugin:./libring.so")).expect("an expected period");
        assert_eq!((e.period, e.how.as_str()), (4096.0, "the plugin's buffer_events = 4096 events per buffer"));
        assert!(super::expected_period(&run(0), &t("plugin:./libring.so")).is_none());
        assert!(super::expected_period(&run(4096), &t("lw")).is_none());
    }
}
