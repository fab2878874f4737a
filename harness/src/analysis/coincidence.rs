//! Where two of a row's slow populations meet on one call. Paths that run independently of
//! each other meet by chance: a call on both costs about the sum of their extras, and such
//! calls, about rows x r_A x r_B of them, gather into a band of their own above both. The
//! machine's stalls meet a path's calls too, the more often the longer those calls are (a
//! stall arrives in time, not per call). A band of outliers that such meetings account for is
//! no path of its own: the attribution leaves it among the outliers on no path, where the
//! report counts it, instead of testing it as a mode.
use crate::decisions::claims::ALPHA;
use crate::decisions::tails::COINCIDENCE_SLACK;
use crate::stats::binomial;

/// A slow population of the row: its calls and their extra cost over the fast path (ns).
#[derive(Debug, Clone, Copy)]
pub struct Population {
    pub calls: u64,
    pub extra: f64,
}

/// The row the meetings happen in: its calls, its fast path (ns), the slow threshold's extra
/// (ns; a reference window below it holds no stall) and, where the row has reference windows,
/// the machine's stalls per ns of window time with an extra cost in `from..to`.
pub struct Row<'a> {
    pub rows: u64,
    pub base: f64,
    pub floor: f64,
    pub stalls_per_ns: Option<&'a dyn Fn(f64, f64) -> f64>,
}

/// Which meetings a population may be made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meetings {
    /// Every kind below: a band of outliers, which has no spacing to tell them apart.
    All,
    /// Two distinct populations only: a population at a regular spacing. A mode's own halves,
    /// or a path's calls and the machine's stalls, meet at random and thin a spacing out.
    Regular,
}

/// The calls in the extra-cost band `lo..hi` that the populations' chance meetings give:
/// - two populations whose extras add up to the band (within COINCIDENCE_SLACK): rows x r_A x r_B;
/// - one population at half the band: it may hold two independent ones of like cost, whose
///   meetings are at most rows x (r / 2)^2 (the largest product of two rates that sum to r);
/// - a population's calls and the machine's stalls of the rest of the band's cost: its calls
///   times their length times the reference windows' rate per ns at that cost.
pub fn expected(pops: &[Population], row: &Row, lo: f64, hi: f64, kinds: Meetings) -> f64 {
    let all = kinds == Meetings::All;
    let n = row.rows.max(1) as f64;
    let fits = |sum: f64| sum >= lo / COINCIDENCE_SLACK && sum <= hi * COINCIDENCE_SLACK;
    let rate = |p: &Population| p.calls as f64 / n;
    let mut mu = 0.0;
    for (i, a) in pops.iter().enumerate() {
        if all && fits(2.0 * a.extra) {
            mu += n * (rate(a) / 2.0).powi(2);
        }
        for b in &pops[i + 1..] {
            if fits(a.extra + b.extra) {
                mu += n * rate(a) * rate(b);
            }
        }
        if let Some(per_ns) = row.stalls_per_ns.filter(|_| all) {
            let (from, to) = ((lo / COINCIDENCE_SLACK - a.extra).max(row.floor), hi * COINCIDENCE_SLACK - a.extra);
            if to > from {
                mu += a.calls as f64 * (row.base + a.extra).max(1.0) * per_ns(from, to);
            }
        }
    }
    mu
}

/// Whether `calls` in a band are no more than chance meetings expected there (`mu`) account
/// for: their count is not above mu at ALPHA (binomial upper tail over the row's calls).
pub fn accounts_for(calls: u64, mu: f64, rows: u64) -> bool {
    mu > 0.0 && binomial::upper_tail(rows.max(calls), calls, (mu / rows.max(1) as f64).min(1.0)) >= ALPHA
}

/// Why a population at a regular spacing that two other paths' chance meetings account for is
/// said as slow calls, not a path.
pub fn why(mu: f64) -> String {
    format!("no more calls than where two paths already said meet by chance, about {mu:.0}: no path of its own")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rows: u64) -> Row<'static> {
        Row { rows, base: 100.0, floor: 50.0, stalls_per_ns: None }
    }

    #[test]
    fn two_paths_meet_at_the_sum_of_their_costs() {
        let pops = [Population { calls: 2000, extra: 250.0 }, Population { calls: 500, extra: 260.0 }];
        let mu = expected(&pops, &row(10_000), 420.0, 630.0, Meetings::All);
        // 10 000 x 0.2 x 0.05, plus each one's own halves: 10 000 x (0.1^2 + 0.025^2).
        assert!((mu - 206.25).abs() < 1e-9, "{mu}");
        assert!(accounts_for(210, mu, 10_000));
        assert!(!accounts_for(400, mu, 10_000));
        assert_eq!(expected(&pops, &row(10_000), 1000.0, 1500.0, Meetings::All), 0.0);
        // At a regular spacing only the two distinct ones meet.
        assert!((expected(&pops, &row(10_000), 420.0, 630.0, Meetings::Regular) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_stall_meets_a_longer_call_more_often() {
        // 1 window in 100 of 100 ns meets a +2000 ns stall.
        let stalls = |from: f64, to: f64| if from < 2000.0 && 2000.0 < to { 0.01 / 100.0 } else { 0.0 };
        let row = Row { rows: 10_000, base: 100.0, floor: 50.0, stalls_per_ns: Some(&stalls) };
        let short = expected(&[Population { calls: 1000, extra: 100.0 }], &row, 1800.0, 2700.0, Meetings::All);
        let long = expected(&[Population { calls: 1000, extra: 1000.0 }], &row, 2700.0, 4000.0, Meetings::All);
        assert!(long > 5.0 * short && short > 0.0, "{short} {long}");
    }
}
