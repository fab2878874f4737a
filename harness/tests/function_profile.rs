//! The per-function profile of a stepped run, end to end with the real binary: exact
//! per-function counts of a plugin of known functions, the files the report writes (CSV,
//! `.folded`, flame graph SVG, the report.json finding, report.html's cards), the gate naming the
//! function that grew, and lttng-ust's paths dominated by liblttng-ust.
mod common;

#[path = "../../tracers/tests/support/example_plugins.rs"]
mod example_plugins;

use std::collections::BTreeMap;
use std::path::Path;

use common::{run_ok, tb, Table};

/// (path, function) -> (module, self, inclusive), from instructions_by_function.csv.
type Functions = BTreeMap<(u64, String), (String, f64, f64)>;

fn functions(out: &Path, tracer: &str) -> Functions {
    let t = Table::read(&out.join("instructions_by_function.csv"));
    let c = |n: &str| t.col(n);
    t.rows
        .iter()
        .filter(|r| r[c("tracer")] == tracer)
        .map(|r| {
            (
                (r[c("path_instructions")].parse().unwrap(), r[c("function")].clone()),
                (
                    r[c("module")].clone(),
                    r[c("self_instructions")].parse().unwrap(),
                    r[c("inclusive_instructions")].parse().unwrap(),
                ),
            )
        })
        .collect()
}

