//! Two rows of a run held against each other by the one comparison (`stats::compare`): the
//! ranking and the survey's orderings both read it, so they cannot disagree.
//!
//! A row's evidence is its repetitions' means (repetitions.csv at the fewest threads). Rows whose
//! repetitions are as many ran interleaved, round by round (the plan puts repetitions outermost),
//! so round k of one is paired with round k of the other and with `none`'s round k, the floor.
use serde::{Deserialize, Serialize};

use crate::report::findings::survey_reference;
use crate::report::model::TracerReport;
use crate::stats::compare::{compare, Comparison, Outcome, ALPHA, MARGIN};

/// One pair judged, as report.json's `overview.pairs` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairJudged {
    /// Row labels; `a` is the cheaper by mean.
    pub a: String,
    pub b: String,
    /// `a_cheaper`, `b_cheaper`, `same` or `undecided`.
    pub outcome: String,
    /// B's cost over A's, less one (0.10: B costs 10% more), and its interval.
    pub estimate: f64,
    pub interval: Option<(f64, f64)>,
    pub margin: f64,
    /// Whether the relative figures are of costs net of the `none` floor (else raw means).
    pub net: bool,
    pub rounds: usize,
    pub paired: bool,
    /// When undecided: the rounds (`--repeats`) that would decide at the spread seen so far.
    pub rounds_needed: Option<usize>,
}

/// The `none` row the run measured, if any: the floor costs are net of.
pub fn floor_row(rows: &[TracerReport]) -> Option<&TracerReport> {
    rows.iter().find(|t| survey_reference::kind(&t.spec) == "none" && t.base().is_some())
}

/// Compares `a` against `b` (their repetitions' means), net of `floor` where it ran with them.
pub fn judge(a: &TracerReport, b: &TracerReport, floor: Option<&TracerReport>) -> Comparison {
    let paired = a.rep_means.len() == b.rep_means.len();
    let f = floor.map(|f| f.rep_means.as_slice()).filter(|f| !f.is_empty());
    compare(&a.rep_means, &b.rep_means, f, paired, MARGIN, ALPHA)
}

pub fn judged(a: &TracerReport, b: &TracerReport, c: &Comparison) -> PairJudged {
    PairJudged {
        a: a.label.clone(),
        b: b.label.clone(),
        outcome: c.outcome.word().into(),
        estimate: c.estimate,
        interval: c.interval,
        margin: c.margin,
        net: c.net,
        rounds: c.rounds,
        paired: c.paired,
        rounds_needed: c.rounds_needed,
    }
}

/// A relative difference as the pairs' words print it: "+12%", "-3.5%".
pub fn pct(x: f64) -> String {
    let v = 100.0 * x;
    if v.abs() >= 10.0 {
        format!("{v:+.0}%")
    } else {
        format!("{v:+.1}%")
    }
}

/// The confidence of an interval at `level`, as a percentage rounded down with enough decimals
/// that it never reads 100%: a look late in a run spends a small share of alpha (99.97%), and
/// "100.0%" would claim a certainty no interval has.
pub fn confidence(level: f64) -> String {
    let p = 100.0 * (1.0 - level);
    let d = if 100.0 - p >= 0.1 {
        1
    } else if 100.0 - p >= 0.01 {
        2
    } else {
        3
    };
    let f = 10f64.powi(d);
    format!("{:.*}%", d as usize, ((p * f) + 1e-9).floor() / f)
}

/// What the comparison found, in words: "{b} costs +12% [+8%, +15%] of {a}'s cost net of the floor,
/// over 14 interleaved rounds", and for an undecided pair what would decide it.
pub fn words(a: &str, b: &str, c: &Comparison) -> String {
    let of = if c.net { "net of the floor" } else { "raw, floor included" };
    let rounds = format!(
        "{} {}round{}",
        c.rounds,
        if c.paired { "interleaved " } else { "" },
        if c.rounds == 1 { "" } else { "s" }
    );
    let level = confidence(c.level);
    let estimate = match c.interval {
        Some((lo, hi)) => format!(
            "{b} against {a}: {} [{}, {}] ({of}, {level} interval over {rounds})",
            pct(c.estimate),
            pct(lo),
            pct(hi)
        ),
        None => format!("{b} against {a}: {} ({of}) over {rounds}, too few for a {level} interval", pct(c.estimate)),
    };
    let margin = format!("{:.0}%", 100.0 * c.margin);
    match c.outcome {
        Outcome::Same => format!("{estimate}: the same within {margin}"),
        Outcome::ACheaper => format!("{estimate}: {a} is cheaper"),
        Outcome::BCheaper => format!("{estimate}: {b} is cheaper"),
        Outcome::Undecided => match c.rounds_needed {
            Some(n) => format!("{estimate}: about {n} rounds would decide (--repeats {n}, or --budget)"),
            None => format!(
                "{estimate}: the difference sits about on the {margin} margin, so more rounds would not soon decide it"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    /// Rounded down, never to 100%: the looks' levels of a long run (alpha / (k (k + 1))).
    #[test]
    fn a_confidence_never_reads_a_hundred_percent() {
        assert_eq!(super::confidence(0.005), "99.5%");
        assert_eq!(super::confidence(0.01 / 30.0), "99.96%");
        assert_eq!(super::confidence(0.01 / 132.0), "99.992%");
        for k in 1..200u32 {
            let c = super::confidence(0.01 / f64::from(k * (k + 1)));
            assert!(!c.starts_with("100"), "{c}");
        }
    }
}
