//! The tables' files: DIR/tables/NAME.csv and NAME.tex (a booktabs `tabular`, ready to
//! `\input`), each holding the columns `--columns` chose.
use std::path::Path;
use std::sync::RwLock;

use crate::report::model::ReportError;
use crate::report::render::tables::{Table, COLUMNS, DAGGER};
use crate::results::write_atomic_io as write_atomic;

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
    crate::results::owner::subdir(&tdir)
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
    use crate::report::render::numbers::sig3;

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
