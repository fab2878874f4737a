//! The report's tables (survey Tables 3, 4 and 6, and the scaling table), rendered by
//! `render/mod.rs` into report.html and report.md, and written here as DIR/tables/NAME.csv and
//! NAME.tex (a booktabs `tabular`, ready to `\input`).
use std::path::Path;
use std::sync::RwLock;

use serde::{Deserialize, Serialize};

use crate::report::render::numbers::sig3;
use crate::report::{findings::survey_reference, write_atomic, Report, ReportError};

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

/// `--columns`: which of the latency table's columns its CSV and LaTeX files hold, in order. A
/// global set once by `report::run`, like the figure options.
static CHOSEN: RwLock<Vec<String>> = RwLock::new(Vec::new());

pub fn set_columns(cols: &[String]) -> Result<(), String> {
    let cols: Vec<String> = cols.iter().map(|c| c.trim().to_ascii_lowercase()).filter(|c| !c.is_empty()).collect();
    if let Some(bad) = cols.iter().find(|c| !COLUMNS.contains(&c.as_str())) {
        return Err(format!("--columns: no column '{bad}'; the columns are {}", COLUMNS.join(", ")));
    }
    *CHOSEN.write().unwrap_or_else(|p| p.into_inner()) = cols;
    Ok(())
}

/// The table as its files hold it: the chosen columns of a table with keys (all when none are
/// chosen or the run lacks them all).
pub fn chosen(t: &Table) -> Table {
    let want = CHOSEN.read().unwrap_or_else(|p| p.into_inner()).clone();
    select(t, &want)
}

