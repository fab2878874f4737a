//! `run --budget`: interleaved rounds added until every pair of tracers is decided, and the
//! options it does not go with refused in one line.
mod common;
use common::*;

fn refused(args: &[&str]) -> String {
    let o = tb().args(args).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_budget_that_cannot_be_kept_is_refused() {
    let e = refused(&["run", "--tracer", "lw", "--budget", "0s"]);
    assert!(e.contains("'0s': give a positive duration such as 60s, 5m or 1h"), "{e}");
    let e = refused(&["run", "--tracer", "lw", "--budget", "ten"]);
    assert!(e.contains("give a duration such as 60s, 5m or 1h"), "{e}");
    let e = refused(&["run", "--tracer", "lw", "--budget", "10s", "--instructions", "singlestep"]);
    assert!(e.contains("--budget adds timed rounds until the rows' costs are told apart"), "{e}");
    let e = refused(&["sweep", "--tracer", "lw", "--vary", "payload-size=4,64", "--budget", "10s"]);
    assert!(e.contains("a sweep compares values, not tracers: give --repeats N"), "{e}");
}

/// Rows ten times apart decide at the first look (10 rounds) or soon after; the run says so,
/// records the rounds it made as its repeats, and the report's pairs are decided with their
/// intervals.
#[test]
fn rounds_are_added_until_every_pair_is_decided() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = tb()
        .args(["run", "--tracer", "none,lw,spin:400", "-n", "1000", "--budget", "120s", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("lw/spin:400 (about 10 rounds)"), "{err}");
    // Ten rounds decide rows this far apart unless a round's mean met a stall; the run then looks
    // again at 14, 20, ... rounds, and records as its repeats the rounds it made.
    let rounds: u64 = err
        .split("every pair of rows is decided after ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not decided: {err}"));
    assert!([10, 14, 20, 28].contains(&rounds), "{err}");
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["repeats"], rounds, "{}", run["repeats"]);
    let o = tb().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let pairs = rep["overview"]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    let p = &pairs[0];
    assert_eq!(
        (p["a"].as_str(), p["b"].as_str(), p["outcome"].as_str()),
        (Some("lw"), Some("spin:400"), Some("a_cheaper"))
    );
    assert!(p["net"] == true && p["rounds"] == rounds && p["paired"] == true, "{p}");
    let (lo, hi) = (p["interval"][0].as_f64().unwrap(), p["interval"][1].as_f64().unwrap());
    assert!(lo > 0.0 && lo <= p["estimate"].as_f64().unwrap() && hi >= lo, "{p}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("order: decided, lw < spin:400"), "{text}");
}
