//! A rebuild during a run: `cargo build` relinks the binary while a run measures, and a cell
//! started from the binary's path would fail with ENOENT ("cannot start the measuring process"),
//! losing the whole run. Cells start from the running image (`/proc/PID/exe`).
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn replacing_the_binary_during_a_run_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("tracebench");
    std::fs::copy(env!("CARGO_BIN_EXE_tracebench"), &exe).unwrap();
    let out = tmp.path().join("r");
    let mut run = Command::new(&exe)
        .args(["run", "-q", "--tracer", "none,lw,printf", "--repeats", "3", "-n", "20000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first cell has started, replace the file as a linker does: a new file renamed over
    // it (the old inode lives on only as the running image), then remove it altogether.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !first_cell_started(&out) {
        assert!(Instant::now() < deadline, "no cell started");
        assert!(run.try_wait().unwrap().is_none(), "the run ended before its first cell");
        std::thread::sleep(Duration::from_millis(5));
    }
    let next = tmp.path().join("tracebench.new");
    std::fs::write(&next, b"#!/bin/sh\nexit 99\n").unwrap();
    std::fs::rename(&next, &exe).unwrap();
    std::fs::remove_file(&exe).unwrap();
    let o = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let reps = std::fs::read_to_string(out.join("repetitions.csv")).unwrap();
    assert_eq!(reps.lines().count(), 1 + 3 * 3, "every cell measured after the binary was replaced: {reps}");
}

fn first_cell_started(out: &Path) -> bool {
    std::fs::read_dir(out.join(".cells")).is_ok_and(|mut d| d.next().is_some())
}
