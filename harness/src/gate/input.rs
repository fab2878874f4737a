//! Reading the per-repetition rows of a results directory (`DIR/repetitions.csv`, see the output
//! contract), by column name, never by position.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::GateError;

/// A parsed CSV file: header plus records, every field a string.
#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
    /// Columns holding counter means: `<counter>_mean`, i.e. every `*_mean` column but the time
    /// one (`mean_ns` does not end in `_mean`).
    pub fn counter_columns(&self) -> BTreeSet<String> {
        self.header.iter().filter(|h| h.ends_with("_mean")).cloned().collect()
    }
}

/// Splits CSV text into records (RFC 4180: quoted fields may hold commas, quotes and newlines).
fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut line = 1;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    field.push(c)
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                line += 1;
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    if quoted {
        return Err(format!("unterminated quoted field (started before line {line})"));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    // Blank lines are not records.
    rows.retain(|r| !(r.len() == 1 && r[0].is_empty()));
    Ok(rows)
}

pub fn read_table(path: &Path) -> Result<Table, GateError> {
    let text = std::fs::read_to_string(path).map_err(|e| GateError::Io { path: path.into(), source: e })?;
    let mut rows = parse_csv(&text).map_err(|why| GateError::Csv { path: path.into(), why })?;
    if rows.is_empty() {
        return Err(GateError::Csv { path: path.into(), why: "the file is empty (no header)".into() });
    }
    let header: Vec<String> = rows.remove(0).into_iter().map(|h| h.trim().to_string()).collect();
    for (i, r) in rows.iter().enumerate() {
        if r.len() != header.len() {
            return Err(GateError::Csv {
                path: path.into(),
                why: format!("record {} has {} fields but the header has {}", i + 2, r.len(), header.len()),
            });
        }
    }
    Ok(Table { path: path.into(), header, rows })
}

/// The per-repetition rows of one results directory.
#[derive(Debug, Clone)]
pub struct Results {
    pub dir: PathBuf,
    /// `repetitions.csv`, or `summary.csv` read as a single repetition when a directory has no
    /// `repetitions.csv` (then every verdict is inconclusive: one process is one sample).
    pub table: Table,
    pub from_summary: bool,
}

impl Results {
    pub fn open(dir: &Path) -> Result<Self, GateError> {
        if !dir.is_dir() {
            return Err(GateError::NotAResultsDir {
                dir: dir.into(),
                why: "no such directory; pass the --out directory of a `tracebench run`".into(),
            });
        }
        let reps = dir.join("repetitions.csv");
        let summary = dir.join("summary.csv");
        let (table, from_summary) = if reps.is_file() {
            (read_table(&reps)?, false)
        } else if summary.is_file() {
            (read_table(&summary)?, true)
        } else {
            return Err(GateError::NotAResultsDir {
                dir: dir.into(),
                why: "it has neither repetitions.csv nor summary.csv; pass the --out directory of a \
                      `tracebench run --repeats K`"
                    .into(),
            });
        };
        for need in ["tracer", "threads"] {
            if table.col(need).is_none() {
                return Err(GateError::Csv { path: table.path.clone(), why: format!("no '{need}' column") });
            }
        }
        Ok(Results { dir: dir.into(), table, from_summary })
    }

    /// Appends the rows of `other` (one interleaved repetition) to these, renumbering their
    /// `repetition` column as `repetition` so that the merged table reads like one
    /// `tracebench run --repeats K`.
    pub fn append(&mut self, other: Results, repetition: usize) -> Result<(), GateError> {
        if other.table.header != self.table.header {
            return Err(GateError::Mismatch(format!(
                "{} and {} have different columns; every repetition of one side must run the same command",
                self.table.path.display(),
                other.table.path.display()
            )));
        }
        let rc = self.table.col("repetition");
        for mut r in other.table.rows {
            if let Some(c) = rc {
                r[c] = repetition.to_string();
            }
            self.table.rows.push(r);
        }
        Ok(())
    }

    /// (tracer, threads) keys in the order they first appear.
    pub fn keys(&self) -> Vec<(String, u32)> {
        let (t, th) = (self.table.col("tracer").unwrap(), self.table.col("threads").unwrap());
        let mut out: Vec<(String, u32)> = Vec::new();
        for r in &self.table.rows {
            let k = (r[t].clone(), r[th].trim().parse().unwrap_or(0));
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }

    /// The per-repetition values of `column` for one (tracer, threads), each with its
    /// repetition index (the row's position when there is no `repetition` column); empty or
    /// unparsable fields are errors, since a silently dropped repetition biases the verdict.
    pub fn values(&self, tracer: &str, threads: u32, column: &str) -> Result<Vec<(u64, f64)>, GateError> {
        let (t, th) = (self.table.col("tracer").unwrap(), self.table.col("threads").unwrap());
        let c = self.table.col(column).ok_or_else(|| GateError::Csv {
            path: self.table.path.clone(),
            why: format!("no '{column}' column (columns: {})", self.table.header.join(",")),
        })?;
        let rc = self.table.col("repetition");
        let mut out = Vec::new();
        for (i, r) in self.table.rows.iter().enumerate() {
            if r[t] != tracer || r[th].trim().parse::<u32>().ok() != Some(threads) {
                continue;
            }
            let rep = rc.and_then(|c| r[c].trim().parse::<u64>().ok()).unwrap_or(i as u64);
            match r[c].trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => out.push((rep, v)),
                _ => {
                    return Err(GateError::Csv {
                        path: self.table.path.clone(),
                        why: format!(
                            "record {}: {column} = '{}' for {tracer} x {threads} threads is not a positive number",
                            i + 2,
                            r[c]
                        ),
                    })
                }
            }
        }
        Ok(out)
    }

    /// Writes the (merged) per-repetition table as `dir/repetitions.csv`, so that an interleaved
    /// gate can be re-judged from files alone.
    pub fn write_repetitions(&self, dir: &Path) -> Result<(), GateError> {
        let mut s = String::new();
        let esc = |f: &str| {
            if f.contains([',', '"', '\n']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.to_string()
            }
        };
        for r in std::iter::once(&self.table.header).chain(self.table.rows.iter()) {
            s.push_str(&r.iter().map(|f| esc(f)).collect::<Vec<_>>().join(","));
            s.push('\n');
        }
        std::fs::create_dir_all(dir).map_err(|e| GateError::Io { path: dir.into(), source: e })?;
        super::write_atomic(&dir.join("repetitions.csv"), s.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_and_blank_lines() {
        let rows = parse_csv("a,b\n\"x,1\",\"say \"\"hi\"\"\"\n\n3,4").unwrap();
        assert_eq!(rows, vec![vec!["a", "b"], vec!["x,1", "say \"hi\""], vec!["3", "4"]]);
        assert!(parse_csv("a\n\"open").is_err());
    }
}
