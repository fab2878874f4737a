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
use crate::analysis::periodic::permutation::{Rng, Tested};
use crate::analysis::periodic::search::{search, Call, Space};
use crate::decisions::claims::{ALPHA, NULL_RUNS};
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

/// Tests every claimed lattice that lies on another claimed lattice's (the smallest such parent)
/// against the conditional null, and keeps the larger of its two p-values: a sub-period the
/// conditional null refuses is no longer claimed.
pub(crate) fn test(sp: &Space, seqs: &[Vec<Call>], tested: &mut [Tested], seed: u64) {
    let mut order: Vec<usize> = (0..tested.len()).collect();
    order.sort_by_key(|&i| tested[i].lattice.period);
    for (n, &c) in order.iter().enumerate() {
        if !tested[c].claimed() {
            continue;
        }
        let parent = order[..n]
            .iter()
            .copied()
            .find(|&p| tested[p].claimed() && on_parent(&tested[c].lattice, &tested[p].lattice));
        let Some(p) = parent else { continue };
        let parent = tested[p].lattice.clone();
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
