//! The gate's outputs: terminal table, markdown (PR comment) and JUnit XML. JSON is the
//! serialised `Report`.
use super::verdict::{pct, ChangeVerdict};
use super::{JudgedRow, Report};
use crate::escape;

/// A confidence level as a percentage: "99%", or "99.67%" for a sequential gate's per-look level.
fn conf(c: f64) -> String {
    let p = format!("{:.2}", c * 100.0);
    format!("{}%", p.trim_end_matches('0').trim_end_matches('.'))
}

fn value(x: f64, metric: &str) -> String {
    if metric.ends_with("_ns") {
        format!("{x:.1} ns")
    } else if x >= 1e4 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn ci(r: &JudgedRow) -> String {
    match r.judgement.ci {
        Some((lo, hi)) => format!("[{}, {}]", pct(lo), pct(hi)),
        None => "n/a".into(),
    }
}

fn reps(r: &JudgedRow) -> String {
    if r.judgement.n_baseline == r.judgement.n_candidate {
        r.judgement.n_baseline.to_string()
    } else {
        format!("{}/{}", r.judgement.n_baseline, r.judgement.n_candidate)
    }
}

fn headline(rep: &Report) -> String {
    let count = |v: ChangeVerdict| rep.rows.iter().filter(|r| r.judgement.verdict == v).count();
    format!(
        "{}: {} regressed, {} improved, {} unchanged, {} inconclusive{}",
        if rep.pass { "PASS" } else { "FAIL" },
        count(ChangeVerdict::Regressed),
        count(ChangeVerdict::Improved),
        count(ChangeVerdict::Unchanged),
        count(ChangeVerdict::Inconclusive),
        if rep.strict { " (--strict: inconclusive fails)" } else { "" }
    )
}

fn method(rep: &Report) -> String {
    let seq = match &rep.sequential {
        Some(q) => format!(
            "; sequential: {} of {} looks ({} more repetitions per look, at most {}), each interval at {} so \
             that all looks together keep {}",
            q.looks_taken,
            q.looks_planned,
            q.repeats,
            q.max_repeats,
            conf(rep.confidence),
            conf(q.overall_confidence)
        ),
        None => String::new(),
    };
    let exact = if rep.rows.iter().any(|r| r.judgement.exact) {
        " (not applied to exact counts: a count that is the same on every repetition has no noise, so a \
         change in it larger than --count-threshold, by default any change, one instruction included, is its \
         verdict)"
    } else {
        ""
    };
    let c = conf(rep.confidence);
    if !rep.rows.is_empty() && rep.rows.iter().all(|r| r.judgement.exact) {
        // Exact counts have no interval to describe and no floor to subtract.
        return format!(
            "metric {} (one value per repetition, exact); change: the difference of the counts, relative to the \
             cheaper side's; threshold ±{:.1}%{exact}",
            rep.metric,
            rep.threshold * 100.0
        ) + &seq;
    }
    let change = if rep.paired {
        format!("the median of the per-pair differences (repetition i against i, run back to back) with its {c} sign-test interval")
    } else {
        format!("the Hodges-Lehmann shift of candidate over baseline (median of all their differences) with its {c} Mann-Whitney interval")
    };
    let of = if rep.net {
        "cost net of the baseline's none row (--net)"
    } else {
        "raw value (the harness's own call included; --net: the tracer's own cost)"
    };
    let m = format!(
        "metric {} (one value per repetition); change: {change}, relative to the cheaper side's {of}; threshold \
         ±{:.1}%{exact}",
        rep.metric,
        rep.threshold * 100.0
    );
    m + &seq
}

/// The table's header, which says what each value is: the sides' medians, and the change with
/// its interval (paired: the median of the per-pair differences, which need not equal the
/// difference of the two medians).
fn head(rep: &Report) -> Vec<String> {
    let mut h = vec![
        "tracer".to_string(),
        "threads".into(),
        if rep.paired { "pairs" } else { "reps" }.into(),
        "baseline median".into(),
        "candidate median".into(),
        if rep.paired { "change (median pair)" } else { "change" }.into(),
    ];
    h.push(format!("{} CI", conf(rep.confidence)));
    h.push("verdict".into());
    h
}

/// The row's cells; `name` renders the tracer's name (a tracer's string is data: escaped for the
/// format, `crate::escape`).
fn cells(r: &JudgedRow, name: fn(&str) -> String) -> Vec<String> {
    let j = &r.judgement;
    let mut c = vec![
        name(&r.tracer),
        r.threads.to_string(),
        reps(r),
        value(j.baseline, &r.metric),
        value(j.candidate, &r.metric),
    ];
    c.extend([pct(j.change), ci(r), j.verdict.as_str().to_string()]);
    c
}

/// Lines under the table: why a row is inconclusive, that an exact count ignored the threshold,
/// and, paired, where the side medians point the other way from the pairs.
fn row_notes(rep: &Report, name: fn(&str) -> String) -> Vec<String> {
    let mut out = Vec::new();
    for r in &rep.rows {
        let j = &r.judgement;
        let at = format!("{}, {} thread(s)", name(&r.tracer), r.threads);
        if j.verdict == ChangeVerdict::Inconclusive {
            out.push(format!("{at}: inconclusive: {}", j.why));
        } else if j.exact && j.verdict != ChangeVerdict::Unchanged {
            out.push(format!(
                "{at}: {}: {}; the ±{:.1}% threshold does not apply to exact counts (--count-threshold {}: \
                 instructions per call a change may move)",
                j.verdict.as_str(),
                j.why,
                rep.threshold * 100.0,
                rep.count_threshold
            ));
        }
        let sides = j.candidate / j.baseline - 1.0;
        if rep.paired && sides.is_finite() && (sides > 0.0) != (j.change > 0.0) && sides != 0.0 && j.change != 0.0 {
            out.push(format!(
                "{at}: the side medians differ by {} but the median pair changed {}: each pair ran back to back, \
                 so the per-pair change is the one judged",
                pct(sides),
                pct(j.change)
            ));
        }
    }
    out
}

pub fn terminal(rep: &Report) -> String {
    let head = head(rep);
    let last = head.len() - 1;
    let body: Vec<Vec<String>> = rep.rows.iter().map(|r| cells(r, escape::visible)).collect();
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &body {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cols: &[String]| {
        let mut s = String::new();
        for (i, c) in cols.iter().enumerate() {
            // Names left-aligned, numbers right-aligned.
            let cell = if i == 0 || i == last {
                format!("{c:<width$}", width = w[i])
            } else {
                format!("{c:>width$}", width = w[i])
            };
            s.push_str(&cell);
            s.push_str(if i + 1 < cols.len() { "  " } else { "\n" });
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = format!(
        "tracebench gate: baseline {}, candidate {}",
        escape::visible(&rep.baseline),
        escape::visible(&rep.candidate)
    );
    if rep.interleaved {
        out.push_str(" (interleaved ABBA)");
    }
    out.push('\n');
    out.push_str(&format!("  {}\n", method(rep)));
    out.push_str(&line(&head));
    for r in &body {
        out.push_str(&line(r));
    }
    for l in row_notes(rep, escape::visible) {
        out.push_str(&format!("  {l}\n"));
    }
    out.push_str(&headline(rep));
    out.push('\n');
    out
}

pub fn markdown(rep: &Report) -> String {
    let icon = |v: ChangeVerdict| match v {
        ChangeVerdict::Regressed => ":x: regressed",
        ChangeVerdict::Improved => ":rocket: improved",
        ChangeVerdict::Unchanged => ":white_check_mark: unchanged",
        ChangeVerdict::Inconclusive => ":grey_question: inconclusive",
    };
    let mut out = format!("### tracebench gate: {}\n\n", headline(rep));
    out.push_str(&format!(
        "Baseline {}, candidate {}{}. {}.\n\n",
        escape::markdown_code(&rep.baseline, false),
        escape::markdown_code(&rep.candidate, false),
        if rep.interleaved { " (interleaved ABBA)" } else { "" },
        method(rep)
    ));
    let head = head(rep);
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    let align: Vec<&str> =
        (0..head.len()).map(|i| if i == 0 || i + 1 == head.len() { "---" } else { "---:" }).collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in &rep.rows {
        let mut c = cells(r, |n| escape::markdown_code(n, true));
        if let Some(v) = c.last_mut() {
            *v = icon(r.judgement.verdict).to_string();
        }
        out.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    // Each note: the escaped name, then our own words (no '|' matters outside the table).
    let notes = row_notes(rep, |n| escape::markdown_code(n, false));
    if !notes.is_empty() {
        out.push('\n');
        for l in notes {
            out.push_str(&format!("- {l}\n"));
        }
    }
    out
}

pub fn junit(rep: &Report) -> String {
    let failures = rep
        .rows
        .iter()
        .filter(|r| {
            r.judgement.verdict == ChangeVerdict::Regressed
                || (rep.strict && r.judgement.verdict == ChangeVerdict::Inconclusive)
        })
        .count();
    let skipped = if rep.strict {
        0
    } else {
        rep.rows.iter().filter(|r| r.judgement.verdict == ChangeVerdict::Inconclusive).count()
    };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"tracebench gate\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n\
         <testsuite name=\"tracebench gate\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n",
        n = rep.rows.len()
    ));
    out.push_str(&format!(
        "  <properties>\n    <property name=\"baseline\" value=\"{}\"/>\n    <property name=\"candidate\" value=\"{}\"/>\n    \
         <property name=\"method\" value=\"{}\"/>\n  </properties>\n",
        escape::xml(&rep.baseline),
        escape::xml(&rep.candidate),
        escape::xml(&method(rep))
    ));
    for r in &rep.rows {
        let j = &r.judgement;
        let detail = format!(
            "{}: baseline {}, candidate {}, change {} {}; {} ({} repetitions)",
            j.verdict.as_str(),
            value(j.baseline, &r.metric),
            value(j.candidate, &r.metric),
            pct(j.change),
            ci(r),
            j.why,
            reps(r)
        );
        out.push_str(&format!(
            "  <testcase classname=\"tracebench.gate\" name=\"{}, {} threads\">\n",
            escape::xml(&r.tracer),
            r.threads
        ));
        match j.verdict {
            ChangeVerdict::Regressed => {
                out.push_str(&format!("    <failure type=\"regression\" message=\"{}\"/>\n", escape::xml(&detail)))
            }
            ChangeVerdict::Inconclusive if rep.strict => {
                out.push_str(&format!("    <failure type=\"inconclusive\" message=\"{}\"/>\n", escape::xml(&detail)))
            }
            ChangeVerdict::Inconclusive => {
                out.push_str(&format!("    <skipped message=\"{}\"/>\n", escape::xml(&detail)))
            }
            _ => {}
        }
        out.push_str(&format!("    <system-out>{}</system-out>\n  </testcase>\n", escape::xml(&detail)));
    }
    out.push_str("</testsuite>\n</testsuites>\n");
    out
}