fn report(out: &Path) -> String {
    let o = tb().arg("report").arg(out).output().unwrap();
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The nops plugins, or None with the reason printed (they are x86-64 asm).
fn nops(test: &str) -> Option<(String, String)> {
    if !cfg!(target_arch = "x86_64") {
        println!("SKIP {test}: the nops plugin's functions are x86-64 asm");
        return None;
    }
    Some((example_plugins::plugin("libnops_plugin.so"), example_plugins::plugin("libnops1_plugin.so")))
}

#[test]
fn known_functions_give_exact_per_function_counts() {
    let Some((nops, _)) = nops("known_functions_give_exact_per_function_counts") else { return };
    let spec = format!("plugin:{nops}");
    let (_d, out) = run_ok(&["--tracer", &spec, "--label", "nops", "--instructions", "singlestep", "-n", "60"]);
    let lines = report(&out);
    let f = functions(&out, "nops");
    let (path, _) = f.keys().next().unwrap().clone();
    // nutrace_header: 5 nops and a ret, once; nutrace_write: 10 nops and a ret, twice.
    assert_eq!(f[&(path, "nutrace_header".into())], ("libnops_plugin.so".into(), 6.0, 6.0), "{f:?}");
    assert_eq!(f[&(path, "nutrace_write".into())].1, 22.0, "{f:?}");
    // Self counts sum to the path's exact count; the outermost frame holds all of it.
    let total: f64 = f.iter().filter(|(k, _)| k.0 == path).map(|(_, v)| v.1).sum();
    assert_eq!(total, path as f64, "{f:?}");
    assert!(f.iter().any(|(k, v)| k.0 == path && v.2 == path as f64), "no frame holds the whole path: {f:?}");
    assert!(lines.contains("nops: its ") && lines.contains("nutrace_write 22"), "{lines}");
    // The folded stacks sum to the path's instructions over its calls; the SVG is a flame graph.
    let folded = std::fs::read_to_string(out.join(format!("figures/flame-nops-{path}.folded"))).unwrap();
    let sum: u64 = folded.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum();
    assert_eq!(sum, path * 60, "{folded}");
    let svg = std::fs::read_to_string(out.join(format!("figures/flame-nops-{path}.svg"))).unwrap();
    assert!(svg.contains("<svg") && svg.contains("nutrace_write"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(&format!("figures/flame-nops-{path}.svg")) && html.contains("nutrace_header"));
    // report.json: a typed function_profile finding for the path.
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let fnd = &j["tracers"][0]["metrics"][0]["findings"][0];
    assert_eq!(fnd["kind"], "function_profile", "{fnd}");
    assert_eq!(fnd["instructions"], path);
    assert!(fnd["versus_main"].is_null());
    let w = fnd["functions"].as_array().unwrap().iter().find(|x| x["function"] == "nutrace_write").unwrap();
    assert_eq!(w["self"], 22.0);
    // A damaged profile.json: one line naming it, exit 2, like any malformed results file.
    std::fs::write(out.join("nops/profile.json"), "{\"counts\": 3}").unwrap();
    let o = tb().arg("report").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("profile.json") && err.contains("not a stepped run's profile"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn the_gate_names_the_function_that_grew() {
    let Some((nops, nops1)) = nops("the_gate_names_the_function_that_grew") else { return };
    let run = |so: &str| {
        run_ok(&["--tracer", &format!("plugin:{so}"), "--label", "nops", "--instructions", "singlestep", "-n", "20"])
    };
    let ((_a, base), (_b, cand)) = (run(&nops), run(&nops1));
    let gate =
        |b: &Path, c: &Path| tb().arg("gate").arg("--baseline").arg(b).arg("--candidate").arg(c).output().unwrap();
    let o = gate(&base, &cand);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("regressed: exact counts: 2 instructions more per call"), "{s}");
    assert!(s.contains("by function: nutrace_write +2"), "{s}");
    let o = gate(&cand, &base);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(s.contains("improved") && s.contains("by function: nutrace_write -2"), "{s}");
}

#[test]
fn lttng_ust_paths_are_dominated_by_liblttng_ust() {
    let list = tb().arg("list").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let avail = list.lines().find(|l| l.trim_start().starts_with("lttng-ust ")).unwrap_or("");
    if avail.split_whitespace().nth(1) != Some("available") {
        println!(
            "SKIP lttng_ust_paths_are_dominated_by_liblttng_ust: lttng-ust is not available here ({})",
            avail.trim()
        );
        return;
    }
    // 2 x 8 KiB sub-buffers: a switch every ~800 calls, so 1200 calls hold one at least.
    let (_d, out) = run_ok(&["--tracer", "lttng-ust", "--instructions", "singlestep", "-n", "1200"]);
    let lines = report(&out);
    let f = functions(&out, "lttng-ust");
    let paths: Vec<u64> = f.keys().map(|k| k.0).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let ev = Table::read(&out.join("lttng-ust/events.csv"));
    let (cu, ck) = (ev.col("user_instructions"), ev.col("kernel_entries"));
    let mut calls: BTreeMap<u64, usize> = BTreeMap::new();
    for r in &ev.rows {
        *calls.entry(r[cu].parse().unwrap()).or_default() += 1;
    }
    let main = *calls.iter().max_by_key(|(_, n)| **n).unwrap().0;
    let switch = ev.rows.iter().filter(|r| r[ck] != "0").map(|r| r[cu].parse::<u64>().unwrap()).max();
    let switch =
        switch.filter(|s| paths.contains(s)).expect("no sub-buffer switch (a path with kernel entries) in 1200 calls");
    for p in [main, switch] {
        let lttng: f64 = f.iter().filter(|(k, v)| k.0 == p && v.0.starts_with("liblttng-ust")).map(|(_, v)| v.1).sum();
        let total: f64 = f.iter().filter(|(k, _)| k.0 == p).map(|(_, v)| v.1).sum();
        assert_eq!(total, p as f64, "self counts of path {p} do not sum to it");
        assert!(lttng > 0.5 * total, "path {p}: liblttng-ust holds {lttng} of {total} instructions: {f:?}");
        // By name where the library has symbols; by module+offset where it is stripped.
        let named: Vec<&String> = f.keys().filter(|k| k.0 == p && !k.1.contains("+0x")).map(|k| &k.1).collect();
        let top = f.iter().filter(|(k, _)| k.0 == p).max_by(|a, b| a.1 .1.total_cmp(&b.1 .1)).unwrap();
        assert!(top.1 .0.starts_with("liblttng-ust"), "path {p}: top function {top:?} is not liblttng-ust's");
        if !top.0 .1.contains("+0x") {
            println!("path {p}: top function {} (liblttng-ust has symbols here)", top.0 .1);
        } else {
            println!("path {p}: liblttng-ust is stripped here, its functions are module+offset; named: {named:?}");
        }
    }
    assert!(lines.contains(&format!("the {switch}-instruction path adds")) && lines.contains("system call"), "{lines}");
}
