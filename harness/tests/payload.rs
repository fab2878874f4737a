//! `--payload-size` and `sweep --vary payload-size` end to end, on real small runs (lw and printf:
//! they run everywhere, so this test never skips).
mod common;
use common::*;

/// A payload size a backend does not take: one line, exit 2, nothing created.
#[test]
fn bad_payload_sizes_are_refused_before_anything_exists() {
    let d = tempfile::tempdir().unwrap();
    for (cmd, args, needle) in [
        ("run", vec!["--tracer", "syscall", "--payload-size", "256"], "'syscall' records a fixed 4-byte payload"),
        ("run", vec!["--tracer", "lw", "--payload-size", "0"], "'lw' records 1 to 4096 bytes"),
        ("run", vec!["--tracer", "lw,none", "--payload-size", "64"], "'none' records a fixed 4-byte payload"),
        ("run", vec!["--tracer", "lw", "--payload-size", "-3"], "-3"),
        ("sweep", vec!["--tracer", "lw,none", "--vary", "payload-size=4,256"], "--vary payload-size=256: 'none'"),
        (
            "sweep",
            vec!["--tracer", "lw", "--vary", "payload-size=4,8M"],
            "--vary payload-size=8M: 'lw' records 1 to 4096",
        ),
    ] {
        let out = d.path().join("r");
        let o = tb().arg(cmd).args(&args).arg("--quiet").arg("--out").arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
        if cmd != "run" || !args.contains(&"-3") {
            // (clap's own message for a negative number spans a few lines.)
            assert_eq!(err.trim().lines().count(), 1, "one line, got: {err}");
        }
        assert!(!out.exists(), "{args:?}: nothing may be created for bad input");
    }
}

/// `sweep --vary payload-size=4,256,1K`: one directory per value, sweep.csv rows with the sizes in
/// plain bytes, and run.json of each value says what the payload was.
#[test]
fn payload_sweep_writes_rows_in_bytes() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sw");
    let o = tb()
        .args(["sweep", "--tracer", "lw,printf", "--vary", "payload-size=4,256,1K", "-n", "400", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = Table::read(&out.join("sweep.csv"));
    assert_eq!(s.rows.len(), 6, "2 tracers x 3 values");
    let mut seen: Vec<(String, String)> = s.rows.iter().map(|r| (r[0].clone(), r[2].clone())).collect();
    seen.sort();
    let mut want: Vec<(String, String)> = ["lw", "printf"]
        .iter()
        .flat_map(|t| ["1024", "256", "4"].iter().map(move |v| (t.to_string(), v.to_string())))
        .collect();
    want.sort();
    assert_eq!(seen, want);
    for r in &s.rows {
        assert_eq!(r[1], "payload-size");
        assert_eq!(r[4].parse::<usize>().unwrap(), 400, "{r:?}");
    }
    for (dir, bytes) in [("payload-size=4", 4), ("payload-size=256", 256), ("payload-size=1024", 1024)] {
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(dir).join("run.json")).unwrap()).unwrap();
        assert_eq!(j["payload_bytes"], bytes, "{dir}");
        let lw = j["tracers"].as_array().unwrap().iter().find(|t| t["name"] == "lw").unwrap();
        // The record lw wrote: the index at 4 B, else a header and the bytes padded to 8.
        let want = if bytes == 4 { 16 } else { 16 + bytes };
        assert_eq!(lw["config"]["event_bytes"], want, "{dir}");
        let printf = j["tracers"].as_array().unwrap().iter().find(|t| t["name"] == "printf").unwrap();
        let call = printf["config"]["call"].as_str().unwrap();
        assert_eq!(call.contains("%.*s"), bytes != 4, "{dir}: {call}");
    }
}
