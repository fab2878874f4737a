//! A run whose events are in events.csv.zst (how a run of more than a million rows writes them)
//! reads the same as the plain run through every reader: report, gate and export.
mod common;
use std::path::Path;

use common::*;

/// The run, with its events.csv compressed in place and the plain file removed.
fn compress(dir: &Path) {
    let plain = dir.join("lw/events.csv");
    let bytes = std::fs::read(&plain).unwrap();
    std::fs::write(dir.join("lw/events.csv.zst"), zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    std::fs::remove_file(&plain).unwrap();
}

fn ok(args: &[&std::ffi::OsStr]) -> String {
    let o = tb().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn report_gate_and_export_read_a_compressed_run_as_the_plain_one() {
    let (_d, plain) = run_ok(&["--tracer", "lw", "-n", "3000", "--repeats", "2"]);
    let z = plain.with_file_name("z");
    let o = std::process::Command::new("cp").arg("-r").arg(&plain).arg(&z).status().unwrap();
    assert!(o.success());
    compress(&z);
    for d in [&plain, &z] {
        ok(&["report".as_ref(), d.as_os_str()]);
    }
    // The whole report.json, its directory names aside: every figure, finding and interval.
    // (The run's command line, quoted in both, names the plain run's directory.)
    let json = |d: &Path| {
        let text = std::fs::read_to_string(d.join("report.json")).unwrap();
        let text = text.replace(z.to_str().unwrap(), "DIR").replace(plain.to_str().unwrap(), "DIR");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let (a, b) = (json(&plain), json(&z));
    assert!(a.get("overview").is_some(), "report.json has no overview: {a}");
    assert_eq!(a, b, "the compressed run's report differs from the plain run's");
    assert!(std::fs::read_to_string(z.join("report.md")).unwrap().contains("lw"));

    let export = |d: &Path| ok(&["export".as_ref(), "--format".as_ref(), "bmf".as_ref(), d.as_os_str()]);
    assert_eq!(export(&plain), export(&z));

    let g = ok(&["gate".as_ref(), "--baseline".as_ref(), plain.as_os_str(), "--candidate".as_ref(), z.as_os_str()]);
    assert!(g.contains("PASS"), "{g}");

    // A .zst cut short: one line naming the file and what to do, exit 2.
    let bytes = std::fs::read(z.join("lw/events.csv.zst")).unwrap();
    std::fs::write(z.join("lw/events.csv.zst"), &bytes[..bytes.len() / 2]).unwrap();
    let o = tb().arg("report").arg(&z).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("events.csv.zst") && err.contains("not a whole zstd stream"), "{err}");
}
