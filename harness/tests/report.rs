//! `tracebench report` end to end on a real run: the planted slow path of
//! `spin:100@64:1000` must come out as period 64, and bad input gets one line and exit 2.
mod common;
use common::*;

#[test]
fn report_finds_the_planted_period_in_a_real_run() {
    // Labelled rows: the report must key the survey comparisons on the spec, not the label.
    let (_d, out) = run_ok(&["--tracer", "none,spin:100@64:1000", "--label", "floor,spin64", "-n", "20000"]);
    let o = tb().arg("report").arg(&out).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    let spin = stdout.lines().find(|l| l.starts_with("spin64:")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(spin.contains("slow path") && spin.contains("every 64 events"), "{spin}");
    assert!(stdout.contains("spin64: the planted slow path every 64 calls is found"), "{stdout}");
    for f in ["report.html", "report.md", "figures/latency_cdf.png", "figures/latency_cdf.svg"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("every 64 events"));
    assert!(md.contains("None: 17 / 0 / 17"), "the floor row is compared with the survey's None");
}

#[test]
fn report_bad_input_gets_one_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let o = tb().arg("report").arg(d.path()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line, got: {err}");
    assert!(err.contains("run.json is missing"), "{err}");
    let o = tb().args(["report", "/nonexistent/tracebench"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}
