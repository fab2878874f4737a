//! The report's tables (survey Tables 3, 4 and 6, and the scaling table), rendered by
//! `render/mod.rs` into report.html and report.md, and written here as DIR/tables/NAME.csv and
//! NAME.tex (a booktabs `tabular`, ready to `\input`).
use std::path::Path;
use std::sync::RwLock;

use serde::{Deserialize, Serialize};

use crate::report::findings::{survey_reference, Report};
use crate::report::model::ReportError;
use crate::report::render::numbers::sig3;
use crate::results::write_atomic_io as write_atomic;

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
    // The other tables' columns: scaling.tracer, scaling.4, scaling.growth; counters.tracer,
    // counters.mean, counters.std, counters.COUNTER, counters.COUNTER-std (their names depend
    // on the run, so only their form is checked here).
    let other = |c: &str| {
        c.strip_prefix("scaling.").is_some_and(|k| k == "tracer" || k == "growth" || k.parse::<u32>().is_ok())
            || c.strip_prefix("counters.").is_some_and(|k| !k.is_empty())
    };
    if let Some(bad) = cols.iter().find(|c| !COLUMNS.contains(&c.as_str()) && !other(c)) {
        return Err(format!(
            "--columns: no column '{bad}'; the columns are {}, and scaling.tracer, scaling.N (N threads), scaling.growth, counters.tracer, counters.mean, counters.std, counters.COUNTER, counters.COUNTER-std",
            COLUMNS.join(", ")
        ));
    }
    *CHOSEN.write().unwrap_or_else(|p| p.into_inner()) = cols;
    Ok(())
}

/// The table as its files hold it: the chosen columns of a table (all when none of its columns
/// is chosen or the run lacks them all). Plain names choose the latency table's columns;
/// `scaling.` and `counters.` names the other tables'.
pub fn chosen(t: &Table) -> Table {
    let want = CHOSEN.read().unwrap_or_else(|p| p.into_inner()).clone();
    select(t, &want)
}

fn select(t: &Table, want: &[String]) -> Table {
    let prefix = match t.file.as_str() {
        "scaling" => Some("scaling."),
        "table6_counters" => Some("counters."),
        _ => None,
    };
    let mine: Vec<&str> = want
        .iter()
        .filter_map(|w| match prefix {
            Some(p) => w.strip_prefix(p),
            None => (!w.contains('.')).then_some(w.as_str()),
        })
        .collect();
    let idx: Vec<usize> = mine.iter().filter_map(|w| t.keys.iter().position(|k| k.eq_ignore_ascii_case(w))).collect();
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

/// A cell as CSV holds it: a missing value ("–") is empty, a growth a plain number, a name
/// without its mark.
fn csv_cell(c: &str) -> &str {
    if c == "–" {
        ""
    } else {
        c.trim_start_matches('×').trim_end_matches(DAGGER)
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
            '×' => out.push_str("$\\times$"),
            '†' => out.push_str("$^\\dagger$"),
            _ => out.push(ch),
        }
    }
    out
}

/// A two-column article's column, in points (10 pt article, letter or A4): a table wider
/// than this is scaled down to it.
const COLUMN_PT: f64 = 229.0;

/// The natural width of `t` in points at `\small` with 4 pt column separation: 4.6 pt a
/// character (Computer Modern at 9 pt averages less), a mark 5 pt.
fn width_pt(t: &Table) -> f64 {
    let len = |c: &str| c.chars().map(|ch| if ch == '†' || ch == '×' { 5.0 } else { 4.6 }).sum::<f64>();
    (0..t.head.len())
        .map(|i| {
            std::iter::once(&t.head).chain(&t.rows).filter_map(|r| r.get(i)).map(|c| len(c)).fold(0.0, f64::max) + 8.0
        })
        .sum()
}

/// `\begin{tabular}{l r ...}` with booktabs rules at `\small`, the title and note as a comment
/// above; a table wider than a two-column article's column is scaled to it (`\resizebox`,
/// graphicx); a dagger's meaning goes in a last row, as wide as the column.
pub fn latex(t: &Table) -> String {
    let cols: String =
        std::iter::once('l').chain(std::iter::repeat('r').take(t.head.len().saturating_sub(1))).collect();
    let line = |cells: &[String]| cells.iter().map(|c| latex_cell(c)).collect::<Vec<_>>().join(" & ") + " \\\\\n";
    let resize = width_pt(t) > COLUMN_PT;
    let mut s = format!(
        "% {}\n% {}\n% Needs \\usepackage{{booktabs}}{}.\n",
        t.title,
        t.note,
        if resize { " and \\usepackage{graphicx}" } else { "" }
    );
    s.push_str("{\\small\\setlength{\\tabcolsep}{4pt}%\n");
    if resize {
        s.push_str("\\resizebox{\\columnwidth}{!}{%\n");
    }
    s.push_str(&format!("\\begin{{tabular}}{{{cols}}}\n\\toprule\n"));
    s.push_str(&line(&t.head));
    s.push_str("\\midrule\n");
    for r in &t.rows {
        s.push_str(&line(r));
    }
    s.push_str("\\bottomrule\n");
    if t.rows.iter().any(|r| r.iter().any(|c| c.contains(DAGGER))) {
        s.push_str(&format!(
            "\\multicolumn{{{}}}{{@{{}}p{{\\columnwidth}}@{{}}}}{{\\footnotesize $^\\dagger$ Not ordered against another tracer: the runs do not decide which costs more.}}\\\\\n",
            t.head.len()
        ));
    }
    s.push_str("\\end{tabular}");
    s.push_str(if resize { "}%\n}\n" } else { "%\n}\n" });
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
        // The scaling table chooses with its own names; the latency table's leave it whole.
        let sc = Table {
            file: "scaling".into(),
            keys: vec!["tracer".into(), "1".into(), "4".into(), "growth".into()],
            title: "s".into(),
            head: vec!["Tracer".into(), "1 thr. (ns)".into(), "4 thr. (ns)".into(), "Growth".into()],
            rows: vec![vec!["lw†".into(), "60.0".into(), "66.0".into(), "×1.10".into()]],
            note: String::new(),
        };
        assert_eq!(select(&sc, &["mean".into()]).head.len(), 4);
        let s = select(&sc, &["mean".into(), "scaling.tracer".into(), "scaling.growth".into()]);
        assert_eq!(s.head, ["Tracer", "Growth"]);
        let tex = latex(&s);
        assert!(tex.contains("lw$^\\dagger$ & $\\times$1.10 \\\\") && tex.contains("\\multicolumn{2}"), "{tex}");
        assert_eq!(csv(&s).unwrap(), "Tracer,Growth\nlw,1.10\n");
        assert!(set_columns(&["scaling.4".into(), "counters.cycles-std".into()]).is_ok());
        set_columns(&[]).unwrap();
        assert!(set_columns(&["scaling.four".into()]).is_err());
        let e = set_columns(&["mean".into(), "avg".into()]).unwrap_err();
        assert!(e.starts_with("--columns: no column 'avg'; the columns are tracer, threads, kept"), "{e}");
    }
}
