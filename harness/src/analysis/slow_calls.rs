//! The slow calls off the lattices: the irregular paths among them (irregular.rs), which entries
//! those explain, and the rest counted as outliers on no path. Pass 2 counts them against the
//! lattices it found; once pass 3 has found the stretches after the paths, the irregular paths are
//! looked for again without the stretches' calls; last, the outliers slow on the same iterations
//! in every repetition are said as keyed paths (keyed.rs).
use super::{irregular, keyed, MetricScan, Sequences};
use crate::analysis::code_paths::{CodePath, CodePaths, PeriodicPath};
use crate::stats::hist::{LogHistogram, Mode};

/// The slower level's own spread is not outliers on no path (phases.rs).
pub(super) fn leave_out_slower_level(cp: &mut CodePaths) {
    let base = cp.dominant.median;
    let before = cp.outlier_calls.len();
    let cpr = &*cp;
    let kept: Vec<(f32, u64, u64)> =
        cpr.outlier_calls.iter().filter(|c| !cpr.in_slower_level(c.1, c.2, c.0 as f64 + base)).copied().collect();
    cp.outliers -= (before - kept.len()) as u64;
    cp.outlier_calls = kept;
}

/// Frequent modes that the lattices do not explain, nor the stretches after the paths
/// (`in_stretch(seq, it)`): irregular paths (irregular.rs); which entries they explain; and the
/// slow calls on no lattice, counted.
pub(super) fn irregular_and_counts(
    m: &MetricScan,
    seqs: &Sequences,
    rows: u64,
    lattices: &[PeriodicPath],
    in_stretch: impl Fn(u64, u64) -> bool,
) -> (Vec<CodePath>, Vec<bool>, SlowCounts) {
    let on_lattice = |seq_pos: usize, it: u64| lattices.iter().any(|p| p.on(seqs.ids[seq_pos], it));
    let owned = |seq_pos: usize, it: u64| on_lattice(seq_pos, it) || in_stretch(seqs.ids[seq_pos], it);
    let scan = irregular::Scan { entries: &m.entries, seq_ids: &seqs.ids, ranges: &seqs.ranges, rows };
    let base = m.modes[m.dom].median;
    let phase = &m.phase;
    let (irregular, explained) = irregular::paths(&scan, &m.modes, |k| k == m.dom || phase[k], m.th.slow, base, &owned);
    let counts = slow_counts(m, seqs, lattices, phase, &explained, &on_lattice);
    (irregular, explained, counts)
}

/// The irregular paths again once pass 3 has found the stretches after the periodic paths:
/// pass 2 could not tell a stretch's calls from a path's, and a stretch of two or three calls
/// after every call of a path recurs at the path's spacing, so it was said a second time, as an
/// irregular path. `searched`: the lattices pass 2 counted the slow calls against.
pub(super) fn irregular_after_stretches(
    m: &mut MetricScan,
    cp: &mut CodePaths,
    seqs: &Sequences,
    searched: &[PeriodicPath],
) {
    if std::env::var_os("TB_OLD_IRR").is_some()
        || cp.irregular.is_empty()
        || !cp.periodic.iter().any(|p| p.stretch.is_some())
    {
        return;
    }
    let paths = cp.periodic.clone();
    let (irregular, explained, counts) =
        irregular_and_counts(m, seqs, cp.rows, searched, |seq, it| paths.iter().any(|p| p.in_stretch(seq, it)));
    cp.irregular = irregular;
    cp.outliers = counts.outliers;
    cp.outlier_calls = counts.calls;
    cp.explained_extras = counts.explained;
    leave_out_slower_level(cp);
    m.explained = explained;
}

