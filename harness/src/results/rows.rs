//! Typed rows of the CSV files and their writers. A measuring cell writes its rows here in their
//! final form, once; the merge stage concatenates cells and computes the summaries.
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use super::columns;
use super::events_file::{self, Sink};
use super::AtomicFile;
use crate::error::Error;
use crate::stats::Summary;

/// One kept call (a line of events.csv).
#[derive(Debug, Clone, Copy)]
pub struct EventRow<'a> {
    pub tracer: &'a str,
    pub threads: usize,
    pub thread: usize,
    pub cpu: u32,
    pub iteration: u64,
    pub latency_ns: f64,
    /// One value per column of the run's counters; None where this counter set did not read it.
    pub counters: &'a [Option<u64>],
    pub repetition: usize,
    pub counter_set: usize,
    /// The window's start (`columns::T_NS`); None where the cell has no time.
    pub t_ns: Option<f64>,
}

/// One discarded call (a line of discarded.csv).
#[derive(Debug, Clone, Copy)]
pub struct DiscardRow<'a> {
    pub tracer: &'a str,
    pub threads: usize,
    pub thread: usize,
    pub cpu: u32,
    pub iteration: u64,
    pub latency_ns: f64,
    /// "timer-irq+softirq".
    pub reason: &'a str,
    pub repetition: usize,
}

/// Where a CSV file's bytes go until it appears whole: an `AtomicFile`, or events.csv's `Sink`
/// (compressed when large).
pub trait Commit: Write {
    fn commit(self) -> Result<(), Error>;
}

impl Commit for AtomicFile {
    fn commit(self) -> Result<(), Error> {
        AtomicFile::commit(self)
    }
}

impl Commit for Sink {
    fn commit(self) -> Result<(), Error> {
        Sink::commit(self)
    }
}

/// One CSV file being written: its header (from `columns`) first, then its rows, then `commit`,
/// which makes it appear whole. `K` names the file (`Events`, `Discards`, `Sentinels`,
/// `Reference`) and so which rows it takes; `F` is where the bytes go.
pub struct CsvWriter<K, F = AtomicFile> {
    f: F,
    path: PathBuf,
    kind: std::marker::PhantomData<K>,
}

/// events.csv (`EventRow`, or `StepRow` in a stepped run).
pub struct Events;
/// discarded.csv (`DiscardRow`, or `StepRow` in a stepped run).
pub struct Discards;
/// sentinels.csv (`SentinelRow`).
pub struct Sentinels;
/// reference.csv (`ReferenceRow`).
pub struct Reference;

/// events.csv, written atomically; compressed when the planned rows are many (`events_file`).
pub type EventsWriter = CsvWriter<Events, Sink>;
/// discarded.csv, written atomically.
pub type DiscardsWriter = CsvWriter<Discards>;
/// sentinels.csv, written atomically.
pub type SentinelsWriter = CsvWriter<Sentinels>;
/// reference.csv, written atomically.
pub type ReferenceWriter = CsvWriter<Reference>;

impl<K, F: Commit> CsvWriter<K, F> {
    /// Writes `header` as the first line of `f`, the file at `path`.
    pub(super) fn start(mut f: F, path: &Path, header: &str) -> Result<Self, Error> {
        writeln!(f, "{header}").map_err(|e| Error::io(path, e))?;
        Ok(CsvWriter { f, path: path.to_path_buf(), kind: std::marker::PhantomData })
    }
    /// One row, as `write` writes it (its line ending included).
    pub(super) fn line(&mut self, write: impl FnOnce(&mut F) -> std::io::Result<()>) -> Result<(), Error> {
        write(&mut self.f).map_err(|e| Error::io(&self.path, e))
    }
    /// Appends the body (every line after the header) of another file of the same kind written
    /// with the same header: how the merge joins cells without re-formatting their rows.
    pub fn append_body_of(&mut self, other: &Path) -> Result<(), Error> {
        append_body(&mut self.f, other, &self.path)
    }
    pub fn commit(self) -> Result<(), Error> {
        self.f.commit()
    }
    /// Appends the body of each of `cells`, then commits: the cells' files of this kind joined
    /// under one header.
    pub fn commit_joined(mut self, cells: &[PathBuf]) -> Result<(), Error> {
        for c in cells {
            self.append_body_of(c)?;
        }
        self.commit()
    }
}

