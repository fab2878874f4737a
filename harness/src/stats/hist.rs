//! Fixed-size log-binned histogram and mode finding (periods: [`super::period`]).
//!
//! Survey section 7.1 reads a tracer's code paths off the distinct groups ("modes") of its
//! instruction counts and latencies, and explains LTTng's slow path as one event per sub-buffer,
//! i.e. a path taken at a fixed period. These helpers automate that reading. The histogram has a
//! fixed size whatever the number of samples, so a report can stream any number of rows.

/// Bins per decade: 2.3 % wide bins, finer than any code-path gap worth reporting.
pub const BINS_PER_DECADE: usize = 100;
/// log10 of the lowest binned value (0.1); values below it (0 included) go to the zero bucket.
const LO_EXP: f64 = -1.0;
/// Decades covered: 0.1 .. 1e10 (nanoseconds or counter values).
const DECADES: usize = 11;
pub const NBINS: usize = BINS_PER_DECADE * DECADES;
/// Two neighbouring peaks of the smoothed histogram are two modes only when the density between
/// them falls below this share of the lower peak (a valley at least half deep; shallower dips are
/// the kernel's ripple on one path, such as the TSC's 10 ns comb).
pub const VALLEY_SHARE: f64 = 0.5;
/// The Gaussian kernel is cut at this many standard deviations (the weight beyond is 0.3 %).
pub const KERNEL_SIGMAS: f64 = 3.0;

/// Histogram over 0.1..1e10 with logarithmic bins, plus a bucket for values < 0.1 (zero).
#[derive(Debug, Clone)]
pub struct LogHistogram {
    bins: Vec<u64>,
    zero: u64,
    total: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LogHistogram {
    pub fn new() -> Self {
        LogHistogram { bins: vec![0; NBINS], zero: 0, total: 0 }
    }

    /// The bin of `x`, or `None` for the zero bucket (x < 0.1, NaN).
    #[inline]
    pub fn bin_of(x: f64) -> Option<usize> {
        // NaN falls here too.
        if x.is_nan() || x < 0.1 {
            return None;
        }
        let b = ((x.log10() - LO_EXP) * BINS_PER_DECADE as f64) as usize;
        Some(b.min(NBINS - 1))
    }

    /// Lower edge of bin `i`.
    pub fn bin_lo(i: usize) -> f64 {
        10f64.powf(LO_EXP + i as f64 / BINS_PER_DECADE as f64)
    }

    /// Geometric centre of bin `i`.
    pub fn bin_center(i: usize) -> f64 {
        10f64.powf(LO_EXP + (i as f64 + 0.5) / BINS_PER_DECADE as f64)
    }

    #[inline]
    pub fn add(&mut self, x: f64) {
        self.total += 1;
        match Self::bin_of(x) {
            Some(b) => self.bins[b] += 1,
            None => self.zero += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }
    pub fn zero_count(&self) -> u64 {
        self.zero
    }
    pub fn bins(&self) -> &[u64] {
        &self.bins
    }

    /// Approximate quantile (q in 0..=1), interpolated geometrically inside the bin; within one
    /// bin width (2.3 %) of the exact value.
    pub fn quantile(&self, q: f64) -> f64 {
        self.quantile_in(q, 0, NBINS)
    }

    /// Quantile of the samples that fall in bins `lo..hi` only.
    pub fn quantile_in(&self, q: f64, lo: usize, hi: usize) -> f64 {
        let n: u64 = self.bins[lo..hi].iter().sum::<u64>() + if lo == 0 { self.zero } else { 0 };
        if n == 0 {
            return f64::NAN;
        }
        let target = q.clamp(0.0, 1.0) * n as f64;
        let mut acc = if lo == 0 { self.zero as f64 } else { 0.0 };
        if acc >= target && acc > 0.0 {
            return 0.0;
        }
        for i in lo..hi {
            let c = self.bins[i] as f64;
            if c > 0.0 && acc + c >= target {
                let f = ((target - acc) / c).clamp(0.0, 1.0);
                return 10f64.powf(LO_EXP + (i as f64 + f) / BINS_PER_DECADE as f64);
            }
            acc += c;
        }
        Self::bin_lo(hi)
    }

    /// Non-empty bins as (lower edge, upper edge, count), ascending.
    pub fn nonempty(&self) -> impl Iterator<Item = (f64, f64, u64)> + '_ {
        self.bins.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (Self::bin_lo(i), Self::bin_lo(i + 1), c))
    }
}

