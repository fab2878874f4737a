//! Calls counted once. A path every kP events at one of the phases of a path every P (LTTng's
//! sub-buffer switch on a page crossing; a cost that cycles over k values, each value every kP)
//! lies on the cheaper path's lattice, and pass 3 met each of its calls on both lattices. Each
//! call is the costlier path's alone: the path every P counts its other slots and calls, and its
//! cost is the median of those. This is settled after pass 3 has dropped the paths that do not
//! hold (a coincidence of two paths, a lattice inside a costlier footprint), so that a call is
//! taken from the path every P only for a path every kP that is said.
use crate::analysis::code_paths::{PeriodicPath, Residue};
use crate::stats::percentile_sorted;

/// One path as pass 3 met it, before any was merged or dropped: its period and residues.
struct Key {
    period: u64,
    residues: Vec<Residue>,
}

impl Key {
    /// Whether `p` (merged from this path and perhaps others of its period) holds this path.
    fn within(&self, p: &PeriodicPath) -> bool {
        p.phases <= 1 && p.period == self.period && self.residues.iter().all(|r| p.residues.contains(r))
    }
}

/// Per path: its costlier paths on its own lattice, the calls and slots it shares with each, and
/// the costs of its taken calls (with the costlier path each lies on, if any).
pub(crate) struct SubLattices {
    keys: Vec<Key>,
    subs: Vec<Vec<usize>>,
    shared: Vec<Vec<(u64, u64)>>,
    costs: Vec<Vec<(f64, Option<usize>)>>,
}

impl SubLattices {
    /// The paths `paths` as pass 3 starts to count them.
    pub fn new(paths: &[PeriodicPath]) -> Self {
        let subs: Vec<Vec<usize>> = paths
            .iter()
            .map(|p| (0..paths.len()).filter(|&j| paths[j].lies_on(p) && paths[j].extra > p.extra).collect())
            .collect();
        SubLattices {
            keys: paths.iter().map(|p| Key { period: p.period, residues: p.residues.clone() }).collect(),
            shared: subs.iter().map(|s| vec![(0, 0); s.len()]).collect(),
            costs: vec![Vec::new(); paths.len()],
            subs,
        }
    }

    /// Pass 3 met a call of path `i`'s lattice (`taken`: above its cut) at `v`.
    pub fn add(&mut self, paths: &[PeriodicPath], i: usize, seq: u64, it: u64, taken: bool, v: f64) {
        if self.subs[i].is_empty() {
            return;
        }
        let k = self.subs[i].iter().position(|&j| paths[j].on(seq, it));
        if let Some(k) = k {
            self.shared[i][k].0 += 1;
            self.shared[i][k].1 += taken as u64;
        }
        if taken {
            self.costs[i].push((v, k));
        }
    }

    /// After pass 3's drops: each path said gives up the slots and calls it shares with a
    /// costlier path said on its lattice, and its cost is the median of the calls it keeps
    /// (`base`: the fast path's median).
    pub fn settle(self, paths: &mut [PeriodicPath], base: f64) {
        // The path said that holds each path pass 3 met (None: dropped).
        let said: Vec<Option<usize>> = self.keys.iter().map(|k| paths.iter().position(|p| k.within(p))).collect();
        let periods: Vec<u64> = paths.iter().map(|p| p.period).collect();
        let sub_said: Vec<Vec<bool>> =
            self.subs.iter().map(|s| s.iter().map(|&j| said[j].is_some()).collect()).collect();
        for p in paths.iter_mut() {
            let mine: Vec<usize> = (0..self.keys.len()).filter(|&i| self.keys[i].within(p)).collect();
            if !mine.iter().any(|&i| sub_said[i].iter().any(|&g| g)) {
                continue;
            }
            let mut kept = Vec::new();
            let mut holders = Vec::new();
            for &i in &mine {
                for (k, &g) in sub_said[i].iter().enumerate() {
                    if g {
                        p.slots = p.slots.saturating_sub(self.shared[i][k].0);
                        p.taken = p.taken.saturating_sub(self.shared[i][k].1);
                        holders.extend(said[self.subs[i][k]]);
                    }
                }
                kept.extend(self.costs[i].iter().filter(|c| c.1.is_none_or(|k| !sub_said[i][k])).map(|c| c.0));
            }
            holders.sort_unstable();
            holders.dedup();
            p.counted_in = holders.iter().map(|&h| periods[h]).collect();
            p.counted_in.sort_unstable();
            if !kept.is_empty() {
                kept.sort_by(f64::total_cmp);
                p.extra = percentile_sorted(&kept, 50.0) - base;
            }
        }
    }
}
