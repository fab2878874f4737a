//! A null for sub-period claims. A lattice whose calls all lie on an accepted path's
//! lattice (period k x P at P's phase) can arise by a route the permutation null never reruns:
//! a path whose cost varies (every 97th call +300 to +600 ns) has its costliest calls picked by a
//! cost band, and by chance they sit on a sub-lattice of the path ("every 194", "every 873").
//! The permutation null moves the whole path away, so it never sees that chance.
//!
//! This null keeps every position and permutes the costs among the parent path's own slots (its
//! kept calls on the lattice, slow or not), then reruns the whole search (search.rs) and takes
//! the strongest sub-lattice of the parent it finds. A real costlier path on a multiple (survey
//! section 7.1: the sub-buffer switch on a page crossing's lattice) keeps its cost on one residue
//! and survives; a band's chance pick does not. p = (1 + reruns as strong) / (1 + reruns), claimed
//! below `decisions::claims::ALPHA` after `decisions::claims::NULL_RUNS` reruns, stopped at the first rerun as
//! strong (no claim is then possible).
//!
//! The same null serves a lattice whose parent was never claimed but shows in the data: the
//! other slow calls gather on a coarser lattice of a divisor of its period, at its phase. A cheap
//! path inside a random second mode is slow on every slot of its own lattice and dearer where the
//! mode meets it; a chance progression of those dearer slots is no path of its own.
use crate::analysis::periodic::permutation::{Rng, Tested};
use crate::analysis::periodic::search::{band_floors, search, Call, Space};
use crate::decisions::claims::{ALPHA, NULL_RUNS};
use crate::decisions::periodic::GATHERED_P;
use crate::stats::period::Lattice;

/// Whether `child` lies on `parent`'s lattice: a multiple of its period at its phase in every
/// sequence that holds both.
fn on_parent(child: &Lattice, parent: &Lattice) -> bool {
    child.period > parent.period
        && child.period % parent.period == 0
        && child.residues.iter().zip(&parent.residues).any(|(c, p)| c.is_some() && p.is_some())
        && child.residues.iter().zip(&parent.residues).all(|(c, p)| match (c, p) {
            (Some(c), Some(p)) => c % parent.period == *p,
            (Some(_), None) => false,
            _ => true,
        })
}

/// The sequences with the costs on `parent`'s slots shuffled among those slots (positions kept).
/// A slot without a kept slow call holds a fast call: it stays out of the search's input wherever
/// it lands.
fn shuffled(rng: &mut Rng, sp: &Space, seqs: &[Vec<Call>], parent: &Lattice) -> Vec<Vec<Call>> {
    let on = |k: usize, it: u64| parent.residues[k].is_some_and(|r| it % parent.period == r);
    // Every slot of the parent's lattice, and the slow call on it (None: a fast call).
    let mut slots: Vec<(usize, u64)> = Vec::new();
    let mut costs: Vec<Option<Call>> = Vec::new();
    for (k, (s, &(first, last))) in seqs.iter().zip(&sp.extents).enumerate() {
        let Some(r) = parent.residues[k] else { continue };
        let p = parent.period;
        let mut it = first + (r + p - first % p) % p;
        let mut j = s.partition_point(|c| c.it < it);
        while it <= last {
            while j < s.len() && s[j].it < it {
                j += 1;
            }
            slots.push((k, it));
            costs.push((j < s.len() && s[j].it == it).then(|| s[j]));
            it += p;
        }
    }
    for i in (1..costs.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        costs.swap(i, j);
    }
    let mut out: Vec<Vec<Call>> =
        seqs.iter().enumerate().map(|(k, s)| s.iter().filter(|c| !on(k, c.it)).copied().collect()).collect();
    for (&(k, it), c) in slots.iter().zip(&costs) {
        if let Some(c) = c {
            out[k].push(Call { it, ..*c });
        }
    }
    out.iter_mut().for_each(|s| s.sort_by_key(|c| c.it));
    out
}

/// The strongest evidence among the lattices of one search that lie on `parent`'s.
fn strongest_on(found: &[Lattice], parent: &Lattice) -> f64 {
    found.iter().filter(|l| on_parent(l, parent)).map(|l| -l.log10_chance).fold(f64::NEG_INFINITY, f64::max)
}

