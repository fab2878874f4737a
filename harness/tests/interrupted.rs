//! An interrupted run writes no row that looks like data, and `run`, `report` and
//! `gate` each say in one line that it was interrupted, and where.
mod common;
use common::{tb, Table};

/// SIGINT while the first cell warms up (spin:500000: its calibration, then 1000 untimed 0.5 ms calls, 9 s in all here, before the
/// first timed one): that cell has no kept call, so neither summary.csv nor repetitions.csv gets a
/// row for it (no "kept 0, mom NaN"); run.json says where the stop came; the report and the gate
/// say "interrupted" in one line.
#[test]
fn a_cell_stopped_before_its_first_call_writes_no_row_and_everyone_says_interrupted() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let bin = assert_cmd::cargo::cargo_bin("tracebench");
    let child = std::process::Command::new(bin)
        .args(["run", "--tracer", "spin:500000", "-n", "10", "--repeats", "2", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("This run was interrupted (Ctrl-C or a signal)"), "{stdout}");

    for f in ["summary.csv", "repetitions.csv"] {
        let t = Table::read(&out.join(f));
        assert!(t.rows.is_empty(), "{f} has rows of a run stopped before any timed call: {:?}", t.rows);
    }
    let rj: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(rj["interrupted"], true);
    let at = &rj["interrupted_at"];
    // The stop lands in cell 1 (or, on a very slow machine, before it started).
    if at["tracer"].is_string() {
        assert_eq!(at["tracer"], "spin:500000", "{at}");
        assert_eq!(at["repetition"], 0, "{at}");
        assert_eq!(at["cells_run"], 1, "{at}");
    }

    let r = tb().arg("report").arg(&out).output().unwrap();
    let said = String::from_utf8_lossy(&r.stdout);
    assert!(said.lines().filter(|l| l.contains("interrupted")).count() == 1, "{said}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("This run was interrupted"), "{md}");

    let g = tb().args(["gate", "--baseline"]).arg(&out).arg("--candidate").arg(&out).output().unwrap();
    assert_eq!(g.status.code(), Some(2));
    let err = String::from_utf8_lossy(&g.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("interrupted") && !err.contains("positive number"), "{err}");
}