impl EventsWriter {
    /// `path` is the plain name (`DIR/events.csv`) whichever form the rows take.
    pub fn create(path: &Path, counters: &[String], planned_rows: u64) -> Result<Self, Error> {
        Self::start(Sink::create(path, planned_rows)?, path, &events_header(counters))
    }
    pub fn row(&mut self, r: &EventRow) -> Result<(), Error> {
        self.line(|f| {
            write!(f, "{},{},{},{},{},{:.2}", r.tracer, r.threads, r.thread, r.cpu, r.iteration, r.latency_ns)?;
            for c in r.counters {
                match c {
                    Some(v) => write!(f, ",{v}")?,
                    None => write!(f, ",")?,
                }
            }
            write!(f, ",{},{},", r.repetition, r.counter_set)?;
            match r.t_ns {
                Some(t) => writeln!(f, "{t:.0}"),
                None => writeln!(f),
            }
        })
    }
}

/// The events.csv header for a run that read `counters`.
fn events_header(counters: &[String]) -> String {
    let mut v: Vec<&str> = columns::EVENTS_HEAD.to_vec();
    v.extend(counters.iter().map(String::as_str));
    v.extend(columns::EVENTS_TAIL);
    v.join(",")
}

impl DiscardsWriter {
    pub fn create(path: &Path) -> Result<Self, Error> {
        Self::start(AtomicFile::create(path)?, path, &columns::DISCARDS.join(","))
    }
    pub fn row(&mut self, r: &DiscardRow) -> Result<(), Error> {
        self.line(|f| {
            writeln!(
                f,
                "{},{},{},{},{},{:.2},{},{}",
                r.tracer, r.threads, r.thread, r.cpu, r.iteration, r.latency_ns, r.reason, r.repetition
            )
        })
    }
}

/// One kept sentinel window (a line of sentinels.csv).
#[derive(Debug, Clone, Copy)]
pub struct SentinelRow<'a> {
    pub tracer: &'a str,
    pub threads: usize,
    pub thread: usize,
    pub cpu: u32,
    /// The tracer iteration this sentinel precedes.
    pub iteration: u64,
    pub t_ns: f64,
    pub latency_ns: f64,
    pub repetition: usize,
}

impl SentinelsWriter {
    pub fn create(path: &Path) -> Result<Self, Error> {
        Self::start(AtomicFile::create(path)?, path, &columns::SENTINELS.join(","))
    }
    pub fn row(&mut self, r: &SentinelRow) -> Result<(), Error> {
        self.line(|f| {
            writeln!(
                f,
                "{},{},{},{},{},{:.0},{:.2},{}",
                r.tracer, r.threads, r.thread, r.cpu, r.iteration, r.t_ns, r.latency_ns, r.repetition
            )
        })
    }
}

/// One bin of kept reference windows (a line of reference.csv).
#[derive(Debug, Clone, Copy)]
pub struct ReferenceRow<'a> {
    pub tracer: &'a str,
    pub threads: usize,
    pub thread: usize,
    pub repetition: usize,
    pub loop_iterations: u64,
    pub latency_lo_ns: f64,
    pub latency_hi_ns: f64,
    pub windows: u64,
}

impl ReferenceWriter {
    pub fn create(path: &Path) -> Result<Self, Error> {
        Self::start(AtomicFile::create(path)?, path, &columns::REFERENCE.join(","))
    }
    pub fn row(&mut self, r: &ReferenceRow) -> Result<(), Error> {
        self.line(|f| {
            writeln!(
                f,
                "{},{},{},{},{},{:.2},{:.2},{}",
                r.tracer,
                r.threads,
                r.thread,
                r.repetition,
                r.loop_iterations,
                r.latency_lo_ns,
                r.latency_hi_ns,
                r.windows
            )
        })
    }
}

/// `from` in either form (`events_file::open`).
fn append_body(to: &mut impl Write, from: &Path, to_path: &Path) -> Result<(), Error> {
    let mut r = events_file::open(from).map_err(|e| Error::io(from, e))?;
    let mut header = String::new();
    r.read_line(&mut header).map_err(|e| Error::io(from, e))?;
    std::io::copy(&mut r, to).map_err(|e| Error::io(to_path, e))?;
    Ok(())
}

/// Streams the latency and counter values of an events.csv (by column name), for the merge's
/// summaries. `counters` are looked up by name; a counter the file lacks, or an empty field,
/// gives None.
pub fn for_each_event(path: &Path, counters: &[String], mut f: impl FnMut(f64, &[Option<f64>])) -> Result<(), Error> {
    let mut r = events_file::open(path).map_err(|e| Error::io(path, e))?;
    let mut line = String::new();
    r.read_line(&mut line).map_err(|e| Error::io(path, e))?;
    let header: Vec<String> = line.trim_end().split(',').map(str::to_string).collect();
    let col = |n: &str| header.iter().position(|h| h == n);
    let lat = col(columns::LATENCY)
        .ok_or_else(|| Error::Data { path: path.display().to_string(), why: "no latency_ns column".into() })?;
    let map: Vec<Option<usize>> = counters.iter().map(|c| col(c)).collect();
    let mut vals = vec![None; counters.len()];
    loop {
        line.clear();
        if r.read_line(&mut line).map_err(|e| Error::io(path, e))? == 0 {
            break;
        }
        let l = line.trim_end();
        if l.is_empty() {
            continue;
        }
        let field = |i: usize| l.split(',').nth(i);
        let latency: f64 = field(lat).and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
        for (v, m) in vals.iter_mut().zip(&map) {
            *v = m.and_then(field).and_then(|s| s.parse().ok());
        }
        f(latency, &vals);
    }
    Ok(())
}

