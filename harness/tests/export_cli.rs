//! `--export` and `tracebench export` end to end, on a tiny real run.
mod common;
use std::path::Path;

use common::*;
use serde_json::Value;

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn one_line_exit_2(o: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line, got: {err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
}

#[test]
fn run_exports_both_formats_and_export_rewrites_them() {
    let d = tempfile::tempdir().unwrap();
    let (out, b, g) = (d.path().join("r"), d.path().join("b.json"), d.path().join("g.json"));
    let o = tb()
        .args(["run", "--tracer", "none,lw,printf", "-n", "2000", "--repeats", "3", "--quiet", "--out"])
        .arg(&out)
        .arg(format!("--export=bmf={}", b.display()))
        .args(["--export", &format!("github-benchmark={}", g.display())])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let s = Table::read(&out.join("summary.csv"));
    let bmf = json(&b);
    let ghb = json(&g);
    let entries = ghb.as_array().expect("github-benchmark is a list");
    assert_eq!(entries.len(), s.rows.len(), "one entry per row");
    assert_eq!(bmf.as_object().unwrap().len(), s.rows.len());
    for t in ["none", "lw", "printf"] {
        let name = format!("tracebench/{t}/threads=1");
        let mom = s.get("tracer", t, "mom_ns");
        let l = &bmf[&name]["latency"];
        let (lo, v, hi) =
            (l["lower_value"].as_f64().unwrap(), l["value"].as_f64().unwrap(), l["upper_value"].as_f64().unwrap());
        assert_eq!(v, mom, "{name}: latency.value is summary.csv's mom_ns");
        assert!(lo <= v && v <= hi, "{name}: {l}");
        // The interval is the bootstrap over the three repetitions, so it lies within their range
        // (widened only to reach the pooled value).
        let reps = Table::read(&out.join("repetitions.csv"));
        let (ti, mi) = (reps.col("tracer"), reps.col("mom_ns"));
        let m: Vec<f64> = reps.rows.iter().filter(|r| r[ti] == t).map(|r| r[mi].parse().unwrap()).collect();
        assert_eq!(m.len(), 3);
        let (mn, mx) = (m.iter().cloned().fold(f64::MAX, f64::min), m.iter().cloned().fold(f64::MIN, f64::max));
        assert!(lo >= mn.min(v) - 1e-9 && hi <= mx.max(v) + 1e-9, "{name}: [{lo}, {hi}] vs reps {m:?}");
        assert_eq!(bmf[&name]["latency-p50"]["value"].as_f64().unwrap(), s.get("tracer", t, "p50_ns"));
        assert_eq!(bmf[&name]["latency-p99"]["value"].as_f64().unwrap(), s.get("tracer", t, "p99_ns"));
        // discarded / (kept + discarded), from summary.csv's own counts.
        let (kept, disc) = (s.get("tracer", t, "kept"), s.get("tracer", t, "discarded"));
        let frac = bmf[&name]["discard-fraction"]["value"].as_f64().unwrap();
        assert!(
            (frac - disc / (kept + disc)).abs() < 1e-12,
            "{name}: discard-fraction {frac}, {disc} of {}",
            kept + disc
        );
        // No counter column in summary.csv (no PMU here) means no counter measure: never a 0.
        for c in s.header.iter().filter(|h| h.ends_with("_mean")) {
            assert!(bmf[&name].get(c.trim_end_matches("_mean")).is_some(), "{c} measured but not exported");
        }
        assert_eq!(bmf[&name].as_object().unwrap().len(), 4 + s.header.iter().filter(|h| h.ends_with("_mean")).count());

        let e = entries.iter().find(|e| e["name"] == name.as_str()).unwrap();
        assert_eq!(e["unit"], "ns");
        assert_eq!(e["value"].as_f64().unwrap(), mom);
        let half: f64 = e["range"].as_str().unwrap().strip_prefix("± ").unwrap().parse().unwrap();
        assert!((half - (hi - lo) / 2.0).abs() < 6e-4, "{half} vs [{lo}, {hi}]");
        let extra = e["extra"].as_str().unwrap();
        for needle in ["host: ", "kernel: ", "clock: ", "resolution", &format!("tracer: {t} "), "over 3 repetitions"] {
            assert!(extra.contains(needle), "'{needle}' not in {extra}");
        }
    }

    // `tracebench export` re-makes the same bytes from the directory alone.
    for (fmt, file) in [("bmf", &b), ("github-benchmark", &g)] {
        let o = tb().arg("export").arg(&out).args(["--format", fmt]).output().unwrap();
        assert!(o.status.success());
        assert_eq!(String::from_utf8_lossy(&o.stdout), std::fs::read_to_string(file).unwrap(), "{fmt}");
    }
    let again = d.path().join("again.json");
    tb().arg("export").arg(&out).args(["--format", "bmf", "--out"]).arg(&again).assert().success();
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&b).unwrap());

    // The gate exports the candidate's values with the verdict as metadata.
    let gg = d.path().join("gate.json");
    let o = tb()
        .args(["gate", "--paired", "--min-repeats", "2", "--baseline"])
        .arg(&out)
        .arg("--candidate")
        .arg(&out)
        .args(["--export", &format!("github-benchmark={}", gg.display())])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let gj = json(&gg);
    assert_eq!(gj.as_array().unwrap().len(), s.rows.len());
    for e in gj.as_array().unwrap() {
        let want = entries.iter().find(|x| x["name"] == e["name"]).unwrap();
        assert_eq!(e["value"], want["value"]);
        // Three pairs give no 99% sign-test interval: the verdict exported is the one the gate gave.
        assert!(e["extra"].as_str().unwrap().contains("gate: inconclusive (change +0.0%"), "{}", e["extra"]);
    }
}