/// One mode: a group of samples between two density valleys (a code path).
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    /// Bin range `first_bin..end_bin` (the zero bucket is `None` in [`LogHistogram::bin_of`] and
    /// belongs to a mode with `zero == true`).
    pub first_bin: usize,
    pub end_bin: usize,
    pub zero: bool,
    /// Approximate median of the samples in this mode.
    pub median: f64,
    pub count: u64,
    pub fraction: f64,
}

impl Mode {
    /// Whether a value belongs to this mode (same binning as the histogram).
    pub fn contains(&self, x: f64) -> bool {
        match LogHistogram::bin_of(x) {
            None => self.zero,
            Some(b) => !self.zero && b >= self.first_bin && b < self.end_bin,
        }
    }
}

/// Finds the modes of a histogram.
///
/// The density is smoothed with a Gaussian whose width is `max(rel_bw * x, abs_bw)` at value x:
/// the relative part follows the log bins, the absolute part hides quantisation (the TSC here
/// advances in ~10 ns steps, so raw latencies form a comb). Peaks whose separating valley is
/// higher than half the smaller peak are merged; modes holding less than `min_fraction` of the
/// samples are dropped (noise: interrupts, migrations). Modes come back in ascending value.
pub fn find_modes(h: &LogHistogram, rel_bw: f64, abs_bw: f64, min_fraction: f64) -> Vec<Mode> {
    let total = h.total();
    if total == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    if h.zero > 0 && h.zero as f64 / total as f64 >= min_fraction {
        out.push(Mode {
            first_bin: 0,
            end_bin: 0,
            zero: true,
            median: 0.0,
            count: h.zero,
            fraction: h.zero as f64 / total as f64,
        });
    }
    let s = smooth(h, rel_bw, abs_bw);
    let peaks = merge_shallow(&s, local_maxima(&s));
    // Region boundaries at the valleys between kept peaks.
    let mut edges = vec![0usize];
    for k in 0..peaks.len().saturating_sub(1) {
        edges.push(valley(&s, peaks[k], peaks[k + 1]).0);
    }
    edges.push(NBINS);
    for k in 0..peaks.len() {
        let (a, b) = (edges[k], edges[k + 1]);
        let count: u64 = h.bins[a..b].iter().sum();
        let fraction = count as f64 / total as f64;
        if count == 0 || fraction < min_fraction {
            continue;
        }
        // quantile_in counts the zero bucket when a == 0; exclude it here.
        let median = median_bins(h, a, b);
        out.push(Mode { first_bin: a, end_bin: b, zero: false, median, count, fraction });
    }
    out
}

/// The histogram smoothed by scattering each non-empty bin with its own kernel width (in bins):
/// `max(rel_bw * x, abs_bw)` at value x.
fn smooth(h: &LogHistogram, rel_bw: f64, abs_bw: f64) -> Vec<f64> {
    let mut s = vec![0f64; NBINS];
    for (j, &c) in h.bins.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let x = LogHistogram::bin_center(j);
        let w = (rel_bw.max(abs_bw / x)).max(1e-6);
        let sigma = ((1.0 + w).log10() * BINS_PER_DECADE as f64).max(0.5);
        let reach = ((KERNEL_SIGMAS * sigma).ceil() as usize).min(400);
        let lo = j.saturating_sub(reach);
        let hi = (j + reach + 1).min(NBINS);
        // Normalise so each bin spreads exactly its count.
        let weights: Vec<f64> = (lo..hi).map(|i| (-0.5 * ((i as f64 - j as f64) / sigma).powi(2)).exp()).collect();
        let norm: f64 = weights.iter().sum();
        for (k, i) in (lo..hi).enumerate() {
            s[i] += c as f64 * weights[k] / norm;
        }
    }
    s
}

/// Local maxima of the smoothed density (plateaus count once, at their left end).
fn local_maxima(s: &[f64]) -> Vec<usize> {
    let mut peaks: Vec<usize> = Vec::new();
    for i in 0..NBINS {
        if s[i] <= 0.0 {
            continue;
        }
        let left = if i == 0 { 0.0 } else { s[i - 1] };
        let mut k = i + 1;
        while k < NBINS && s[k] == s[i] {
            k += 1;
        }
        let right = if k < NBINS { s[k] } else { 0.0 };
        if s[i] > left && s[i] > right {
            peaks.push(i);
        }
    }
    peaks
}

/// The lowest bin between two peaks, and its density.
fn valley(s: &[f64], a: usize, b: usize) -> (usize, f64) {
    let mut m = (a, s[a]);
    for (i, &v) in s.iter().enumerate().take(b + 1).skip(a) {
        if v < m.1 {
            m = (i, v);
        }
    }
    m
}

