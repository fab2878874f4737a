//! The report's tables (survey Tables 3, 4 and 6, and the scaling table), rendered by
//! `render/mod.rs` into report.html and report.md, and written as DIR/tables/NAME.csv and
//! NAME.tex by table_files.rs.

use serde::{Deserialize, Serialize};

use crate::report::findings::{survey_reference, Report};
use crate::report::render::numbers::sig3;

/// A table: header and rows of cells, rendered to both formats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// File stem under DIR/tables/ (`table4_latency.csv`, `.tex`).
    pub file: String,
    /// The `--columns` name of each column, where the files may choose among them (the latency
    /// table); empty: the files hold every column.
    #[serde(default)]
    pub keys: Vec<String>,
    pub title: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub note: String,
}

/// The latency table's columns by their `--columns` name, in the table's order.
pub const COLUMNS: [&str; 14] = [
    "tracer",
    "threads",
    "kept",
    "discarded",
    "mean",
    "std",
    "p50",
    "p90",
    "p99",
    "min",
    "max",
    "above-none",
    "repetitions",
    "survey",
];

/// The mark of a tracer the comparison could not order against another (report.json's
/// `overview.pairs`, outcome `undecided`).
pub const DAGGER: &str = "†";

/// The labels of the tracers in an undecided pair.
fn undecided_labels(r: &Report) -> std::collections::BTreeSet<String> {
    let rk = crate::report::findings::ranking::rank(r);
    rk.undecided.iter().flat_map(|u| [u.0.clone(), u.1.clone()]).collect()
}

fn undecided_note(u: &std::collections::BTreeSet<String>) -> String {
    if u.is_empty() {
        String::new()
    } else {
        format!(" {DAGGER} not ordered against another tracer: the runs do not decide which costs more (report.md names the pairs).")
    }
}

/// Every number to three significant digits (numbers.rs: the report's one rounding rule).
fn f0(v: f64) -> String {
    sig3(v)
}
fn f1(v: f64) -> String {
    sig3(v)
}

pub fn tables(r: &Report) -> Vec<Table> {
    let mut out = vec![latency_table(r)];
    out.extend(counters_table(r));
    out.extend(scaling_table(r));
    out
}

