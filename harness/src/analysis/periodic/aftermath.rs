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
    let lo = entries.partition_point(|e| e.seq < seq);
    let hi = entries.partition_point(|e| e.seq <= seq);
    let mut count = vec![0u64; o as usize];
    for e in &entries[lo..hi] {
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
