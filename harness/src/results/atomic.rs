//! The one atomic writer: every results file (CSV, JSON, Markdown, HTML) is written to a temporary
//! file in the target directory and renamed into place, so that a crash or Ctrl-C never leaves
//! half a file behind.
//!
//! The temporary file is made the way mkstemp makes one: a random name, created exclusively
//! (O_EXCL, so a symlink planted under that name is refused, never followed), mode 0600. A
//! predictable `.NAME.tmpPID` would let another user plant symlinks for every pid and have a root
//! `report` overwrite a file of root's. The rename replaces a symlink planted under the
//! final name instead of writing through it.
#[cfg(test)]
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::Error;

/// A file being written; it appears under its final name only on [`AtomicFile::commit`].
pub struct AtomicFile {
    dest: PathBuf,
    /// Removed by its own drop unless committed.
    w: Option<BufWriter<NamedTempFile>>,
}

impl AtomicFile {
    pub fn create(dest: impl AsRef<Path>) -> Result<Self, Error> {
        let dest = dest.as_ref().to_path_buf();
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let f = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| Error::io(&dest, e))?;
        Ok(AtomicFile { dest, w: Some(BufWriter::with_capacity(1 << 16, f)) })
    }

    pub fn writer(&mut self) -> &mut BufWriter<NamedTempFile> {
        self.w.as_mut().expect("writer used after commit")
    }

    /// Flushes and renames into place. The rename is what makes the file appear whole or not at
    /// all when a process dies; no fsync, which protects only against power loss and cost ~1 s
    /// per run here (nine files), a real cost for a gate that runs hundreds of short runs.
    pub fn commit(mut self) -> Result<(), Error> {
        let w = self.w.take().expect("committed twice");
        let f = w.into_inner().map_err(|e| Error::io(&self.dest, e.into_error()))?;
        f.persist(&self.dest).map_err(|e| Error::io(&self.dest, e.error))?;
        super::owner::made_file(&self.dest);
        Ok(())
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

/// [`write_atomic`] for callers whose errors carry a `std::io::Error` (report, plot); the path
/// is theirs to add, so only the reason is kept.
pub fn write_atomic_io(dest: impl AsRef<Path>, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic(dest, bytes).map_err(|e| match e {
        Error::Io { why, .. } => std::io::Error::other(why),
        e => std::io::Error::other(e.to_string()),
    })
}

/// Pretty JSON, atomically.
pub fn write_json<T: serde::Serialize>(dest: impl AsRef<Path>, v: &T) -> Result<(), Error> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| Error::io(dest.as_ref(), e))?;
    s.push('\n');
    write_atomic(dest, s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Symlinks planted under predictable temp names (`.NAME.tmpPID`, for every pid) and under the
    /// final name, pointing at a victim file. The write neither follows them nor touches the
    /// victim; the result is a private (0600) regular file.
    #[test]
    fn planted_symlinks_are_not_followed() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, b"precious\n").unwrap();
        let dest = d.path().join("report.md");
        for pid in [std::process::id(), 1, 2] {
            symlink(&victim, d.path().join(format!(".report.md.tmp{pid}"))).unwrap();
        }
        symlink(&victim, &dest).unwrap();
        write_atomic(&dest, b"report\n").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n", "the victim file was written through a link");
        let m = fs::symlink_metadata(&dest).unwrap();
        assert!(m.file_type().is_file(), "the final name is now our own file, not the planted link");
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_to_string(&dest).unwrap(), "report\n");
    }
}