/// One line of summary.csv or repetitions.csv (and of the terminal table) as the merge makes it
/// from the cells; `read::SummaryRow` is the same line as the report and the gate read it back.
#[derive(Debug, Clone)]
pub struct MergedRow {
    pub tracer: String,
    pub threads: usize,
    pub repetition: Option<usize>,
    pub kept: usize,
    pub discarded: u64,
    pub s: Summary,
    pub counter_means: Vec<Option<f64>>,
    /// Median of the means of blocks of consecutive kept iterations (`mom_ns`).
    pub mom: f64,
    /// Kept calls in which the thread slept inside the tracer (`blocked`), and their mean
    /// latency (`blocked_mean_ns`, empty when none).
    pub blocked: u64,
    pub blocked_mean_ns: Option<f64>,
}

/// The summary.csv (or, with `repetition`, repetitions.csv) header.
pub fn summary_header(counters: &[String], repetition: bool) -> String {
    let mut v: Vec<String> = columns::SUMMARY_KEY.iter().map(|s| s.to_string()).collect();
    if repetition {
        v.push(columns::REPETITION.into());
    }
    v.extend(columns::SUMMARY_STATS.iter().map(|s| s.to_string()));
    v.extend(counters.iter().map(|c| format!("{c}{}", columns::COUNTER_MEAN_SUFFIX)));
    v.push(columns::MOM.into());
    v.push(columns::BLOCKED.into());
    v.push(columns::BLOCKED_MEAN.into());
    v.join(",")
}

/// Writes summary.csv (rows without a repetition) or repetitions.csv (rows with one).
pub fn write_summary(path: &Path, rows: &[MergedRow], counters: &[String], repetition: bool) -> Result<(), Error> {
    let mut f = AtomicFile::create(path)?;
    let io = |e: std::io::Error| Error::io(path, e);
    writeln!(f, "{}", summary_header(counters, repetition)).map_err(io)?;
    for r in rows {
        let s = &r.s;
        let mut line = format!("{},{}", r.tracer, r.threads);
        if let (true, Some(rep)) = (repetition, r.repetition) {
            line.push_str(&format!(",{rep}"));
        }
        line.push_str(&format!(
            ",{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
            r.kept, r.discarded, s.mean, s.std, s.p50, s.p90, s.p99, s.min, s.max
        ));
        for m in &r.counter_means {
            match m {
                Some(v) => line.push_str(&format!(",{v:.3}")),
                None => line.push(','),
            }
        }
        line.push_str(&format!(",{:.3},{}", r.mom, r.blocked));
        match r.blocked_mean_ns {
            Some(v) => line.push_str(&format!(",{v:.3}")),
            None => line.push(','),
        }
        writeln!(f, "{line}").map_err(io)?;
    }
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_append() {
        let d = tempfile::tempdir().unwrap();
        let counters = vec!["task-clock".to_string(), "cycles".to_string()];
        let a = d.path().join("a.csv");
        let mut w = EventsWriter::create(&a, &counters, 1).unwrap();
        let row = EventRow {
            tracer: "lw",
            threads: 1,
            thread: 0,
            cpu: 1,
            iteration: 7,
            latency_ns: 40.061,
            counters: &[Some(800), None],
            repetition: 0,
            counter_set: 1,
            t_ns: Some(1234.4),
        };
        w.row(&row).unwrap();
        w.commit().unwrap();
        let text = std::fs::read_to_string(&a).unwrap();
        assert_eq!(
            text,
            "tracer,threads,thread,cpu,iteration,latency_ns,task-clock,cycles,repetition,counter_set,t_ns\n\
             lw,1,0,1,7,40.06,800,,0,1,1234\n"
        );
        let b = d.path().join("b.csv");
        let mut w = EventsWriter::create(&b, &counters, events_file::COMPRESS_ABOVE_ROWS + 1).unwrap();
        w.append_body_of(&a).unwrap();
        w.append_body_of(&a).unwrap();
        w.commit().unwrap();
        let mut seen = Vec::new();
        assert!(!b.exists() && events_file::compressed(&b).is_file(), "a large file is written compressed");
        for_each_event(&b, &counters, |l, c| seen.push((l, c.to_vec()))).unwrap();
        assert_eq!(seen, vec![(40.06, vec![Some(800.0), None]); 2]);
    }
}
