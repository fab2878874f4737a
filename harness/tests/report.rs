//! `tracebench report` end to end on a real run: the planted slow path of
//! `spin:100@64:1000` must come out as period 64, and bad input gets one line and exit 2.
mod common;
use common::*;

#[path = "../../tracers/tests/support/example_plugins.rs"]
mod example_plugins;

#[test]
fn report_finds_the_planted_period_in_a_real_run() {
    // Labelled rows: the report must key the survey comparisons on the spec, not the label.
    let (_d, out) = run_ok(&["--tracer", "none,spin:100@64:1000", "--label", "floor,spin64", "-n", "20000"]);
    let o = tb().arg("report").arg(&out).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    let spin = stdout.lines().find(|l| l.starts_with("spin64:")).unwrap_or_else(|| panic!("{stdout}"));
    // The whole set of paths claimed, not one match among them: a false extra path fails.
    assert_eq!(claimed_paths(spin), ["slow path every 64 events"], "{spin}");
    assert_eq!(claimed_paths(stdout.lines().find(|l| l.starts_with("floor:")).unwrap()), Vec::<String>::new());
    assert!(stdout.contains("spin64: the planted slow path every 64 calls is found"), "{stdout}");
    for f in ["report.html", "report.md", "figures/latency_cdf.png", "figures/latency_cdf.svg"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let md_spin = md.lines().find(|l| l.starts_with("spin64: fast path")).unwrap_or_else(|| panic!("{md}"));
    assert_eq!(claimed_paths(md_spin), ["slow path every 64 events"], "{md_spin}");
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

/// The paths other than the fast one that a code-path line claims, each as said before its
/// parenthesis ("slow path every 64 events"): the line's top-level parts (split on ", " and "; "
/// outside parentheses) that name a path, less "fast path", "single code path" and the outliers
/// "on no path".
fn claimed_paths(line: &str) -> Vec<String> {
    let body = line.split_once(": ").map_or(line, |(_, b)| b);
    let (mut parts, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in body.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | ';' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        if depth == 0 && c != ')' {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
        .iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| p.contains("path") && !p.starts_with("fast path") && !p.contains("single code path"))
        .filter(|p| !p.ends_with("on no path"))
        // The speed-level clause ("... not single-call paths: its 64-call windows ...") names no path.
        .filter(|p| !p.contains("single-call paths"))
        .collect()
}

#[test]
fn claimed_paths_reads_every_path_of_a_line() {
    let l = "x: fast path 98.4% (median 117 ns), slow path every 64 events (from iteration 59; 312 calls, +906 ns); \
             middle path every 97 events (5 calls, +400 ns), irregular path (+2 us, 3 calls); 17 outliers (0.09%) on no path";
    assert_eq!(claimed_paths(l), ["slow path every 64 events", "middle path every 97 events", "irregular path"]);
    assert!(claimed_paths("x: single code path (99.9% of calls, median 20.7 ns); 12 outliers (0.06%) on no path")
        .is_empty());
    let levels =
        "x: fast path 98.8% (median 31.3 ns), middle path every 97 events (52 calls, +440 ns); two speed levels \
                  in stretches of calls, not single-call paths: its 64-call windows average 30.9 ns or 35.1 ns (33% of \
                  them at the higher, in 8 stretches; no sentinel windows); 5 outliers (0.10%) on no path";
    assert_eq!(claimed_paths(levels), ["middle path every 97 events"]);
}

/// The code-path line of `row` in the report's stdout.
fn report_line(out: &std::path::Path, row: &str) -> (String, String) {
    let o = tb().arg("report").arg(out).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{row}:")) && !l.contains("planted"))
        .unwrap_or_else(|| panic!("no line for {row}: {stdout}"))
        .to_string();
    (line, stdout)
}

#[test]
fn rare_planted_paths_are_found_by_their_period() {
    // Survey section 7.1 on a real, noisy run: a slow path taken only 5 times in 5000 calls, and
    // 10 times in 20000, must come out with its exact period (0.1% of calls: no longer a "mode").
    for (spec, n, p) in [("spin:100@1000:1000", "5000", 1000), ("spin:100@2000:800", "20000", 2000)] {
        let (_d, out) = run_ok(&["--tracer", spec, "-n", n]);
        let (line, stdout) = report_line(&out, spec);
        assert_eq!(claimed_paths(&line), [format!("slow path every {p} events")], "{line}");
        assert!(stdout.contains(&format!("the planted slow path every {p} calls is found")), "{stdout}");
    }
}

#[test]
fn two_periodic_paths_of_a_plugin() {
    // tracers/examples/twopath_plugin.c: every 97th call +400 ns, every 1000th +2000 ns; at 5000
    // calls the rarer path occurs 5 times.
    let so = twopath_plugin();
    let (_d, out) = run_ok(&["--tracer", &format!("plugin:{so}"), "-n", "5000"]);
    let (line, _) = report_line(&out, "twopath-plugin");
    let mut paths = claimed_paths(&line);
    paths.sort();
    assert_eq!(paths, ["middle path every 97 events", "slow path every 1000 events"], "{line}");
    // Each with its own cost: ~400 ns and ~2000 ns (the VM's clock steps are 10 ns).
    let cost = |after: &str| -> f64 {
        let s = &line[line.find(after).unwrap()..];
        let plus = s.find("calls, +").unwrap() + "calls, +".len();
        s[plus..].split(' ').next().unwrap().parse().unwrap()
    };
    let (c1, c2) = (cost("every 97 events"), cost("every 1000 events"));
    assert!((300.0..600.0).contains(&c1) && (1700.0..2600.0).contains(&c2), "{c1} {c2}: {line}");
}

fn twopath_plugin() -> String {
    example_plugins::plugin("libtwopath_plugin.so")
}

#[test]
fn lttng_ust_sub_buffer_switch_at_two_sizes() {
    let list = tb().arg("list").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let avail = list.lines().find(|l| l.trim_start().starts_with("lttng-ust ")).unwrap_or("");
    if avail.split_whitespace().nth(1) != Some("available") {
        eprintln!("SKIP lttng_ust_sub_buffer_switch_at_two_sizes: lttng-ust is not available here ({})", avail.trim());
        return;
    }
    // The expected period comes from the snapshot (events per full sub-buffer); the measured one
    // must match it, and the survey line must agree. 8 KiB at 5000 calls holds ~6 switches.
    for (size, n) in [("8k", "5000"), ("16k", "20000")] {
        let (_d, out) = run_ok(&["--tracer", "lttng-ust", "--subbuf-size", size, "-n", n]);
        let (line, stdout) = report_line(&out, "lttng-ust");
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        let g = &run["tracers"][0]["cells"][0]["after_run"]["geometry"];
        let e = g["events_per_subbuf"].as_u64().unwrap_or_else(|| panic!("no geometry: {g}"));
        assert!(line.contains(&format!("slow path every {e} events")), "expected {e}: {line}");
        assert!(line.contains("[expected: sub-buffer"), "{line}");
        assert!(stdout.contains("Agrees with the survey: lttng-ust takes a slow path every"), "{stdout}");
    }
}

/// The report of a sweep draws its curves and states each curve's law; the report of several
/// directories puts them side by side with each run's host.
#[test]
fn report_of_a_sweep_and_of_several_runs() {
    let d = tempfile::tempdir().unwrap();
    let sw = d.path().join("sw");
    let o = common::tb()
        .args(["sweep", "--tracer", "none,spin:400", "--vary", "threads=1,2", "-n", "2000", "--quiet", "--out"])
        .arg(&sw)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = common::tb().arg("report").arg(&sw).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("spin:400: mean ") && text.contains("at threads 1 / 2"), "{text}");
    for f in ["report.md", "report.html", "figures/sweep-mean.svg", "figures/sweep-p90.png"] {
        assert!(sw.join(f).is_file(), "{f}");
    }
    let md = std::fs::read_to_string(sw.join("report.md")).unwrap();
    assert!(md.contains("| spin:400 | 1 | 1 |") || md.contains("| spin:400 | 2 | 2 |"), "{md}");

    let out = d.path().join("both");
    let o = common::tb()
        .arg("report")
        .arg(sw.join("threads=1"))
        .arg(sw.join("threads=2"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("threads=1 mean ns") && md.contains("threads=2 mean ns"), "{md}");
    assert!(md.contains("threads=1: ") && md.contains("Linux"), "each run's host and kernel: {md}");
    let o = common::tb().arg("report").arg(sw.join("threads=1")).arg(sw.join("threads=2")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "several directories need --out");
}

/// The report's header is prose, not JSON dumps: the clock, what was counted and how.
#[test]
fn report_header_is_prose() {
    let (_d, out) = run_ok(&["--tracer", "none,lw", "-n", "1000", "--counters", "task-clock,cycles"]);
    let o = common::tb().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let header: String = md.lines().take_while(|l| !l.starts_with("## ")).collect::<Vec<_>>().join("\n");
    assert!(!header.contains("{\""), "no JSON in the header: {header}");
    assert!(header.contains("advances in") && header.contains("ns steps"), "{header}");
    assert!(header.contains("task-clock (set 1) read with"), "{header}");
    assert!(header.contains("[run.json](run.json)"), "{header}");
}
