//! Against the survey (README "Against the survey"): where the results agree with the survey's
//! tables and figures and where they depart, only where the data decide it, never
//! under an emulator.
use serde::Serialize;
use serde_json::Value;

use super::comparison;
use super::expected_period::{calls_for, expected_period};
use super::{survey_reference, Report};
use crate::decisions::findings::FLAT_MAX;
use crate::report::model::TracerReport;
use crate::stats::compare::{compare, Outcome, ALPHA, MARGIN};

/// One sentence of the survey check, typed for report.json (`survey_check`): what it compares,
/// what the data say of it, the tracer rows it is about, and the sentence itself (report.md,
/// report.html and the terminal print `text`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SurveyCheck {
    pub topic: Topic,
    pub verdict: SurveyVerdict,
    pub tracers: Vec<String>,
    pub text: String,
}

/// What a survey-check sentence compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Topic {
    /// The run is under an emulator: no timing is compared.
    Emulator,
    /// The order of the single-thread means (Tables 3 and 4).
    Order,
    /// Flat or contended under more threads (Figures 5, 6 and 8).
    Scaling,
    /// A `spin` row's planted slow path, found or not (a check of the analysis).
    PlantedPath,
    /// LTTng-UST's slow path once per sub-buffer switch (section 7.1).
    SubBufferPath,
}

/// What the data say against the survey.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SurveyVerdict {
    Agrees,
    /// Agrees on some pairs; the others depart or are undecided (their own sentences).
    AgreesInPart,
    Departs,
    /// The data do not decide it (too few repetitions or calls); the sentence says what would.
    Undecided,
    /// The survey has nothing to compare with, or the run cannot be compared (an emulator).
    NotCompared,
    /// A planted path is found.
    Found,
    /// A planted path is not found where the run could show it.
    Mismatch,
    /// A caveat beside the verdicts (threads sharing cores).
    Note,
}

fn check(topic: Topic, verdict: SurveyVerdict, tracers: &[&str], text: String) -> SurveyCheck {
    SurveyCheck { topic, verdict, tracers: tracers.iter().map(|t| t.to_string()).collect(), text }
}

/// Where the results agree with the survey and where they depart from it.
pub(crate) fn compare_with_survey(r: &Report) -> Vec<SurveyCheck> {
    let mut out = Vec::new();
    let emulated = survey_reference::emulated(&r.run);
    if let Some(why) = &emulated {
        out.push(check(Topic::Emulator, SurveyVerdict::NotCompared, &[], format!(
            "No timing comparison with the survey: {why}. An emulator's timings say nothing about a tracer's cost, so orderings, scaling and slow-path costs are not compared."
        )));
    }
    compare_timings(r, &mut out, emulated.is_some());
    out
}

/// Orderings, scaling and code paths against the survey. Under an emulator only the planted
/// periods (a check of the analysis, not of a tracer) are compared.
fn compare_timings(r: &Report, out: &mut Vec<SurveyCheck>, emulated: bool) {
    if !emulated {
        compare_order(r, out);
        compare_scaling(r, out);
    }
    compare_paths(r, out, emulated);
}

/// A scaling ratio (the mean at the most threads over the mean at the fewest) with its range
/// across repetitions, and its reading where the data decide it.
#[derive(Debug)]
struct Growth {
    ratio: f64,
    /// The lowest and highest per-repetition ratio (repetitions paired by index), with their count.
    interval: Option<(f64, f64, usize)>,
    /// Flat or contended against the [`FLAT_MAX`] line; `Err(why)` when the comparison does not
    /// decide on which side of the line the mean at more threads lies.
    reading: Result<survey_reference::Scaling, String>,
}

