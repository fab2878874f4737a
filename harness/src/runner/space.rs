//! The up-front disk check: a run's rows are estimated from its plan (cells x threads x kept
//! calls x bytes per row) and held against the free space of `--out`'s filesystem before anything
//! is created, so a run that cannot fit is refused in one line (exit 2) instead of failing after
//! it measured, with headers-only files left behind.
use std::path::Path;

use super::plan::Plan;
use crate::error::Error;

/// Free space below this multiple of the estimate gets a warning: the estimate leaves out
/// discarded.csv's rows (usually a few per cent) and other users of the filesystem.
const CLOSE: f64 = 1.25;

/// What a plan will write, at its peak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Kept rows over all cells.
    pub rows: u64,
    /// Upper bound of one events.csv row, in bytes.
    pub row_bytes: u64,
    /// sentinels.csv rows (one per K - 1 kept calls, with `--sentinel-every K`), and their bound.
    pub sentinel_rows: u64,
    pub sentinel_row_bytes: u64,
    /// Peak bytes: each cell's rows are written once by the cell and once more by the merge
    /// before the cells' files are removed.
    pub bytes: u64,
}

fn digits(n: u64) -> u64 {
    n.max(1).ilog10() as u64 + 1
}

/// A `t_ns` value: up to 12 digits (1000 s of one cell) and its comma.
const T_NS_BYTES: u64 = 13;

/// Rows x row size for `plan` with `iterations` kept calls per thread, `repeats` repetitions,
/// `counters` counter columns (those the probe found: a counter the machine lacks gets no
/// column) and a sentinel every `sentinel_every` windows (0: none).
pub fn estimate(plan: &Plan, iterations: usize, repeats: usize, counters: usize, sentinel_every: u64) -> Estimate {
    let threads_calls: u64 = plan.threads.iter().map(|&n| n as u64).sum::<u64>() * iterations as u64;
    let cells_per_row = plan.sets.len().max(1) as u64 * repeats as u64;
    let counters = counters as u64;
    let name = plan.rows.iter().map(|r| r.name.len() as u64).max().unwrap_or(8);
    let most_threads = plan.threads.iter().copied().max().unwrap_or(1) as u64;
    // tracer,threads,thread,cpu,iteration,latency_ns,<counters>,repetition,counter_set,t_ns\n;
    // an iteration index can run past the kept count by the discards (2x is generous), a latency
    // takes up to 7 digits (10 ms), a counter value up to 10.
    let key = name + 2 * digits(most_threads) + 4 + digits(2 * iterations as u64) + 7;
    let row_bytes = key + T_NS_BYTES + 11 * counters + digits(repeats as u64) + 1 + 9;
    let rows = plan.rows.len() as u64 * cells_per_row * threads_calls;
    // sentinels.csv: tracer,threads,thread,cpu,iteration,t_ns,latency_ns,repetition\n, one row
    // per K - 1 kept calls (`timed::sentinel_rows` bounds what a thread keeps).
    let sentinel_rows = if sentinel_every < 2 { 0 } else { rows / (sentinel_every - 1) };
    // A latency's 3 decimals and the commas and newline: 6 + 2.
    let sentinel_row_bytes = key + 6 + T_NS_BYTES + digits(repeats as u64) + 2;
    Estimate {
        rows,
        row_bytes,
        sentinel_rows,
        sentinel_row_bytes,
        bytes: 2 * (rows * row_bytes + sentinel_rows * sentinel_row_bytes),
    }
}

/// Free bytes for an unprivileged writer on the filesystem that holds `path` (or would: the
/// nearest existing ancestor of a directory not yet created).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().ok()?.join(path) };
    let existing = abs.ancestors().find(|p| p.exists())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a zeroed statvfs the call fills.
    // A filesystem without block accounting (/proc, /sys) says nothing about space; writing
    // there fails with its own message when the directory is created.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 || s.f_blocks == 0 {
        return None;
    }
    Some(s.f_bavail as u64 * s.f_frsize as u64)
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
}

