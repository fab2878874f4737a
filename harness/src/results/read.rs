//! Reading a results directory (output contract in docs/ARCHITECTURE.md): run.json, summary.csv,
//! repetitions.csv and the per-tracer events.csv, always by column name. The one reader: the
//! report, the code-path analysis, the sweep's slow-path column and the exporters read through it.
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{columns, dir_name};

/// What reading a results directory can meet. Imports nothing from the crate; the report and the
/// exporters wrap it in their own errors.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(
        "{dir} is not a results directory: {missing} is missing; pass the directory `tracebench run --out DIR` wrote"
    )]
    NotResults { dir: PathBuf, missing: String },
    #[error("{path}: line {line}: {msg}")]
    Parse { path: PathBuf, line: u64, msg: String },
    #[error(
        "{path}: column '{column}' is missing; the file does not follow the output contract (re-run `tracebench run`)"
    )]
    MissingColumn { path: PathBuf, column: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// One row of summary.csv or repetitions.csv.
#[derive(Debug, Clone)]
pub struct SummaryRow {
    pub tracer: String,
    pub threads: u32,
    pub repetition: Option<u32>,
    pub kept: u64,
    pub discarded: u64,
    pub mean: f64,
    pub std: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
    /// `<counter>_mean` columns, in file order.
    pub counter_means: Vec<(String, f64)>,
    /// Kept calls that slept inside the tracer (`blocked`; 0 in files written before it) and
    /// their mean latency (`blocked_mean_ns`; NaN when none).
    pub blocked: u64,
    pub blocked_mean: f64,
}

impl SummaryRow {
    /// "printf at 2 thread(s): 66 calls blocked inside the tracer ..., mean 21.5 µs, kept in its
    /// cost", when the row has any (the terminal of `run` says the same).
    pub fn blocked_line(&self, label: &str) -> Option<String> {
        (self.blocked > 0).then(|| {
            format!(
                "{label} at {} thread(s): {} call{} blocked inside the tracer (the thread slept in the call), mean {}, \
                 kept in its cost",
                self.threads,
                self.blocked,
                if self.blocked == 1 { "" } else { "s" },
                super::duration_text(self.blocked_mean)
            )
        })
    }
}

/// What run.json says about one tracer row.
#[derive(Debug, Clone)]
pub struct TracerMeta {
    pub name: String,
    /// `spec` in run.json (the row name when absent).
    pub spec: String,
    pub dir: String,
    pub config: Value,
}

pub fn read_run_json(dir: &Path) -> Result<Value, ReadError> {
    let path = dir.join(super::RUN_JSON);
    let text = std::fs::read_to_string(&path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ReadError::NotResults { dir: dir.to_path_buf(), missing: super::RUN_JSON.into() }
        } else {
            ReadError::Io { path: path.clone(), source }
        }
    })?;
    serde_json::from_str(&text).map_err(|e| ReadError::Parse { path, line: e.line() as u64, msg: e.to_string() })
}

