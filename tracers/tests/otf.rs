//! The `otf` and `otf2` backends against the real writers (Debian's libopen-trace-format1 and
//! libopen-trace-format2-10): the records they write have the size they declare, the
//! flush comes where their geometry says, and the archive is removed or kept. No mocks; a test
//! prints `SKIP <test>: <reason>` and returns when the library is not here.
#[path = "support/common.rs"]
mod common;
use common::{available, pin0};
use std::path::{Path, PathBuf};

use tracebench_tracers::otf::{v1, v2};
use tracebench_tracers::{create, registry, CreateOptions, Tracer};

fn opts(keep: bool) -> CreateOptions {
    CreateOptions { run_id: "otf-test".into(), keep_trace: keep, ..Default::default() }
}

fn trace_dir(t: &dyn Tracer) -> PathBuf {
    PathBuf::from(t.config()["trace"]["dir"].as_str().expect("config names the trace directory"))
}

/// Where `--keep-trace` moves a trace directory (otf/mod.rs: `otf-PID-*` -> `otf-kept-PID-*`).
fn kept(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap().to_string_lossy().replacen("otf", "otf-kept", 1);
    dir.with_file_name(name)
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_with(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out
}

fn size(files: &[PathBuf]) -> u64 {
    files.iter().map(|f| std::fs::metadata(f).unwrap().len()).sum()
}

#[test]
fn otf_writes_the_records_it_declares() {
    if !available("otf_writes_the_records_it_declares", "otf") {
        return;
    }
    let t = create("otf", &opts(true)).unwrap();
    pin0();
    t.thread_init(0).unwrap();
    let g = t.after_run()["geometry"].clone();
    let (rec, per) = (g["record_bytes"].as_u64().unwrap(), g["events_per_flush"].as_f64().unwrap());
    assert_eq!(g["buffer_bytes"], v1::DEFAULT_BUFFER);
    assert!((per - v1::DEFAULT_BUFFER as f64 / rec as f64).abs() < 0.01, "{g}");
    let n = (2.5 * per) as u64;
    for i in 0..n {
        t.fire(i as u32);
    }
    // (The file's size says nothing before close: OTF writes its buffer through stdio.)
    let dir = trace_dir(&*t);
    drop(t);
    // Kept, and every record is `rec` bytes; the close adds one last timestamp and process line.
    let k = kept(&dir);
    assert!(!dir.exists() && k.is_dir(), "--keep-trace keeps {}", k.display());
    let bytes = size(&files_with(&k, "events"));
    assert!((n * rec..n * rec + 32).contains(&bytes), "{bytes} B for {n} records of {rec} B");
    std::fs::remove_dir_all(&k).unwrap();
}

#[test]
fn otf2_flushes_every_chunk_and_writes_the_records_it_declares() {
    if !available("otf2_flushes_every_chunk_and_writes_the_records_it_declares", "otf2") {
        return;
    }
    let t = create("otf2", &opts(true)).unwrap();
    pin0();
    t.thread_init(0).unwrap();
    let g = t.after_run()["geometry"].clone();
    let per = g["events_per_flush"].as_f64().unwrap() as u64;
    assert_eq!(
        (g["buffer_bytes"].as_u64(), g["record_bytes"].as_u64()),
        (Some(v2::DEFAULT_CHUNK), Some(v2::RECORD_BYTES))
    );
    let n = 2 * per + per / 2;
    for i in 0..n {
        t.fire(i as u32);
    }
    // The memory callbacks refused the second chunk twice: two flushes, as the geometry says.
    assert_eq!(t.after_run()["flushes"], 2, "{per} records per chunk");
    let dir = trace_dir(&*t);
    assert_eq!(t.config()["trace"]["kept_in"], kept(&dir).display().to_string(), "run.json says where");
    drop(t);
    let k = kept(&dir);
    assert!(!dir.exists() && k.join("trace.otf2").is_file(), "--keep-trace keeps the archive in {}", k.display());
    // Every record, plus the chunks' headers and the two BufferFlush records (a few bytes each).
    let bytes = size(&files_with(&k, "evt"));
    assert!((n * v2::RECORD_BYTES..n * v2::RECORD_BYTES + 256).contains(&bytes), "{bytes} B for {n} records");
    std::fs::remove_dir_all(&k).unwrap();
}

#[test]
fn without_keep_trace_the_archive_goes_with_the_tracer() {
    for spec in ["otf", "otf2"] {
        if !available("without_keep_trace_the_archive_goes_with_the_tracer", spec) {
            continue;
        }
        let t = create(spec, &opts(false)).unwrap();
        t.fire(1);
        let dir = trace_dir(&*t);
        assert!(dir.is_dir());
        drop(t);
        assert!(!dir.exists() && !kept(&dir).exists(), "{spec} left {}", dir.display());
    }
}

#[test]
fn buffer_sizes_outside_the_writers_range_are_refused() {
    let o = CreateOptions { otf_buffer_size: Some("12".into()), ..opts(false) };
    let e = registry::validate_options("otf", &o).unwrap_err().to_string();
    assert!(e.contains("--otf-buffer-size 12: 12 bytes is outside 1024..=16777216"), "{e}");
    let o = CreateOptions { otf2_chunk_size: Some("64k".into()), ..opts(false) };
    let e = registry::validate_options("otf2", &o).unwrap_err().to_string();
    assert!(e.contains("--otf2-chunk-size 64k: 65536 bytes is outside 262144"), "{e}");
    let o = CreateOptions { otf2_chunk_size: Some("lots".into()), ..opts(false) };
    let e = registry::validate_options("otf2", &o).unwrap_err().to_string();
    assert!(e.contains("not a size in bytes"), "{e}");
    // The size reaches the writer: 16 KiB holds twice the records of 8 KiB.
    if available("buffer_sizes_outside_the_writers_range_are_refused", "otf") {
        let t = create("otf", &CreateOptions { otf_buffer_size: Some("16k".into()), ..opts(false) }).unwrap();
        let g = t.after_run()["geometry"].clone();
        assert_eq!(g["buffer_bytes"], 16384);
        let per = g["events_per_flush"].as_f64().unwrap();
        assert!((per - 16384.0 / g["record_bytes"].as_f64().unwrap()).abs() < 0.01, "{g}");
    }
}
