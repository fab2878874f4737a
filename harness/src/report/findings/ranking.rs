//! "Which tracer costs least here?": the ranked summary at the top of report.html and
//! report.md. Tracers are ranked by their mean cost per call above the `none` floor (the empty
//! call through the same dispatch), with the spread of that cost across repetitions, and pairs
//! the data do not decide are said as such. Every pair is judged by the one comparison
//! (`findings::comparison`, over the repetitions paired by round): one is cheaper, the two are
//! the same within the margin, or the pair is not yet decided, with the rounds that would decide.
//!
//! "N times" everywhere in the report is one definition, [`times`]: the ratio of the costs
//! net of the floor (`(a - none) / (b - none)`), or of raw means, said as raw, when the run has
//! no `none` row.
use crate::report::findings::comparison::{self, PairJudged};
use crate::report::findings::{survey_reference, Report};
use crate::report::model::TracerReport;
use crate::stats::compare::Outcome;

/// One ranked tracer.
pub struct RankedTracer<'a> {
    pub tracer: &'a TracerReport,
    /// Mean ns per call at the fewest threads, net of the floor when there is one.
    pub cost: f64,
    /// Lowest and highest repetition's cost (net the same way) and the number of repetitions.
    pub spread: Option<(f64, f64, usize)>,
}

pub struct Ranking<'a> {
    /// `none`'s mean at the fewest threads, when the run measured it.
    pub floor: Option<f64>,
    /// Cheapest first; `none` itself is the floor, not ranked.
    pub entries: Vec<RankedTracer<'a>>,
    /// (cheaper by mean, costlier by mean, why the data do not decide, rounds that would).
    pub undecided: Vec<(String, String, String, Option<usize>)>,
    /// (cheaper by mean, costlier by mean, why): pairs that cost the same within the margin.
    pub same: Vec<(String, String, String)>,
    /// Every pair judged, cheaper by mean first (report.json's `overview.pairs`).
    pub pairs: Vec<PairJudged>,
    /// The checks of the machine (`system show`'s, recorded in run.json) that found it not fit
    /// to measure: said beside every decision taken on it.
    pub unfit: Vec<String>,
}

/// The BAD checks run.json recorded for the run's machine.
fn unfit(run: &serde_json::Value) -> Vec<String> {
    let checks = run.get("system").and_then(|s| s.get("checks")).and_then(|c| c.as_array());
    checks
        .into_iter()
        .flatten()
        .filter(|c| c.get("level").and_then(|l| l.as_str()) == Some("BAD"))
        .filter_map(|c| c.get("text").and_then(|t| t.as_str()).map(String::from))
        .collect()
}

fn is_none(t: &TracerReport) -> bool {
    survey_reference::kind(&t.spec) == "none"
}

/// How many times `a` costs `b` (see the module comment), followed by `of`: "2.2 times lw",
/// or "2.2 times lw (raw means)" without a floor.
pub fn times(a: f64, b: f64, floor: Option<f64>, of: &str) -> Option<String> {
    let f = floor.unwrap_or(0.0);
    let (na, nb) = (a - f, b - f);
    if !(na.is_finite() && nb.is_finite() && nb > 0.0) {
        return None;
    }
    let x = na / nb;
    let x = if x >= 10.0 { format!("{x:.0}") } else { format!("{x:.1}") };
    Some(if floor.is_some() { format!("{x} times {of}") } else { format!("{x} times {of} (raw means)") })
}

pub fn rank(r: &Report) -> Ranking<'_> {
    let none = r.tracers.iter().find(|t| is_none(t) && t.base().is_some());
    let floor = none.and_then(|t| t.base()).map(|s| s.mean).filter(|m| m.is_finite());
    let mut entries: Vec<RankedTracer> = r
        .tracers
        .iter()
        .filter(|t| !is_none(t))
        .filter_map(|t| {
            let mean = t.base()?.mean;
            mean.is_finite().then_some(t)
        })
        .map(|t| {
            let cost = t.base().map_or(f64::NAN, |s| s.mean) - floor.unwrap_or(0.0);
            // Paired with none's repetition of the same index (they ran interleaved, seconds
            // apart) when both have every repetition; else against none's overall mean.
            let nets: Vec<f64> = match none {
                Some(n) if n.rep_means.len() == t.rep_means.len() => {
                    t.rep_means.iter().zip(&n.rep_means).map(|(a, b)| a - b).collect()
                }
                _ => t.rep_means.iter().map(|a| a - floor.unwrap_or(0.0)).collect(),
            };
            let spread = (nets.len() >= 2).then(|| {
                let lo = nets.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = nets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lo, hi, nets.len())
            });
            RankedTracer { tracer: t, cost, spread }
        })
        .collect();
    entries.sort_by(|a, b| a.cost.total_cmp(&b.cost));
    let (mut undecided, mut same, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, a) in entries.iter().enumerate() {
        for b in &entries[i + 1..] {
            let c = comparison::judge(a.tracer, b.tracer, none);
            let (la, lb) = (a.tracer.label.clone(), b.tracer.label.clone());
            let why = comparison::words(&la, &lb, &c);
            match c.outcome {
                Outcome::Undecided => undecided.push((la, lb, why, c.rounds_needed)),
                Outcome::Same => same.push((la, lb, why)),
                Outcome::ACheaper | Outcome::BCheaper => {}
            }
            pairs.push(comparison::judged(a.tracer, b.tracer, &c));
        }
    }
    Ranking { floor, entries, undecided, same, pairs, unfit: unfit(&r.run) }
}