/// The outliers slow on the same iterations in every repetition (keyed.rs): each population a
/// path of its own among the irregular ones, its calls no longer outliers. A periodic path's
/// followers sit on its lattice's iterations in every repetition at one phase: they are that
/// path's, not keyed ones.
pub(super) fn keyed_paths(m: &mut MetricScan, cp: &mut CodePaths) {
    let followed = |seq: u64, it: u64| {
        cp.periodic.iter().any(|p| p.followers.iter().any(|f| it >= f.offset && p.on(seq, it - f.offset)))
    };
    let calls: Vec<(f32, u64, u64)> = cp.outlier_calls.iter().filter(|c| !followed(c.1, c.2)).copied().collect();
    let owned =
        |seq: u64, it: u64| followed(seq, it) || cp.periodic.iter().any(|p| p.on(seq, it) || p.in_stretch(seq, it));
    // The periods of the claimed paths at one phase in every one of the sequences `ids`.
    let step = |ids: &[u64]| {
        let same = |p: &PeriodicPath| {
            let at = |id: &u64| p.residues.iter().find(|r| r.seq == *id).map(|r| r.residue);
            at(&ids[0]).is_some_and(|r| ids.iter().all(|id| at(id) == Some(r)))
        };
        let gcd = |mut a: u64, mut b: u64| {
            while b > 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        cp.periodic.iter().filter(|p| same(p)).map(|p| p.period).reduce(|a, b| (a / gcd(a, b)).saturating_mul(b))
    };
    let base = cp.dominant.median;
    for f in keyed::find(&calls, &cp.extents, &owned, &step, cp.rows ^ 0x6B65_7965_64) {
        let mut taken: Vec<(u64, u64)> = f.calls.clone();
        taken.sort_unstable();
        let before = cp.outlier_calls.len();
        cp.outlier_calls.retain(|c| taken.binary_search(&(c.1, c.2)).is_err());
        cp.outliers -= (before - cp.outlier_calls.len()) as u64;
        cp.explained_extras.extend(&f.extras);
        cp.explained_extras.sort_by(|a, b| a.total_cmp(b));
        for (e, x) in m.entries.iter().zip(m.explained.iter_mut()) {
            *x |= taken.binary_search(&(e.seq, e.it)).is_ok();
        }
        let calls = f.extras.len() as u64;
        let extra = f.extras[f.extras.len() / 2] as f64;
        let bin = |x: f64| LogHistogram::bin_of(x).unwrap_or(0);
        let mode = Mode {
            first_bin: bin(base + f.cut as f64),
            end_bin: match f.hi.is_finite() {
                true => bin(base + f.hi as f64),
                false => bin(base + *f.extras.last().unwrap_or(&f.cut) as f64) + 1,
            },
            zero: false,
            median: base + extra,
            count: calls,
            fraction: calls as f64 / cp.rows.max(1) as f64,
        };
        cp.irregular.push(CodePath { mode, delta: extra, calls, spacing: None, clustered: None, keyed: Some(f.keyed) });
    }
}

/// Slow calls on no path, and calls of the fast path's mode that take a path or stand above the
/// slow threshold.
pub(super) struct SlowCounts {
    pub(super) outliers: u64,
    pub(super) slow_in_dom: u64,
    /// The outliers' (extra cost over the fast path, sequence, iteration), by cost.
    pub(super) calls: Vec<(f32, u64, u64)>,
    /// The extra costs of the slow calls an irregular path explains, ascending.
    pub(super) explained: Vec<f32>,
}

fn slow_counts(
    m: &MetricScan,
    seqs: &Sequences,
    periodic: &[PeriodicPath],
    phase: &[bool],
    explained: &[bool],
    on_lattice: &impl Fn(usize, u64) -> bool,
) -> SlowCounts {
    let mut c = SlowCounts { outliers: 0, slow_in_dom: 0, calls: Vec::new(), explained: Vec::new() };
    let base = m.modes[m.dom].median as f32;
    for (pos, id) in seqs.ids.iter().enumerate() {
        let lo = m.entries.partition_point(|e| e.seq < *id);
        let hi = m.entries.partition_point(|e| e.seq <= *id);
        for (j, e) in m.entries[lo..hi].iter().enumerate() {
            // The fast path's share leaves out its calls that take a periodic path (some sit
            // below the slow threshold: cheap paths are found with a lower one).
            let taking = periodic.iter().any(|p| p.on(*id, e.it) && e.v as f64 > p.cut);
            if e.mode == Some(m.dom) && (taking || e.v as f64 > m.th.slow) {
                c.slow_in_dom += 1;
            }
            if e.v as f64 > m.th.slow && !e.mode.is_some_and(|k| phase[k]) && !on_lattice(pos, e.it) {
                if explained[lo + j] {
                    c.explained.push(e.v - base);
                } else {
                    c.outliers += 1;
                    c.calls.push((e.v - base, *id, e.it));
                }
            }
        }
    }
    c.calls.sort_by(|a, b| a.0.total_cmp(&b.0));
    c.explained.sort_by(|a, b| a.total_cmp(b));
    c
}
