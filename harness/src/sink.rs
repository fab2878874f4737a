//! Where results go: CSV and JSON, always written to a temporary file in the target directory and
//! renamed into place, so that a crash or Ctrl-C never leaves half a file behind.
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// A file being written; it appears under its final name only on [`AtomicFile::commit`].
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    w: Option<BufWriter<fs::File>>,
}

impl AtomicFile {
    pub fn create(dest: impl AsRef<Path>) -> Result<Self, Error> {
        let dest = dest.as_ref().to_path_buf();
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dest.with_file_name(format!(".{name}.tmp{}", std::process::id()));
        let f = fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(AtomicFile { tmp, dest, w: Some(BufWriter::with_capacity(1 << 16, f)) })
    }

    pub fn writer(&mut self) -> &mut BufWriter<fs::File> {
        self.w.as_mut().expect("writer used after commit")
    }

    /// Flushes and renames into place. The rename is what makes the file appear whole or not at
    /// all when a process dies; no fsync, which protects only against power loss and cost ~1 s
    /// per run here (nine files), a real cost for a gate that runs hundreds of short runs.
    pub fn commit(mut self) -> Result<(), Error> {
        let w = self.w.take().expect("committed twice");
        drop(w.into_inner().map_err(|e| Error::io(&self.tmp, e.error()))?);
        fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.w.is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer().flush()
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: impl AsRef<Path>, bytes: &[u8]) -> Result<(), Error> {
    let dest = dest.as_ref();
    let mut f = AtomicFile::create(dest)?;
    f.write_all(bytes).map_err(|e| Error::io(dest, e))?;
    f.commit()
}

/// Pretty JSON, atomically.
pub fn write_json<T: serde::Serialize>(dest: impl AsRef<Path>, v: &T) -> Result<(), Error> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| Error::io(dest.as_ref(), e))?;
    s.push('\n');
    write_atomic(dest, s.as_bytes())
}

/// The directory name of a tracer's row name: anything outside `[A-Za-z0-9._-]` becomes `_`
/// (`spin:300` -> `spin_300`, `plugin:/x/lib.so` -> `plugin__x_lib.so`).
pub fn dir_name(row: &str) -> String {
    row.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect()
}

/// Creates `dir` and proves it writable, so a bad `--out` fails before any measurement.
pub fn prepare_out_dir(dir: &Path) -> Result<(), Error> {
    let fail = |e: &dyn std::fmt::Display| Error::OutDir { path: dir.display().to_string(), why: e.to_string() };
    fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let probe = dir.join(format!(".write-test-{}", std::process::id()));
    fs::write(&probe, b"").map_err(|e| fail(&e))?;
    let _ = fs::remove_file(probe);
    Ok(())
}

/// A minimal CSV reader: header names plus rows of fields (our files never quote).
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    pub fn read(path: &Path) -> Result<Csv, Error> {
        let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut lines = text.lines();
        let header = lines
            .next()
            .ok_or_else(|| Error::Data { path: path.display().to_string(), why: "empty file".into() })?
            .split(',')
            .map(str::to_string)
            .collect();
        let rows = lines.filter(|l| !l.is_empty()).map(|l| l.split(',').map(str::to_string).collect()).collect();
        Ok(Csv { header, rows })
    }

    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
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
    fn dir_names_are_safe() {
        assert_eq!(dir_name("spin:300"), "spin_300");
        assert_eq!(dir_name("plugin:/x/lib.so"), "plugin__x_lib.so");
        assert_eq!(dir_name("lw-tsc"), "lw-tsc");
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.csv");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"x\n").unwrap();
        assert!(!p.exists());
        f.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "x\n");
        let f = AtomicFile::create(d.path().join("b.csv")).unwrap();
        drop(f);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1, "an abandoned file leaves nothing behind");
    }

    #[test]
    fn stamp_shape() {
        let s = utc_stamp();
        assert_eq!(s.len(), 16);
        assert!(s.starts_with("20") && s.ends_with('Z'));
    }
}
