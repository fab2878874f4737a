//! The results directory: the one module that owns the output contract (docs/ARCHITECTURE.md,
//! "Output contract"). Every writer and reader of the files goes through here: the column names
//! are named once ([`columns`]), rows are typed ([`rows`]), and every file is written whole or
//! not at all ([`atomic`]).
//!
//! ```text
//! OUT/run.json                   what ran, where, how (host, clock, counters, tracers, cells)
//! OUT/summary.csv                one row per tracer x thread count
//! OUT/repetitions.csv            one row per tracer x thread count x repetition
//! OUT/<tracer dir>/events.csv    every kept call (events.csv.zst above a million: `events_file`)
//! OUT/<tracer dir>/discarded.csv every discarded call, with its reasons
//! OUT/<tracer dir>/sentinels.csv every kept sentinel window (--sentinel-every K > 0)
//! ```
pub mod atomic;
pub mod columns;
pub mod events_file;
pub mod owner;
pub mod profile;
pub mod read;
pub mod rows;
pub mod stepped;
pub mod sweep_steps;
pub mod table;

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

pub use atomic::{write_atomic, write_atomic_io, write_json, AtomicFile};

use crate::error::Error;

pub const RUN_JSON: &str = "run.json";
pub const SUMMARY_CSV: &str = "summary.csv";
pub const REPETITIONS_CSV: &str = "repetitions.csv";
pub const EVENTS_CSV: &str = "events.csv";
pub const DISCARDED_CSV: &str = "discarded.csv";
pub const SENTINELS_CSV: &str = "sentinels.csv";
pub const REFERENCE_CSV: &str = "reference.csv";
/// A sweep's table, beside its `KNOB=VALUE/` results directories.
pub const SWEEP_CSV: &str = "sweep.csv";

/// "3.60 ms" from 1 ms up, "21.5 µs" from 1000 ns, "850 ns" below.
pub fn duration_text(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A results directory being written (`create`) or read (`open`).
#[derive(Debug, Clone)]
pub struct ResultsDir {
    pub path: PathBuf,
}

impl ResultsDir {
    /// Creates `path` (mode 0700) and proves it writable, so a bad `--out` fails before any
    /// measurement. An existing `path` must be a directory of ours that nobody else can write
    /// ([`owner::check_private`]): a root run writes specs and results there and reads them back.
    pub fn create(path: &Path) -> Result<Self, Error> {
        let fail = |e: &dyn std::fmt::Display| Error::OutDir { path: path.display().to_string(), why: e.to_string() };
        owner::made_dir(path);
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|e| fail(&e))?;
        }
        match fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fail(&e)),
        }
        owner::check_private(path)?;
        // A probe file made the private way (random name, O_EXCL), removed on drop.
        tempfile::Builder::new().prefix(".write-test.").tempfile_in(path).map_err(|e| fail(&e))?;
        Ok(ResultsDir { path: path.to_path_buf() })
    }

    /// Opens an existing results directory: it must hold summary.csv or repetitions.csv.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(why) = owner::unreadable(path) {
            return Err(Error::Usage(why));
        }
        if path.join(SUMMARY_CSV).is_file() || path.join(REPETITIONS_CSV).is_file() {
            Ok(ResultsDir { path: path.to_path_buf() })
        } else {
            Err(Error::Data {
                path: path.display().to_string(),
                why: "not a results directory (no summary.csv or repetitions.csv); pass a directory that \
                      `tracebench run --out DIR` wrote"
                    .into(),
            })
        }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

/// The directory name of a tracer's row name: anything outside `[A-Za-z0-9._-]` becomes `_`
/// (`spin:300` -> `spin_300`, `plugin:/x/lib.so` -> `plugin__x_lib.so`).
pub fn dir_name(row: &str) -> String {
    row.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect()
}

