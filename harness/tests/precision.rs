//! The harness against backends of known cost (issue: measurement core, tests).
mod common;
use common::*;

/// `spin:300` costs 300 ns more than the empty call, +-5%.
#[test]
fn spin_300_is_300ns_above_the_floor() {
    let (_d, out) = run_ok(&["--tracer", "none,spin:300", "-n", "5000"]);
    let s = Table::read(&out.join("summary.csv"));
    let d50 = s.get("tracer", "spin:300", "p50_ns") - s.get("tracer", "none", "p50_ns");
    let dmean = s.get("tracer", "spin:300", "mean_ns") - s.get("tracer", "none", "mean_ns");
    eprintln!("spin:300 above none: median {d50:.1} ns, mean {dmean:.1} ns");
    assert!((d50 - 300.0).abs() <= 15.0, "median difference {d50}");
}

/// `spin:100@64:1000`: 1/64 of the kept rows sit near 1000 ns, with period 64 in the iteration
/// index.
#[test]
fn planted_slow_path_is_seen() {
    let (_d, out) = run_ok(&["--tracer", "spin:100@64:1000", "-n", "6400"]);
    let e = Table::read(&out.join("spin_100_64_1000").join("events.csv"));
    let (li, ii) = (e.col("latency_ns"), e.col("iteration"));
    let slow: Vec<u64> = e
        .rows
        .iter()
        .filter(|r| (750.0..1300.0).contains(&r[li].parse::<f64>().unwrap()))
        .map(|r| r[ii].parse().unwrap())
        .collect();
    let near: usize = e
        .rows
        .iter()
        .filter(|r| {
            let v: f64 = r[li].parse().unwrap();
            (750.0..1300.0).contains(&v)
        })
        .count();
    let frac = near as f64 / e.rows.len() as f64;
    eprintln!("slow rows near 1000 ns: {near} of {} ({:.4}, expected {:.4})", e.rows.len(), frac, 1.0 / 64.0);
    assert!((frac - 1.0 / 64.0).abs() < 0.25 / 64.0, "fraction {frac}");
    // Same residue mod 64 for (almost) all slow rows.
    let mut by = std::collections::BTreeMap::new();
    for i in &slow {
        *by.entry(i % 64).or_insert(0usize) += 1;
    }
    let top = by.values().max().copied().unwrap_or(0);
    assert!(top as f64 >= 0.8 * slow.len() as f64, "period 64 in iteration index: {by:?}");
}

/// A path the tracer takes every P of its own calls stays on one lattice of iterations past the
/// blocks written out during the run (every `BLOCK` = 2^18 kept calls): the iterations count the
/// tracer's calls made between blocks as well, whatever their number (64 here, which is no
/// multiple of 100, would move the path's phase by 64 at each block).
#[test]
fn a_planted_path_keeps_its_phase_across_blocks() {
    let (_d, out) = run_ok(&["--tracer", "spin:100@100:1000", "-n", "600000"]);
    let text = std::fs::read_to_string(out.join("spin_100_100_1000").join("events.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (li, ii) = (col("latency_ns"), col("iteration"));
    let mut by = std::collections::BTreeMap::new();
    let (mut slow, mut last) = (0usize, 0u64);
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let it: u64 = f[ii].parse().unwrap();
        last = last.max(it);
        if (750.0..1300.0).contains(&f[li].parse::<f64>().unwrap()) {
            *by.entry(it % 100).or_insert(0usize) += 1;
            slow += 1;
        }
    }
    assert!(last > 2 * (1 << 18), "the run holds fewer than three blocks: last iteration {last}");
    let top = by.values().max().copied().unwrap_or(0);
    assert!(top as f64 >= 0.9 * slow as f64, "period 100 in iteration index, by residue: {by:?}");
}

/// `name` on PATH.
fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// A competing busy process on the measuring core with a 100 us interval timer: discards by reason
/// appear, and the kept distribution still matches a quiet run.
#[test]
fn disturbance_is_discarded_by_reason() {
    for tool in ["taskset", "python3"] {
        if which(tool).is_none() {
            println!(
                "SKIP disturbance_is_discarded_by_reason: {tool} not installed (apt-get install util-linux python3)"
            );
            return;
        }
    }
    let cpu = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let last = cpu.trim().rsplit([',', '-']).next().unwrap().to_string();
    // 100,000 calls (about 35 ms): the disturbance comes once per scheduler slice, not every
    // 100 us (below), so a 20,000-call run (about 7 ms) saw none in 1 run of 10 on this VM; at
    // 100,000 calls 20 runs of 20 saw 6 to 12 context switches and 6 to 23 timer interrupts.
    let n = "100000";
    let (_q, quiet) = run_ok(&["--tracer", "spin:300", "-n", n, "--cpu", &last]);
    // A busy loop with a 100 us interval timer, pinned to the same core: the scheduler must
    // switch between it and the measuring thread, and its timer interrupts land on that core.
    // ITIMER_REAL re-arms only when the hog takes its SIGALRM, so while the measuring thread
    // holds the core at most one timer fires: the storm is one interrupt per hog slice.
    let storm = r#"
import signal, time
signal.signal(signal.SIGALRM, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
end = time.time() + 60
while time.time() < end:
    pass
"#;
    let mut hog = std::process::Command::new("taskset").args(["-c", &last, "python3", "-c", storm]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let r = std::panic::catch_unwind(|| run_ok(&["--tracer", "spin:300", "-n", n, "--cpu", &last]));
    let _ = hog.kill();
    let _ = hog.wait();
    let (_n, noisy) = r.unwrap();
    let s = Table::read(&noisy.join("summary.csv"));
    let disc = s.get("tracer", "spin:300", "discarded");
    let rj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(noisy.join("run.json")).unwrap()).unwrap();
    let reasons = &rj["tracers"][0]["cells"][0]["per_thread"][0]["reasons"];
    eprintln!("noisy run: {disc} discarded, reasons {reasons}");
    assert!(disc > 0.0);
    assert!(reasons.as_object().unwrap().keys().any(|k| k == "context-switch" || k == "timer-irq"), "{reasons}");
    let d = Table::read(&noisy.join("spin_300").join("discarded.csv"));
    assert!(!d.rows.is_empty() && !d.rows[0][d.col("reason")].is_empty());
    let qm = Table::read(&quiet.join("summary.csv")).get("tracer", "spin:300", "p50_ns");
    let nm = s.get("tracer", "spin:300", "p50_ns");
    eprintln!("median quiet {qm:.1} ns, noisy {nm:.1} ns");
    assert!((nm - qm).abs() <= 0.10 * qm, "kept median moved: quiet {qm}, noisy {nm}");
}
