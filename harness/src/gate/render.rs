//! The gate's outputs: terminal table, markdown (PR comment) and JUnit XML. JSON is the
//! serialised `Report`.
use super::verdict::Verdict;
use super::{Report, Row};

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

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

fn ci(r: &Row) -> String {
    match r.judgement.ci {
        Some((lo, hi)) => format!("[{}, {}]", pct(lo), pct(hi)),
        None => "n/a".into(),
    }
}

fn reps(r: &Row) -> String {
    if r.judgement.n_baseline == r.judgement.n_candidate {
        r.judgement.n_baseline.to_string()
    } else {
        format!("{}/{}", r.judgement.n_baseline, r.judgement.n_candidate)
    }
}

fn headline(rep: &Report) -> String {
    let count = |v: Verdict| rep.rows.iter().filter(|r| r.judgement.verdict == v).count();
    format!(
        "{}: {} regressed, {} improved, {} unchanged, {} inconclusive{}",
        if rep.pass { "PASS" } else { "FAIL" },
        count(Verdict::Regressed),
        count(Verdict::Improved),
        count(Verdict::Unchanged),
        count(Verdict::Inconclusive),
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
    let m = format!(
        "metric {} (one value per repetition); change: {}, with a {} bootstrap interval over repetitions; \
         threshold ±{:.1}%",
        rep.metric,
        if rep.paired {
            "median of the per-pair ratios (repetition i vs i, run back to back)"
        } else {
            match rep.estimator {
                super::verdict::Estimator::HodgesLehmann => {
                    "Hodges-Lehmann (median of all candidate/baseline ratios; central values are medians)"
                }
                super::verdict::Estimator::Median => "ratio of the medians",
                super::verdict::Estimator::Mean => "ratio of the means",
            }
        },
        conf(rep.confidence),
        rep.threshold * 100.0
    );
    m + &seq
}

const HEAD: [&str; 8] = ["tracer", "threads", "reps", "baseline", "candidate", "change", "CI", "verdict"];

fn cells(r: &Row) -> [String; 8] {
    let j = &r.judgement;
    [
        r.tracer.clone(),
        r.threads.to_string(),
        reps(r),
        value(j.baseline, &r.metric),
        value(j.candidate, &r.metric),
        pct(j.change),
        ci(r),
        j.verdict.as_str().to_string(),
    ]
}

pub fn terminal(rep: &Report) -> String {
    let mut head: Vec<String> = HEAD.iter().map(|s| s.to_string()).collect();
    head[6] = format!("{} CI", conf(rep.confidence));
    let body: Vec<[String; 8]> = rep.rows.iter().map(cells).collect();
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
            let cell = if i == 0 || i == 7 {
                format!("{c:<width$}", width = w[i])
            } else {
                format!("{c:>width$}", width = w[i])
            };
            s.push_str(&cell);
            s.push_str(if i + 1 < cols.len() { "  " } else { "\n" });
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = format!("tracebench gate: baseline {}, candidate {}", rep.baseline, rep.candidate);
    if rep.interleaved {
        out.push_str(" (interleaved ABBA)");
    }
    out.push('\n');
    out.push_str(&format!("  {}\n", method(rep)));
    out.push_str(&line(&head));
    for r in &body {
        out.push_str(&line(r));
    }
    for r in &rep.rows {
        if r.judgement.verdict == Verdict::Inconclusive {
            out.push_str(&format!("  {}, {} thread(s): inconclusive: {}\n", r.tracer, r.threads, r.judgement.why));
        }
    }
    out.push_str(&headline(rep));
    out.push('\n');
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn markdown(rep: &Report) -> String {
    let icon = |v: Verdict| match v {
        Verdict::Regressed => ":x: regressed",
        Verdict::Improved => ":rocket: improved",
        Verdict::Unchanged => ":white_check_mark: unchanged",
        Verdict::Inconclusive => ":grey_question: inconclusive",
    };
    let mut out = format!("### tracebench gate: {}\n\n", headline(rep));
    out.push_str(&format!(
        "Baseline `{}`, candidate `{}`{}. {}.\n\n",
        md_escape(&rep.baseline),
        md_escape(&rep.candidate),
        if rep.interleaved { " (interleaved ABBA)" } else { "" },
        method(rep)
    ));
    out.push_str(&format!(
        "| tracer | threads | reps | baseline | candidate | change | {} CI | verdict |\n",
        conf(rep.confidence)
    ));
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---|\n");
    for r in &rep.rows {
        let c = cells(r);
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            md_escape(&c[0]),
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            c[6],
            icon(r.judgement.verdict)
        ));
    }
    let notes: Vec<&Row> = rep.rows.iter().filter(|r| r.judgement.verdict == Verdict::Inconclusive).collect();
    if !notes.is_empty() {
        out.push('\n');
        for r in notes {
            out.push_str(&format!(
                "- `{}`, {} thread(s): {}\n",
                md_escape(&r.tracer),
                r.threads,
                md_escape(&r.judgement.why)
            ));
        }
    }
    out
}

fn xml(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // XML 1.0 forbids most control characters even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

pub fn junit(rep: &Report) -> String {
    let failures = rep
        .rows
        .iter()
        .filter(|r| {
            r.judgement.verdict == Verdict::Regressed || (rep.strict && r.judgement.verdict == Verdict::Inconclusive)
        })
        .count();
    let skipped =
        if rep.strict { 0 } else { rep.rows.iter().filter(|r| r.judgement.verdict == Verdict::Inconclusive).count() };
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"tracebench gate\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n\
         <testsuite name=\"tracebench gate\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n",
        n = rep.rows.len()
    ));
    out.push_str(&format!(
        "  <properties>\n    <property name=\"baseline\" value=\"{}\"/>\n    <property name=\"candidate\" value=\"{}\"/>\n    \
         <property name=\"method\" value=\"{}\"/>\n  </properties>\n",
        xml(&rep.baseline),
        xml(&rep.candidate),
        xml(&method(rep))
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
            xml(&r.tracer),
            r.threads
        ));
        match j.verdict {
            Verdict::Regressed => {
                out.push_str(&format!("    <failure type=\"regression\" message=\"{}\"/>\n", xml(&detail)))
            }
            Verdict::Inconclusive if rep.strict => {
                out.push_str(&format!("    <failure type=\"inconclusive\" message=\"{}\"/>\n", xml(&detail)))
            }
            Verdict::Inconclusive => out.push_str(&format!("    <skipped message=\"{}\"/>\n", xml(&detail))),
            _ => {}
        }
        out.push_str(&format!("    <system-out>{}</system-out>\n  </testcase>\n", xml(&detail)));
    }
    out.push_str("</testsuite>\n</testsuites>\n");
    out
}
