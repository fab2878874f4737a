//! The rules on pairs of rows: the ranking's sentences, the terminal's order line and the survey's
//! orderings against the one comparison each pair got (report.json's `overview.pairs`).
use super::{Contradiction, Said};
use crate::report::findings::comparison::PairJudged;

fn found(out: &mut Vec<Contradiction>, rule: &'static str, detail: String) {
    out.push(Contradiction { rule, row: String::new(), detail });
}

/// The pair of `x` and `y` (either order).
fn pair<'a>(s: &'a Said, x: &str, y: &str) -> Option<&'a PairJudged> {
    s.overview.pairs.iter().find(|p| (p.a == x && p.b == y) || (p.a == y && p.b == x))
}

/// Which of the pair the comparison found cheaper: Some(label), None for the same or undecided.
fn cheaper(p: &PairJudged) -> Option<&str> {
    match p.outcome.as_str() {
        "a_cheaper" => Some(&p.a),
        "b_cheaper" => Some(&p.b),
        _ => None,
    }
}

/// A chain "A < B = C" (the terminal's) or "A < B < C" checked pair by pair: rows joined by "="
/// only are the same; with a "<" between them the left one is cheaper.
fn chain(s: &Said, text: &str, what: &str, out: &mut Vec<Contradiction>) {
    let text = text.trim_end_matches('.').trim_end_matches("...");
    let mut rows = vec![];
    let mut links = vec![];
    let mut rest = text;
    loop {
        let next = [" < ", " = "].iter().filter_map(|sep| rest.find(sep).map(|i| (i, *sep))).min();
        match next {
            Some((i, sep)) => {
                rows.push(rest[..i].to_string());
                links.push(sep.trim().to_string());
                rest = &rest[i + 3..];
            }
            None => {
                rows.push(rest.to_string());
                break;
            }
        }
    }
    for i in 0..rows.len() {
        for j in i + 1..rows.len() {
            let Some(p) = pair(s, &rows[i], &rows[j]) else { continue };
            let same = links[i..j].iter().all(|l| l == "=");
            let ok = if same { p.outcome == "same" } else { cheaper(p) == Some(rows[i].as_str()) };
            if !ok {
                found(
                    out,
                    "pair-order",
                    format!(
                        "{what} says {} {} {}, the comparison of the pair says {} ({} against {})",
                        rows[i],
                        if same { "=" } else { "<" },
                        rows[j],
                        p.outcome,
                        p.b,
                        p.a
                    ),
                );
            }
        }
    }
}

/// The ranking's sentences and the terminal's order line against overview.pairs.
pub(super) fn pair_order(s: &Said, out: &mut Vec<Contradiction>) {
    for t in &s.overview.ranking {
        if let Some(c) = t.strip_prefix("Every pair's order is decided by this run: ") {
            chain(s, c, "the ranking", out);
        }
        for (head, want) in
            [("The same within the margin: ", "same"), ("Not decided against each other: ", "undecided")]
        {
            let Some(list) = t.strip_prefix(head) else { continue };
            for p in &s.overview.pairs {
                let named = list.contains(&format!("{} and {} (", p.a, p.b))
                    || list.contains(&format!("{} and {} (", p.b, p.a));
                if named && p.outcome != want {
                    found(
                        out,
                        "pair-order",
                        format!("the ranking says {} of {} and {}, the comparison says {}", want, p.a, p.b, p.outcome),
                    );
                }
                if !named && p.outcome == want && head.starts_with("The same") {
                    found(
                        out,
                        "pair-order",
                        format!(
                            "{} and {} are the same within the margin, and the ranking's list of such pairs lacks them",
                            p.a, p.b
                        ),
                    );
                }
            }
        }
    }
    for t in &s.terminal {
        if let Some(c) = t.strip_prefix("order: decided, ") {
            chain(s, c, "the terminal", out);
        }
    }
    // Undecided pairs of the overview are the comparison's undecided pairs.
    for u in &s.overview.undecided {
        if pair(s, &u.cheaper, &u.costlier).is_some_and(|p| p.outcome != "undecided") {
            found(
                out,
                "pair-order",
                format!("overview.undecided lists {} and {}, which the comparison decided", u.cheaper, u.costlier),
            );
        }
    }
}

/// The survey's order lines against overview.pairs.
pub(super) fn survey_order(s: &Said, out: &mut Vec<Contradiction>) {
    for v in &s.overview.survey {
        let t = &v.text;
        if let [x, y] = v.tracers.as_slice() {
            let Some(p) = pair(s, x, y) else { continue };
            if t.starts_with("Departs from the survey: ") && t.contains(" is slower than ") {
                if cheaper(p) != Some(y.as_str()) {
                    found(
                        out,
                        "survey-order",
                        format!("the survey line says {x} is slower than {y}; the comparison says {}", p.outcome),
                    );
                }
            } else if t.contains(" cost the same (") && p.outcome != "same" {
                found(
                    out,
                    "survey-order",
                    format!("the survey line says {x} and {y} cost the same; the comparison says {}", p.outcome),
                );
            }
        }
        if let Some(c) = t.split(": mean latency orders as ").nth(1).filter(|_| t.starts_with("Agrees with the survey"))
        {
            chain(s, c, "the survey line", out);
        }
        if let Some(list) = t.strip_prefix("Not decided by this run, so not compared with the survey: ") {
            for p in &s.overview.pairs {
                let against =
                    |x: &str, y: &str| list.contains(&format!("{x} (")) && list.contains(&format!(" against {y} ("));
                if (against(&p.a, &p.b) || against(&p.b, &p.a)) && p.outcome != "undecided" {
                    let named = list.split("; ").any(|one| {
                        (one.starts_with(&format!("{} (", p.a)) && one.contains(&format!(" against {} (", p.b)))
                            || (one.starts_with(&format!("{} (", p.b)) && one.contains(&format!(" against {} (", p.a)))
                    });
                    if named {
                        found(
                            out,
                            "survey-order",
                            format!(
                                "the survey says {} and {} are not decided; the comparison says {}",
                                p.a, p.b, p.outcome
                            ),
                        );
                    }
                }
            }
        }
    }
}