/// Reads the growth from `lo` to `hi` (per-repetition means as (repetition, mean)) and the two
/// means with the one comparison (`stats::compare`): the mean at more threads against FLAT_MAX
/// times the mean at fewer, round by round. Above the line (decided): contended; below: flat;
/// within the margin of the line, or not decided: no reading, with the rounds that would decide.
fn growth(lo: &[(u32, f64)], hi: &[(u32, f64)], lo_mean: f64, hi_mean: f64) -> Growth {
    let pairs: Vec<(f64, f64)> =
        lo.iter().filter_map(|&(r, l)| hi.iter().find(|x| x.0 == r).map(|&(_, h)| (l, h))).collect();
    let ratios: Vec<f64> = pairs.iter().map(|(l, h)| h / l).collect();
    let interval = (ratios.len() >= 2).then(|| {
        (ratios.iter().copied().fold(f64::INFINITY, f64::min), ratios.iter().copied().fold(0.0, f64::max), ratios.len())
    });
    let (line, more): (Vec<f64>, Vec<f64>) = pairs.iter().map(|&(l, h)| (l * FLAT_MAX, h)).unzip();
    let c = compare(&line, &more, None, true, MARGIN, ALPHA);
    let n = pairs.len();
    let reading = match c.outcome {
        Outcome::ACheaper => Ok(survey_reference::Scaling::Contended),
        Outcome::BCheaper => Ok(survey_reference::Scaling::Flat),
        Outcome::Same => Err(format!(
            "it lies on the x{FLAT_MAX:.2} line between flat and contention (within {:.0}% of it over {n} \
             repetitions)",
            100.0 * MARGIN
        )),
        Outcome::Undecided => Err(format!(
            "{n} repetition(s) do not decide on which side of the x{FLAT_MAX:.2} line between flat and contention it \
             lies{}",
            c.rounds_needed.map_or(String::new(), |k| format!("; about {k} would (--repeats {k}, or --budget)"))
        )),
    };
    Growth { ratio: hi_mean / lo_mean, interval, reading }
}

/// Ordering of the single-thread means against Table 3 / Table 4.
fn compare_order(r: &Report, out: &mut Vec<SurveyCheck>) {
    let mut known: Vec<(&TracerReport, survey_reference::Reference, f64)> = r
        .tracers
        .iter()
        .filter_map(|t| Some((t, survey_reference::reference(&t.spec, r.kernel)?, t.base()?.mean)))
        .filter(|x| x.2.is_finite())
        .collect();
    known.sort_by(|a, b| a.1.mean.total_cmp(&b.1.mean));
    if known.len() >= 2 {
        let floor = comparison::floor_row(&r.tracers);
        let (mut agree, mut depart, mut open) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..known.len() {
            for j in i + 1..known.len() {
                // The survey has a cheaper than b.
                let (a, b) = (&known[i], &known[j]);
                if a.1.mean >= b.1.mean {
                    continue;
                }
                let pair = [a.0.label.as_str(), b.0.label.as_str()];
                let c = comparison::judge(a.0, b.0, floor);
                let words = comparison::words(&a.0.label, &b.0.label, &c);
                let survey = format!(
                    "the survey ({}) has {} {:.0} ns < {} {:.0} ns",
                    a.1.table, a.1.label, a.1.mean, b.1.label, b.1.mean
                );
                match c.outcome {
                    Outcome::BCheaper => depart.push((
                        pair,
                        format!(
                            "{} ({:.0} ns) is slower than {} ({:.0} ns; {words}), but {survey}",
                            a.0.label, a.2, b.0.label, b.2
                        ),
                    )),
                    Outcome::Same => depart.push((
                        pair,
                        format!(
                            "{} ({:.0} ns) and {} ({:.0} ns) cost the same ({words}), but {survey}",
                            a.0.label, a.2, b.0.label, b.2
                        ),
                    )),
                    Outcome::ACheaper => agree.push(format!("{} < {}", a.0.label, b.0.label)),
                    Outcome::Undecided => open.push((
                        pair,
                        format!("{} ({:.0} ns) against {} ({:.0} ns): {words}", a.0.label, a.2, b.0.label, b.2),
                    )),
                }
            }
        }
        let labels: Vec<&str> = known.iter().map(|k| k.0.label.as_str()).collect();
        let order = labels.join(" < ");
        for (pair, d) in &depart {
            out.push(check(Topic::Order, SurveyVerdict::Departs, pair, format!("Departs from the survey: {d}.")));
        }
        if depart.is_empty() && open.is_empty() {
            let text = format!("Agrees with the survey ({}): mean latency orders as {order}.", known[0].1.table);
            out.push(check(Topic::Order, SurveyVerdict::Agrees, &labels, text));
        } else if !agree.is_empty() {
            let pairs = known.len() * (known.len() - 1) / 2;
            let mut rest = Vec::new();
            if !depart.is_empty() {
                rest.push(format!("{} depart{}, above", depart.len(), if depart.len() == 1 { "s" } else { "" }));
            }
            if !open.is_empty() {
                rest.push(format!("{} not decided, below", open.len()));
            }
            out.push(check(Topic::Order, SurveyVerdict::AgreesInPart, &labels, format!(
                "Agrees with the survey ({}) on {} of the {pairs} pairs of {}: those {} order as the survey orders them \
                 (of the other pair{}: {}).",
                known[0].1.table,
                agree.len(),
                known.iter().map(|k| k.0.label.as_str()).collect::<Vec<_>>().join(", "),
                agree.len(),
                if depart.len() + open.len() == 1 { "" } else { "s" },
                rest.join("; ")
            )));
        }
        if !open.is_empty() {
            let tracers: Vec<&str> =
                labels.iter().copied().filter(|l| open.iter().any(|(p, _)| p.contains(l))).collect();
            out.push(check(
                Topic::Order,
                SurveyVerdict::Undecided,
                &tracers,
                format!(
                    "Not decided by this run, so not compared with the survey: {}.",
                    open.iter().map(|(_, o)| o.as_str()).collect::<Vec<_>>().join("; ")
                ),
            ));
        }
    }
}

