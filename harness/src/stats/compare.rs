//! Which of two rows costs less, or that they cost the same: one comparison for every place that
//! judges a difference between two sets of repetition values.
//!
//! The unit of evidence is the repetition (one measuring process), not the call: the calls of one
//! process share its placement, its cache state and the machine's speed phase at the time, so
//! thousands of calls are one draw of the between-process variation (survey section 6 measures
//! each configuration in repeated runs for this reason).
//!
//! **Paired rounds.** When the two rows ran interleaved (round k of A beside round k of B, seconds
//! apart), the difference `b_k - a_k` cancels what the machine did in that round. The estimate is
//! the median of those differences and its interval is the sign test's: the order statistics
//! `d_(r)` and `d_(n+1-r)`, with `r` the largest for which two binomial(n, 1/2) tails below `r`
//! hold at most `alpha`. That interval covers the true median of the differences with at least the
//! nominal probability for *any* continuous distribution of them: heavy tails, two clusters of
//! processes and a drift shared by both rows (cancelled by the pairing) do not break it.
//! Unpaired values (different counts, or rows not interleaved) get the Mann-Whitney interval for
//! a shift (Hodges-Lehmann estimate), which assumes one shape shifted.
//!
//! **Relative to what.** A difference is said relative to the cheaper row's cost: net of the
//! floor (the `none` row of the same rounds) when there is one and that net cost is positive,
//! raw otherwise. Net is what a tracer adds; raw includes the dispatch every row pays.
//!
//! **Outcomes.** The interval inside `±margin`: the same within the margin. The interval wholly
//! above 0: B costs more (A cheaper); below: B cheaper. Otherwise not yet decided, with the rounds
//! that would decide it at the spread seen so far.
//!
//! **Rounds added until decided.** A run may add rounds and look again until each pair is decided.
//! Looking again and again raises the chance of a false decision unless each look spends only
//! part of it: the k-th look at `n` rounds uses `alpha / (k (k + 1))`, and those sum to `alpha`
//! over any number of looks. The looks are fixed by `n` alone ([`look`]: 10 rounds, then each
//! about 1.41 times the last), so a report re-made from the files reaches the same outcome
//! whether or not the run stopped when it decided.
use crate::stats::binomial::upper_tail;

/// Two rows whose costs differ by less than this share of the cheaper one's cost are the same:
/// the regression gate's default margin, so that "the same" means one thing in the report, in a
/// run that adds rounds until decided, and in CI.
pub const MARGIN: f64 = 0.05;
/// The chance of a false decision (cheaper either way, or the same) over every look a run makes:
/// 99% intervals, as the gate's.
pub const ALPHA: f64 = 0.01;

/// Which is cheaper, that they are the same within the margin, or not yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    ACheaper,
    BCheaper,
    Same,
    Undecided,
}

impl Outcome {
    /// The outcome as report.json's pairs and sweep.csv write it.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::ACheaper => "a_cheaper",
            Outcome::BCheaper => "b_cheaper",
            Outcome::Same => "same",
            Outcome::Undecided => "undecided",
        }
    }
}

/// What the comparison of two rows found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    pub outcome: Outcome,
    /// (B - A) relative to the reference cost: +0.10 is B 10% costlier than A.
    pub estimate: f64,
    /// The interval of that relative difference at this look's level; None when the rounds are
    /// too few for any interval at that level.
    pub interval: Option<(f64, f64)>,
    pub margin: f64,
    /// Rounds (repetitions) of each row that went in.
    pub rounds: usize,
    pub paired: bool,
    /// The reference cost (ns) the relative figures divide by, and whether it is net of the floor.
    pub reference: f64,
    pub net: bool,
    /// The level this look used (`alpha / (k (k + 1))` at look k).
    pub level: f64,
    /// When undecided: the rounds that would decide at the spread seen so far (None: none in
    /// reach, the difference sits about on the margin).
    pub rounds_needed: Option<usize>,
}

/// The rounds at which a run that adds rounds looks: 10, then about 1.41 times the last.
pub fn looks() -> impl Iterator<Item = usize> {
    (0..).map(|j: i32| (10.0 * 2f64.powf(j as f64 / 2.0)).round() as usize)
}

/// The look (1, 2, ...) that `n` rounds are: one per schedule point at or below `n`, and one more
/// when `n` is not itself a point (a last look when the budget ran out between two points).
pub fn look(n: usize) -> u32 {
    let points: Vec<usize> = looks().take_while(|&p| p <= n).collect();
    points.len() as u32 + u32::from(points.last() != Some(&n))
}

