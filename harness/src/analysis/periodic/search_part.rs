//! The part of a run the periodic search and its null read. The null reruns the search a
//! thousand times, at a cost that grows with the slow calls: a long noisy run is searched in a
//! part only (the same part for the data and for the null, so the test stays exact), holding
//! MAX_SEARCH_CALLS of them. Pass 3 still counts the claimed paths over the whole run.
//!
//! Where two or more whole sequences fit, the part is those sequences, whole: a path's phase is
//! its sequence's own, and a sequence cut short holds too few of a long period's calls (LTTng's
//! switch every 810 calls in repetitions of 5000). The sequences with the fewest slow calls are
//! taken first: a repetition that ran in a slower speed phase has most of its calls above the
//! threshold, and it would crowd the others out. The choice reads only how many slow calls each
//! sequence holds, never where, so the null, which moves positions, stays exact.
//!
//! Otherwise (one long run, or every repetition noisy) the run is searched in two parts, each
//! with its own search: the first share of every sequence at every cost, where a cheap path
//! shows, and the rest of every sequence above a cost floor, where a rare costly path shows over
//! the whole run (LTTng's switch every 6545 calls at 64 KiB: 15 calls in 100 000, none of them in
//! the first 5 %). Half the bound goes to each. Two searches, not one: a cheap path's calls stand
//! below the floor, and one search would count its slots in the rest as misses. The floor reads
//! only the costs in the rest, the two parts hold different calls, and the null moves calls
//! within each part: given which calls each part holds, the test stays exact.
use crate::analysis::periodic::search::{Call, Space};
use crate::decisions::periodic::MAX_SEARCH_CALLS;

/// One part searched: the sequences of the run it reads (indices into the run's, ascending),
/// its calls in each, and the search's space over them.
pub(crate) struct Part {
    pub pick: Vec<usize>,
    pub calls: Vec<Vec<Call>>,
    pub space: Space,
}

/// The parts searched: one, or two where no two whole sequences fit the bound.
pub(crate) fn of(all: &[Vec<Call>], sp: &Space) -> Vec<Part> {
    let per_seq: Vec<usize> = all.iter().map(|c| c.iter().filter(|x| !x.phase).count()).collect();
    let total: usize = per_seq.iter().sum();
    let every: Vec<usize> = (0..all.len()).collect();
    if total <= MAX_SEARCH_CALLS {
        return vec![Part { pick: every, calls: all.to_vec(), space: sp.over(sp.extents.clone(), sp.rows) }];
    }
    let mut quietest = every.clone();
    quietest.sort_by_key(|&k| (per_seq[k], k));
    let mut acc = 0;
    let mut pick: Vec<usize> = quietest
        .into_iter()
        .take_while(|&k| {
            acc += per_seq[k];
            acc <= MAX_SEARCH_CALLS
        })
        .collect();
    pick.sort_unstable();
    if pick.len() >= 2 {
        let calls = pick.iter().map(|&k| all[k].clone()).collect();
        let len = |e: &[(u64, u64)]| e.iter().map(|&(f, l)| l - f + 1).sum::<u64>() as f64;
        let extents: Vec<(u64, u64)> = pick.iter().map(|&k| sp.extents[k]).collect();
        let rows = ((sp.rows as f64 * len(&extents) / len(&sp.extents)) as u64).max(1);
        return vec![Part { pick, calls, space: sp.over(extents, rows) }];
    }
    two_parts(all, sp, total)
}

/// Each sequence's first share at every cost, then its rest above the floor that leaves half
/// the bound there.
fn two_parts(all: &[Vec<Call>], sp: &Space, total: usize) -> Vec<Part> {
    let half = MAX_SEARCH_CALLS / 2;
    let frac = half as f64 / total as f64;
    let cuts: Vec<u64> = sp.extents.iter().map(|&(f, l)| f + ((l - f) as f64 * frac) as u64).collect();
    let mut rest: Vec<f32> = all
        .iter()
        .zip(&cuts)
        .flat_map(|(c, &cut)| c.iter().filter(move |x| x.it > cut && !x.phase).map(|x| x.v))
        .collect();
    let floor = if rest.len() > half { floor_of(&mut rest, half, sp.bw) } else { f32::NEG_INFINITY };
    let first = Part {
        pick: (0..all.len()).collect(),
        calls: all.iter().zip(&cuts).map(|(c, &cut)| c.iter().filter(|x| x.it <= cut).copied().collect()).collect(),
        space: sp.over(
            sp.extents.iter().zip(&cuts).map(|(&(f, _), &cut)| (f, cut)).collect(),
            ((sp.rows as f64 * frac) as u64).max(1),
        ),
    };
    let with_rest: Vec<usize> = (0..all.len()).filter(|&k| cuts[k] < sp.extents[k].1).collect();
    let rest = Part {
        calls: with_rest
            .iter()
            .map(|&k| all[k].iter().filter(|x| x.it > cuts[k] && x.v > floor).copied().collect())
            .collect(),
        space: sp.over(
            with_rest.iter().map(|&k| (cuts[k] + 1, sp.extents[k].1)).collect(),
            ((sp.rows as f64 * (1.0 - frac)) as u64).max(1),
        ),
        pick: with_rest,
    };
    if rest.pick.is_empty() {
        return vec![first];
    }
    vec![first, rest]
}

/// The floor that leaves at most `keep` of the costs above it: in the lowest gap between costs
/// wider than two kernel widths that does, so that no cost mode is cut in two (a path whose
/// calls straddle the floor would show on a part of its slots only, and not as a path), and
/// where the costs run on without such a gap, just below the `keep` costliest.
fn floor_of(costs: &mut [f32], keep: usize, (rel, abs): (f64, f64)) -> f32 {
    costs.sort_by(|a, b| b.total_cmp(a));
    let width = |v: f32| (2.0 * rel * v as f64).max(2.0 * abs);
    (1..=keep).rev().find(|&i| (costs[i - 1] - costs[i]) as f64 > width(costs[i - 1])).map_or(costs[keep], |i| costs[i])
}
