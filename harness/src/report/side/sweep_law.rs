//! The laws a sweep's page states: how each curve's mean follows the knob, judged step by step
//! by the one comparison (`results::sweep_steps`), and how the main slow path's period follows
//! it (survey 7.1).
//!
//! A curve's mean is said to grow or fall only when every step between adjacent values is
//! decided (a step the same within the margin counts as flat): one repetition draws one phase of
//! the machine per value, and a curve read from single means says that phase (printf at 1024 B
//! once cost less than at 4 B). Where a step is not decided the page says so, and how many rounds
//! would decide it.
use crate::decisions::findings::SWEEP_FLAT;
use crate::report::findings::comparison::pct;
use crate::stats::compare::{Comparison, Outcome};

/// (value as typed in sweep.csv, mean, p90, slow-path period, slow-path extra ns)
pub type Point = (String, f64, f64, Option<f64>, Option<f64>);

pub fn num(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// "+13% [+9%, +16%]", or the estimate alone where the rounds are too few for an interval.
fn figures(c: &Comparison) -> String {
    match c.interval {
        Some((lo, hi)) => format!("{} [{}, {}]", pct(c.estimate), pct(lo), pct(hi)),
        None => format!("{}, too few rounds for an interval", pct(c.estimate)),
    }
}

/// One step in words, from value `from` to value `to`.
fn step_words(from: &str, to: &str, c: Option<&Comparison>) -> String {
    let Some(c) = c else { return format!("not compared between {from} and {to} (no repetitions of both)") };
    let margin = format!("{:.0}%", 100.0 * c.margin);
    match c.outcome {
        Outcome::ACheaper => format!("costlier at {to} than at {from} ({})", figures(c)),
        Outcome::BCheaper => format!("cheaper at {to} than at {from} ({})", figures(c)),
        Outcome::Same => format!("the same at {from} and {to} within {margin} ({})", figures(c)),
        Outcome::Undecided => match c.rounds_needed {
            Some(n) => format!(
                "not decided between {from} and {to} ({}: about {n} rounds would decide: --repeats {n})",
                figures(c)
            ),
            None => format!(
                "not decided between {from} and {to} ({}: the difference sits about on the {margin} margin, so more \
                 rounds would not soon decide it)",
                figures(c)
            ),
        },
    }
}

/// What the steps were judged on: "10 interleaved rounds of means, 99.5% intervals, relative to
/// the cheaper value's cost net of none, the same within 5%".
fn basis(steps: &[&Comparison]) -> String {
    let (lo, hi) = steps.iter().fold((usize::MAX, 0), |a, c| (a.0.min(c.rounds), a.1.max(c.rounds)));
    let rounds = if lo == hi { format!("{lo}") } else { format!("{lo} to {hi}") };
    let paired = if steps.iter().all(|c| c.paired) { "interleaved " } else { "" };
    let plural = if hi == 1 { "" } else { "s" };
    let with_interval = steps.iter().any(|c| c.interval.is_some());
    let level = match with_interval && steps.iter().all(|c| c.level == steps[0].level) {
        true => format!(", {} intervals", crate::report::findings::comparison::confidence(steps[0].level)),
        false => String::new(),
    };
    let of = match (steps.iter().all(|c| c.net), steps.iter().any(|c| c.net)) {
        (true, _) => "cost net of none",
        (false, true) => "cost net of none where that is positive, raw otherwise",
        (false, false) => "raw cost",
    };
    let margin = steps.iter().map(|c| c.margin).fold(0.0, f64::max);
    format!(
        "steps judged on {rounds} {paired}round{plural} of means{level}, relative to the cheaper value's {of}, \
         the same within {:.0}%",
        100.0 * margin
    )
}

/// "lw: mean 40.1 / 60.3 ns at payload-size 4 / 1024: grows x1.50 from 4 to 1024: costlier at
/// 1024 than at 4 (+50% [+41%, +58%]) (steps judged on ...)." `steps[i]` compares value i with
/// value i + 1. The curve grows (falls) only when every step is decided and none the other way,
/// over numeric values; it is flat only when every step is decided the same; otherwise the page
/// says each step's outcome, the undecided ones with the rounds that would decide them.
pub fn latency_law(name: &str, knob: &str, numeric: bool, pts: &[Point], steps: &[Option<Comparison>]) -> String {
    let means: Vec<String> = pts.iter().map(|p| fmt(p.1)).collect();
    let vals: Vec<&str> = pts.iter().map(|p| p.0.as_str()).collect();
    let head = format!("{name}: mean {} ns at {knob} {}", means.join(" / "), vals.join(" / "));
    if pts.len() < 2 {
        return format!("{head}: one value only, so no curve.");
    }
    let step = |i: usize| steps.get(i).and_then(Option::as_ref);
    let n = pts.len() - 1;
    let outcome = |i: usize| step(i).map_or(Outcome::Undecided, |c| c.outcome);
    let all = |o: &[Outcome]| (0..n).all(|i| o.contains(&outcome(i)));
    let any = |o: Outcome| (0..n).any(|i| outcome(i) == o);
    let words: Vec<String> = (0..n).map(|i| step_words(vals[i], vals[i + 1], step(i))).collect();
    // The ratio of the end means, where it agrees with the steps: the steps are judged on paired
    // medians, so one stalled repetition can move a mean against them.
    let ratio = |r: f64| if r > 1.0 { format!(" x{r:.2}") } else { String::new() };
    let (first, last) = (pts[0].1, pts[n].1);
    let shape = if all(&[Outcome::Same]) {
        format!("flat: {}", words.join(", "))
    } else if numeric && all(&[Outcome::ACheaper, Outcome::Same]) {
        format!("grows{} from {} to {}: {}", ratio(last / first), vals[0], vals[n], words.join(", "))
    } else if numeric && all(&[Outcome::BCheaper, Outcome::Same]) {
        format!("falls{} from {} to {}: {}", ratio(first / last), vals[0], vals[n], words.join(", "))
    } else if any(Outcome::Undecided) {
        // The decided steps first would reorder the curve; in value order a reader follows it.
        words.join("; ")
    } else {
        words.join(", ")
    };
    let judged: Vec<&Comparison> = (0..n).filter_map(step).collect();
    if judged.is_empty() {
        return format!("{head}: {shape}.");
    }
    format!("{head}: {shape} ({}).", basis(&judged))
}

/// "lttng-ust: slow-path period 401 / 1630 / 6545 at subbuf-size 4096 / 16384 / 65536:
/// proportional to subbuf-size (value x4.00, x16.0; period x4.06, x16.3)".
pub fn period_law(name: &str, knob: &str, numeric: bool, pts: &[Point]) -> Option<String> {
    let with: Vec<&Point> = pts.iter().filter(|p| p.3.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let per: Vec<String> =
        pts.iter().map(|p| p.3.map(|v| format!("{v:.0}")).unwrap_or_else(|| "none".into())).collect();
    let vals: Vec<&str> = pts.iter().map(|p| p.0.as_str()).collect();
    let mut s = format!("{name}: slow-path period {} at {knob} {}", per.join(" / "), vals.join(" / "));
    let all_same = with.len() == pts.len() && with.iter().all(|p| p.3 == with[0].3);
    if all_same && pts.len() > 1 {
        s.push_str(": the same at every value.");
        return Some(s);
    }
    if with.len() < pts.len() || with.len() < 2 || !numeric {
        s.push_str(if with.len() < pts.len() {
            ": no period at some values (a run too short for one, or no periodic path), so no law is stated."
        } else {
            "."
        });
        return Some(s);
    }
    let (v0, p0) = (num(&with[0].0).unwrap_or(1.0), with[0].3.unwrap_or(1.0));
    let vr: Vec<f64> = with[1..].iter().map(|p| num(&p.0).unwrap_or(0.0) / v0).collect();
    let pr: Vec<f64> = with[1..].iter().map(|p| p.3.unwrap_or(0.0) / p0).collect();
    let fmt_r = |v: &[f64]| {
        v.iter()
            .map(|r| {
                format!(
                    "x{}",
                    if *r >= 10.0 {
                        format!("{r:.1}")
                    } else if *r >= 0.1 {
                        format!("{r:.2}")
                    } else {
                        format!("{r:.4}")
                    }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let proportional = vr.iter().zip(&pr).all(|(v, p)| (p / v - 1.0).abs() <= SWEEP_FLAT);
    let flat = pr.iter().all(|p| (p - 1.0).abs() <= SWEEP_FLAT);
    let law = if proportional {
        format!("proportional to {knob} (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    } else if flat {
        format!("independent of {knob} (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    } else if vr.windows(2).all(|w| w[1] > w[0]) && pr.iter().all(|p| *p < 1.0) && pr.windows(2).all(|w| w[1] < w[0]) {
        // E.g. LTTng's sub-buffer switch against the payload size: fewer, bigger events per
        // sub-buffer (survey 7.1: SUB-BUFFER_SIZE / EVENT_SIZE).
        format!("falls as {knob} grows (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    } else {
        format!("neither proportional to {knob} nor flat (value {}; period {})", fmt_r(&vr), fmt_r(&pr))
    };
    s.push_str(&format!(": {law}."));
    Some(s)
}

#[cfg(test)]
#[path = "sweep_law_tests.rs"]
mod tests;
