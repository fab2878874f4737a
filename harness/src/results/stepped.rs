//! The files of a stepped run (`run --instructions singlestep`): rows of exact instruction counts
//! without timing columns, and their summaries. Written through the same `rows::CsvWriter`s as a
//! timed run's, with the stepped headers (`columns::STEPPED_*`).
use std::io::{Read, Write};
use std::path::Path;

use super::columns;
use super::events_file::{self, Sink};
use super::rows::{DiscardsWriter, EventsWriter};
use super::AtomicFile;
use crate::error::Error;

/// One stepped call (a line of a stepped events.csv).
#[derive(Debug, Clone, Copy)]
pub struct StepRow<'a> {
    pub tracer: &'a str,
    pub threads: usize,
    pub thread: usize,
    pub cpu: u32,
    pub iteration: u64,
    pub user_instructions: u64,
    pub kernel_entries: u32,
    pub repetition: usize,
    pub clock_retries: u32,
}

impl EventsWriter {
    /// A stepped events.csv (`columns::STEPPED_EVENTS`).
    /// Stepped runs are thousands of calls, never compressed.
    pub fn create_stepped(path: &Path) -> Result<Self, Error> {
        Self::start(Sink::create(path, 0)?, path, &columns::STEPPED_EVENTS.join(","))
    }
    pub fn row_stepped(&mut self, r: &StepRow) -> Result<(), Error> {
        self.line(|f| {
            writeln!(
                f,
                "{},{},{},{},{},{},{},{},1,{}",
                r.tracer,
                r.threads,
                r.thread,
                r.cpu,
                r.iteration,
                r.user_instructions,
                r.kernel_entries,
                r.repetition,
                r.clock_retries
            )
        })
    }
}

impl DiscardsWriter {
    /// A stepped discarded.csv (`columns::STEPPED_DISCARDS`).
    pub fn create_stepped(path: &Path) -> Result<Self, Error> {
        Self::start(AtomicFile::create(path)?, path, &columns::STEPPED_DISCARDS.join(","))
    }
    /// `r.user_instructions` counts the handler's instructions too.
    pub fn row_stepped(&mut self, r: &StepRow, reason: &str) -> Result<(), Error> {
        self.line(|f| {
            writeln!(
                f,
                "{},{},{},{},{},{},{},{}",
                r.tracer, r.threads, r.thread, r.cpu, r.iteration, r.user_instructions, reason, r.repetition
            )
        })
    }
}

/// Streams (iteration, user_instructions, kernel_entries) of a stepped events.csv, by name.
pub fn for_each_stepped(path: &Path, mut f: impl FnMut(u64, u64, u64)) -> Result<(), Error> {
    let mut text = String::new();
    events_file::open(path).and_then(|mut r| r.read_to_string(&mut text)).map_err(|e| Error::io(path, e))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |n: &str| {
        header.iter().position(|h| *h == n).ok_or_else(|| Error::Data {
            path: path.display().to_string(),
            why: format!("no {n} column (not a --instructions singlestep run?)"),
        })
    };
    let (ci, cu, ck) = (col("iteration")?, col(columns::USER_INSTRUCTIONS)?, col(columns::KERNEL_ENTRIES)?);
    for (n, l) in lines.enumerate() {
        if l.is_empty() {
            continue;
        }
        let v: Vec<&str> = l.split(',').collect();
        let num = |c: usize| v.get(c).and_then(|s| s.parse::<u64>().ok());
        match (num(ci), num(cu), num(ck)) {
            (Some(i), Some(u), Some(k)) => f(i, u, k),
            _ => return Err(Error::Data { path: path.display().to_string(), why: format!("line {}: bad row", n + 2) }),
        }
    }
    Ok(())
}

/// One line of a stepped summary.csv or repetitions.csv.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSummaryRow {
    pub tracer: String,
    pub threads: usize,
    pub repetition: Option<usize>,
    pub kept: usize,
    pub discarded: u64,
    pub mean: f64,
    pub min: u64,
    pub p50: u64,
    pub max: u64,
    pub mode: u64,
    pub mode_share: f64,
    pub kernel_entries_mean: f64,
}

/// The stepped summary.csv (or, with `repetition`, repetitions.csv) header.
fn stepped_summary_header(repetition: bool) -> String {
    let mut v: Vec<&str> = columns::SUMMARY_KEY.to_vec();
    if repetition {
        v.push(columns::REPETITION);
    }
    v.extend(columns::STEPPED_SUMMARY_STATS);
    v.join(",")
}

/// Writes a stepped summary.csv (rows without a repetition) or repetitions.csv (with one).
pub fn write_stepped_summary(path: &Path, rows: &[StepSummaryRow], repetition: bool) -> Result<(), Error> {
    let mut f = AtomicFile::create(path)?;
    let io = |e: std::io::Error| Error::io(path, e);
    writeln!(f, "{}", stepped_summary_header(repetition)).map_err(io)?;
    for r in rows {
        let mut line = format!("{},{}", r.tracer, r.threads);
        if let (true, Some(rep)) = (repetition, r.repetition) {
            line.push_str(&format!(",{rep}"));
        }
        line.push_str(&format!(
            ",{},{},{},{:.5},{:.3},{},{},{},{:.3}",
            r.kept, r.discarded, r.mode, r.mode_share, r.mean, r.min, r.p50, r.max, r.kernel_entries_mean
        ));
        writeln!(f, "{line}").map_err(io)?;
    }
    f.commit()
}