#[test]
fn bad_exports_fail_before_measuring() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    for (spec, needle) in [
        ("bmf".to_string(), "give the file too"),
        ("junit=x.json".to_string(), "unknown export format 'junit'"),
        (format!("bmf={}/no/x.json", d.path().display()), "does not exist"),
    ] {
        let o = tb()
            .args(["run", "--tracer", "none", "--quiet", "--out"])
            .arg(&out)
            .args(["--export", &spec])
            .output()
            .unwrap();
        one_line_exit_2(&o, needle);
        assert!(!out.exists(), "{spec}: nothing measured, nothing written");
        let o = tb().args(["gate", "--baseline", "x", "--candidate", "y", "--export", &spec]).output().unwrap();
        one_line_exit_2(&o, needle);
    }
    let o = tb().arg("export").arg(d.path()).args(["--format", "bmf"]).output().unwrap();
    one_line_exit_2(&o, "not a results directory");
    let o = tb().arg("export").arg(d.path()).args(["--format", "csv"]).output().unwrap();
    one_line_exit_2(&o, "unknown export format 'csv'");
}

#[test]
fn example_workflows_parse_as_yaml() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ci-example");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    for want in ["tracebench-bencher.yml", "tracebench-github-action-benchmark.yml"] {
        assert!(files.iter().any(|p| p.ends_with(want)), "{want} missing in {}", dir.display());
    }
    let code = "import sys,yaml\nfor f in sys.argv[1:]:\n d=yaml.safe_load(open(f))\n assert isinstance(d,dict) and 'jobs' in d, f";
    match std::process::Command::new("python3").args(["-c", code]).args(&files).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named") => {
            println!("SKIP example_workflows_parse_as_yaml: python3 has no yaml module (apt-get install python3-yaml)")
        }
        Ok(o) => panic!("a workflow does not parse: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => println!("SKIP example_workflows_parse_as_yaml: no python3 ({e})"),
    }
}

#[test]
fn export_of_a_sweep_writes_what_sweep_export_wrote() {
    let d = tempfile::tempdir().unwrap();
    let (out, first) = (d.path().join("sw"), d.path().join("a.json"));
    let o = tb()
        .args(["sweep", "-q", "--tracer", "lw", "--vary", "payload-size=4,64", "-n", "2000", "--out"])
        .arg(&out)
        .arg("--export")
        .arg(format!("bmf={}", first.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again = d.path().join("b.json");
    let o = tb().arg("export").arg(&out).args(["-f", "bmf", "-o"]).arg(&again).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&first).unwrap(), std::fs::read(&again).unwrap(), "export of the sweep differs");
    let names: Vec<String> = json(&first).as_object().unwrap().keys().cloned().collect();
    assert_eq!(names, ["tracebench/lw/threads=1/payload-size=4", "tracebench/lw/threads=1/payload-size=64"]);
    // One value's directory alone keeps its suffix.
    let o = tb().arg("export").arg(out.join("payload-size=64")).args(["-f", "bmf"]).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("tracebench/lw/threads=1/payload-size=64").is_some(), "{v}");
}