fn select(t: &Table, want: &[String]) -> Table {
    let idx: Vec<usize> = want.iter().filter_map(|w| t.keys.iter().position(|k| k == w)).collect();
    if t.keys.is_empty() || idx.is_empty() {
        return t.clone();
    }
    Table {
        head: idx.iter().map(|&i| t.head[i].clone()).collect(),
        rows: t.rows.iter().map(|r| idx.iter().map(|&i| r[i].clone()).collect()).collect(),
        keys: idx.iter().map(|&i| t.keys[i].clone()).collect(),
        ..t.clone()
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
        "STD",
        "p50",
        "90th percentile",
        "p99",
        "min",
        "max",
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
        head.push("Mean per repetition (min–max)".into());
        keys.push("repetitions".into());
    }
    head.push(format!("Survey {table_no}: Average / STD / p90 (ns)"));
    keys.push("survey".into());
    let mut rows = Vec::new();
    // Cheapest first: the order the ranking above the tables gives.
    let mut by_cost: Vec<_> = r.tracers.iter().filter(|t| t.base().is_some()).collect();
    by_cost.sort_by(|a, b| a.base().unwrap().mean.total_cmp(&b.base().unwrap().mean));
    for t in by_cost {
        let Some(s) = t.base() else { continue };
        let mut row = vec![
            t.label.clone(),
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
        note: "From summary.csv. The survey's numbers come from a 2016 i7-3770 at 3.4 GHz with a 17 ns floor: compare orderings and gaps above the floor, not absolute values.".into(),
    }
}

/// Counter averages per tracer (survey Table 6), when counters were read.
fn counters_table(r: &Report) -> Option<Table> {
    if r.counters.is_empty() {
        return None;
    }
    let mut head = vec!["Tracer".to_string(), "Latency Average (ns)".into(), "Latency STD".into()];
    for c in &r.counters {
        head.push(format!("{c} Average"));
        head.push(format!("{c} STD"));
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
        keys: Vec::new(),
        title: "Summary of the overhead per call, sorted by average latency (as survey Table 6)".into(),
        head,
        rows,
        note: "Counter averages and STD over the kept calls of events.csv at the fewest threads.".into(),
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
    head.extend(threads.iter().map(|n| format!("{n} thread{} (ns)", if *n == 1 { "" } else { "s" })));
    head.push("Growth (raw means, most / fewest threads)".into());
    let mut ts: Vec<_> = r.tracers.iter().filter(|t| !t.by_threads.is_empty()).collect();
    ts.sort_by(|a, b| {
        let m = |t: &crate::report::TracerReport| t.by_threads.values().next().map_or(f64::NAN, |s| s.mean);
        m(a).total_cmp(&m(b))
    });
    let rows = ts
        .into_iter()
        .map(|t| {
            let mut row = vec![t.label.clone()];
            row.extend(threads.iter().map(|n| t.by_threads.get(n).map(|s| f0(s.mean)).unwrap_or("–".into())));
            let lo = t.by_threads.values().next().unwrap().mean;
            let hi = t.by_threads.values().next_back().unwrap().mean;
            row.push(if t.by_threads.len() > 1 { format!("x{:.2}", hi / lo) } else { "–".into() });
            row
        })
        .collect();
    Some(Table {
        file: "scaling".into(),
        keys: Vec::new(),
        title: "Mean latency against thread count (survey Figures 5, 6 and 8)".into(),
        head,
        rows,
        note: "One thread per core, all tracing at once.".into(),
    })
}

/// A cell as CSV holds it: a missing value ("–") is empty.
fn csv_cell(c: &str) -> &str {
    if c == "–" {
        ""
    } else {
        c
    }
}

/// Escapes LaTeX's special characters; a dash for a missing value or a range is `--`.
pub fn latex_cell(c: &str) -> String {
    let mut out = String::with_capacity(c.len());
    for ch in c.chars() {
        match ch {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '–' => out.push_str("--"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            _ => out.push(ch),
        }
    }
    out
}

/// `\begin{tabular}{l r ...}` with booktabs rules; the title and note as a comment above.
pub fn latex(t: &Table) -> String {
    let cols: String =
        std::iter::once('l').chain(std::iter::repeat('r').take(t.head.len().saturating_sub(1))).collect();
    let line = |cells: &[String]| cells.iter().map(|c| latex_cell(c)).collect::<Vec<_>>().join(" & ") + " \\\\\n";
    let mut s = format!("% {}\n% {}\n% Needs \\usepackage{{booktabs}}.\n", t.title, t.note);
    s.push_str(&format!("\\begin{{tabular}}{{{cols}}}\n\\toprule\n"));
    s.push_str(&line(&t.head));
    s.push_str("\\midrule\n");
    for r in &t.rows {
        s.push_str(&line(r));
    }
    s.push_str("\\bottomrule\n\\end{tabular}\n");
    s
}

pub fn csv(t: &Table) -> Result<String, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| ReportError::Usage(format!("table {}: {e}", t.file));
    w.write_record(&t.head).map_err(err)?;
    for r in &t.rows {
        w.write_record(r.iter().map(|c| csv_cell(c))).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| ReportError::Usage(format!("table {}: {e}", t.file)))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Writes every table as DIR/tables/NAME.csv and NAME.tex.
pub fn write_files(dir: &Path, tables: &[Table]) -> Result<(), ReportError> {
    let tdir = dir.join("tables");
    crate::results::subdir(&tdir)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: tdir.clone(), source }))?;
    for t in tables.iter().map(chosen) {
        for (ext, text) in [("csv", csv(&t)?), ("tex", latex(&t))] {
            let p = tdir.join(format!("{}.{ext}", t.file));
            write_atomic(&p, text.as_bytes())
                .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: p.clone(), source }))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_choose_and_order_the_latency_files() {
        let t = Table {
            file: "t".into(),
            keys: vec!["tracer".into(), "mean".into(), "std".into()],
            title: "x".into(),
            head: vec!["Tracer".into(), "Average (ns)".into(), "STD".into()],
            rows: vec![vec!["lw".into(), sig3(66.04), sig3(2.345)]],
            note: String::new(),
        };
        let s = select(&t, &["std".into(), "tracer".into()]);
        assert_eq!(s.head, ["STD", "Tracer"]);
        assert_eq!(s.rows[0], ["2.35", "lw"]);
        assert!(latex(&select(&t, &["mean".into()])).contains("66.0 \\\\"));
        let e = set_columns(&["mean".into(), "avg".into()]).unwrap_err();
        assert!(e.starts_with("--columns: no column 'avg'; the columns are tracer, threads, kept"), "{e}");
    }
}