/// Refuses (exit 2, nothing written) a plan whose rows cannot fit in `free`; returns a warning
/// when they fit with little room to spare.
pub fn judge(out: &Path, e: Estimate, free: u64) -> Result<Option<String>, Error> {
    let what = format!(
        "--out {}: the run writes about {} ({} rows of up to {} bytes, twice while the cells are merged)",
        out.display(),
        mib(e.bytes),
        e.rows,
        e.row_bytes
    );
    if e.bytes > free {
        return Err(Error::Usage(format!(
            "{what} but its filesystem has {} free; free space, lower -n/--repeats/--threads, or pick another --out",
            mib(free)
        )));
    }
    if (e.bytes as f64) * CLOSE > free as f64 {
        return Ok(Some(format!("{what}, and its filesystem has only {} free", mib(free))));
    }
    Ok(None)
}

/// The check `run`, `scale` and `sweep` make after planning and probing the counters (which
/// write nothing), before creating anything.
pub fn check(out: &Path, e: Estimate) -> Result<(), Error> {
    let Some(free) = free_bytes(out) else { return Ok(()) };
    if let Some(w) = judge(out, e, free)? {
        eprintln!("tracebench: warning: {w}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::plan::TracerRow;

    fn plan(rows: usize, threads: Vec<usize>, sets: Vec<Vec<String>>) -> Plan {
        Plan {
            rows: (0..rows)
                .map(|i| TracerRow {
                    spec: "lttng-ust".into(),
                    name: format!("lttng-ust{i}"),
                    dir: format!("d{i}"),
                    launch: Vec::new(),
                })
                .collect(),
            threads,
            cpus: vec![0],
            sets,
            out: "x".into(),
            cell: crate::runner::plan::CellSettings {
                iterations: 5000,
                clock: crate::clock::ClockKind::Tsc,
                tracer: Default::default(),
                kernel: false,
                payload_size: 4,
                singlestep: false,
                sentinel_every: 32,
                reference_every: 2,
            },
            quiet: true,
            timeout: std::time::Duration::from_secs(300),
            mode: crate::runner::plan::Mode::Run,
            repeats: 1,
            budget: None,
            timings: false,
            exports: Vec::new(),
        }
    }

    #[test]
    fn rows_scale_with_tracers_threads_sets_and_repeats() {
        let one = estimate(&plan(1, vec![1], vec![vec![]]), 1000, 1, 0, 0);
        assert_eq!(one.rows, 1000);
        let more = estimate(&plan(2, vec![1, 2], vec![vec!["a".into()], vec!["b".into()]]), 1000, 3, 2, 0);
        assert_eq!(more.rows, 2 * 3 * 2 * 3 * 1000);
        assert!(more.row_bytes > one.row_bytes);
        assert_eq!(one.bytes, 2 * one.rows * one.row_bytes);
        // An events.csv row as the cell writes it fits the bound.
        assert!("lttng-ust0,1,0,1,1999,1234567,0,0,999999999999\n".len() as u64 <= one.row_bytes);
        assert_eq!(one.sentinel_rows, 0);
    }

    #[test]
    fn sentinels_add_a_row_per_k_minus_one_calls() {
        let p = plan(1, vec![1], vec![vec![]]);
        let (off, on) = (estimate(&p, 3100, 1, 0, 0), estimate(&p, 3100, 1, 0, 32));
        assert_eq!((on.rows, on.sentinel_rows), (3100, 100));
        assert_eq!(on.bytes, off.bytes + 2 * 100 * on.sentinel_row_bytes);
        assert!("lttng-ust0,1,0,1,3099,999999999999,1234567.89,0\n".len() as u64 <= on.sentinel_row_bytes);
    }

    #[test]
    fn refuses_what_cannot_fit_and_warns_when_close() {
        let e = Estimate { rows: 1000, row_bytes: 50, sentinel_rows: 0, sentinel_row_bytes: 0, bytes: 100_000 };
        let err = judge(Path::new("o"), e, 99_999).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("filesystem has 0.1 MiB free"), "{err}");
        assert!(judge(Path::new("o"), e, 110_000).unwrap().is_some());
        assert!(judge(Path::new("o"), e, 1_000_000).unwrap().is_none());
    }

    #[test]
    fn free_space_of_a_directory_not_yet_created() {
        let d = tempfile::tempdir().unwrap();
        assert!(free_bytes(&d.path().join("a/b/c")).is_some_and(|b| b > 0));
    }
}