/// The tracers listed in run.json (`tracers: [{name, dir, config}]`), tolerant of absent fields.
pub fn tracers_of(run: &Value) -> Vec<TracerMeta> {
    run.get("tracers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    let name = t.get("name")?.as_str()?.to_string();
                    let dir = t.get("dir").and_then(Value::as_str).map(String::from).unwrap_or_else(|| dir_name(&name));
                    let spec = t.get("spec").and_then(Value::as_str).map(String::from).unwrap_or_else(|| name.clone());
                    Some(TracerMeta { name, spec, dir, config: t.get("config").cloned().unwrap_or(Value::Null) })
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn open_csv(path: &Path) -> Result<csv::Reader<std::fs::File>, ReadError> {
    let f = std::fs::File::open(path).map_err(|source| ReadError::Io { path: path.to_path_buf(), source })?;
    Ok(csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(f))
}

pub fn headers<R: std::io::Read>(r: &mut csv::Reader<R>, path: &Path) -> Result<Vec<String>, ReadError> {
    Ok(r.headers().map_err(|e| csv_err(path, e))?.iter().map(|s| s.trim().to_string()).collect())
}

pub fn csv_err(path: &Path, e: csv::Error) -> ReadError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    ReadError::Parse { path: path.to_path_buf(), line, msg: e.to_string() }
}

pub fn col(h: &[String], name: &str, path: &Path) -> Result<usize, ReadError> {
    h.iter()
        .position(|c| c == name)
        .ok_or_else(|| ReadError::MissingColumn { path: path.to_path_buf(), column: name.into() })
}

pub fn num<T: std::str::FromStr>(s: &str, what: &str, path: &Path, line: u64) -> Result<T, ReadError> {
    s.trim().parse::<T>().map_err(|_| ReadError::Parse {
        path: path.to_path_buf(),
        line,
        msg: format!("column {what}: '{s}' is not a number"),
    })
}

/// A number of an events file's field as the harness writes it: plain digits, a float with one
/// '.' and at most 15 digits. Parsed by hand, it is the value `str::parse` gives (the digits are
/// an integer below 2^53 and the power of ten below 10^23, both exact in f64, and IEEE division
/// rounds correctly), at a fraction of the cost a streaming pass spent on it; anything else
/// (signs aside from a float's '-', spaces, exponents, NaN) is None and goes to `num`.
pub trait Field: std::str::FromStr {
    fn field(b: &[u8]) -> Option<Self>;
}

/// Plain decimal digits as an integer (None past u64).
fn digits(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

impl Field for u64 {
    fn field(b: &[u8]) -> Option<Self> {
        digits(b)
    }
}

impl Field for u32 {
    fn field(b: &[u8]) -> Option<Self> {
        digits(b).and_then(|v| u32::try_from(v).ok())
    }
}

impl Field for f64 {
    fn field(b: &[u8]) -> Option<Self> {
        const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
        let (neg, b) = match b.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, b),
        };
        let (int, frac) = match b.iter().position(|&c| c == b'.') {
            Some(i) => (&b[..i], &b[i + 1..]),
            None => (b, &b[..0]),
        };
        if int.is_empty() || int.len() + frac.len() > 15 || (frac.is_empty() && int.len() < b.len()) {
            return None;
        }
        let m = digits(int)? * 10u64.pow(frac.len() as u32) + if frac.is_empty() { 0 } else { digits(frac)? };
        let v = m as f64 / POW10[frac.len()];
        Some(if neg { -v } else { v })
    }
}

/// A field by [`Field`], else by `num` (its error naming the column and line).
pub fn field<T: Field>(b: &[u8], what: &str, path: &Path, line: u64) -> Result<T, ReadError> {
    match T::field(b) {
        Some(v) => Ok(v),
        None => num(&String::from_utf8_lossy(b), what, path, line),
    }
}

/// Reads summary.csv (`repetition: false`) or repetitions.csv (`true`).
pub fn read_summary(path: &Path, repetition: bool) -> Result<Vec<SummaryRow>, ReadError> {
    let mut r = open_csv(path)?;
    let h = headers(&mut r, path)?;
    let c = |n: &str| col(&h, n, path);
    use super::columns as col;
    let (ct, cth, ck, cd) = (c(col::TRACER)?, c(col::THREADS)?, c(col::KEPT)?, c(col::DISCARDED)?);
    let stats = [col::MEAN, col::STD, col::P50, col::P90, col::P99, col::MIN, col::MAX].map(c);
    let mut si = [0usize; 7];
    for (k, s) in stats.into_iter().enumerate() {
        si[k] = s?;
    }
    let crep = if repetition { Some(c(columns::REPETITION)?) } else { None };
    let counters: Vec<(usize, String)> = h
        .iter()
        .enumerate()
        .skip(si[6] + 1)
        .filter_map(|(i, n)| n.strip_suffix(columns::COUNTER_MEAN_SUFFIX).map(|b| (i, b.to_string())))
        .collect();
    let (cb, cbm) = (h.iter().position(|n| n == col::BLOCKED), h.iter().position(|n| n == col::BLOCKED_MEAN));
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| csv_err(path, e))?;
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let f = |i: usize, what: &str| -> Result<f64, ReadError> {
            let s = rec.get(i).unwrap_or("");
            if s.trim().is_empty() {
                Ok(f64::NAN)
            } else {
                num(s, what, path, line)
            }
        };
        out.push(SummaryRow {
            tracer: rec.get(ct).unwrap_or("").to_string(),
            threads: num(rec.get(cth).unwrap_or(""), columns::THREADS, path, line)?,
            repetition: match crep {
                Some(i) => Some(num(rec.get(i).unwrap_or(""), columns::REPETITION, path, line)?),
                None => None,
            },
            kept: num(rec.get(ck).unwrap_or(""), columns::KEPT, path, line)?,
            discarded: num(rec.get(cd).unwrap_or(""), columns::DISCARDED, path, line)?,
            mean: f(si[0], columns::MEAN)?,
            std: f(si[1], columns::STD)?,
            p50: f(si[2], columns::P50)?,
            p90: f(si[3], columns::P90)?,
            p99: f(si[4], columns::P99)?,
            min: f(si[5], columns::MIN)?,
            max: f(si[6], columns::MAX)?,
            counter_means: counters
                .iter()
                .map(|(i, n)| Ok((n.clone(), f(*i, n)?)))
                .collect::<Result<_, ReadError>>()?,
            blocked: match cb.and_then(|i| rec.get(i)).filter(|s| !s.trim().is_empty()) {
                Some(s) => num(s, col::BLOCKED, path, line)?,
                None => 0,
            },
            blocked_mean: match cbm {
                Some(i) => f(i, col::BLOCKED_MEAN)?,
                None => f64::NAN,
            },
        });
    }
    Ok(out)
}