/// Latency per tracer at the fewest threads, cheapest first (survey Table 3 or 4).
fn latency_table(r: &Report) -> Table {
    let table_no = if r.kernel { "Table 3" } else { "Table 4" };
    let none_mean =
        r.tracers.iter().find(|t| survey_reference::kind(&t.spec) == "none").and_then(|t| t.base()).map(|s| s.mean);
    let with_reps = r.tracers.iter().any(|t| t.rep_means.len() > 1);
    let mut head: Vec<String> = [
        "Tracer",
        "Threads",
        "Kept",
        "Discarded",
        "Average (ns)",
        "STD (ns)",
        "p50 (ns)",
        "p90 (ns)",
        "p99 (ns)",
        "min (ns)",
        "max (ns)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut keys: Vec<String> = COLUMNS[..11].iter().map(|s| s.to_string()).collect();
    if none_mean.is_some() {
        head.push("Above none (ns)".into());
        keys.push("above-none".into());
    }
    if with_reps {
        head.push("Reps' means (ns)".into());
        keys.push("repetitions".into());
    }
    head.push("Survey (ns)".into());
    keys.push("survey".into());
    let undecided = undecided_labels(r);
    let mut rows = Vec::new();
    // Cheapest first: the order the ranking above the tables gives.
    let mut by_cost: Vec<_> = r.tracers.iter().filter(|t| t.base().is_some()).collect();
    by_cost.sort_by(|a, b| a.base().unwrap().mean.total_cmp(&b.base().unwrap().mean));
    for t in by_cost {
        let Some(s) = t.base() else { continue };
        let mark = if undecided.contains(&t.label) { DAGGER } else { "" };
        let mut row = vec![
            format!("{}{mark}", t.label),
            s.threads.to_string(),
            s.kept.to_string(),
            s.discarded.to_string(),
            f0(s.mean),
            f1(s.std),
            f0(s.p50),
            f0(s.p90),
            f0(s.p99),
            f0(s.min),
            f0(s.max),
        ];
        if let Some(n) = none_mean {
            row.push(f0(s.mean - n));
        }
        if with_reps {
            let lo = t.rep_means.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = t.rep_means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            row.push(if t.rep_means.len() > 1 {
                format!("{}–{} ({} reps)", f0(lo), f0(hi), t.rep_means.len())
            } else {
                "–".into()
            });
        }
        row.push(match survey_reference::reference(&t.spec, r.kernel) {
            Some(x) => format!("{}: {} / {} / {}", x.label, x.mean, x.std, x.p90),
            None => "–".into(),
        });
        rows.push(row);
    }
    Table {
        file: if r.kernel { "table3_latency" } else { "table4_latency" }.into(),
        keys,
        title: format!("Latency per tracer (as survey {table_no}), fewest threads, cheapest first"),
        head,
        rows,
        note: format!("From summary.csv; ns per call. Reps' means: lowest to highest repetition's mean. Survey: survey {table_no}'s Average / STD / p90 for the same tracer; its numbers come from a 2016 i7-3770 at 3.4 GHz with a 17 ns floor: compare orderings and gaps above the floor, not absolute values.{}", undecided_note(&undecided)),
    }
}

/// Counter averages per tracer (survey Table 6), when counters were read.
fn counters_table(r: &Report) -> Option<Table> {
    if r.counters.is_empty() {
        return None;
    }
    let mut head = vec!["Tracer".to_string(), "Latency Average (ns)".into(), "Latency STD (ns)".into()];
    let mut keys: Vec<String> = ["tracer", "mean", "std"].iter().map(|s| s.to_string()).collect();
    for c in &r.counters {
        head.push(format!("{c} Average"));
        head.push(format!("{c} STD"));
        keys.push(c.clone());
        keys.push(format!("{c}-std"));
    }
    let mut ts: Vec<_> = r.tracers.iter().filter(|t| t.base().is_some()).collect();
    ts.sort_by(|a, b| a.base().unwrap().mean.total_cmp(&b.base().unwrap().mean));
    let rows = ts
        .iter()
        .map(|t| {
            let s = t.base().unwrap();
            let mut row = vec![t.label.clone(), f0(s.mean), f1(s.std)];
            for c in &r.counters {
                let st = t.analysis.as_ref().and_then(|a| a.counters.iter().find(|x| &x.name == c && x.running.n > 0));
                match st {
                    Some(st) => {
                        row.push(f1(st.running.mean()));
                        row.push(f1(st.running.std()));
                    }
                    None => {
                        let m = s.counter_means.iter().find(|x| &x.0 == c).map(|x| x.1).unwrap_or(f64::NAN);
                        row.push(f1(m));
                        row.push("–".into());
                    }
                }
            }
            row
        })
        .collect();
    Some(Table {
        file: "table6_counters".into(),
        keys,
        title: "Summary of the overhead per call, sorted by average latency (as survey Table 6)".into(),
        head,
        rows,
        note: "Counter averages and STD over the kept calls of events.csv at the fewest threads; --columns chooses with counters.tracer, counters.mean, counters.std, counters.COUNTER and counters.COUNTER-std.".into(),
    })
}

/// Mean latency against thread count (survey Figures 5, 6 and 8), when several were run.
fn scaling_table(r: &Report) -> Option<Table> {
    let threads: std::collections::BTreeSet<u32> =
        r.tracers.iter().flat_map(|t| t.by_threads.keys().copied()).collect();
    if threads.len() < 2 {
        return None;
    }
    let mut head = vec!["Tracer".to_string()];
    head.extend(threads.iter().map(|n| format!("{n} thr. (ns)")));
    head.push("Growth".into());
    let mut keys = vec!["tracer".to_string()];
    keys.extend(threads.iter().map(|n| n.to_string()));
    keys.push("growth".into());
    let undecided = undecided_labels(r);
    let mut ts: Vec<_> = r.tracers.iter().filter(|t| !t.by_threads.is_empty()).collect();
    ts.sort_by(|a, b| {
        let m = |t: &crate::report::model::TracerReport| t.by_threads.values().next().map_or(f64::NAN, |s| s.mean);
        m(a).total_cmp(&m(b))
    });
    let rows = ts
        .into_iter()
        .map(|t| {
            let mark = if undecided.contains(&t.label) { DAGGER } else { "" };
            let mut row = vec![format!("{}{mark}", t.label)];
            row.extend(threads.iter().map(|n| t.by_threads.get(n).map(|s| f0(s.mean)).unwrap_or("–".into())));
            let lo = t.by_threads.values().next().unwrap().mean;
            let hi = t.by_threads.values().next_back().unwrap().mean;
            row.push(if t.by_threads.len() > 1 { format!("×{:.2}", hi / lo) } else { "–".into() });
            row
        })
        .collect();
    Some(Table {
        file: "scaling".into(),
        keys,
        title: "Mean latency against thread count (survey Figures 5, 6 and 8)".into(),
        head,
        rows,
        note: format!("Mean ns per call, one thread per core, all tracing at once; thr.: threads. Growth: the raw mean at the most threads over the mean at the fewest. --columns chooses with scaling.tracer, scaling.N (N threads) and scaling.growth.{}", undecided_note(&undecided)),
    })
}