/// The coarser lattice, on a divisor of `child`'s period at its phase, that the other slow calls
/// above one of the search's thresholds gather on far beyond chance
/// (`decisions::periodic::GATHERED_P`, over every divisor and threshold tried), the most so: a
/// path no claim was made on, whose slots a chance progression of `child` picks from. None when
/// the calls spread as chance spreads them.
fn gathered(sp: &Space, seqs: &[Vec<Call>], child: &Lattice, claimed: &[&Lattice]) -> Option<Lattice> {
    let big = child.period;
    let mut divisors: Vec<u64> =
        (2..).take_while(|d| d * d <= big).filter(|d| big % d == 0).flat_map(|d| [d, big / d]).collect();
    divisors.retain(|&d| d <= big / 2);
    divisors.dedup();
    // The other calls (off the child's own lattice and off every lattice claimed: calls that
    // gather on a claimed path, a second phase of the child's own period among them, are no
    // hidden path), each with the child's phase in its sequence.
    let off_claimed = |k: usize, it: u64| !claimed.iter().any(|l| l.residues[k] == Some(it % l.period));
    let calls: Vec<(u64, f32, u64)> = seqs
        .iter()
        .zip(&child.residues)
        .enumerate()
        .filter_map(|(k, (s, r))| r.map(|r| (k, s, r)))
        .flat_map(|(k, s, r)| {
            s.iter().filter(move |c| !c.phase && c.it % big != r && off_claimed(k, c.it)).map(move |c| (c.it, c.v, r))
        })
        .collect();
    // The search's own thresholds: a cheap path hidden in a wide mode gathers only the calls
    // above the mode's cost, a rare one only the calls as costly as itself.
    let th = sp.th;
    let mut thresholds = vec![th.tight, th.low, th.slow];
    thresholds.extend(band_floors(sp, |t| calls.iter().filter(|c| c.1 as f64 > t).count()));
    let tests = (divisors.len() * thresholds.len()) as f64;
    // The tails are compared in log space: a hidden path every 42 calls gathers its calls on
    // every 14th residue too (its slots are among them), and where both tails underflow to 0 the
    // first divisor tried would win. A null that shuffles costs among every 14th slot mixes the
    // path's costly slots with two cheap ones each, so a chance pick of the path's slots (every
    // 672) would outlast it.
    let mut best: Option<(f64, u64)> = None;
    for &t in &thresholds {
        let above: Vec<&(u64, f32, u64)> = calls.iter().filter(|c| c.1 as f64 > t).collect();
        let n = above.len() as u64;
        for &d in &divisors {
            // Off the child's lattice, a call falls on the coarser residue with chance
            // (big / d - 1) / (big - 1) where calls fall anywhere.
            let m = above.iter().filter(|c| c.0 % d == c.2 % d).count() as u64;
            let q = (big / d - 1) as f64 / (big - 1) as f64;
            let ln_tail = crate::stats::binomial::ln_upper_tail(n, m, q);
            if (m as f64) > n as f64 * q && best.is_none_or(|(b, _)| ln_tail < b) {
                best = Some((ln_tail, d));
            }
        }
    }
    let (ln_tail, d) = best?;
    (ln_tail + tests.ln() <= GATHERED_P.ln()).then(|| Lattice {
        period: d,
        residues: child.residues.iter().map(|r| r.map(|r| r % d)).collect(),
        hits: 0,
        calls: Vec::new(),
        slots: 0,
        log10_chance: 0.0,
    })
}

/// The claimed lattices other than `c`.
fn others(tested: &[Tested], c: usize) -> Vec<&Lattice> {
    tested.iter().enumerate().filter(|&(i, t)| i != c && t.claimed()).map(|(_, t)| &t.lattice).collect()
}

/// Tests every claimed lattice that lies on another claimed lattice's (the smallest such parent),
/// or on a coarser lattice its other slow calls gather on (`gathered`), against the conditional
/// null, and keeps the larger of its two p-values: a sub-period the conditional null refuses is
/// no longer claimed.
pub(crate) fn test(sp: &Space, seqs: &[Vec<Call>], tested: &mut [Tested], seed: u64) {
    let mut order: Vec<usize> = (0..tested.len()).collect();
    order.sort_by_key(|&i| tested[i].lattice.period);
    for (n, &c) in order.iter().enumerate() {
        if !tested[c].claimed() {
            continue;
        }
        let claimed = order[..n]
            .iter()
            .copied()
            .find(|&p| tested[p].claimed() && on_parent(&tested[c].lattice, &tested[p].lattice));
        let parent = match claimed {
            Some(p) => tested[p].lattice.clone(),
            None => match gathered(sp, seqs, &tested[c].lattice, &others(tested, c)) {
                Some(g) => g,
                None => continue,
            },
        };
        let own = -tested[c].lattice.log10_chance;
        let mut rng = Rng((seed ^ tested[c].lattice.period.rotate_left(17)) | 1);
        let (mut exceed, mut runs) = (0u32, 0u32);
        while runs < NULL_RUNS && exceed == 0 {
            runs += 1;
            if strongest_on(&search(sp, &shuffled(&mut rng, sp, seqs, &parent)), &parent) >= own {
                exceed += 1;
            }
        }
        let cond = (1.0 + exceed as f64) / (1.0 + runs as f64);
        let t = &mut tested[c];
        if cond >= ALPHA || cond > t.p() {
            t.exceed = exceed;
            t.runs = runs;
        }
    }
}

#[cfg(test)]
#[path = "sub_period_tests.rs"]
mod tests;