/// Column positions of an events.csv.
#[derive(Debug, Clone)]
pub struct EventCols {
    pub threads: usize,
    pub thread: usize,
    pub iteration: usize,
    pub latency: usize,
    pub repetition: Option<usize>,
    pub counter_set: Option<usize>,
    /// Counter columns: those between `columns::LATENCY` and `columns::REPETITION`.
    pub counters: Vec<(usize, String)>,
}

/// Where an events.csv comes from: a file, or bytes made in memory (the calibration battery,
/// calibration_battery.rs, analyses thousands of synthetic runs without writing them anywhere).
#[derive(Debug, Clone)]
pub enum Source {
    File(PathBuf),
    Memory { name: PathBuf, bytes: std::sync::Arc<Vec<u8>> },
}

impl Source {
    pub fn path(&self) -> &Path {
        match self {
            Source::File(p) => p,
            Source::Memory { name, .. } => name,
        }
    }
}

/// Rows read from events files by this process, for a progress bar (`rows_read`).
static ROWS_READ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Rows of events files read so far by this process (in steps of `RowTally::STEP`).
pub fn rows_read() -> u64 {
    ROWS_READ.load(std::sync::atomic::Ordering::Relaxed)
}

/// A reader's count of its rows, added to `rows_read` in steps, so counting costs nothing a row.
#[derive(Default)]
pub struct RowTally(u64);

impl RowTally {
    const STEP: u64 = 1 << 16;
    pub fn tick(&mut self) {
        self.0 += 1;
        if self.0 == Self::STEP {
            ROWS_READ.fetch_add(Self::STEP, std::sync::atomic::Ordering::Relaxed);
            self.0 = 0;
        }
    }
}

/// A streaming events.csv reader: one reused record, no per-row allocation.
pub struct Events {
    pub path: PathBuf,
    pub cols: EventCols,
    reader: csv::Reader<Box<dyn std::io::Read>>,
    rec: csv::ByteRecord,
    tally: RowTally,
}

/// One parsed events row (counters in `EventCols::counters` order; NaN where empty).
#[derive(Debug, Clone, Default)]
pub struct Event {
    pub threads: u32,
    pub thread: u32,
    pub iteration: u64,
    pub latency: f64,
    /// Hash of (thread, repetition, counter_set): iteration indices restart in each sequence.
    pub seq: u64,
    pub counters: Vec<f64>,
}

