//! The part of a run whose slow calls pass 2 keeps. The search, the irregular paths, the
//! outliers and the tails read each kept call with its iteration, so a run whose slow calls
//! would pass MAX_SLOW_INDICES is read in a sample: the first part of every sequence, as long
//! as the histogram of pass 1 says its slow calls fill SAMPLE_FILL of the bound; should they
//! come denser there (a slower phase early on), the sample ends where the bound is reached. The
//! code paths' counts and shares are then of the sample's calls, counted exactly, and the report
//! says so; the quantiles, the figures and the speed phases stay of every call.
use std::collections::HashMap;

use crate::decisions::modes::{MAX_SLOW_INDICES, SAMPLE_FILL};
use crate::stats::hist::{LogHistogram, Mode};

pub(crate) struct Region {
    /// Per sequence: the last iteration the sample takes (None: every call).
    planned: Option<HashMap<u64, u64>>,
    /// Per sequence: the first and last iteration of the calls taken.
    pub taken: HashMap<u64, (u64, u64)>,
    /// Calls taken.
    pub rows: u64,
    /// The bound was reached: no call more.
    full: bool,
}

impl Region {
    /// The sample of a run whose sequences span `ranges` (first and last iteration) and whose
    /// pass 2 would keep about `expected` calls.
    pub fn plan(ranges: &HashMap<u64, (u64, u64)>, expected: u64) -> Region {
        let fill = SAMPLE_FILL * MAX_SLOW_INDICES as f64;
        let planned = (expected as f64 > fill).then(|| {
            let f = fill / expected as f64;
            ranges.iter().map(|(&s, &(first, last))| (s, first + ((last - first + 1) as f64 * f) as u64)).collect()
        });
        Region { planned, taken: HashMap::new(), rows: 0, full: false }
    }

    /// Whether the call at `it` of sequence `seq` is in the sample (and then counts it).
    pub fn admit(&mut self, seq: u64, it: u64) -> bool {
        if self.full || self.planned.as_ref().is_some_and(|p| p.get(&seq).is_none_or(|&end| it > end)) {
            return false;
        }
        let r = self.taken.entry(seq).or_insert((it, it));
        r.0 = r.0.min(it);
        r.1 = r.1.max(it);
        self.rows += 1;
        true
    }

    /// The bound is reached: the sample ends here.
    pub fn close(&mut self) {
        self.full = true;
    }

    /// Whether the sample leaves calls out.
    pub fn partial(&self, rows: u64) -> bool {
        self.rows < rows
    }
}

/// The calls pass 2 keeps of a metric, at most: every call but the fast path's at or below
/// `keep_above` (its histogram bins wholly below it).
pub(crate) fn expected_kept(h: &LogHistogram, dom: &Mode, keep_above: f64, rows: u64) -> u64 {
    let fast = if dom.zero {
        if keep_above >= 0.0 {
            h.zero_count()
        } else {
            0
        }
    } else {
        (dom.first_bin..dom.end_bin)
            .filter(|&b| LogHistogram::bin_lo(b + 1) <= keep_above)
            .map(|b| h.bins().get(b).copied().unwrap_or(0))
            .sum()
    };
    rows.saturating_sub(fast)
}

impl crate::analysis::code_paths::TracerAnalysis {
    /// What the report says of a row whose code paths were read in a sample: of how many calls,
    /// and which; None when they were read from every call.
    pub fn sample_note(&self, row: &str) -> Option<String> {
        let cp = self.code_paths.first().filter(|cp| cp.rows < self.rows)?;
        Some(format!(
            "{row}: code paths read from a sample, the first {} of its {} calls at {} thread(s) ({:.0}%, the first \
             part of each sequence: a run this long has its slow calls kept in bounded memory); their counts and \
             shares are of the sample's calls, the quantiles, figures and speed phases of every call",
            cp.rows,
            self.rows,
            self.threads,
            100.0 * cp.rows as f64 / self.rows as f64
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_within_the_bound_is_read_whole_and_a_longer_one_in_each_sequences_first_part() {
        let ranges: HashMap<u64, (u64, u64)> = [(1, (0, 999)), (2, (10, 1009))].into_iter().collect();
        let mut whole = Region::plan(&ranges, (SAMPLE_FILL * MAX_SLOW_INDICES as f64) as u64);
        assert!((0..1000).all(|i| whole.admit(1, i) && whole.admit(2, 10 + i)));
        assert!(!whole.partial(2000));
        // Four times the planned fill: a quarter of each sequence, counted exactly.
        let mut part = Region::plan(&ranges, 2 * MAX_SLOW_INDICES as u64);
        let taken =
            (0..1000).filter(|&i| part.admit(1, i)).count() + (0..1000).filter(|&i| part.admit(2, 10 + i)).count();
        assert_eq!((taken as u64, part.rows), (502, 502));
        assert_eq!((part.taken[&1], part.taken[&2]), ((0, 250), (10, 260)));
        assert!(part.partial(2000));
        // The bound reached: no call more, in any sequence.
        part.close();
        assert!(!part.admit(1, 0) && !part.admit(3, 0));
    }

    #[test]
    fn the_expected_count_leaves_out_the_fast_paths_bins_below_the_keep_threshold() {
        let mut h = LogHistogram::new();
        (0..900).for_each(|_| h.add(100.0));
        (0..100).for_each(|_| h.add(1000.0));
        let b = LogHistogram::bin_of(100.0).unwrap();
        let dom = Mode { first_bin: b, end_bin: b + 1, zero: false, median: 100.0, count: 900, fraction: 0.9 };
        assert_eq!(expected_kept(&h, &dom, 200.0, 1000), 100);
        // A keep threshold inside the fast path's bin keeps it all: an upper bound.
        assert_eq!(expected_kept(&h, &dom, 100.0, 1000), 1000);
    }
}
