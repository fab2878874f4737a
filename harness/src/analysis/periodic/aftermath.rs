//! A periodic path's aftermath: the calls it drags after it on its own period (the call after
//! LTTng's sub-buffer switch, survey Fig. 3; the slower stretch of a cold buffer). Each such call
//! fills a lattice of the path's period a few calls after its phase, and the search finds them as
//! exact periods of their own. They are the path's calls, said with it.
//!
//! A lattice is judged against its neighbours on the period: it trails a path when it lies a few
//! calls after it, cheaper, in every sequence (LTTng's follower); or when every call between the
//! two, on every period, is as slow as the lattice itself (a slower stretch that starts with the
//! path, which the folded profile of pass 3 may not resolve: stretch calls above the path's cut
//! are left out of it). A path of its own a few calls after another stands above its neighbours.
use std::collections::HashMap;

use crate::analysis::code_paths::{Follower, PeriodicPath, SlowCall};
use crate::decisions::periodic::{FOLLOWER_MAX_OFFSET, TAKEN};

/// The slow calls of sequence `seq` (`entries` sorted by sequence, then iteration).
fn of_seq(entries: &[SlowCall], seq: u64) -> &[SlowCall] {
    &entries[entries.partition_point(|e| e.seq < seq)..entries.partition_point(|e| e.seq <= seq)]
}

/// Whether every call between offsets 1 and `o - 1` after residue `r` of period `p` in sequence
/// `seq` stands above `cut` on at least TAKEN of its slots (vacuous for `o == 1`).
fn slow_between(
    entries: &[SlowCall],
    ranges: &HashMap<u64, (u64, u64)>,
    seq: u64,
    p: u64,
    r: u64,
    o: u64,
    cut: f64,
) -> bool {
    if o <= 1 {
        return true;
    }
    let Some(&(first, last)) = ranges.get(&seq) else { return false };
    let mut count = vec![0u64; o as usize];
    for e in of_seq(entries, seq) {
        let k = (e.it + p - r % p) % p;
        if k >= 1 && k < o && e.v as f64 > cut {
            count[k as usize] += 1;
        }
    }
    (1..o).all(|k| {
        let res = (r + k) % p;
        let on = first + (res + p - first % p) % p;
        let slots = if on > last { 0 } else { (last - on) / p + 1 };
        slots > 0 && count[k as usize] as f64 >= TAKEN * slots as f64
    })
}

/// Whether lattice `b` is lattice `a`'s aftermath (see the module's comment).
fn trails(a: &PeriodicPath, b: &PeriodicPath, entries: &[SlowCall], ranges: &HashMap<u64, (u64, u64)>) -> bool {
    let p = a.period;
    if p != b.period || a.phases > 1 || b.phases > 1 || a.residues.len() != b.residues.len() || a.residues.is_empty() {
        return false;
    }
    a.residues.iter().zip(&b.residues).all(|(x, y)| {
        let o = (y.residue + p - x.residue % p) % p;
        x.seq == y.seq
            && o >= 1
            && ((o <= FOLLOWER_MAX_OFFSET && a.extra > b.extra)
                || (2 * o <= p && slow_between(entries, ranges, x.seq, p, x.residue, o, b.cut)))
    })
}

