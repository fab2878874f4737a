//! A whole small CSV file of ours (summary.csv, repetitions.csv) read into memory, by column
//! name. Our files never quote. A record with a different number of fields than the header is an
//! error, so a truncated or hand-edited file never shifts a column. (events.csv is streamed
//! instead: `rows::for_each_event`, or the report's own streaming reader.)
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::columns;
use crate::error::Error;

#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn read(path: &Path) -> Result<Table, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut lines = text.lines();
        let data = |why: String| Error::Data { path: path.display().to_string(), why };
        let header: Vec<String> =
            lines.next().ok_or_else(|| data("empty file".into()))?.split(',').map(|h| h.trim().to_string()).collect();
        let mut rows = Vec::new();
        for (i, l) in lines.enumerate() {
            if l.is_empty() {
                continue;
            }
            let r: Vec<String> = l.split(',').map(str::to_string).collect();
            if r.len() != header.len() {
                return Err(data(format!(
                    "record {} has {} fields but the header has {}",
                    i + 2,
                    r.len(),
                    header.len()
                )));
            }
            rows.push(r);
        }
        Ok(Table { path: path.to_path_buf(), header, rows })
    }

    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Columns holding counter means: `<counter>_mean` (`mean_ns` does not end in `_mean`).
    pub fn counter_columns(&self) -> BTreeSet<String> {
        self.header.iter().filter(|h| h.ends_with(columns::COUNTER_MEAN_SUFFIX)).cloned().collect()
    }
}
