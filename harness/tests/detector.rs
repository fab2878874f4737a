//! The disturbance detector on a real run: a CPU hog on the measuring core preempts the measuring
//! thread every few milliseconds, and every preempted call must be discarded as a context switch,
//! however long the run (the ring of detector records once filled up between windows after about
//! 100,000 calls and saw nothing more: a 4.1 ms preempted call was kept).
mod common;
use common::*;

#[test]
fn a_hog_on_the_measuring_core_is_seen_to_the_end_of_a_long_run() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = (cpus - 1).to_string();
    let Ok(mut hog) =
        std::process::Command::new("taskset").args(["-c", &cpu, "sh", "-c", "while :; do :; done"]).spawn()
    else {
        println!("SKIP a_hog_on_the_measuring_core_is_seen_to_the_end_of_a_long_run: taskset is not installed");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = tb()
        .args(["run", "--tracer", "lw", "-n", "1000000", "--cpu", &cpu, "--sentinel-every", "0", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let _ = hog.kill();
    let _ = hog.wait();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let missing = &run["disturbance"]["missing"];
    if missing.as_array().is_some_and(|m| !m.is_empty()) {
        println!("SKIP a_hog_on_the_measuring_core_is_seen_to_the_end_of_a_long_run: the detector misses {missing}");
        return;
    }
    let discarded = Table::read(&out.join("lw").join("discarded.csv"));
    let (reason, iteration) = (discarded.col("reason"), discarded.col("iteration"));
    let switches: Vec<u64> = discarded
        .rows
        .iter()
        .filter(|r| r[reason].contains("context-switch"))
        .map(|r| r[iteration].parse().unwrap())
        .collect();
    // The hog takes the core every few ms; about one preemption in five lands inside a window
    // (here: 4 in 200,000 calls, so about 20 expected in 1,000,000), spread over the run. A filled
    // ring would see none after the first 100,000 or so; none in the second half of a working
    // detector's run has a chance of about 1e-6.
    assert!(switches.len() >= 5, "{} context switches discarded", switches.len());
    assert!(switches.iter().any(|&i| i > 500_000), "none after iteration 500000: {switches:?}");
}
