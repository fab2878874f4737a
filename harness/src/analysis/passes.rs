//! The two simple streaming passes of the code-path analysis over events.csv (pass 2, which finds
//! the paths, is `analysis/mod.rs`): fixed-size state whatever the number of rows.
use std::collections::HashMap;

use crate::analysis::code_paths::{CounterStats, TracerAnalysis};
use crate::analysis::running::{Reservoir, Running};
use crate::analysis::stretch::Profile;
use crate::analysis::sub_lattices::SubLattices;
use crate::results::read::ReadError;
use crate::results::read::{Event, Events, Source};
use crate::stats::hist::LogHistogram;

/// Each sequence's first and last iteration.
pub(crate) type Ranges = HashMap<u64, (u64, u64)>;

/// Pass 1: histograms and running moments of latency and each counter, the scatter reservoir,
/// the first iterations of one sequence and each sequence's range, for the calls of one thread
/// count.
pub(crate) fn pass1(
    path: &Source,
    threads: Option<u32>,
    points: usize,
    iterations: usize,
) -> Result<(TracerAnalysis, Event, Ranges), ReadError> {
    let mut ev = Events::from_source(path)?;
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
    let mut ranges = Ranges::new();
    while ev.next_into(&mut row)? {
        let t = *want.get_or_insert(row.threads);
        if row.threads != t {
            continue;
        }
        let r = ranges.entry(row.seq).or_insert((row.iteration, row.iteration));
        r.0 = r.0.min(row.iteration);
        r.1 = r.1.max(row.iteration);
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
    Ok((a, row, ranges))
}

/// The latency histogram of one thread count with each call's speed level taken off
/// (`SlowerLevel::taken_off`): the histogram a levelled search reads its modes from
/// (analysis/mod.rs).
pub(crate) fn levelled_histogram(
    path: &Source,
    threads: u32,
    level: &crate::analysis::phases::SlowerLevel,
    row: &mut Event,
) -> Result<LogHistogram, ReadError> {
    let mut h = LogHistogram::new();
    let mut ev = Events::from_source(path)?;
    while ev.next_into(row)? {
        if row.threads == threads {
            h.add(crate::analysis::phases::levelled(Some(level), row.seq, row.iteration, row.latency));
        }
    }
    Ok(h)
}

/// Pass 3: how many kept calls sit on each lattice, so the report can say "6 of 6 calls on that
/// period were slow" (discarded calls leave slots empty). Only the calls within `within` (each
/// sequence's first and last iteration analysed: the sample of a long run, sample.rs) count.
pub(crate) fn count_on_lattices(
    path: &Source,
    a: &mut TracerAnalysis,
    row: &mut Event,
    within: &Ranges,
) -> Result<(), ReadError> {
    // (only when a lattice was found): how many kept calls sit on each lattice, so the
    // report can say "6 of 6 calls on that period were slow" (discarded calls leave slots empty).
    if a.code_paths.iter().any(|c| !c.periodic.is_empty()) {
        for c in a.code_paths.iter_mut() {
            c.periodic.iter_mut().for_each(|p| {
                p.slots = 0;
                p.taken = 0;
                p.slots_at.clear();
                p.followers.iter_mut().for_each(|f| f.calls = 0);
                p.profile = (p.phases <= 1).then(|| Profile::new(p.period));
            });
        }
        let mut shared: Vec<SubLattices> = a.code_paths.iter().map(|c| SubLattices::new(&c.periodic)).collect();
        let mut ev = Events::from_source(path)?;
        while ev.next_into(row)? {
            if row.threads != a.threads || within.get(&row.seq).is_none_or(|r| row.iteration > r.1) {
                continue;
            }
            for (c, sh) in a.code_paths.iter_mut().zip(shared.iter_mut()) {
                let v = match c.col {
                    None => crate::analysis::phases::levelled(c.levelled.as_ref(), row.seq, row.iteration, row.latency),
                    Some(i) => row.counters[i],
                };
                // A call on any path's lattice is that path's, not the cost of its offset in
                // another path's period.
                let on_any = c.periodic.iter().any(|p| p.on(row.seq, row.iteration));
                for i in 0..c.periodic.len() {
                    let on = c.periodic[i].on(row.seq, row.iteration);
                    if on {
                        sh.add(&c.periodic, i, row.seq, row.iteration, v > c.periodic[i].cut, v);
                    }
                    let p = &mut c.periodic[i];
                    let Some(r) = p.residues.iter().find(|x| x.seq == row.seq).map(|x| x.residue) else { continue };
                    if on {
                        p.slots += 1;
                        if v > p.cut {
                            p.taken += 1;
                        }
                        if p.slots_at.len() < crate::decisions::periodic::SLOTS_KEPT {
                            p.slots_at.push((row.seq, row.iteration, v > p.cut));
                        }
                    }
                    // A follower's calls are counted as the tail counts them (tails.rs).
                    let base = c.dominant.median;
                    for f in p.followers.iter_mut() {
                        let lead = row.iteration >= f.offset
                            && p.residues
                                .iter()
                                .any(|x| x.seq == row.seq && (row.iteration - f.offset) % p.period == x.residue);
                        if lead && v > crate::analysis::tails::follower_cut(base, f) {
                            f.calls += 1;
                        }
                    }
                    // Calls above the path's cut count at the cut: an outlier (a stall) would
                    // make its bin look slow, and a stretch as costly as the path must still
                    // show as one. Where the stretch lies is read with calls counted at most at
                    // the slow threshold (stretch.rs). The paths' own calls are left out.
                    if let Some(prof) = p.profile.as_mut().filter(|_| v.is_finite() && !on_any) {
                        let offset = (row.iteration + p.period - r % p.period) % p.period;
                        prof.add(offset, p.period, v.min(p.cut), v.min(c.threshold.min(p.cut)));
                    }
                }
            }
        }
        for (c, sh) in a.code_paths.iter_mut().zip(shared) {
            for p in c.periodic.iter_mut() {
                p.stretch = p.profile.take().and_then(|prof| prof.stretch(p.period));
            }
            // An exact period holds over the whole run, not only where it was searched (a long
            // run is searched in its first part: analysis/mod.rs): printf's flush, every 431.2 calls,
            // fills a lattice of 2156 for a while and then drifts off it.
            c.periodic.retain(|p| p.slots == 0 || p.taken as f64 >= crate::decisions::periodic::TAKEN * p.slots as f64);
            dedup_same_lattice(&mut c.periodic);
            merge_sequences(&mut c.periodic);
            drop_coincidences(&mut c.periodic);
            drop_within_footprints(&mut c.periodic, c.seq_len);
            sh.settle(&mut c.periodic, c.dominant.median);
        }
    }
    Ok(())
}

/// One lattice (period and phase) is one path: the search can find it in two cost bands (a ring's
/// wrap at +44 ns and +51 ns), and each then counts the same calls on it. The one that counts the
/// most calls on its lattice stays (its cut is the lower, so it holds the other's calls too).
pub(crate) fn dedup_same_lattice(paths: &mut Vec<crate::analysis::code_paths::PeriodicPath>) {
    let mut kept: Vec<crate::analysis::code_paths::PeriodicPath> = Vec::with_capacity(paths.len());
    for p in paths.drain(..) {
        match kept.iter_mut().find(|k| (k.period, k.phase, k.phases) == (p.period, p.phase, p.phases)) {
            Some(k) if p.taken > k.taken => *k = p,
            Some(_) => {}
            None => kept.push(p),
        }
    }
    *paths = kept;
}

/// A lattice every call of which lies on two other lattices claimed (a path every P1 and one every
/// P2 meet every lcm(P1, P2) calls, where a call pays both) is their coincidence, not a path of
/// its own: its calls are already the two paths' calls. The second path's calls include the
/// slower stretch after its own call: a path every 24 meets the stretch of 8 calls after a path
/// every 21 on lattices of 168, where a call pays the one's cost and the other's stretch.
pub(crate) fn drop_coincidences(paths: &mut Vec<crate::analysis::code_paths::PeriodicPath>) {
    let coincident: Vec<bool> = paths
        .iter()
        .enumerate()
        .map(|(i, q)| {
            q.phases <= 1
                && paths.iter().enumerate().any(|(j, a)| {
                    j != i
                        && q.lies_on(a)
                        && paths
                            .iter()
                            .enumerate()
                            .any(|(k, b)| k != i && k != j && b.period != a.period && q.within_footprint_of(b))
                })
        })
        .collect();
    let mut i = 0;
    paths.retain(|_| {
        i += 1;
        !coincident[i - 1]
    });
}

/// Lattices of one period in different sequences, at costs within SAME_COST of each other, are
/// one path (each repetition starts its buffer at its own phase): said once, its calls counted
/// once.
pub(crate) fn merge_sequences(paths: &mut Vec<crate::analysis::code_paths::PeriodicPath>) {
    use crate::decisions::periodic::SAME_COST;
    paths.sort_by(|a, b| b.hits.cmp(&a.hits));
    let mut kept: Vec<crate::analysis::code_paths::PeriodicPath> = Vec::with_capacity(paths.len());
    for p in paths.drain(..) {
        let one = kept.iter_mut().find(|k| {
            k.period == p.period
                && k.phases <= 1
                && p.phases <= 1
                && (k.extra - p.extra).abs() <= SAME_COST * k.extra.abs().max(p.extra.abs())
                && !k.residues.iter().any(|x| p.residues.iter().any(|y| y.seq == x.seq))
        });
        match one {
            Some(k) => {
                k.hits += p.hits;
                k.slots += p.slots;
                k.taken += p.taken;
                k.residues.extend(p.residues);
                k.residues.sort();
                k.slots_at.extend(p.slots_at);
            }
            None => kept.push(p),
        }
    }
    kept.sort_by_key(|p| p.period);
    *paths = kept;
}

/// A lattice that crosses a costlier path's footprint (its own call, its followers and the
/// slower stretch after it, in the same sequence) is that path's calls met again, unless its own
/// calls outside the footprint hold it: a lattice of a nearby period slides through a long
/// stretch for many periods, and a lattice of the same period sits inside it. It is not a path
/// of its own where the share TAKEN of its points lie inside, or where fewer than TAKEN of its
/// kept calls outside are slow (the slots outside were slow only by a speed phase or the noise
/// that let the search pick the lattice). A real path that crosses the stretch stays slow outside it.
pub(crate) fn drop_within_footprints(paths: &mut Vec<crate::analysis::code_paths::PeriodicPath>, seq_len: u64) {
    use crate::analysis::code_paths::PeriodicPath;
    use crate::decisions::periodic::TAKEN;
    let reach = |a: &PeriodicPath| {
        let f = a.followers.iter().map(|f| f.offset).max().unwrap_or(0);
        a.stretch.as_ref().map_or(0, |s| s.calls).max(f)
    };
    let inside = |q: &PeriodicPath, a: &PeriodicPath| {
        if a.phases > 1 || q.phases > 1 || a.extra <= q.extra || q.period < 2 {
            return false;
        }
        let r = reach(a);
        let within = |seq: u64, it: u64| {
            a.residues
                .iter()
                .find(|y| y.seq == seq)
                .is_some_and(|y| (it + a.period - y.residue % a.period) % a.period <= r)
        };
        let (mut on, mut all) = (0u64, 0u64);
        for x in &q.residues {
            if !a.residues.iter().any(|y| y.seq == x.seq) {
                continue;
            }
            let mut it = x.residue;
            while it < seq_len.max(x.residue + 1) {
                all += 1;
                on += within(x.seq, it) as u64;
                it += q.period;
            }
        }
        if all == 0 || on == 0 {
            return false;
        }
        if on as f64 >= TAKEN * all as f64 {
            return true;
        }
        // Every kept call of the lattice is known (none past SLOTS_KEPT): judge those outside.
        if q.slots_at.len() as u64 != q.slots {
            return false;
        }
        let outside: Vec<bool> = q.slots_at.iter().filter(|s| !within(s.0, s.1)).map(|s| s.2).collect();
        let slow = outside.iter().filter(|&&t| t).count();
        (slow as f64) < TAKEN * outside.len() as f64
    };
    let drop: Vec<bool> =
        paths.iter().enumerate().map(|(i, q)| paths.iter().enumerate().any(|(j, a)| j != i && inside(q, a))).collect();
    let mut i = 0;
    paths.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
}

/// The slow calls that sat on a lattice pass 3 refused (or folded away), and on no path that
/// stays, are outliers on no path again: pass 2 left them out of the outliers for that lattice's
/// sake, and the tails, which read the paths that stay, give them to the outliers. `searched`:
/// the paths before pass 3; `slow`: the slow threshold.
pub(super) fn outliers_off_dropped_lattices(
    cp: &mut crate::analysis::code_paths::CodePaths,
    searched: &[crate::analysis::code_paths::PeriodicPath],
    scanned: &crate::analysis::tails::Scanned,
    slow: f64,
) {
    let base = cp.dominant.median as f32;
    let mut back = Vec::new();
    for (e, &explained) in scanned.entries.iter().zip(scanned.explained) {
        let phase = e.mode.is_some_and(|k| cp.phases.iter().any(|ph| ph.mode == scanned.modes[k]));
        if e.v as f64 > slow
            && !explained
            && !phase
            && searched.iter().any(|p| p.on(e.seq, e.it))
            && !cp.periodic.iter().any(|p| p.on(e.seq, e.it) || p.in_stretch(e.seq, e.it))
            && !cp.in_slower_level(e.seq, e.it, e.v as f64)
        {
            back.push((e.v - base, e.seq, e.it));
        }
    }
    cp.outliers += back.len() as u64;
    cp.outlier_calls.extend(back);
    cp.outlier_calls.sort_by(|a, b| a.0.total_cmp(&b.0));
}
