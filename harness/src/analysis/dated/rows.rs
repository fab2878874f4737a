//! Reading the dated data by column name, through `results::read`'s helpers: `t_ns` in events.csv
//! and sentinels.csv beside it. A file or column that is not there is old data (None), not an error.
use std::collections::BTreeMap;
use std::path::Path;

use super::{Call, Sentinel, SeqKey};
use crate::results::columns::{self, T_NS};
use crate::results::read::{col, csv_err, field, headers, Field, ReadError};
use crate::results::SENTINELS_CSV;

/// An open CSV file and its header's column names.
struct Csv {
    reader: csv::Reader<Box<dyn std::io::BufRead + Send>>,
    header: Vec<String>,
}

/// The file (an events.csv in either form, `results::events_file`), None when it is absent.
fn open(path: &Path) -> Result<Option<Csv>, ReadError> {
    let f = match crate::results::events_file::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReadError::Io { path: path.to_path_buf(), source }),
    };
    let mut r = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(f);
    let h = headers(&mut r, path)?;
    Ok(Some(Csv { reader: r, header: h }))
}

/// Columns read from each row, by name.
struct RowColumns<'a> {
    rec: &'a csv::ByteRecord,
    path: &'a Path,
}

impl RowColumns<'_> {
    fn num<T: Field>(&self, i: usize, what: &str) -> Result<T, ReadError> {
        let line = self.rec.position().map(|p| p.line()).unwrap_or(0);
        field(self.rec.get(i).unwrap_or(b""), what, self.path, line)
    }
}

/// The sentinel rows of `dir/tracer_dir/sentinels.csv` at `threads` threads; None when the run
/// wrote none (a results directory from before sentinels).
pub fn load_sentinels(dir: &Path, tracer_dir: &str, threads: u32) -> Result<Option<Vec<Sentinel>>, ReadError> {
    let path = dir.join(tracer_dir).join(SENTINELS_CSV);
    let Some(Csv { reader: mut r, header: h }) = open(&path)? else { return Ok(None) };
    let c = |n: &str| col(&h, n, &path);
    let (cth, ct, ci, ctn, cl, cr) = (
        c(columns::THREADS)?,
        c(columns::THREAD)?,
        c(columns::ITERATION)?,
        c(T_NS)?,
        c(columns::LATENCY)?,
        c(columns::REPETITION)?,
    );
    let mut out = Vec::new();
    for rec in r.byte_records() {
        let rec = rec.map_err(|e| csv_err(&path, e))?;
        let row = RowColumns { rec: &rec, path: &path };
        if row.num::<u32>(cth, columns::THREADS)? != threads {
            continue;
        }
        out.push(Sentinel {
            key: SeqKey { repetition: row.num(cr, columns::REPETITION)?, thread: row.num(ct, columns::THREAD)? },
            t_ns: row.num(ctn, T_NS)?,
            iteration: row.num(ci, columns::ITERATION)?,
            latency: row.num(cl, columns::LATENCY)?,
        });
    }
    Ok(Some(out))
}

/// Walks the rows of an open CSV at `threads` threads, handing each its sequence (repetition,
/// thread; repetition 0 where the file has no such column) and the row; by column name.
fn by_sequence(
    csv: Csv,
    path: &Path,
    threads: u32,
    mut each: impl FnMut(SeqKey, &RowColumns) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let Csv { reader: mut r, header: h } = csv;
    let (cth, ct) = (col(&h, columns::THREADS, path)?, col(&h, columns::THREAD, path)?);
    let cr = h.iter().position(|n| n == columns::REPETITION);
    let mut rec = csv::ByteRecord::new();
    let mut tally = crate::results::read::RowTally::default();
    while r.read_byte_record(&mut rec).map_err(|e| csv_err(path, e))? {
        tally.tick();
        let row = RowColumns { rec: &rec, path };
        if row.num::<u32>(cth, columns::THREADS)? != threads {
            continue;
        }
        let repetition = match cr {
            Some(i) => row.num(i, columns::REPETITION)?,
            None => 0,
        };
        each(SeqKey { repetition, thread: row.num(ct, columns::THREAD)? }, &row)?;
    }
    Ok(())
}

/// The calls of `dir/tracer_dir/events.csv` at `threads` threads, by sequence, in file order;
/// None when events.csv has no `t_ns` column (old data). Counter sets of one repetition and
/// thread are one sequence: `t_ns` restarts with the cell, iterations do not collide in a run
/// that alternates them, and a run with one set (no PMU) has no such column at all.
#[cfg(test)]
pub fn load_calls(
    dir: &Path,
    tracer_dir: &str,
    threads: u32,
) -> Result<Option<BTreeMap<SeqKey, Vec<Call>>>, ReadError> {
    let mut out: BTreeMap<SeqKey, Vec<Call>> = BTreeMap::new();
    let timed = walk_calls(dir, tracer_dir, threads, |key, c| out.entry(key).or_default().push(c))?;
    Ok(timed.then_some(out))
}

/// Hands each call of `dir/tracer_dir/events.csv` at `threads` threads to `each` with its
/// sequence, in file order, holding nothing: the memory it takes does not grow with the rows.
/// False when events.csv has no `t_ns` column or leaves it empty (old data, a kernel cell: the
/// calls handed so far are then not to be dated).
pub fn walk_calls(
    dir: &Path,
    tracer_dir: &str,
    threads: u32,
    mut each: impl FnMut(SeqKey, Call),
) -> Result<bool, ReadError> {
    let path = dir.join(tracer_dir).join(crate::results::EVENTS_CSV);
    let Some(csv) = open(&path)? else {
        return Err(ReadError::NotResults { dir: dir.join(tracer_dir), missing: crate::results::EVENTS_CSV.into() });
    };
    let Some(ctn) = csv.header.iter().position(|n| n == T_NS) else { return Ok(false) };
    let (ci, cl) = (col(&csv.header, columns::ITERATION, &path)?, col(&csv.header, columns::LATENCY, &path)?);
    let mut untimed = false;
    by_sequence(csv, &path, threads, |key, row| {
        // A kernel cell's rows leave t_ns empty (the module's samples carry no start time): a
        // run without times, as old data.
        if untimed || row.rec.get(ctn).is_none_or(|s| s.trim_ascii().is_empty()) {
            untimed = true;
            return Ok(());
        }
        each(
            key,
            Call {
                t_ns: row.num(ctn, T_NS)?,
                iteration: row.num(ci, columns::ITERATION)?,
                latency: row.num(cl, columns::LATENCY)?,
            },
        );
        Ok(())
    })?;
    Ok(!untimed)
}

/// The iterations of the calls `dir/tracer_dir/discarded.csv` holds at `threads` threads (each
/// disturbed from outside the tracer: its reasons are the detector's), by sequence; None when
/// the file is absent.
pub fn load_discards(
    dir: &Path,
    tracer_dir: &str,
    threads: u32,
) -> Result<Option<BTreeMap<SeqKey, Vec<u64>>>, ReadError> {
    let path = dir.join(tracer_dir).join("discarded.csv");
    let Some(csv) = open(&path)? else { return Ok(None) };
    let ci = col(&csv.header, columns::ITERATION, &path)?;
    let mut out: BTreeMap<SeqKey, Vec<u64>> = BTreeMap::new();
    by_sequence(csv, &path, threads, |key, row| {
        out.entry(key).or_default().push(row.num(ci, columns::ITERATION)?);
        Ok(())
    })?;
    Ok(Some(out))
}
