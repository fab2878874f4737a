//! Periodic paths whose period is not a whole number of calls. An ftrace page holds 4080 B; at
//! 36 B per call it fills after 113.3 calls, so the page crossing comes every 113 or 114 calls
//! (survey section 7.1: "every PAGE_SIZE / EVENT_SIZE events", a ratio, not an integer). The
//! lattice search finds exact integer periods, so such a path shows as several lattices of one
//! common multiple, at evenly spread phases and with one cost: 2 lattices every 113 calls for a
//! period of 56.5, 9 every 512 for 56.9. This step folds them back into the one path they are,
//! with its mean period, and fills in a phase the search missed (its calls were counted as
//! outliers).
use std::collections::HashMap;

use crate::analysis::code_paths::{PeriodicPath, Residue, SlowCall};
use crate::decisions::periodic::{SAME_COST, TAKEN};

/// Folds lattices of one period, one cost and evenly spread phases into one path of period
/// `period / phases`. `entries`: the calls above the fast path,
/// sorted; `ranges`: each sequence's first and last iteration.
pub(crate) fn fold(
    periodic: Vec<PeriodicPath>,
    entries: &[SlowCall],
    ranges: &HashMap<u64, (u64, u64)>,
) -> Vec<PeriodicPath> {
    let n = periodic.len();
    let mut used = vec![false; n];
    let mut out = Vec::new();
    for i in 0..n {
        if used[i] {
            continue;
        }
        let similar = |a: f64, b: f64| (a - b).abs() <= SAME_COST * a.abs().max(b.abs());
        let group: Vec<usize> = (i..n)
            .filter(|&j| {
                !used[j] && periodic[j].period == periodic[i].period && similar(periodic[i].extra, periodic[j].extra)
            })
            .collect();
        if group.len() >= 2 {
            let members: Vec<&PeriodicPath> = group.iter().map(|&j| &periodic[j]).collect();
            if let Some(p) = fold_group(&members, entries, ranges) {
                group.iter().for_each(|&j| used[j] = true);
                out.push(p);
                continue;
            }
        }
        used[i] = true;
        out.push(periodic[i].clone());
    }
    // A lattice left over that is one phase of a folded path (found at another threshold, or
    // with a slightly different cost) is that path, not another (printf at 128 B: "every 57.3 on
    // average" and "every 401" beside it).
    let folded: Vec<PeriodicPath> = out.iter().filter(|p| p.phases > 1).cloned().collect();
    out.retain(|p| {
        p.phases > 1
            || !folded.iter().any(|f| {
                f.period == p.period
                    && p.residues
                        .iter()
                        .all(|x| f.residues.iter().any(|y| y.seq == x.seq && y.residue.abs_diff(x.residue) <= 1))
            })
    });
    out.sort_by(|a, b| a.mean_period().total_cmp(&b.mean_period()));
    out
}

/// The residues of one sequence with the phases between two found ones filled in, given the
/// mean period `q` of the `k` phases in `period`; None when the found ones are not spread as
/// a real-valued period lays them (each gap within one call of a multiple of `q`).
fn fill(found: &[u64], period: u64, k: u64, q: f64) -> Option<Vec<u64>> {
    let mut r = found.to_vec();
    r.sort_unstable();
    r.dedup();
    let mut all = Vec::new();
    let mut phases = 0;
    for (i, &a) in r.iter().enumerate() {
        let b = if i + 1 < r.len() { r[i + 1] } else { r[0] + period };
        let g = (b - a) as f64;
        let m = (g / q).round();
        if m < 1.0 || (g - m * q).abs() >= 1.0 + 1e-9 {
            return None;
        }
        phases += m as u64;
        all.extend((0..m as u64).map(|t| (a + (t as f64 * q).round() as u64) % period));
    }
    (phases == k).then(|| {
        all.sort_unstable();
        all.dedup();
        all
    })
}

