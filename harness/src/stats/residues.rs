//! Counting calls by residue for the periodic-path search (period.rs): tables reused across
//! candidate periods, a remainder by multiplication, and the slots of a lattice in a sequence.

/// Scratch tables of the search, reused across candidates and calls (the permutation null reruns
/// the search a thousand times: allocating and sorting were most of its time).
#[derive(Default)]
pub(crate) struct Scratch {
    /// Count per residue (periods up to 2^16) or per difference (up to 2^22).
    table: Vec<u32>,
    /// Residues of the calls, or the values counted, in order.
    keys: Vec<u64>,
}

/// `a % d` for `a` and `d` below 2^32, given `m = u64::MAX / d + 1` (Lemire, Kaser & Kurz 2019,
/// "Faster remainder by direct computation": exact for every such `a` and `d`).
pub(crate) fn fast_rem(a: u64, d: u64, m: u64) -> u64 {
    ((m.wrapping_mul(a) as u128 * d as u128) >> 64) as u64
}

/// Tables are used up to this size; above, values are counted by sorting.
const TABLE_MAX: u64 = 1 << 22;

impl Scratch {
    /// The most frequent residue of calls modulo a period (the smallest among equals), one
    /// multiply per call where iterations and period fit in 32 bits (Lemire, Kaser & Kurz 2019:
    /// the remainder from a precomputed reciprocal), a division otherwise.
    pub(crate) fn most_frequent(&mut self, calls: &[(u64, f32)], p: u64) -> Option<(u64, usize)> {
        self.keys.clear();
        if p > TABLE_MAX {
            self.keys.extend(calls.iter().map(|c| c.0 % p));
            return self.count_best(p, 1).first().copied();
        }
        if self.table.len() < p as usize {
            self.table.resize(p as usize, 0);
        }
        let table = &mut self.table[..p as usize];
        let m = (u64::MAX / p).wrapping_add(1);
        // One pass: a residue that reaches the top count first, or as a smaller residue, leads.
        let mut best: Option<(u64, usize)> = None;
        for c in calls {
            let r = if (c.0 | p) >> 32 == 0 { fast_rem(c.0, p, m) } else { c.0 % p };
            self.keys.push(r);
            let n = &mut table[r as usize];
            *n += 1;
            let n = *n as usize;
            if best.is_none_or(|b| n > b.1 || (n == b.1 && r < b.0)) {
                best = Some((r, n));
            }
        }
        self.keys.iter().for_each(|&r| table[r as usize] = 0);
        best
    }

    /// The `keep` most frequent of `keys` below `limit` (count first, then the smaller value),
    /// as (value, count), each at least `min_count` times. Clears `keys`' counts after.
    pub(crate) fn count_best_of(
        &mut self,
        limit: u64,
        keep: usize,
        min_count: usize,
        min_value: u64,
    ) -> Vec<(u64, usize)> {
        let mut v: Vec<(u64, usize)> = Vec::new();
        if limit <= TABLE_MAX {
            if self.table.len() < limit as usize {
                self.table.resize(limit as usize, 0);
            }
            for &k in &self.keys {
                self.table[k as usize] += 1;
            }
            for &k in &self.keys {
                let n = std::mem::take(&mut self.table[k as usize]) as usize;
                if n >= min_count && k >= min_value {
                    v.push((k, n));
                }
            }
        } else {
            self.keys.sort_unstable();
            let mut i = 0;
            while i < self.keys.len() {
                let j = i + self.keys[i..].partition_point(|&x| x == self.keys[i]);
                if j - i >= min_count && self.keys[i] >= min_value {
                    v.push((self.keys[i], j - i));
                }
                i = j;
            }
        }
        // Most frequent first, the smaller value among equals (a total order: no stable sort
        // needed), the first `keep` selected before they are sorted.
        let order = |a: &(u64, usize), b: &(u64, usize)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        if v.len() > keep && keep > 0 {
            v.select_nth_unstable_by(keep - 1, order);
            v.truncate(keep);
        }
        v.sort_unstable_by(order);
        v.truncate(keep);
        v
    }

    pub(crate) fn count_best(&mut self, limit: u64, keep: usize) -> Vec<(u64, usize)> {
        self.count_best_of(limit, keep, 1, 0)
    }

    /// The `keep` most frequent differences in `m` seen at least three times (periods of 2 or
    /// more), most frequent first, the smaller among equals.
    pub(crate) fn top(&mut self, m: &[u64], keep: usize) -> Vec<(u64, usize)> {
        self.keys.clear();
        self.keys.extend_from_slice(m);
        let limit = m.iter().max().map_or(0, |&x| x + 1);
        self.count_best_of(limit, keep, 3, 2)
    }
}