fn ns(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The ranked summary's sentences.
pub fn lines(rk: &Ranking) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = rk.entries.first() else { return out };
    let what = match rk.floor {
        Some(f) => format!("mean cost per call above the `none` floor ({} ns, the empty call)", ns(f)),
        None => "raw mean latency per call (floor included)".to_string(),
    };
    let parts: Vec<String> = rk
        .entries
        .iter()
        .map(|e| {
            let mut s = format!("{} {} ns", e.tracer.label, ns(e.cost));
            if let Some((lo, hi, n)) = e.spread {
                s.push_str(&format!(" ({} to {} over {n} repetitions", ns(lo), ns(hi)));
            } else {
                s.push_str(" (1 repetition");
            }
            if !std::ptr::eq(e, first) {
                let mean = |t: &TracerReport| t.base().map_or(f64::NAN, |s| s.mean);
                if let Some(x) = times(mean(e.tracer), mean(first.tracer), rk.floor, &first.tracer.label) {
                    s.push_str(&format!("; {x}"));
                }
            }
            s.push(')');
            s
        })
        .collect();
    out.push(format!("Ranked by {what}, cheapest first: {}.", parts.join(", ")));
    if rk.entries.len() >= 2 {
        let labels = || rk.entries.iter().map(|e| e.tracer.label.as_str()).collect::<Vec<_>>();
        if rk.undecided.is_empty() && rk.same.is_empty() {
            out.push(format!("Every pair's order is decided by this run: {}.", labels().join(" < ")));
        } else if rk.undecided.is_empty() {
            out.push(
                "Every pair is decided by this run: one is cheaper, or the two are the same within the margin (below)."
                    .into(),
            );
        }
        if !rk.same.is_empty() {
            let pairs: Vec<String> = rk.same.iter().map(|(a, b, why)| format!("{a} and {b} ({why})")).collect();
            out.push(format!("The same within the margin: {}.", pairs.join("; ")));
        }
        if !rk.undecided.is_empty() {
            let pairs: Vec<String> =
                rk.undecided.iter().take(12).map(|(a, b, why, _)| format!("{a} and {b} ({why})")).collect();
            let more = rk.undecided.len().saturating_sub(12);
            let most = rk.undecided.iter().filter_map(|u| u.3).max();
            let advice = match most {
                Some(n) if rk.undecided.iter().all(|u| u.3.is_some()) => format!(
                    "; about {n} interleaved rounds would decide every one of them at the spread seen (--repeats {n}, or --budget to add rounds until they are decided)"
                ),
                _ => "; for a pair whose difference sits about on the margin, more rounds would not soon decide it".into(),
            };
            out.push(format!(
                "Not decided against each other: {}{}. Their order above is that of this run's means, which another run may reverse{advice}.",
                pairs.join("; "),
                if more > 0 { format!("; and {more} more pairs") } else { String::new() }
            ));
        }
    }
    if rk.entries.len() >= 2 && !rk.unfit.is_empty() {
        out.push(format!(
            "Measured on a machine `tracebench system show` calls not fit to measure ({}): the decisions above hold \
             for the rounds this machine gave, and a quiet machine may rank these tracers otherwise.",
            rk.unfit.join("; ")
        ));
    }
    if rk.floor.is_none() {
        out.push(
            "No `none` row: these costs include the empty window's cost (the floor), the same for every tracer. Add `none` to --tracer (e.g. --tracer none,lw,...) to rank by cost above the floor and get the tables' \"Above none\" column."
                .into(),
        );
    }
    out
}

pub const HEADING: &str = "Which tracer costs least here";

/// The summary of one run's report (render/mod.rs puts it first, in both formats).
pub fn summary(r: &Report) -> Vec<String> {
    lines(&rank(r))
}

#[cfg(test)]
mod tests {
    /// The BAD checks of run.json's `system` are what the ranking says beside its decisions.
    #[test]
    fn a_machine_not_fit_is_read_from_the_runs_checks() {
        let run = serde_json::json!({"system": {"checks": [
            {"level": "OK", "text": "cpu 1 (measuring) online"},
            {"level": "BAD", "text": "cpu 1 busy 100% during the run (others run there)"},
            {"level": "WARN", "text": "no cpufreq"},
        ]}});
        assert_eq!(super::unfit(&run), ["cpu 1 busy 100% during the run (others run there)"]);
        assert!(super::unfit(&serde_json::json!({})).is_empty());
    }
}
