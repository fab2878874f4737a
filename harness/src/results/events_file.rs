//! How an events.csv lies on disk: the one module that knows. A file of more than
//! [`COMPRESS_ABOVE_ROWS`] planned rows is written zstd-compressed as `events.csv.zst` (the same
//! CSV, byte for byte, once decompressed; pandas and polars read it directly), a smaller one as
//! plain `events.csv`. Every reader opens `DIR/events.csv` through [`open`], which reads whichever
//! of the two is there, so no reader knows the difference.
//!
//! Why zstd and the threshold: the rows are ~36 bytes of text a call; zstd brings them to ~7 at
//! a few hundred MB/s on one core, and both pandas and polars open `.csv.zst` by its name. Below a
//! million rows the plain file is under ~40 MB, and stays greppable and openable by any tool.
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use super::AtomicFile;
use crate::error::Error;

/// Files planned to hold more rows than this are written compressed.
pub const COMPRESS_ABOVE_ROWS: u64 = 1_000_000;
/// The compressed file's name is the plain file's with this appended.
pub const ZSTD_SUFFIX: &str = ".zst";
/// On 1.2M rows of an `lw` run (43.0 MB plain) level 1 wrote 8.2 MB in 0.17 s, level 3 9.3 MB in
/// 0.30 s, level 9 7.8 MB in 2.1 s: level 1 is the smallest for its time (docs/output.md).
const LEVEL: i32 = 1;

/// `DIR/events.csv.zst` for `DIR/events.csv`.
pub fn compressed(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(ZSTD_SUFFIX);
    PathBuf::from(s)
}

/// The file that holds `path`'s rows: `path` itself, else its compressed form; None when neither
/// is there.
pub fn on_disk(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let z = compressed(path);
    z.is_file().then_some(z)
}

/// Whether `path` (a plain events.csv name) has rows on disk in either form.
pub fn exists(path: &Path) -> bool {
    on_disk(path).is_some()
}

/// A buffered reader of `path`'s rows (plain or compressed), decompressing as it goes: memory
/// does not grow with the file. NotFound when neither form is there.
pub fn open(path: &Path) -> std::io::Result<Box<dyn BufRead + Send>> {
    let Some(p) = on_disk(path) else {
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file (nor a .zst of it)"));
    };
    let f = std::fs::File::open(&p)?;
    if p == path {
        Ok(Box::new(BufReader::with_capacity(1 << 16, f)))
    } else {
        Ok(Box::new(Prefetched::spawn(Zst(zstd::Decoder::new(f)?))))
    }
}

/// Bytes decompressed on a thread of their own, a few chunks ahead of the reader: on a machine
/// with a second core the decompression (about a third of a streaming pass's time) overlaps the
/// parsing. Memory stays bounded by the chunks in flight.
struct Prefetched {
    chunks: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Prefetched {
    /// Chunks of this many bytes, at most this many in flight.
    const CHUNK: usize = 1 << 20;
    const AHEAD: usize = 4;

    fn spawn(mut src: impl std::io::Read + Send + 'static) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(Self::AHEAD);
        std::thread::spawn(move || loop {
            let mut buf = vec![0u8; Self::CHUNK];
            let mut n = 0;
            let got = loop {
                match src.read(&mut buf[n..]) {
                    Ok(0) => break Ok(()),
                    Ok(k) => {
                        n += k;
                        if n == buf.len() {
                            break Ok(());
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            buf.truncate(n);
            // The reader gone (dropped early): nothing more to read for.
            if n > 0 && tx.send(Ok(buf)).is_err() {
                return;
            }
            match got {
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
                Ok(()) if n < Self::CHUNK => return,
                Ok(()) => {}
            }
        });
        Prefetched { chunks: rx, chunk: Vec::new(), at: 0 }
    }
}

impl std::io::Read for Prefetched {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let have = self.fill_buf()?;
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Prefetched {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.chunk.len() {
            match self.chunks.recv() {
                Ok(c) => {
                    self.chunk = c?;
                    self.at = 0;
                }
                // The thread ended: the end of the stream.
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.chunk[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.chunk.len());
    }
}

/// The decoder, its errors saying what is wrong with the file and what to do: the reader's
/// caller names the path.
struct Zst<R: BufRead>(zstd::Decoder<'static, R>);

impl<R: BufRead> std::io::Read for Zst<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "not a whole zstd stream ({e}): the .zst was cut short or is not zstd; re-run `tracebench run`"
                ),
            )
        })
    }
}

/// Moves `from`'s rows (either form) to `to` (a plain name) in the same form, replacing `to`'s
/// other form if one is there.
pub fn rename(from: &Path, to: &Path) -> Result<(), Error> {
    let Some(src) = on_disk(from) else { return Err(Error::io(from, "no such file (nor a .zst of it)")) };
    let (dest, other) =
        if src == from { (to.to_path_buf(), compressed(to)) } else { (compressed(to), to.to_path_buf()) };
    std::fs::rename(&src, &dest).map_err(|e| Error::io(&dest, e))?;
    match std::fs::remove_file(&other) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&other, e)),
        _ => Ok(()),
    }
}

