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
//! sequence holds, never where, so the null, which moves positions, stays exact. Otherwise the
//! part is the same first share of every sequence.
use crate::analysis::periodic::search::{Call, Space};
use crate::decisions::periodic::MAX_SEARCH_CALLS;

/// The sequences searched (indices into `all`, ascending), their calls, and the search's space.
pub(crate) fn of(all: &[Vec<Call>], sp: &Space) -> (Vec<usize>, Vec<Vec<Call>>, Space) {
    let per_seq: Vec<usize> = all.iter().map(|c| c.iter().filter(|x| !x.phase).count()).collect();
    let total: usize = per_seq.iter().sum();
    let every: Vec<usize> = (0..all.len()).collect();
    let same = |extents: Vec<(u64, u64)>, rows: u64| Space { extents, rows, base: sp.base, bw: sp.bw, th: sp.th };
    if total <= MAX_SEARCH_CALLS {
        return (every, all.to_vec(), same(sp.extents.clone(), sp.rows));
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
        return (pick, calls, same(extents, rows));
    }
    let frac = MAX_SEARCH_CALLS as f64 / total as f64;
    let extents: Vec<(u64, u64)> = sp.extents.iter().map(|&(f, l)| (f, f + ((l - f) as f64 * frac) as u64)).collect();
    let calls = all.iter().zip(&extents).map(|(c, e)| c.iter().filter(|x| x.it <= e.1).copied().collect()).collect();
    let rows = ((sp.rows as f64 * frac) as u64).max(1);
    (every, calls, same(extents, rows))
}