/// Why a row name (a `--label`, a plugin's own name) cannot name a row, if it cannot: it is a
/// CSV field of every results file and a line of every table.
pub fn bad_row_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name.contains(',') {
        return Some("it holds a comma, which separates the columns of the results' CSV files".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!(
            "it holds the control character {}, which would break the CSV rows or act on a terminal",
            crate::escape::visible(&c.to_string())
        ));
    }
    None
}

/// Mode of every directory a run makes: results are private by default (run.json holds the
/// command line and the host name). `chmod -R go+rX DIR` shares one afterwards.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Refuses an output directory that already holds files: a run never mixes its files with an
/// earlier run's (a report of the directory would read both). A missing or empty one is fine, if
/// it is ours alone ([`owner::check_private`]).
pub fn check_new_dir(path: &Path) -> Result<(), Error> {
    owner::check_private(path)?;
    let Ok(mut entries) = fs::read_dir(path) else { return Ok(()) };
    match entries.next() {
        None => Ok(()),
        Some(_) => Err(Error::Usage(format!(
            "--out {}: it already holds files (an earlier run's?); pick a new directory, or remove it first",
            path.display()
        ))),
    }
}

/// UTC timestamp `YYYYMMDDTHHMMSSZ` for default result directories.
pub fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (H. Hinnant's algorithm), valid for any date after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_field_parsed_by_hand_is_what_str_parse_gives() {
        use read::Field;
        let mut x = crate::stats::rng::XorShift64(0x9E3779B97F4A7C15);
        for _ in 0..200_000 {
            let digits = 1 + (x.next() % 15) as u32;
            let m = x.next() % 10u64.pow(digits);
            let frac = (x.next() % (digits as u64 + 1)) as usize;
            let t = format!("{m:0w$}", w = digits as usize);
            let (i, f) = t.split_at(t.len() - frac);
            let i = if i.is_empty() { "0" } else { i };
            let sign = if x.next() % 4 == 0 { "-" } else { "" };
            let s = if frac > 0 { format!("{sign}{i}.{f}") } else { format!("{sign}{i}") };
            let want: f64 = s.parse().unwrap();
            // Up to 15 digits by hand, the value str::parse gives; more, to str::parse.
            let got = f64::field(s.as_bytes()).map(f64::to_bits);
            assert_eq!(got, (i.len() + f.len() <= 15).then_some(want.to_bits()), "{s}");
            let u = x.next() >> (x.next() % 64);
            assert_eq!(u64::field(u.to_string().as_bytes()), Some(u));
        }
        // What the hand parser does not take goes to `str::parse` (and its error).
        for s in ["", " 5", "1e3", "NaN", "inf", ".5", "5.", "+5", "1.2.3", "-", "1234567890123456", "x"] {
            assert_eq!(f64::field(s.as_bytes()), None, "{s}");
        }
        assert_eq!(u32::field(b"4294967296"), None);
        assert_eq!(u32::field(b"4294967295"), Some(u32::MAX));
        assert_eq!(u64::field(b"-1"), None);
        assert_eq!(u64::field(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(u64::field(b"18446744073709551616"), None);
        let p = std::path::Path::new("e.csv");
        assert_eq!(read::field::<f64>(b" 2.5 ", "latency_ns", p, 3).unwrap(), 2.5);
        assert!(read::field::<u64>(b"x", "iteration", p, 3).is_err());
    }

    #[test]
    fn dir_names_are_safe() {
        assert_eq!(dir_name("spin:300"), "spin_300");
        assert_eq!(dir_name("plugin:/x/lib.so"), "plugin__x_lib.so");
        assert_eq!(dir_name("lw-tsc"), "lw-tsc");
    }

    #[test]
    fn stamp_shape() {
        let s = utc_stamp();
        assert_eq!(s.len(), 16);
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }

    #[test]
    fn open_refuses_a_directory_without_results() {
        let d = tempfile::tempdir().unwrap();
        assert!(ResultsDir::open(d.path()).is_err());
        std::fs::write(d.path().join(SUMMARY_CSV), "tracer\n").unwrap();
        assert!(ResultsDir::open(d.path()).is_ok());
    }
}