/// Removes `path` (one form, or the plain name's two) if there.
pub fn remove(path: &Path) -> Result<(), Error> {
    for p in [path.to_path_buf(), compressed(path)] {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&p, e)),
            _ => {}
        }
    }
    Ok(())
}

/// An events file being written, plain or compressed; it appears on [`Sink::commit`] only, and
/// then replaces the other form if an earlier run left one in the same directory.
pub struct Sink {
    w: SinkKind,
    /// The plain name, for errors and for the form this one replaces.
    path: PathBuf,
}

enum SinkKind {
    Plain(AtomicFile),
    Zstd(zstd::Encoder<'static, AtomicFile>),
}

impl Sink {
    /// `path` is the plain name (`DIR/events.csv`); `planned_rows` picks the form.
    pub fn create(path: &Path, planned_rows: u64) -> Result<Self, Error> {
        let w = if planned_rows > COMPRESS_ABOVE_ROWS {
            let f = AtomicFile::create(compressed(path))?;
            SinkKind::Zstd(zstd::Encoder::new(f, LEVEL).map_err(|e| Error::io(path, e))?)
        } else {
            SinkKind::Plain(AtomicFile::create(path)?)
        };
        Ok(Sink { w, path: path.to_path_buf() })
    }

    pub fn compressed(&self) -> bool {
        matches!(self.w, SinkKind::Zstd(_))
    }

    pub fn commit(self) -> Result<(), Error> {
        let other = match self.w {
            SinkKind::Plain(f) => {
                f.commit()?;
                compressed(&self.path)
            }
            SinkKind::Zstd(z) => {
                z.finish().map_err(|e| Error::io(&self.path, e))?.commit()?;
                self.path.clone()
            }
        };
        match std::fs::remove_file(&other) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&other, e)),
            _ => Ok(()),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.w {
            SinkKind::Plain(f) => f.write(buf),
            SinkKind::Zstd(z) => z.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.w {
            SinkKind::Plain(f) => f.write_all(buf),
            SinkKind::Zstd(z) => z.write_all(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.w {
            SinkKind::Plain(f) => f.flush(),
            SinkKind::Zstd(z) => z.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn body(rows: u64) -> String {
        (0..rows).map(|i| format!("lw,1,0,1,{i},{:.2}\n", 40.0 + (i % 7) as f64)).collect()
    }

    fn read_all(p: &Path) -> String {
        let mut s = String::new();
        open(p).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn both_forms_read_back_the_same_bytes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.csv");
        let text = body(5000);
        for planned in [10, COMPRESS_ABOVE_ROWS + 1] {
            let mut s = Sink::create(&p, planned).unwrap();
            assert_eq!(s.compressed(), planned > COMPRESS_ABOVE_ROWS);
            s.write_all(text.as_bytes()).unwrap();
            let form = if planned > COMPRESS_ABOVE_ROWS { compressed(&p) } else { p.clone() };
            assert!(!form.exists(), "nothing appears before the commit");
            s.commit().unwrap();
            assert_eq!(read_all(&p), text);
            // Exactly one form is on disk: a later run's file replaces the earlier's other form.
            assert_eq!(p.is_file(), planned <= COMPRESS_ABOVE_ROWS);
            assert_eq!(compressed(&p).is_file(), planned > COMPRESS_ABOVE_ROWS);
        }
        let z = std::fs::metadata(compressed(&p)).unwrap().len();
        assert!(z * 5 < text.len() as u64, "{z} bytes compressed for {} plain", text.len());
        // The compressed file is a standard zstd frame any tool decodes.
        assert_eq!(zstd::decode_all(std::fs::File::open(compressed(&p)).unwrap()).unwrap(), text.as_bytes());
    }

    #[test]
    fn rename_keeps_the_form_and_leaves_one_file() {
        let d = tempfile::tempdir().unwrap();
        let (from, to) = (d.path().join("t0.events.csv"), d.path().join("events.csv"));
        std::fs::write(&to, "stale").unwrap();
        let mut s = Sink::create(&from, COMPRESS_ABOVE_ROWS + 1).unwrap();
        s.write_all(b"a,b\n1,2\n").unwrap();
        s.commit().unwrap();
        rename(&from, &to).unwrap();
        assert!(!exists(&from) && !to.exists(), "the part and the stale plain file are gone");
        assert_eq!(read_all(&to), "a,b\n1,2\n");
        remove(&to).unwrap();
        assert!(!exists(&to));
    }

    #[test]
    fn neither_form_is_not_found() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.csv");
        assert!(!exists(&p));
        assert_eq!(open(&p).err().unwrap().kind(), std::io::ErrorKind::NotFound);
    }
}