/// The divisors of `p` from 2 to `p / 2`, smallest first: the finer periods a lattice of
/// period `p` can lie on.
pub(crate) fn divisors(p: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (2..p).take_while(|d| d * d <= p).filter(|d| p % d == 0).flat_map(|d| [d, p / d]).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Slots of the lattice `r mod p` inside `first..=last`.
pub(crate) fn lattice_slots(first: u64, last: u64, p: u64, r: u64) -> u64 {
    let on = first + (r + p - first % p) % p;
    if on > last {
        0
    } else {
        (last - on) / p + 1
    }
}

/// One residue's calls in a sequence, for the choice between equally filled residues.
struct Filled {
    residue: u64,
    calls: usize,
    /// Calls per slot of the residue's lattice.
    fill: f64,
    /// The mean cost of its calls.
    mean: f64,
    /// The residue lies on a finer lattice, of a period `d` that divides `p`, which the
    /// sequence's calls fill as well, at the same cost (within `FINER_COST`): its calls are that
    /// lattice's (every 9 calls, read on one residue of 81), not a path of period `p`. Two
    /// paths of period `p` that meet on a divisor's lattice cost different amounts.
    finer: bool,
}

/// Calls on a finer lattice are one path's where their mean cost is within this factor of the
/// residue's own (costs in ns, the fast path's included).
pub const FINER_COST: f64 = 1.25;

/// The residues of `p` that the calls of the sequence `first..=last` fall on, each with its fill,
/// mean cost and whether a finer lattice explains it.
fn residue_table(calls: &[(u64, f32)], p: u64, (first, last): (u64, u64)) -> Vec<Filled> {
    let mut by: Vec<(u64, f32)> = calls.iter().map(|c| (c.0 % p, c.1)).collect();
    by.sort_unstable_by_key(|c| c.0);
    let divisors = divisors(p);
    // Calls and their summed cost per residue of each divisor.
    let per_divisor: Vec<std::collections::HashMap<u64, (usize, f64)>> = divisors
        .iter()
        .map(|&d| {
            let mut m = std::collections::HashMap::new();
            by.iter().for_each(|c| {
                let e: &mut (usize, f64) = m.entry(c.0 % d).or_default();
                e.0 += 1;
                e.1 += c.1 as f64;
            });
            m
        })
        .collect();
    let fill = |q: u64, r: u64, n: usize| n as f64 / lattice_slots(first, last, q, r).max(1) as f64;
    by.chunk_by(|a, b| a.0 == b.0)
        .map(|g| {
            let (r, n) = (g[0].0, g.len());
            let f = fill(p, r, n);
            let sum = g.iter().map(|c| c.1 as f64).sum::<f64>();
            let mean = sum / n as f64;
            let finer = divisors.iter().zip(&per_divisor).any(|(&d, m)| {
                let (all, all_sum) = m[&(r % d)];
                let others = (all_sum - sum) / (all - n).max(1) as f64;
                fill(d, r % d, all) >= f && all > n && others <= FINER_COST * mean && mean <= FINER_COST * others
            });
            Filled { residue: r, calls: n, fill: f, mean, finer }
        })
        .collect()
}

/// The residue modulo `p` that the calls (iteration, cost) of the sequence `first..=last` fill
/// best, with its count. Fill is calls per slot: residues differ by one slot at the sequence's
/// ends, so the most frequent residue is not always the best filled. Among equally filled
/// residues, one that no finer lattice explains leads (`Filled::finer`: another path whose
/// period divides this one, every 9 calls inside every 81, fills a residue as well as the
/// path's own), then the one whose calls cost the most (a path with a slower stretch after it
/// fills the stretch's residues as well as its own, and the path is where the cost is), then the
/// smallest. A plain count: it is read for a search's best lattice only, not for every
/// candidate.
pub(crate) fn best_filled(calls: &[(u64, f32)], p: u64, first: u64, last: u64) -> Option<(u64, usize)> {
    let key = |f: &Filled| (f.fill, !f.finer, f.mean, std::cmp::Reverse(f.residue));
    residue_table(calls, p, (first, last))
        .into_iter()
        .max_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal))
        .map(|f| (f.residue, f.calls))
}