/// The mean cost of the slow calls at residue `r` of period `p` in sequence `seq` (0: none).
fn cost_at(entries: &[SlowCall], seq: u64, p: u64, r: u64) -> f64 {
    let (sum, n) =
        of_seq(entries, seq).iter().filter(|e| e.it % p == r).fold((0.0, 0u64), |a, e| (a.0 + e.v as f64, a.1 + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// Whether the call at residue `q` of period `p` in sequence `seq` stands above `cut` on at
/// least TAKEN of its slots.
fn slow_at(entries: &[SlowCall], ranges: &HashMap<u64, (u64, u64)>, seq: u64, p: u64, q: u64, cut: f64) -> bool {
    let Some(&(first, last)) = ranges.get(&seq) else { return false };
    let on = first + (q + p - first % p) % p;
    let slots = if on > last { 0 } else { (last - on) / p + 1 };
    let n = of_seq(entries, seq).iter().filter(|e| e.it % p == q % p && e.v as f64 > cut).count();
    slots > 0 && n as f64 >= TAKEN * slots as f64
}

/// Whether residue `q` of period `p` in sequence `seq` lies on another path's lattice whose
/// period divides `p` (every 9 calls, where the path comes every 63): that call is the other
/// path's, not the start of this one's stretch.
fn on_finer(periodic: &[PeriodicPath], p: u64, seq: u64, q: u64) -> bool {
    periodic.iter().any(|o| {
        o.period < p
            && p % o.period == 0
            && o.phases <= 1
            && o.residues.iter().any(|r| r.seq == seq && q % o.period == r.residue % o.period)
    })
}

/// A path is said at the first call of the slow run it starts: the search keeps the costliest
/// lattice of a period, and where the stretch after a path costs as much as the path or more,
/// that is a stretch call. And lattices of one period over the same sequences can split a path
/// and its stretch between them differently in each sequence (the search picks each lattice's
/// residue per sequence, so a stretch call's residue in one sequence stands beside the path's
/// own in another), so that no lattice trails another at one offset in every sequence.
///
/// Per sequence, the head of such a group is the first of its residues after the widest
/// circular gap, moved back over every call just before it that is slow (TAKEN of its slots
/// above the group's lowest cut) and not on a path of a period that divides this one. Where every group's residue lies within half a period after
/// the head and every call between is slow, the group is one path and its stretch:
/// - lattices each at one offset from the head in every sequence, one of them at the head, are
///   left to [`fold`] (LTTng's follower);
/// - otherwise the lattice most often at the head is moved there (its extra cost moved by the
///   change in its calls' mean cost), and the others are dropped where their offsets differ
///   between sequences (pass 3's folded profile says the stretch after the path).
pub(crate) fn at_heads(
    mut periodic: Vec<PeriodicPath>,
    entries: &[SlowCall],
    ranges: &HashMap<u64, (u64, u64)>,
) -> Vec<PeriodicPath> {
    let n = periodic.len();
    let seqs_of = |p: &PeriodicPath| p.residues.iter().map(|r| r.seq).collect::<Vec<u64>>();
    let mut gone = vec![false; n];
    let mut done = vec![false; n];
    for i in 0..n {
        if done[i] || periodic[i].phases > 1 || periodic[i].residues.is_empty() {
            continue;
        }
        let group: Vec<usize> = (i..n)
            .filter(|&j| {
                periodic[j].period == periodic[i].period
                    && periodic[j].phases <= 1
                    && seqs_of(&periodic[j]) == seqs_of(&periodic[i])
            })
            .collect();
        group.iter().for_each(|&j| done[j] = true);
        let p = periodic[i].period;
        let seqs = seqs_of(&periodic[i]);
        let cut = group.iter().map(|&j| periodic[j].cut).fold(f64::INFINITY, f64::min);
        let mut heads = Vec::new();
        for (s, &seq) in seqs.iter().enumerate() {
            let mut r: Vec<u64> = group.iter().map(|&j| periodic[j].residues[s].residue).collect();
            r.sort_unstable();
            r.dedup();
            let gap = |k: usize| (r[k] + p - r[(k + r.len() - 1) % r.len()]) % p;
            let first = (0..r.len()).max_by_key(|&k| gap(k)).unwrap_or(0);
            let mut span = if r.len() == 1 { 0 } else { p - gap(first) };
            let mut head = r[first];
            // A run of slow calls that reaches half a period back (a slower phase of the
            // machine, where every call is slow) has no head within reach: the check below then
            // leaves the group where the search found it.
            while 2 * span < p
                && slow_at(entries, ranges, seq, p, (head + p - 1) % p, cut)
                && !on_finer(&periodic, p, seq, (head + p - 1) % p)
            {
                head = (head + p - 1) % p;
                span += 1;
            }
            if 2 * span >= p || !slow_between(entries, ranges, seq, p, head, span + 1, cut) {
                heads.clear();
                break;
            }
            heads.push(head);
        }
        if heads.is_empty() {
            continue;
        }
        let offset = |j: usize, s: usize| (periodic[j].residues[s].residue + p - heads[s]) % p;
        let steady = |j: usize| (0..seqs.len()).all(|s| offset(j, s) == offset(j, 0));
        if group.iter().all(|&j| steady(j)) && group.iter().any(|&j| offset(j, 0) == 0) {
            continue;
        }
        let mean_cost = |res: &dyn Fn(usize) -> u64| {
            (0..seqs.len()).map(|s| cost_at(entries, seqs[s], p, res(s))).sum::<f64>() / seqs.len() as f64
        };
        let keep = *group
            .iter()
            .max_by_key(|&&j| ((0..seqs.len()).filter(|&s| offset(j, s) == 0).count(), std::cmp::Reverse(offset(j, 0))))
            .unwrap_or(&i);
        let split = !group.iter().all(|&j| steady(j));
        let before = mean_cost(&|s| periodic[keep].residues[s].residue);
        let after = mean_cost(&|s| heads[s]);
        let l = &mut periodic[keep];
        l.extra += after - before;
        l.residues.iter_mut().zip(&heads).for_each(|(r, &h)| r.residue = h);
        if let Some(&(first, _)) = ranges.get(&l.residues[0].seq) {
            l.phase = first + (l.residues[0].residue + p - first % p) % p;
        }
        group.iter().filter(|&&j| j != keep && split).for_each(|&j| gone[j] = true);
    }
    let mut k = 0;
    periodic.retain(|_| {
        k += 1;
        !gone[k - 1]
    });
    periodic
}

/// Folds each lattice that trails another into the path it trails, as a follower, the path being
/// one that trails none (the start of the stretch). `entries`: the calls above the fast path,
/// sorted by sequence and iteration; `ranges`: each sequence's first and last iteration.
pub(crate) fn fold(
    mut periodic: Vec<PeriodicPath>,
    entries: &[SlowCall],
    ranges: &HashMap<u64, (u64, u64)>,
) -> Vec<PeriodicPath> {
    let n = periodic.len();
    let mut follows: Vec<Vec<bool>> = (0..n)
        .map(|j| (0..n).map(|k| j != k && trails(&periodic[j], &periodic[k], entries, ranges)).collect())
        .collect();
    let mut gone = vec![false; n];
    loop {
        let root = |j: usize, gone: &[bool], f: &[Vec<bool>]| !gone[j] && !(0..n).any(|i| !gone[i] && f[i][j]);
        let pair = (0..n)
            .flat_map(|j| (0..n).map(move |k| (j, k)))
            .find(|&(j, k)| !gone[k] && follows[j][k] && root(j, &gone, &follows));
        let Some((j, k)) = pair else { break };
        gone[k] = true;
        let p = periodic[j].period;
        let off = (periodic[k].residues[0].residue + p - periodic[j].residues[0].residue % p) % p;
        let f = std::mem::take(&mut periodic[k].followers);
        let (extra, hits) = (periodic[k].extra, periodic[k].hits);
        let lead = &mut periodic[j];
        lead.followers.push(Follower { offset: off, extra, calls: hits });
        lead.followers.extend(f.into_iter().map(|g| Follower { offset: (off + g.offset) % p, ..g }));
        lead.followers.sort_by_key(|g| g.offset);
        // What trailed the folded lattice trails the path it joined.
        for l in 0..n {
            if follows[k][l] {
                follows[j][l] = true;
            }
        }
    }
    let mut i = 0;
    periodic.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
    periodic.sort_by_key(|p| p.period);
    periodic
}

#[cfg(test)]
#[path = "aftermath_tests.rs"]
mod tests;