/// Merges peaks not separated by a deep valley (VALLEY_SHARE), keeping the higher; repeats
/// until stable.
fn merge_shallow(s: &[f64], mut peaks: Vec<usize>) -> Vec<usize> {
    loop {
        let mut merged = false;
        for k in 0..peaks.len().saturating_sub(1) {
            let (a, b) = (peaks[k], peaks[k + 1]);
            let (_, v) = valley(s, a, b);
            if v > VALLEY_SHARE * s[a].min(s[b]) {
                if s[a] >= s[b] {
                    peaks.remove(k + 1);
                } else {
                    peaks.remove(k);
                }
                merged = true;
                break;
            }
        }
        if !merged {
            return peaks;
        }
    }
}

fn median_bins(h: &LogHistogram, a: usize, b: usize) -> f64 {
    let n: u64 = h.bins[a..b].iter().sum();
    let target = 0.5 * n as f64;
    let mut acc = 0.0;
    for i in a..b {
        let c = h.bins[i] as f64;
        if c > 0.0 && acc + c >= target {
            let f = ((target - acc) / c).clamp(0.0, 1.0);
            return 10f64.powf(LO_EXP + (i as f64 + f) / BINS_PER_DECADE as f64);
        }
        acc += c;
    }
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_a_bin() {
        let mut h = LogHistogram::new();
        for i in 1..=1000 {
            h.add(i as f64);
        }
        let q = h.quantile(0.5);
        assert!((q / 500.0 - 1.0).abs() < 0.03, "{q}");
        assert_eq!(h.total(), 1000);
        h.add(0.0);
        assert_eq!(h.zero_count(), 1);
    }

    #[test]
    fn two_modes_on_a_quantised_comb() {
        // 10 ns steps around 130 ns (98 %) and 1130 ns (2 %).
        let mut h = LogHistogram::new();
        for i in 0..10_000u64 {
            let base = if i % 50 == 0 { 1130.0 } else { 130.0 };
            h.add(base + 10.0 * ((i * 7919) % 5) as f64);
        }
        let m = find_modes(&h, 0.05, 15.0, 0.001);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!((m[0].fraction - 0.98).abs() < 1e-9);
        assert!(m[0].median > 130.0 && m[0].median < 180.0, "{}", m[0].median);
        assert!(m[1].median > 1100.0 && m[1].median < 1200.0);
        assert!(m[1].contains(1150.0) && !m[1].contains(150.0));
    }

    #[test]
    fn bins_edges_zero_bucket_and_nonempty() {
        assert!((LogHistogram::bin_lo(0) - 0.1).abs() < 1e-15);
        assert!((LogHistogram::bin_lo(BINS_PER_DECADE) - 1.0).abs() < 1e-12);
        let mut h = LogHistogram::new();
        for x in [0.0, 0.05, 150.0, 150.0, 1500.0] {
            h.add(x);
        }
        assert_eq!((h.zero_count(), h.total()), (2, 5));
        let (i, j) = (LogHistogram::bin_of(150.0).unwrap(), LogHistogram::bin_of(1500.0).unwrap());
        let bins: Vec<(f64, f64, u64)> = h.nonempty().collect();
        let want = vec![
            (LogHistogram::bin_lo(i), LogHistogram::bin_lo(i + 1), 2),
            (LogHistogram::bin_lo(j), LogHistogram::bin_lo(j + 1), 1),
        ];
        assert_eq!(bins, want);
        assert!(bins[0].0 <= 150.0 && 150.0 < bins[0].1);
    }

    #[test]
    fn quantiles_count_the_zero_bucket_and_interpolate_in_a_bin() {
        // Three zeros and one 100: the median is in the zero bucket.
        let mut h = LogHistogram::new();
        for x in [0.0, 0.0, 0.0, 100.0] {
            h.add(x);
        }
        assert_eq!(h.quantile(0.5), 0.0);
        assert!((h.quantile(1.0) / 100.0 - 1.0).abs() < 0.024, "{}", h.quantile(1.0));
        // 100 samples in one bin: the median sits half-way through it (geometrically).
        let mut h = LogHistogram::new();
        for _ in 0..100 {
            h.add(150.0);
        }
        let i = LogHistogram::bin_of(150.0).unwrap();
        let mid = 10f64.powf(LO_EXP + (i as f64 + 0.5) / BINS_PER_DECADE as f64);
        assert!((h.quantile(0.5) / mid - 1.0).abs() < 1e-12, "{} vs {mid}", h.quantile(0.5));
        assert!((h.quantile_in(0.5, i, i + 1) / mid - 1.0).abs() < 1e-12);
        assert!(h.quantile_in(0.5, 0, i).is_nan(), "no samples below the bin");
    }

    #[test]
    fn mode_medians_interpolate_and_modes_below_the_fraction_are_dropped() {
        // 900 samples at 150 ns and 100 at 1500 ns: two modes, each median inside its bin.
        let mut h = LogHistogram::new();
        for i in 0..1000 {
            h.add(if i % 10 == 0 { 1500.0 } else { 150.0 });
        }
        let m = find_modes(&h, 0.05, 15.0, 0.001);
        assert_eq!(m.len(), 2, "{m:?}");
        for (mode, x, f) in [(&m[0], 150.0, 0.9), (&m[1], 1500.0, 0.1)] {
            let b = LogHistogram::bin_of(x).unwrap();
            let mid = 10f64.powf(LO_EXP + (b as f64 + 0.5) / BINS_PER_DECADE as f64);
            assert!((mode.median / mid - 1.0).abs() < 1e-9, "{mode:?}");
            assert!((mode.fraction - f).abs() < 1e-12 && mode.count == (f * 1000.0) as u64, "{mode:?}");
            assert!(mode.first_bin <= b && b < mode.end_bin && !mode.zero);
        }
        // The valley between them is the boundary: the two modes tile the bins.
        assert_eq!(m[0].end_bin, m[1].first_bin);
        assert!(m[0].first_bin == 0 && m[1].end_bin == NBINS);
        // At 10% the minor mode goes; exactly at its fraction it stays.
        assert_eq!(find_modes(&h, 0.05, 15.0, 0.1).len(), 2);
        assert_eq!(find_modes(&h, 0.05, 15.0, 0.11).len(), 1);
        // A zero bucket holding exactly min_fraction is a mode of its own.
        let mut z = LogHistogram::new();
        for i in 0..100 {
            z.add(if i < 10 { 0.0 } else { 150.0 });
        }
        let m = find_modes(&z, 0.05, 15.0, 0.1);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].zero && m[0].count == 10 && m[0].median == 0.0);
        assert!(m[0].contains(0.0) && !m[0].contains(150.0) && m[1].contains(150.0));
    }

    #[test]
    fn a_mode_median_interpolates_across_its_bins_and_no_empty_zero_mode() {
        // 30 calls in the bin of 150 and 70 in the next, of 153: the 50th call is 20 of 70 into
        // the second bin.
        let mut h = LogHistogram::new();
        for i in 0..100 {
            h.add(if i < 30 { 150.0 } else { 153.0 });
        }
        let (a, b) = (LogHistogram::bin_of(150.0).unwrap(), LogHistogram::bin_of(153.0).unwrap());
        assert_eq!(b, a + 1, "adjacent bins");
        let m = find_modes(&h, 0.05, 15.0, 0.0);
        assert_eq!(m.len(), 1, "{m:?}");
        let want = 10f64.powf(LO_EXP + (b as f64 + 20.0 / 70.0) / BINS_PER_DECADE as f64);
        assert!((m[0].median / want - 1.0).abs() < 1e-9, "{} vs {want}", m[0].median);
        // No zero-valued call: no zero mode, even when every fraction is kept.
        assert!(!m[0].zero && m[0].count == 100);
    }

    #[test]
    fn close_peaks_merge_into_the_taller_one() {
        // Two peaks 8% apart with a shallow valley: one mode, at the taller peak.
        let mut h = LogHistogram::new();
        for i in 0..1000 {
            h.add(if i % 3 == 0 { 108.0 } else { 100.0 });
        }
        let m = find_modes(&h, 0.05, 1.0, 0.001);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].count, 1000);
        // Far apart (10x), they stay two whatever their sizes.
        let mut h = LogHistogram::new();
        for i in 0..1000 {
            h.add(if i % 3 == 0 { 1000.0 } else { 100.0 });
        }
        let m = find_modes(&h, 0.05, 1.0, 0.001);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].median < m[1].median && m[0].count > m[1].count);
    }

    #[test]
    fn one_mode_for_a_wide_single_path() {
        let mut h = LogHistogram::new();
        for i in 0..5000u64 {
            h.add(200.0 + ((i * 31) % 60) as f64);
        }
        assert_eq!(find_modes(&h, 0.05, 15.0, 0.001).len(), 1);
    }
}