/// Scalability (Figures 5, 6 and 8).
fn compare_scaling(r: &Report, out: &mut Vec<SurveyCheck>) {
    let cpus = ["cpus", "nproc", "online_cpus", "ncpus"]
        .iter()
        .find_map(|k| r.run.get("host").and_then(|h| h.get(*k)).and_then(Value::as_u64));
    let mut oversubscribed = 0u32;
    for t in &r.tracers {
        if t.by_threads.len() < 2 {
            continue;
        }
        let (t0, lo) = t.by_threads.iter().next().unwrap();
        let (t1, hi) = t.by_threads.iter().next_back().unwrap();
        let reps = |n: &u32| t.rep_by_threads.get(n).map(Vec::as_slice).unwrap_or_default();
        let g = growth(reps(t0), reps(t1), lo.mean, hi.mean);
        if !g.ratio.is_finite() {
            continue;
        }
        let shape = |s: survey_reference::Scaling| match s {
            survey_reference::Scaling::Flat => "stays flat",
            survey_reference::Scaling::Contended => "grows (contention)",
        };
        let spread = g.interval.map_or(String::new(), |(a, b, n)| format!(", x{a:.2}–x{b:.2} over {n} repetitions"));
        let what = format!(
            "{}: mean {:.0} ns at {t0} thread(s), {:.0} ns at {t1} (x{:.2}{spread})",
            t.label, lo.mean, hi.mean, g.ratio
        );
        let measured = match g.reading {
            Ok(m) => m,
            Err(why) => {
                out.push(check(
                    Topic::Scaling,
                    SurveyVerdict::Undecided,
                    &[&t.label],
                    format!("Scaling not decided: {what}: {why}, so not compared with the survey."),
                ));
                continue;
            }
        };
        let (verdict, text) = match survey_reference::scaling(&t.spec, &t.config, r.kernel) {
            Some((expected, why)) if expected == measured => (
                SurveyVerdict::Agrees,
                format!("Agrees with the survey: {what}, {} as expected ({why}).", shape(measured)),
            ),
            Some((expected, why)) => (
                SurveyVerdict::Departs,
                format!(
                    "Departs from the survey: {what} {}, where the survey's tracer {} ({why}).",
                    shape(measured),
                    shape(expected)
                ),
            ),
            None => (
                SurveyVerdict::NotCompared,
                format!("{what}: {} (the survey has no scalability result for it).", shape(measured)),
            ),
        };
        out.push(check(Topic::Scaling, verdict, &[&t.label], text));
        if let Some(c) = cpus {
            if *t1 > c as u32 {
                oversubscribed = oversubscribed.max(*t1);
            }
        }
    }
    if oversubscribed > 0 {
        out.push(check(Topic::Scaling, SurveyVerdict::Note, &[], format!(
            "Note: up to {oversubscribed} threads ran on a host with {} CPUs, so threads shared cores and means at those counts include time-slicing, not only contention.",
            cpus.unwrap_or(0)
        )));
    }
}

