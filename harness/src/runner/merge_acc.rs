//! A group's summary (summary.csv, repetitions.csv) in one pass over its events, in memory that
//! does not grow with them: counts per distinct latency instead of every latency. events.csv
//! holds latencies to 0.01 ns, so counting them by hundredths of a ns is exact: the percentiles,
//! min and max are those of the sorted values, the mean is the same sum in the same order, and
//! `mom_ns` takes its blocks as the rows come, given the group's size in advance (the cells'
//! kept counts).
use std::collections::BTreeMap;

use crate::results::rows::MergedRow;
use crate::stats::{self, Summary};

/// Blocks of `mom_ns`: a stall must hit 5 of 10 blocks to move it.
pub const MOM_BLOCKS: usize = 10;

/// Latencies and counter sums of one group of cells.
#[derive(Default)]
pub struct Acc {
    /// Calls per latency, in hundredths of a ns.
    counts: BTreeMap<i64, u64>,
    n: usize,
    sum: f64,
    /// Sums of the latencies' distances to the first one, and of their squares: the variance
    /// without the cancellation of raw sums of squares.
    shift: f64,
    dsum: f64,
    dsq: f64,
    /// Calls per `mom_ns` block, the running block's sum and count, the finished blocks' means.
    block: usize,
    block_sum: f64,
    block_n: usize,
    means: Vec<f64>,
    pub discarded: u64,
    sums: Vec<(f64, usize)>,
    /// Kept calls that slept inside the tracer, and their summed latency (ns).
    pub blocked: u64,
    pub blocked_ns: f64,
}

impl Acc {
    /// `expected`: the group's kept calls (for `mom_ns`'s blocks).
    pub fn new(counters: usize, expected: usize) -> Self {
        let block = expected / MOM_BLOCKS;
        Acc { sums: vec![(0.0, 0); counters], block, ..Default::default() }
    }

    pub fn kept(&self) -> usize {
        self.n
    }

    pub fn add(&mut self, latency: f64, counters: &[Option<f64>]) {
        *self.counts.entry((latency * 100.0).round() as i64).or_default() += 1;
        if self.n == 0 {
            self.shift = latency;
        }
        self.n += 1;
        self.sum += latency;
        let d = latency - self.shift;
        self.dsum += d;
        self.dsq += d * d;
        if self.block > 0 && self.means.len() < MOM_BLOCKS {
            self.block_sum += latency;
            self.block_n += 1;
            if self.block_n == self.block {
                self.means.push(self.block_sum / self.block as f64);
                (self.block_sum, self.block_n) = (0.0, 0);
            }
        }
        for (s, v) in self.sums.iter_mut().zip(counters) {
            if let Some(v) = v {
                s.0 += v;
                s.1 += 1;
            }
        }
    }

    /// The value of rank `i` (0-based) in ascending order.
    fn rank(&self, i: usize) -> f64 {
        let mut seen = 0u64;
        for (&k, &c) in &self.counts {
            seen += c;
            if seen > i as u64 {
                return k as f64 / 100.0;
            }
        }
        f64::NAN
    }

    /// `stats::percentile_sorted` over the counts.
    fn percentile(&self, p: f64) -> f64 {
        let h = (self.n - 1) as f64 * p / 100.0;
        let lo = h.floor() as usize;
        let (a, b) = (self.rank(lo), self.rank((lo + 1).min(self.n - 1)));
        a + (h - lo as f64) * (b - a)
    }

    fn summary(&self) -> Summary {
        if self.n == 0 {
            return Summary::default();
        }
        let n = self.n as f64;
        let var = if self.n < 2 { 0.0 } else { ((self.dsq - self.dsum * self.dsum / n) / (n - 1.0)).max(0.0) };
        Summary {
            n: self.n,
            mean: self.sum / n,
            std: var.sqrt(),
            p50: self.percentile(50.0),
            p90: self.percentile(90.0),
            p99: self.percentile(99.0),
            min: self.counts.keys().next().map_or(f64::NAN, |&k| k as f64 / 100.0),
            max: self.counts.keys().next_back().map_or(f64::NAN, |&k| k as f64 / 100.0),
        }
    }

    pub fn row(self, tracer: &str, threads: usize, repetition: Option<usize>) -> MergedRow {
        let s = self.summary();
        // Fewer blocks than planned (a group smaller than its cells said): the mean, as
        // `stats::median_of_means` gives for too few calls.
        let mom = if self.means.len() == MOM_BLOCKS { stats::median(&self.means) } else { s.mean };
        MergedRow {
            mom,
            tracer: tracer.into(),
            threads,
            repetition,
            kept: s.n,
            discarded: self.discarded,
            s,
            counter_means: self.sums.iter().map(|(sum, n)| (*n > 0).then(|| sum / *n as f64)).collect(),
            blocked: self.blocked,
            blocked_mean_ns: (self.blocked > 0).then(|| self.blocked_ns / self.blocked as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same figures as the in-memory summary of every latency, on data with ties, outliers
    /// and a length that does not divide into the blocks.
    #[test]
    fn one_pass_matches_the_sorted_sample() {
        let mut rng = crate::stats::rng::XorShift64(0x9e3779b97f4a7c15);
        for n in [1usize, 2, 9, 10, 11, 1000, 12_345] {
            let x: Vec<f64> = (0..n)
                .map(|_| {
                    let r = rng.next() >> 33;
                    let cents = 3700 + (r % 200) as i64 + if r % 97 == 0 { 500_000 } else { 0 };
                    cents as f64 / 100.0
                })
                .collect();
            let mut a = Acc::new(1, n);
            for v in &x {
                a.add(*v, &[Some(2.0)]);
            }
            let mom = stats::median_of_means(&x, MOM_BLOCKS);
            let want = stats::summarize(&mut x.clone());
            let row = a.row("t", 1, None);
            let got = &row.s;
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert_eq!(got.n, want.n);
            for (name, g, w) in [
                ("mean", got.mean, want.mean),
                ("std", got.std, want.std),
                ("p50", got.p50, want.p50),
                ("p90", got.p90, want.p90),
                ("p99", got.p99, want.p99),
                ("min", got.min, want.min),
                ("max", got.max, want.max),
                ("mom", row.mom, mom),
            ] {
                assert!(close(g, w), "n={n} {name}: {g} vs {w}");
            }
            assert_eq!(row.counter_means, vec![Some(2.0)]);
        }
    }
}
