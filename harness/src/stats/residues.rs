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

/// Slots of the lattice `r mod p` inside `first..=last`.
pub(crate) fn lattice_slots(first: u64, last: u64, p: u64, r: u64) -> u64 {
    let on = first + (r + p - first % p) % p;
    if on > last {
        0
    } else {
        (last - on) / p + 1
    }
}

/// The residue modulo `p` that the calls (iteration, cost) of the sequence `first..=last` fill
/// best, with its count. Fill is calls per slot: residues differ by one slot at the sequence's
/// ends, so the most frequent residue is not always the best filled. Among equally filled
/// residues the one whose calls cost the most leads (then the smallest): a path with a slower
/// stretch after it fills the stretch's residues as well as its own, and the path is where the
/// cost is. A plain count: it is read for a search's best lattice only, not for every candidate.
pub(crate) fn best_filled(calls: &[(u64, f32)], p: u64, first: u64, last: u64) -> Option<(u64, usize)> {
    let mut by: std::collections::HashMap<u64, (usize, f64)> = std::collections::HashMap::new();
    for c in calls {
        let e = by.entry(c.0 % p).or_default();
        e.0 += 1;
        e.1 += c.1 as f64;
    }
    let fill = |r: u64, n: usize| n as f64 / lattice_slots(first, last, p, r).max(1) as f64;
    by.into_iter()
        .max_by(|a, b| {
            fill(a.0, a.1 .0).total_cmp(&fill(b.0, b.1 .0)).then(a.1 .1.total_cmp(&b.1 .1)).then(b.0.cmp(&a.0))
        })
        .map(|(r, (n, _))| (r, n))
}