fn fold_group(
    members: &[&PeriodicPath],
    entries: &[SlowCall],
    ranges: &HashMap<u64, (u64, u64)>,
) -> Option<PeriodicPath> {
    let period = members[0].period;
    let mut by_seq: HashMap<u64, Vec<u64>> = HashMap::new();
    for p in members {
        for &Residue { seq: s, residue: r } in &p.residues {
            by_seq.entry(s).or_default().push(r);
        }
    }
    // The mean period from the smallest gap between found phases of the sequence that holds most.
    let widest = by_seq.values().max_by_key(|v| v.len())?;
    let mut r = widest.clone();
    r.sort_unstable();
    r.dedup();
    if r.len() < 2 {
        return None;
    }
    let gmin = r.windows(2).map(|w| w[1] - w[0]).chain([r[0] + period - r[r.len() - 1]]).min()?;
    let k = (period as f64 / gmin as f64).round() as u64;
    // A whole mean period is no fractional one: the search would have found it, unless the
    // phases cost differently (two paths of one period).
    if k < 2 || period % k == 0 {
        return None;
    }
    let q = period as f64 / k as f64;
    let mut residues = Vec::new();
    for (&s, found) in &by_seq {
        residues.extend(fill(found, period, k, q)?.into_iter().map(|residue| Residue { seq: s, residue }));
    }
    residues.sort_unstable();
    // Taken on nearly every slot of the folded path, as an exact period must be.
    let cut = members.iter().map(|p| p.cut).fold(f64::INFINITY, f64::min);
    let (mut slots, mut hits) = (0u64, 0u64);
    for (&s, &(first, last)) in ranges {
        let rs: Vec<u64> = residues.iter().filter(|x| x.seq == s).map(|x| x.residue).collect();
        if rs.is_empty() {
            continue;
        }
        for &r in &rs {
            let on = first + (r + period - first % period) % period;
            slots += if on > last { 0 } else { (last - on) / period + 1 };
        }
        let lo = entries.partition_point(|e| e.seq < s);
        let hi = entries.partition_point(|e| e.seq <= s);
        hits += entries[lo..hi].iter().filter(|e| rs.contains(&(e.it % period)) && e.v as f64 > cut).count() as u64;
    }
    if slots == 0 || (hits as f64) < TAKEN * slots as f64 {
        return None;
    }
    let mut extras: Vec<f64> = members.iter().map(|p| p.extra).collect();
    extras.sort_by(f64::total_cmp);
    let first = members.iter().min_by_key(|p| p.phase)?;
    Some(PeriodicPath {
        period,
        phases: k,
        hits,
        slots,
        extra: extras[extras.len() / 2],
        cut,
        taken: 0,
        log10_chance: members.iter().map(|p| p.log10_chance).fold(f64::INFINITY, f64::min),
        p_value: members.iter().map(|p| p.p_value).fold(f64::INFINITY, f64::min),
        null_runs: members.iter().map(|p| p.null_runs).max().unwrap_or(0),
        phase: first.phase,
        residues,
        followers: first.followers.clone(),
        profile: None,
        stretch: None,
        counted_in: Vec::new(),
        slots_at: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_of_a_real_period_are_filled_and_others_refused() {
        // 56.5: phases 10 and 66 of 113 (gap 56, then 57).
        assert_eq!(fill(&[10, 66], 113, 2, 56.5), Some(vec![10, 66]));
        // 512 / 9: eight of nine phases found, one filled in.
        let q = 512.0 / 9.0;
        let all: Vec<u64> = (0..9).map(|j| (3.0 + j as f64 * q).floor() as u64).collect();
        let some: Vec<u64> = all.iter().copied().filter(|&r| r != all[4]).collect();
        let filled = fill(&some, 512, 9, q).unwrap();
        assert_eq!(filled.len(), 9);
        assert!(filled.iter().zip(&all).all(|(a, b)| a.abs_diff(*b) <= 1), "{filled:?} {all:?}");
        // Two paths of one period at uneven phases are two paths.
        assert_eq!(fill(&[10, 40], 113, 2, 56.5), None);
    }
}