/// The level of the look that `n` rounds are, out of `alpha` over all looks.
pub fn level(n: usize, alpha: f64) -> f64 {
    let k = look(n) as f64;
    alpha / (k * (k + 1.0))
}

/// How many times a caller looks at the data, which sets each look's level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Looks {
    /// Rounds added until decided: the look that `n` rounds are spends `alpha / (k (k + 1))`.
    Sequential { alpha: f64 },
    /// One look at a fixed level (a gate judging the repetitions it was given; a caller that
    /// splits its own alpha over its looks passes each look's share).
    Once { level: f64 },
}

impl Looks {
    fn level(self, n: usize) -> f64 {
        match self {
            Looks::Sequential { alpha } => level(n, alpha),
            Looks::Once { level } => level,
        }
    }
    /// The round counts at which a caller could look again after `n`.
    fn next(self, n: usize) -> Box<dyn Iterator<Item = usize>> {
        match self {
            Looks::Sequential { .. } => Box::new(looks().skip_while(move |&p| p <= n)),
            Looks::Once { .. } => Box::new(n + 1..),
        }
    }
}

/// Compares A and B from their per-round values (ns). `floor`: the `none` row's values of the
/// same rounds, when it ran with them. `paired`: the rounds were interleaved (then `a`, `b` and
/// `floor` are in round order and of one length).
pub fn compare(a: &[f64], b: &[f64], floor: Option<&[f64]>, paired: bool, margin: f64, alpha: f64) -> Comparison {
    compare_with(a, b, floor, paired, margin, Looks::Sequential { alpha })
}

/// [`compare`] at the level `looks` gives the rounds seen.
pub fn compare_with(
    a: &[f64],
    b: &[f64],
    floor: Option<&[f64]>,
    paired: bool,
    margin: f64,
    looks: Looks,
) -> Comparison {
    let paired = paired && a.len() == b.len() && a.len() >= 2;
    let rounds = a.len().min(b.len());
    let (ma, mb) = (median(a), median(b));
    // The cheaper row's cost is the reference; net of the floor when that leaves a positive cost.
    let (cheap, cheap_rounds) = if ma <= mb { (ma, a) } else { (mb, b) };
    let net_ref = floor.filter(|f| !f.is_empty()).map(|f| {
        if paired && f.len() == cheap_rounds.len() {
            median(&cheap_rounds.iter().zip(f).map(|(x, y)| x - y).collect::<Vec<_>>())
        } else {
            cheap - median(f)
        }
    });
    let (reference, net) = match net_ref {
        Some(r) if r > 0.0 => (r, true),
        _ => (cheap, false),
    };
    let level = looks.level(rounds);
    let (estimate, interval) = difference(a, b, paired, level);
    let rel = |x: f64| x / reference;
    let estimate = rel(estimate);
    let interval = interval.map(|(lo, hi)| (rel(lo), rel(hi)));
    let outcome = match interval {
        _ if !(reference > 0.0 && estimate.is_finite()) => Outcome::Undecided,
        Some((lo, hi)) if lo >= -margin && hi <= margin => Outcome::Same,
        Some((lo, _)) if lo > 0.0 => Outcome::ACheaper,
        Some((_, hi)) if hi < 0.0 => Outcome::BCheaper,
        _ => Outcome::Undecided,
    };
    let decides = |m: f64, half: f64| half < m.abs() || m.abs() + half < margin;
    let rounds_needed =
        (outcome == Outcome::Undecided).then(|| rounds_until(a, b, paired, reference, looks, decides)).flatten();
    Comparison { outcome, estimate, interval, margin, rounds, paired, reference, net, level, rounds_needed }
}

/// The estimate of B - A (ns) and its interval at `level`: the median of the paired differences
/// and the sign test's interval, or unpaired the Hodges-Lehmann shift and the Mann-Whitney
/// interval. None where the rounds are too few for any interval at that level.
pub fn difference(a: &[f64], b: &[f64], paired: bool, level: f64) -> (f64, Option<(f64, f64)>) {
    if paired && a.len() == b.len() && a.len() >= 2 {
        let mut d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
        d.sort_by(f64::total_cmp);
        (median_sorted(&d), sign_interval(&d, level))
    } else {
        shift_interval(a, b, level)
    }
}

/// The fewest rounds (of each row) for which [`difference`] gives any interval at `level`.
pub fn fewest_rounds(paired: bool, level: f64) -> usize {
    let some = |n: usize| {
        let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
        difference(&v, &v, paired, level).1.is_some()
    };
    (2..10_000).find(|&n| some(n)).unwrap_or(10_000)
}

