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