impl Events {
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        Self::from_source(&Source::File(path.to_path_buf()))
    }

    pub fn from_source(src: &Source) -> Result<Self, ReadError> {
        // Errors name the file on disk (events.csv.zst when compressed).
        let on_disk = match src {
            Source::File(p) => super::events_file::on_disk(p),
            Source::Memory { .. } => None,
        };
        let path = on_disk.as_deref().unwrap_or(src.path());
        let input: Box<dyn std::io::Read> = match src {
            Source::File(p) => {
                Box::new(super::events_file::open(p).map_err(|source| ReadError::Io { path: p.clone(), source })?)
            }
            Source::Memory { bytes, .. } => Box::new(std::io::Cursor::new(SharedBytes(bytes.clone()))),
        };
        let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(input);
        let h = headers(&mut reader, path)?;
        let c = |n: &str| col(&h, n, path);
        let latency = c(columns::LATENCY)?;
        let repetition = h.iter().position(|n| n == columns::REPETITION);
        let counter_set = h.iter().position(|n| n == columns::COUNTER_SET);
        let end = repetition.unwrap_or(h.len());
        let counters = (latency + 1..end).map(|i| (i, h[i].clone())).collect();
        let cols = EventCols {
            threads: c(columns::THREADS)?,
            thread: c(columns::THREAD)?,
            iteration: c(columns::ITERATION)?,
            latency,
            repetition,
            counter_set,
            counters,
        };
        Ok(Events { path: path.to_path_buf(), cols, reader, rec: csv::ByteRecord::new(), tally: RowTally::default() })
    }

    /// Reads the next row into `ev`; false at the end.
    pub fn next_into(&mut self, ev: &mut Event) -> Result<bool, ReadError> {
        if !self.reader.read_byte_record(&mut self.rec).map_err(|e| csv_err(&self.path, e))? {
            return Ok(false);
        }
        self.tally.tick();
        let line = self.rec.position().map(|p| p.line()).unwrap_or(0);
        let raw = |i: usize| self.rec.get(i).unwrap_or(b"");
        let p = &self.path;
        ev.threads = field(raw(self.cols.threads), columns::THREADS, p, line)?;
        ev.thread = field(raw(self.cols.thread), columns::THREAD, p, line)?;
        ev.iteration = field(raw(self.cols.iteration), columns::ITERATION, p, line)?;
        ev.latency = field(raw(self.cols.latency), columns::LATENCY, p, line)?;
        let mut hsh: u64 = 0xcbf29ce484222325 ^ ev.thread as u64;
        for i in [self.cols.repetition, self.cols.counter_set].into_iter().flatten() {
            for &b in self.rec.get(i).unwrap_or(b"") {
                hsh = (hsh ^ b as u64).wrapping_mul(0x100000001b3);
            }
            hsh = (hsh ^ 0xff).wrapping_mul(0x100000001b3);
        }
        ev.seq = hsh;
        ev.counters.clear();
        for (i, _) in &self.cols.counters {
            let s = std::str::from_utf8(raw(*i)).unwrap_or("").trim();
            ev.counters.push(if s.is_empty() { f64::NAN } else { s.parse().unwrap_or(f64::NAN) });
        }
        Ok(true)
    }
}

/// Shared bytes read through a cursor (each pass over an in-memory events.csv reads the same).
struct SharedBytes(std::sync::Arc<Vec<u8>>);
impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The `system` checks of run.json that matter for this run's numbers: each WARN or
/// BAD check's `matters` sentence (e.g. "steal 3.1% during the check: expect stalls no event
/// shows"), BAD first.
pub fn system_lines(run: &Value) -> Vec<String> {
    let checks = run.pointer("/system/checks").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out: Vec<(bool, String)> = checks
        .iter()
        .filter(|c| c.get("level").and_then(Value::as_str) != Some("OK"))
        .filter_map(|c| {
            let m = c.get("matters").and_then(Value::as_str)?;
            Some((c.get("level").and_then(Value::as_str) != Some("BAD"), format!("{}: {m}", c["level"].as_str()?)))
        })
        .collect();
    out.sort_by_key(|(not_bad, _)| *not_bad);
    out.into_iter().map(|(_, l)| l).collect()
}

/// The one line that says a run was interrupted, and where, from its run.json (`interrupted`,
/// `interrupted_at`); None for a run that finished. The terminal, the report and the gate all say
/// it with these words.
pub fn interrupted_line(run_json: &serde_json::Value) -> Option<String> {
    if run_json.get("interrupted").and_then(serde_json::Value::as_bool) != Some(true) {
        return None;
    }
    let at = &run_json["interrupted_at"];
    let cells = at.get("cells_run").and_then(serde_json::Value::as_u64).unwrap_or(0);
    let Some(tracer) = at.get("tracer").and_then(serde_json::Value::as_str) else {
        return Some(
            "This run was interrupted (Ctrl-C or a signal) before any cell measured; it holds no data.".into(),
        );
    };
    let cell = format!(
        "{tracer} at {} thread(s), repetition {}",
        at["threads"],
        at.get("repetition").and_then(serde_json::Value::as_u64).map_or(0, |r| r + 1)
    );
    let place = if at.get("in_cell").and_then(serde_json::Value::as_bool) == Some(true) {
        format!("during cell {cells} ({cell})")
    } else {
        format!("after cell {cells} ({cell})")
    };
    Some(format!(
        "This run was interrupted (Ctrl-C or a signal) {place}: no cell after it ran, so its rows lack repetitions \
         or thread counts, and a cell stopped before its first measured call has no row; re-run it for complete \
         results."
    ))
}