impl Comparison {
    /// Whether B costs more than A by more than the margin, at this look's level (the interval
    /// wholly above `+margin`): what a regression gate calls regressed.
    pub fn b_beyond_margin(&self) -> bool {
        self.interval.is_some_and(|(lo, _)| lo > self.margin)
    }
}

/// The sign test's interval for the median of sorted `d` at level `alpha` (two-sided).
fn sign_interval(d: &[f64], alpha: f64) -> Option<(f64, f64)> {
    let n = d.len() as u64;
    // P(X <= r - 1) for X ~ Bin(n, 1/2) equals P(X >= n - r + 1).
    let tail = |r: u64| upper_tail(n, n - r + 1, 0.5);
    let mut r = 0;
    while r < n / 2 && 2.0 * tail(r + 1) <= alpha {
        r += 1;
    }
    (r >= 1).then(|| (d[r as usize - 1], d[(n - r) as usize]))
}

/// The Hodges-Lehmann shift of B over A and the Mann-Whitney interval for it at level `alpha`
/// (normal approximation of U's distribution, with continuity correction).
fn shift_interval(a: &[f64], b: &[f64], alpha: f64) -> (f64, Option<(f64, f64)>) {
    let mut d: Vec<f64> = b.iter().flat_map(|y| a.iter().map(move |x| y - x)).collect();
    if d.is_empty() {
        return (f64::NAN, None);
    }
    d.sort_by(f64::total_cmp);
    let (m, n) = (a.len() as f64, b.len() as f64);
    let sd = (m * n * (m + n + 1.0) / 12.0).sqrt();
    let c = (m * n / 2.0 - normal_quantile(1.0 - alpha / 2.0) * sd - 0.5).floor();
    let est = median_sorted(&d);
    if c < 0.0 {
        return (est, None);
    }
    let c = c as usize;
    (est, Some((d[c], d[d.len() - 1 - c])))
}

/// The fewest rounds, among the looks after the rounds seen, at which the interval would decide
/// (`decides(median, half_width)`, both relative to `reference`) if the differences kept the
/// median and spread seen so far: a projection, said as "about".
pub fn rounds_until(
    a: &[f64],
    b: &[f64],
    paired: bool,
    reference: f64,
    looks: Looks,
    decides: impl Fn(f64, f64) -> bool,
) -> Option<usize> {
    let n = a.len().min(b.len());
    let (m, sigma) = if paired {
        let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| (y - x) / reference).collect();
        (median(&d), 1.4826 * mad(&d))
    } else {
        let s = (mad(a).powi(2) + mad(b).powi(2)).sqrt() * 1.4826 / reference;
        ((median(b) - median(a)) / reference, s)
    };
    if !(m.is_finite() && sigma.is_finite()) {
        return None;
    }
    // The quantile for each look's level, computed once per level (a fixed level looks at every
    // count, so recomputing it would dominate).
    let mut z = (f64::NAN, 0.0);
    for p in looks.next(n).take_while(|&p| p <= 100_000) {
        let lv = looks.level(p);
        // The sign test needs this many rounds for any interval at all.
        if 2.0 * 0.5f64.powi(p as i32) > lv {
            continue;
        }
        if z.0 != lv {
            z = (lv, normal_quantile(1.0 - lv / 2.0));
        }
        // The median's spread over p rounds (1.2533 sigma / sqrt(p) for a normal population).
        let half = z.1 * 1.2533 * sigma / (p as f64).sqrt();
        if decides(m, half) {
            return Some(p);
        }
    }
    None
}

fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

fn median_sorted(v: &[f64]) -> f64 {
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Median absolute deviation from the median.
fn mad(x: &[f64]) -> f64 {
    let m = median(x);
    median(&x.iter().map(|v| (v - m).abs()).collect::<Vec<_>>())
}

/// The standard normal's quantile, by bisection on its distribution function (Abramowitz and
/// Stegun 7.1.26 for erfc, absolute error below 1.5e-7: ample for an interval's width).
pub fn normal_quantile(p: f64) -> f64 {
    let cdf = |z: f64| {
        let x = z.abs() / std::f64::consts::SQRT_2;
        let t = 1.0 / (1.0 + 0.327_591_1 * x);
        let poly =
            t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        let erfc = poly * (-x * x).exp();
        if z >= 0.0 {
            1.0 - erfc / 2.0
        } else {
            erfc / 2.0
        }
    };
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