/// The residue modulo `p` that stands for `current` in the sequence `first..=last`, where a
/// finer lattice explains `current`: the best filled and then costliest of the residues that
/// no finer lattice explains and that the calls fill at least `full` times as well as
/// `current` (`current` itself where it is not explained or no residue qualifies). A lattice
/// found among the calls of one cost band can take a neighbour's residue in a sequence: a
/// jittered path's calls fall partly below the band while a dearer path's calls on a divisor of
/// the period fill another residue (every 9 calls inside every 81, its cost drifting up past the
/// other's). Over all the calls above the path's cut the finer lattice tells them apart; the
/// path's own residue may be a little less filled than the finer lattice's, where some of its
/// calls fall below the cut. Where the lattice is a multiple of a path's own period, every
/// residue on that path is explained, and none moves.
pub(crate) fn unexplained_stand_in(calls: &[(u64, f32)], p: u64, extent: (u64, u64), current: u64, full: f64) -> u64 {
    let table = residue_table(calls, p, extent);
    let Some(own) = table.iter().find(|f| f.residue == current) else { return current };
    if !own.finer {
        return current;
    }
    let key = |f: &Filled| (f.fill, f.mean, std::cmp::Reverse(f.residue));
    table
        .iter()
        .filter(|f| f.fill >= full * own.fill && !f.finer)
        .max_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal))
        .map_or(current, |f| f.residue)
}

/// Each residue modulo `p` whose calls rise above their neighbourhood in the sequence
/// `first..=last`: the residue, how many of its calls rise and its slots. A call rises where it stands at least
/// `rise` above the median of the two calls on either side of it (a call missing from `calls`,
/// one the scan did not keep, stands at `floor`). A level held over a stretch of calls (a slower
/// speed of the machine, a co-tenant) lifts every call of the stretch above any fixed cut, so
/// that every residue fills; against its own neighbours only a path's call rises.
pub(crate) fn rising_fill(
    calls: &[(u64, f32)],
    p: u64,
    (first, last): (u64, u64),
    floor: f64,
    rise: f64,
) -> Vec<(u64, usize, u64)> {
    let mut sorted = calls.to_vec();
    sorted.sort_unstable_by_key(|c| c.0);
    let at = |it: u64| sorted.binary_search_by_key(&it, |c| c.0).map_or(floor, |i| sorted[i].1 as f64);
    let mut counts = std::collections::HashMap::<u64, usize>::new();
    let mut near = Vec::with_capacity(4);
    for &(it, v) in &sorted {
        if (v as f64) < floor + rise {
            continue;
        }
        near.clear();
        near.extend(
            [it.checked_sub(2), it.checked_sub(1), it.checked_add(1), it.checked_add(2)]
                .into_iter()
                .flatten()
                .filter(|n| (first..=last).contains(n))
                .map(at),
        );
        if near.is_empty() {
            continue;
        }
        near.sort_by(f64::total_cmp);
        let m = near.len();
        let median = if m % 2 == 1 { near[m / 2] } else { 0.5 * (near[m / 2 - 1] + near[m / 2]) };
        if v as f64 - median >= rise {
            *counts.entry(it % p).or_default() += 1;
        }
    }
    let mut out: Vec<(u64, usize, u64)> =
        counts.into_iter().map(|(r, n)| (r, n, lattice_slots(first, last, p, r))).collect();
    out.sort_unstable_by_key(|f| f.0);
    out
}

#[cfg(test)]
mod tests {
    use super::rising_fill;

    /// A path every 10 calls at residue 6 (+100 over a fast path of 300), and from call 200 on
    /// a level +150 with a +2000 stall every 7 calls: above a cut of 350 every residue fills
    /// from call 200, but only residue 6 rises above its neighbours on all its slots.
    #[test]
    fn only_the_path_rises_above_a_level() {
        let calls: Vec<(u64, f32)> = (0..400u64)
            .map(|i| {
                let level = if i >= 200 { 150.0 } else { 0.0 };
                let stall = if i >= 200 && i % 7 == 3 { 2000.0 } else { 0.0 };
                let path = if i % 10 == 6 { 100.0 } else { 0.0 };
                (i, (300.0 + level + stall + path) as f32)
            })
            .filter(|c| c.1 > 320.0)
            .collect();
        let fills = rising_fill(&calls, 10, (0, 399), 300.0, 50.0);
        let full: Vec<u64> = fills.iter().filter(|f| f.1 as f64 >= 0.8 * f.2 as f64).map(|f| f.0).collect();
        assert_eq!(full, vec![6], "{fills:?}");
    }
}