/// Code paths (section 7.1): planted periods must be found; LTTng-UST should show its
/// once-per-sub-buffer slow path. A verdict is given only when the run holds several expected
/// periods; otherwise the line says how many calls would settle it.
fn compare_paths(r: &Report, out: &mut Vec<SurveyCheck>, emulated: bool) {
    for t in &r.tracers {
        let Some(a) = &t.analysis else { continue };
        let Some(lat) = a.code_paths.iter().find(|c| c.metric == "latency") else { continue };
        let periods: Vec<String> = lat.periodic.iter().map(|p| p.period_text()).collect();
        let n = lat.seq_len;
        let kind = survey_reference::kind(&t.spec);
        if kind == "spin" {
            if let Some(p) = t.config.get("slow_every").and_then(Value::as_u64) {
                if lat.periodic.iter().any(|x| x.phases == 1 && x.period == p) {
                    out.push(check(
                        Topic::PlantedPath,
                        SurveyVerdict::Found,
                        &[&t.label],
                        format!("{}: the planted slow path every {p} calls is found (period {p}).", t.label),
                    ));
                } else if n < 4 * p {
                    out.push(check(Topic::PlantedPath, SurveyVerdict::Undecided, &[&t.label], format!(
                        "{}: a slow path every {p} calls was planted, but {n} calls hold fewer than 4 of its periods; -n {} would show it.",
                        t.label,
                        calls_for(p as f64)
                    )));
                } else {
                    out.push(check(Topic::PlantedPath, SurveyVerdict::Mismatch, &[&t.label], format!(
                        "{}: MISMATCH: a slow path every {p} calls was planted but the report found {}; check the run (discards, too few rows) or the analysis.",
                        t.label,
                        if periods.is_empty() { "no period".to_string() } else { format!("period(s) {}", periods.join(", ")) }
                    )));
                }
            }
        } else if (kind == "lttng-ust" || kind == "lttng") && !r.kernel && !emulated {
            let expected = expected_period(&r.run, t);
            // Without the event size, events are at least 8 bytes: a sub-buffer holds at most
            // subbuf_bytes / 8 of them, which bounds the period from above.
            let bound = t.config.get("subbuf_bytes").and_then(Value::as_f64).map(|b| b / 8.0);
            let e = expected.as_ref().map(|e| e.period).or(bound);
            let matching = lat.periodic.iter().find(|p| {
                expected.as_ref().is_some_and(|e| super::expected_period::near_expected(p.mean_period(), e.period))
            });
            // The calls the path's own line says (those taking it, pass 3), not the search's hits.
            if let (Some(p), Some(ex)) = (matching, &expected) {
                out.push(check(Topic::SubBufferPath, SurveyVerdict::Agrees, &[&t.label], format!(
                    "Agrees with the survey: {} takes a slow path every {} events ({:+.0} ns, {} calls), one per sub-buffer switch as in section 7.1 ({}).",
                    t.label, p.period_text(), p.extra, p.taken, ex.how
                )));
            } else if let (Some(f), Some(ex)) = (folded(r, t), &expected) {
                out.push(check(Topic::SubBufferPath, SurveyVerdict::Agrees, &[&t.label], format!(
                    "Agrees with the survey: one phase of every {} events of {} is slower than its neighbours ({:+.0} ns, in {} of {} sequences), one per sub-buffer switch as in section 7.1 ({}); the search over slow calls did not claim it as a path.",
                    f.period, t.label, f.extra, f.standing_out, f.sequences, ex.how
                )));
            } else if let Some(e) = e.filter(|e| (n as f64) < 4.0 * e) {
                out.push(check(Topic::SubBufferPath, SurveyVerdict::Undecided, &[&t.label], format!(
                    "Cannot tell yet whether {} has the survey's once-per-sub-buffer slow path (section 7.1): its {n} calls hold {} sub-buffers of {}{:.0} events; -n {} would settle it.",
                    t.label,
                    if expected.is_some() { format!("only {:.1}", n as f64 / e) } else { format!("as few as {:.1}", n as f64 / e) },
                    if expected.is_some() { "" } else { "up to " },
                    e,
                    calls_for(e)
                )));
            } else if !periods.is_empty() {
                match &expected {
                    Some(ex) => out.push(check(Topic::SubBufferPath, SurveyVerdict::Departs, &[&t.label], format!(
                        "Departs from the survey: {} has periodic path(s) every {} events, but one per sub-buffer switch would be every {:.0} ({}).",
                        t.label, periods.join(", "), ex.period, ex.how
                    ))),
                    None => out.push(check(Topic::SubBufferPath, SurveyVerdict::NotCompared, &[&t.label], format!(
                        "{}: periodic path(s) every {} events; run.json records no event size to check them against one per sub-buffer switch.",
                        t.label, periods.join(", ")
                    ))),
                }
            } else if let Some(e) = e {
                // Paths about every N calls show in the table ("~N"): said as what they lack, an
                // exact period, not denied.
                let about = about_every(r, t);
                let shows = if about.is_empty() {
                    "shows no periodic slow path".to_string()
                } else {
                    format!(
                        "shows no slow path at an exact period, only about every {} events,",
                        about.iter().map(|m| format!("{m:.0}")).collect::<Vec<_>>().join(", ")
                    )
                };
                out.push(check(Topic::SubBufferPath, SurveyVerdict::Departs, &[&t.label], format!(
                    "Departs from the survey: {} {shows} in {n} calls ({:.1} sub-buffers of {}{:.0} events); section 7.1 finds one per sub-buffer switch.",
                    t.label,
                    n as f64 / e,
                    if expected.is_some() { "" } else { "at most " },
                    e
                )));
            }
        }
    }
}

/// Row `t`'s latency folded at its expected period, where one phase stands out.
fn folded<'a>(r: &'a Report, t: &TracerReport) -> Option<&'a crate::analysis::folded_period::FoldedPeriod> {
    let f = r.findings.iter().find(|f| f.name == t.name)?;
    let m = f.metrics.iter().find(|m| m.metric == "latency")?;
    m.findings.iter().find_map(|x| match x {
        super::Finding::MissingPeriod(p) => p.folded.as_ref(),
        _ => None,
    })
}

/// The spacings of row `t`'s latency paths that recur about every N calls (no exact period).
fn about_every(r: &Report, t: &TracerReport) -> Vec<f64> {
    let f = r.findings.iter().find(|f| f.name == t.name);
    let m = f.and_then(|f| f.metrics.iter().find(|m| m.metric == "latency"));
    m.map_or(Vec::new(), |m| super::expected_period::about_every(&m.findings))
}

#[cfg(test)]
#[path = "survey_check_tests.rs"]
mod tests;
