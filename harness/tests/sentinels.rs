//! `t_ns` on every kept row and the sentinel windows (`--sentinel-every`), end to end
//! with the real binary.
mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{run_ok, tb, Table};

fn run_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

/// (repetition, thread) -> iteration -> t_ns, from an events.csv.
fn times(t: &Table) -> BTreeMap<(String, String), BTreeMap<u64, f64>> {
    let (rep, th, it, tn) = (t.col("repetition"), t.col("thread"), t.col("iteration"), t.col("t_ns"));
    let mut m: BTreeMap<(String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for r in &t.rows {
        m.entry((r[rep].clone(), r[th].clone())).or_default().insert(r[it].parse().unwrap(), r[tn].parse().unwrap());
    }
    m
}

#[test]
fn t_ns_rises_and_sentinels_come_one_per_k_minus_one_calls() {
    let (_d, out) = run_ok(&["--tracer", "lw", "-n", "2000", "--repeats", "2"]);
    let ev = Table::read(&out.join("lw/events.csv"));
    assert_eq!(ev.header.last().map(String::as_str), Some("t_ns"), "t_ns is appended last");
    let by_seq = times(&ev);
    assert_eq!(by_seq.len(), 2, "two repetitions of one thread");
    for (k, seq) in &by_seq {
        let t: Vec<f64> = seq.values().copied().collect();
        assert_eq!(t.len(), 2000);
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{k:?}: t_ns goes back");
        assert!(t[0] < 1e6, "{k:?}: the first kept call starts {} ns after the cell's first window", t[0]);
        assert!(t[1999] > t[0], "{k:?}: no time passed");
    }

    let path = out.join("lw/sentinels.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("tracer,threads,thread,cpu,iteration,t_ns,latency_ns,repetition\n"), "{text:.200}");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600, "private, as events.csv");
    let s = Table::read(&path);
    // One sentinel per 31 tracer windows: about 2 x 2000 / 31 = 129 kept (disturbed ones, of
    // either kind, move the count a little).
    let expect = 2.0 * 2000.0 / 31.0;
    assert!(
        (s.rows.len() as f64 - expect).abs() < 0.25 * expect,
        "{} sentinels, expected about {expect}",
        s.rows.len()
    );
    // Each lies between the calls around it: after the call before it, before the one it precedes.
    let (rep, th, it, tn, lat) =
        (s.col("repetition"), s.col("thread"), s.col("iteration"), s.col("t_ns"), s.col("latency_ns"));
    let mut between = 0;
    for r in &s.rows {
        let seq = &by_seq[&(r[rep].clone(), r[th].clone())];
        let (i, t): (u64, f64) = (r[it].parse().unwrap(), r[tn].parse().unwrap());
        assert!(r[lat].parse::<f64>().unwrap() > 0.0);
        if let (Some(before), Some(after)) = (seq.get(&(i - 1)), seq.get(&i)) {
            assert!(*before <= t && t <= *after, "sentinel before iteration {i} at {t} ns, not in [{before}, {after}]");
            between += 1;
        }
    }
    assert!(between > s.rows.len() / 2, "only {between} sentinels had both neighbours kept");
    let j = run_json(&out);
    assert_eq!(j["sentinel_every"], 32);
    let kept: u64 = j["tracers"][0]["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["per_thread"].as_array().unwrap().iter().map(|t| t["sentinels"].as_u64().unwrap()))
        .sum();
    assert_eq!(kept as usize, s.rows.len(), "run.json counts the rows sentinels.csv holds");
}

#[test]
fn sentinel_every_0_writes_no_sentinels_and_1_is_refused() {
    let (_d, out) = run_ok(&["--tracer", "lw", "-n", "500", "--sentinel-every", "0"]);
    assert!(!out.join("lw/sentinels.csv").exists());
    assert!(out.join("lw/events.csv").exists());
    assert_eq!(run_json(&out)["sentinel_every"], 0);
    let ev = Table::read(&out.join("lw/events.csv"));
    assert_eq!(ev.f64s("t_ns").len(), 500);

    let d = tempfile::tempdir().unwrap();
    let o = tb()
        .args(["run", "--tracer", "lw", "-n", "10", "--sentinel-every", "1", "-q", "--out"])
        .arg(d.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--sentinel-every 1") && err.lines().count() == 1, "{err}");
    assert!(!d.path().join("r").exists(), "refused before anything is written");
}

/// Reference windows: on by default at one per tracer window, set to the tracer's
/// length and written per bin; `--reference-every 0` writes none, and 1 is refused in one line.
#[test]
fn reference_windows_are_the_tracers_length_and_can_be_turned_off() {
    let (_d, out) = run_ok(&["--tracer", "spin:200", "-n", "4000"]);
    assert_eq!(run_json(&out)["reference_every"], 2);
    let rf = Table::read(&out.join("spin_200/reference.csv"));
    let windows: f64 = rf.f64s("windows").iter().sum();
    assert!(windows >= 3900.0, "one reference window per tracer window: {windows}");
    // Their median bin lies within 30 % of the tracer's median.
    let (lo, hi, n) = (rf.f64s("latency_lo_ns"), rf.f64s("latency_hi_ns"), rf.f64s("windows"));
    let mut bins: Vec<(f64, f64, f64)> = lo.iter().zip(&hi).zip(&n).map(|((a, b), c)| (*a, *b, *c)).collect();
    bins.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut acc = 0.0;
    let median = bins
        .iter()
        .find(|b| {
            acc += b.2;
            acc >= windows / 2.0
        })
        .map(|b| 0.5 * (b.0 + b.1))
        .unwrap();
    let ev = Table::read(&out.join("spin_200/events.csv"));
    let mut lat = ev.f64s("latency_ns");
    lat.sort_by(f64::total_cmp);
    let tracer = lat[lat.len() / 2];
    assert!((median / tracer - 1.0).abs() < 0.3, "reference median {median} ns, tracer {tracer} ns");

    let (_d2, out2) = run_ok(&["--tracer", "lw", "-n", "500", "--reference-every", "0"]);
    assert!(!out2.join("lw/reference.csv").exists());
    assert_eq!(run_json(&out2)["reference_every"], 0);

    let d = tempfile::tempdir().unwrap();
    let o = tb()
        .args(["run", "--tracer", "lw", "-n", "10", "--reference-every", "1", "-q", "--out"])
        .arg(d.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--reference-every 1") && err.lines().count() == 1, "{err}");
    assert!(!d.path().join("r").exists(), "refused before anything is written");
}
