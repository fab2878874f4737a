//! Reading the per-repetition rows of a results directory (`DIR/repetitions.csv`, see the output
//! contract), by column name, never by position.
use std::path::{Path, PathBuf};

use super::GateError;
use crate::results;

pub use crate::results::table::Table;

/// Reads a CSV file of ours; see [`Table::read`].
pub fn read_table(path: &Path) -> Result<Table, GateError> {
    Ok(Table::read(path)?)
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
        if let Some(why) = results::owner::unreadable(dir) {
            return Err(GateError::Other(why));
        }
        if !dir.is_dir() {
            return Err(GateError::NotAResultsDir {
                dir: dir.into(),
                why: "no such directory; pass the --out directory of a `tracebench run`".into(),
            });
        }
        let reps = dir.join(crate::results::REPETITIONS_CSV);
        let summary = dir.join(crate::results::SUMMARY_CSV);
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
        // An interrupted run's rows lack repetitions or thread counts: said in one line, before
        // any column is judged (results::read::interrupted_line, as the report and `run` say it).
        let run_json = std::fs::read_to_string(dir.join(crate::results::RUN_JSON))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        if let Some(line) = run_json.as_ref().and_then(crate::results::read::interrupted_line) {
            return Err(GateError::InterruptedRun { dir: dir.into(), line });
        }
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
    /// gate can be re-judged from files alone. (Our CSV never quotes: names cannot hold commas.)
    pub fn write_repetitions(&self, dir: &Path) -> Result<(), GateError> {
        let mut s = String::new();
        for r in std::iter::once(&self.table.header).chain(self.table.rows.iter()) {
            s.push_str(&r.join(","));
            s.push('\n');
        }
        results::owner::made_dir(dir);
        std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
        Ok(results::write_atomic(dir.join(crate::results::REPETITIONS_CSV), s.as_bytes())?)
    }
}
