//! `tracebench report` end to end on a real run: the planted slow path of
//! `spin:100@64:1000` must come out as period 64, and bad input gets one line and exit 2. The
//! paths claimed are read from report.json (findings with their evidence), never parsed from
//! the prose; the prose is checked to say them.
mod common;
use common::*;

#[path = "../../tracers/tests/support/example_plugins.rs"]
mod example_plugins;

#[test]
fn report_finds_the_planted_period_in_a_real_run() {
    // Labelled rows: the report must key the survey comparisons on the spec, not the label.
    let (_d, out) = run_ok(&["--tracer", "none,spin:100@64:1000", "--label", "floor,spin64", "-n", "20000"]);
    // The terminal's table: one row per tracer in one screen, the planted path in short form.
    let o = tb().arg("report").arg(&out).output().unwrap();
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    let row = table.lines().find(|l| l.contains(" spin64 ")).unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("  64 (+"), "{row}");
    assert!(table.lines().filter(|l| !l.starts_with("report: ")).all(|l| l.chars().count() <= 120), "{table}");
    assert!(table.contains("\nfull sentences: --explain [TRACER]; a card per tracer in report.html\n"), "{table}");
    // --explain: the full sentences.
    let o = tb().arg("report").arg(&out).arg("--explain").output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    // The whole set of paths claimed, from report.json, not one match among them: a false extra
    // path fails.
    assert_eq!(claimed_paths(&out, "spin64"), ["every 64"]);
    assert_eq!(claimed_paths(&out, "floor"), Vec::<String>::new());
    assert!(stdout.contains("spin64: the planted slow path every 64 calls is found"), "{stdout}");
    for f in ["report.html", "report.md", "report.json", "figures/latency_cdf.png", "figures/latency_cdf.svg"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // The prose says what report.json claims, and report.md says it in the same words.
    let spin = stdout.lines().find(|l| l.starts_with("spin64: fast path")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(spin.contains("slow path every 64 events (from iteration "), "{spin}");
    prose_agrees_with_json(&out, &stdout);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.lines().any(|l| l == spin), "report.md must say the terminal's line: {spin}");
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

/// report.json of a results directory `tracebench report` has read.
fn report_json(out: &std::path::Path) -> serde_json::Value {
    let p = out.join("report.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// The latency findings of tracer row `row` (its label) in report.json.
fn latency_findings(out: &std::path::Path, row: &str) -> Vec<serde_json::Value> {
    let j = report_json(out);
    let t = j["tracers"].as_array().unwrap().iter().find(|t| t["label"] == row).unwrap_or_else(|| panic!("{row}: {j}"));
    let m = t["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "latency").unwrap();
    m["findings"].as_array().unwrap().clone()
}

/// The paths other than the fast one that report.json claims for `row`'s latency: "every P" for
/// a periodic path (P with one decimal where it is not a whole number), "irregular" for a path
/// without an exact period, "memoryless +X" for a path taken at random that the reference
/// windows give to the tracer.
fn claimed_paths(out: &std::path::Path, row: &str) -> Vec<String> {
    latency_findings(out, row)
        .iter()
        .filter_map(|f| match f["kind"].as_str().unwrap() {
            "periodic_path" if f["evenly_spread"] == 1 => Some(format!("every {}", f["period"])),
            "periodic_path" => Some(format!("every {:.1}", f["mean_period"].as_f64().unwrap())),
            "irregular_path" => Some("irregular".to_string()),
            "memoryless_path" => Some(format!("memoryless +{:.0}", f["extra"].as_f64().unwrap())),
            _ => None,
        })
        .collect()
}

/// Every periodic path of report.json is said in the terminal's line of its row, and each line
/// says as many periodic paths as report.json holds.
fn prose_agrees_with_json(out: &std::path::Path, stdout: &str) {
    for t in report_json(out)["tracers"].as_array().unwrap() {
        let label = t["label"].as_str().unwrap();
        let head = [format!("{label}: fast path"), format!("{label}: single code path")];
        let Some(line) = stdout.lines().find(|l| head.iter().any(|h| l.starts_with(h.as_str()))) else {
            panic!("no code-path line for {label}: {stdout}")
        };
        let periods: Vec<String> = claimed_paths(out, label).into_iter().filter(|p| p.starts_with("every ")).collect();
        for p in &periods {
            assert!(line.contains(&format!("{p} events")), "{p} in report.json, not in: {line}");
        }
        assert_eq!(line.matches(" kept calls on that period take it").count(), periods.len(), "{line}");
    }
}

/// The code-path line of `row` in the report's full sentences (`--explain`).
fn report_line(out: &std::path::Path, row: &str) -> (String, String) {
    let o = tb().arg("report").arg(out).arg("--explain").output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{row}:")) && !l.contains("planted"))
        .unwrap_or_else(|| panic!("no line for {row}: {stdout}"))
        .to_string();
    (line, stdout)
}

/// The claimed paths of `row` are exactly `want`, or `want` less some of its paths (missed:
/// `Err`); a path outside `want` is a false claim and fails at once.
fn exactly_or_missed(out: &std::path::Path, row: &str, want: &[String], line: &str) -> Result<(), String> {
    let mut got = claimed_paths(out, row);
    got.sort();
    let extra: Vec<&String> = got.iter().filter(|g| !want.contains(g)).collect();
    assert!(extra.is_empty(), "false path claimed {extra:?}: {line}");
    if got.len() == want.len() {
        Ok(())
    } else {
        Err(line.to_string())
    }
}

#[test]
fn rare_planted_paths_are_found_by_their_period() {
    // Survey section 7.1 on a real, noisy run: a slow path taken only 5 times in 5000 calls, and
    // 10 times in 20000, must come out with its exact period (0.1% of calls: no longer a "mode").
    for (spec, n, p) in [("spin:100@1000:1000", "5000", 1000), ("spin:100@2000:800", "20000", 2000)] {
        found_in_most_runs(spec, || {
            let (_d, out) = run_ok(&["--tracer", spec, "-n", n]);
            let (line, stdout) = report_line(&out, spec);
            exactly_or_missed(&out, spec, &[format!("every {p}")], &line)?;
            assert!(stdout.contains(&format!("the planted slow path every {p} calls is found")), "{stdout}");
            Ok(())
        });
    }
}

#[test]
fn two_periodic_paths_of_a_plugin() {
    // tracers/examples/twopath_plugin.c: every 97th call +400 ns, every 1000th +2000 ns; at 5000
    // calls the rarer path occurs 5 times.
    let so = twopath_plugin();
    found_in_most_runs("twopath-plugin", || {
        let (_d, out) = run_ok(&["--tracer", &format!("plugin:{so}"), "-n", "5000"]);
        let (line, _) = report_line(&out, "twopath-plugin");
        // The test is of the periodic search: on some hosts a +120 ns memoryless path is also
        // claimed for this plugin (in about 4 of 12 runs on an Intel VM, the same before and
        // after the comparison work; its cause is not known), which the periodic claims do not
        // depend on. A periodic path outside the two planted ones is still a false claim.
        let periodic: Vec<String> =
            claimed_paths(&out, "twopath-plugin").into_iter().filter(|c| c.starts_with("every ")).collect();
        let want = ["every 1000".to_string(), "every 97".to_string()];
        let extra: Vec<&String> = periodic.iter().filter(|g| !want.contains(g)).collect();
        assert!(extra.is_empty(), "false periodic path claimed {extra:?}: {line}");
        if periodic.len() != want.len() {
            return Err(line);
        }
        // Each with its own cost. The plugin spins at least 400 and 2000 ns by the clock (the VM's
        // clock steps are 10 ns); how much more a spin costs is the machine's (the 400 ns spin
        // cost +450 to +650 ns on one VM), so the test holds the extra cost the report says
        // against the calls events.csv holds on that period: their median over the fast path's.
        let f = latency_findings(&out, "twopath-plugin");
        let fast = f.iter().find(|f| f["kind"] == "fast_path").unwrap()["median"].as_f64().unwrap();
        let events = Table::read(&out.join("twopath-plugin/events.csv"));
        let lat: Vec<(u64, f64)> =
            events.f64s("iteration").into_iter().map(|i| i as u64).zip(events.f64s("latency_ns")).collect();
        let cost = |period: u64| -> (f64, f64) {
            let p = f.iter().find(|f| f["kind"] == "periodic_path" && f["period"] == period).unwrap();
            let phase = p["phase"].as_u64().unwrap();
            let mut on: Vec<f64> = lat.iter().filter(|x| x.0 % period == phase % period).map(|x| x.1).collect();
            on.sort_by(f64::total_cmp);
            let n = on.len();
            let median = if n % 2 == 1 { on[n / 2] } else { 0.5 * (on[n / 2 - 1] + on[n / 2]) };
            (p["extra"].as_f64().unwrap(), median - fast)
        };
        let ((c1, d1), (c2, d2)) = (cost(97), cost(1000));
        for (said, data) in [(c1, d1), (c2, d2)] {
            assert!((said - data).abs() <= 0.05 * data + 10.0, "said +{said} ns, events.csv +{data} ns: {line}");
        }
        assert!(c1 >= 300.0 && c2 >= 1700.0 && c1 < 0.5 * c2, "{c1} {c2}: {line}");
        // The costliest is the slow path; the other's name follows how many paths the line holds
        // ("middle path", or "path 3" beside a memoryless one).
        assert!(line.contains(" every 97 events") && line.contains("slow path every 1000 events"), "{line}");
        Ok(())
    });
}

fn twopath_plugin() -> String {
    example_plugins::plugin("libtwopath_plugin.so")
}

#[test]
fn lttng_ust_sub_buffer_switch_at_two_sizes() {
    if !lttng_ust_available("lttng_ust_sub_buffer_switch_at_two_sizes") {
        return;
    }
    // The expected period comes from the snapshot (events per full sub-buffer); the measured one
    // must match it, and the survey line must agree. 8 KiB at 5000 calls holds ~6 switches.
    for (size, n) in [("8k", "5000"), ("16k", "20000")] {
        found_in_most_runs(&format!("lttng-ust --subbuf-size {size}"), || {
            let (_d, out) = run_ok(&["--tracer", "lttng-ust", "--subbuf-size", size, "-n", n]);
            let (line, stdout) = report_line(&out, "lttng-ust");
            let run: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
            let g = &run["tracers"][0]["cells"][0]["after_run"]["geometry"];
            let e = g["events_per_subbuf"].as_u64().unwrap_or_else(|| panic!("no geometry: {g}"));
            let f = latency_findings(&out, "lttng-ust");
            // LTTng can show two paths on the switch's period (a cheap one about 520 calls after
            // the switch, and the switch itself): the expectation goes to the costliest of them.
            let on_e: Vec<&serde_json::Value> =
                f.iter().filter(|f| f["kind"] == "periodic_path" && f["period"] == e).collect();
            if on_e.is_empty() {
                return Err(format!("expected {e}: {line}"));
            }
            let with: Vec<_> = f.iter().filter(|f| f["kind"] == "periodic_path" && f["expected"].is_object()).collect();
            let [p] = &with[..] else { panic!("not one path with the expected period {e}: {with:?}\n{line}") };
            assert_eq!(p["period"], e, "the expectation is on another period: {p}\n{line}");
            let costliest = on_e.iter().map(|f| f["extra"].as_f64().unwrap()).fold(f64::MIN, f64::max);
            assert_eq!(p["extra"].as_f64().unwrap(), costliest, "not the costliest path on {e}: {on_e:?}\n{line}");
            assert!(p["expected"]["how"].as_str().unwrap().starts_with("sub-buffer"), "{p}\n{line}");
            // "slow path" names the costliest path of the line: a memoryless path dearer than the
            // switch (LTTng shows one at about +500 ns in some runs) takes that name, so the
            // switch is checked by its period only.
            assert!(line.contains(&format!("path every {e} events")), "expected {e}: {line}");
            assert!(line.contains("[expected: sub-buffer"), "{line}");
            assert!(stdout.contains("Agrees with the survey: lttng-ust takes a slow path every"), "{stdout}");
            Ok(())
        });
    }
}

/// Whether `tracebench list` marks lttng-ust available; if not, the test prints its skip.
fn lttng_ust_available(test: &str) -> bool {
    let list = tb().arg("list").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let avail = list.lines().find(|l| l.trim_start().starts_with("lttng-ust ")).unwrap_or("");
    let ok = avail.split_whitespace().nth(1) == Some("available");
    if !ok {
        eprintln!("SKIP {test}: lttng-ust is not available here ({})", avail.trim());
    }
    ok
}

/// The survey's sub-buffer sweep (section 7.1): at 4, 16 and 64 KiB, sweep.csv's slow-path period
/// of each value is the events per full sub-buffer that value's trace shows (401, 1630 and 6545
/// with 10-byte events). 100,000 calls hold 15 switches at 64 KiB.
#[test]
fn lttng_ust_sweep_finds_each_sub_buffer_switch() {
    if !lttng_ust_available("lttng_ust_sweep_finds_each_sub_buffer_switch") {
        return;
    }
    found_in_most_runs("lttng-ust sweep subbuf-size=4k,16k,64k", || {
        let d = tempfile::tempdir().unwrap();
        let sw = d.path().join("sw");
        let o = tb()
            .args(["sweep", "--tracer", "lttng-ust", "--vary", "subbuf-size=4k,16k,64k", "-n", "100000", "--quiet"])
            .arg("--out")
            .arg(&sw)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let t = Table::read(&sw.join("sweep.csv"));
        let (vc, pc) = (t.col("value"), t.col("slow_period"));
        assert_eq!(t.rows.len(), 3, "one row per value: {:?}", t.rows);
        let mut missed = Vec::new();
        for r in &t.rows {
            let run = std::fs::read_to_string(sw.join(format!("subbuf-size={}/run.json", r[vc]))).unwrap();
            let run: serde_json::Value = serde_json::from_str(&run).unwrap();
            let g = &run["tracers"][0]["cells"][0]["after_run"]["geometry"];
            let e = g["events_per_subbuf"].as_u64().unwrap_or_else(|| panic!("no geometry: {g}"));
            // No period is a miss; another period is a false claim, and fails at once.
            match r[pc].as_str() {
                "" => missed.push(format!("subbuf-size {}: no slow_period, expected {e}", r[vc])),
                p => assert_eq!(p, e.to_string(), "subbuf-size {}: a slow path every {p} calls", r[vc]),
            }
        }
        match missed.is_empty() {
            true => Ok(()),
            false => Err(missed.join("; ")),
        }
    });
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
    // One repetition per value decides no step: no curve is said to grow or fall.
    let law = text.lines().find(|l| l.contains("spin:400: mean ")).unwrap_or_default();
    assert!(law.contains(": not decided between 1 and 2 (") && law.contains("--repeats "), "{law}");
    assert!(!law.contains("grows") && !law.contains("falls"), "{law}");
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

/// The harness-cycle findings of `row` in report.json (the footprint self-check).
fn harness_cycles(out: &std::path::Path, row: &str) -> Vec<serde_json::Value> {
    latency_findings(out, row).into_iter().filter(|f| f["kind"] == "harness_cycle").collect()
}

#[test]
fn footprint_check_flags_slow_calls_on_every_64th_call_and_not_on_every_61st() {
    // twopath_plugin.c with its first path every 64 (or 61) calls, +400 ns, and its second out of
    // reach. 64 is the sample buffer's page in kept calls: the check must say so, and that the
    // data cannot tell the harness from a tracer path of that very period. 61 is no harness
    // cycle: silent.
    let so = twopath_plugin();
    for (period, want) in [(64u64, true), (61, false)] {
        let spec = format!("plugin:{so}:p1={period}+ns1=400+p2=1000000+ns2=0");
        let (_d, out) = run_ok(&["--tracer", &spec, "-n", "20000"]);
        let (line, _) = report_line(&out, "twopath-plugin");
        let found = harness_cycles(&out, "twopath-plugin");
        if want {
            let f = found.iter().find(|f| f["length"] == 64).unwrap_or_else(|| panic!("every {period}: {line}"));
            assert_eq!(f["tracer_path_with_this_period"], true, "{f}");
            assert!(f["share"].as_f64().unwrap() > 0.5 && f["p_value"].as_f64().unwrap() < 1e-3, "{f}");
            assert!(line.contains("consecutive residues of every 64"), "{line}");
        } else {
            assert!(found.is_empty(), "every {period}: a harness cycle claimed: {found:?}\n{line}");
        }
    }
}

#[test]
fn footprint_check_is_silent_on_a_store_heavy_tracer() {
    // tracers/examples/stores_plugin.c stores into 16 cache lines per call and has no slow path:
    // with the harness's stores drained before each window, its slow calls (the machine's) must
    // not gather on the harness's cycles. Without that fence, 36% of them fell on three residues
    // of 64.
    let so = example_plugins::plugin("libstores_plugin.so");
    let (_d, out) = run_ok(&["--tracer", &format!("plugin:{so}"), "-n", "20000"]);
    let (line, _) = report_line(&out, "stores-plugin");
    assert!(harness_cycles(&out, "stores-plugin").is_empty(), "{line}");
}

/// A tracer's own memoryless path (1 call in 300 at random, +1 us) is named as the
/// tracer's, by its rate against the reference windows; a tracer without one (spin:150, spin:25,
/// the machine's stalls and interrupts all it meets) gets no path, memoryless or other.
#[test]
fn a_memoryless_path_is_the_tracers_and_the_machines_slow_calls_are_no_path() {
    found_in_most_runs("memoryless path", || {
        let (d, out) = run_ok(&["--tracer", "spin:150~300:1150,spin:150,spin:25", "-n", "60000"]);
        let (line, stdout) = report_line(&out, "spin:150~300:1150");
        // The machine's stalls of about +160 ns read as +40..+100 ns on a spin, which ends at a
        // set time (analysis/attribution.rs): they must be the machine's, not a path. Paths under
        // SMALL are left out: with a neighbour loading the other core, 3 of 40 runs here gave a
        // spin row a cluster at +34..+39 ns (0.36% of calls, three times the reference windows'
        // rate at that cost or up to a call's length more), which a standalone spin and multiply
        // loop did not show in a million quiet windows. Whether the spin's clock reads or the
        // neighbour cause it, it is in that spin's windows and not in the reference's, so the
        // claim may be right; this test is of the machine's 2 us stalls and the planted +1 us.
        const SMALL: f64 = 200.0;
        let small =
            |c: &String| c.strip_prefix("memoryless +").and_then(|x| x.parse::<f64>().ok()).is_some_and(|x| x < SMALL);
        for quiet in ["spin:150", "spin:25"] {
            let claimed: Vec<String> = claimed_paths(&out, quiet).into_iter().filter(|c| !small(c)).collect();
            if !claimed.is_empty() {
                // The data of a false claim, kept to be read beside the report.
                let kept = d.keep();
                panic!(
                    "{quiet}: a path claimed where the tracer has none: {claimed:?} (run kept in {})\n{stdout}",
                    kept.display()
                );
            }
        }
        // The reference windows were set to the tracer's length.
        let rf = std::fs::read_to_string(out.join("spin_150/reference.csv")).unwrap();
        let iterations: u64 = rf.lines().nth(1).unwrap().split(',').nth(4).unwrap().parse().unwrap();
        assert!(iterations > 0, "{rf}");
        let mem: Vec<serde_json::Value> = latency_findings(&out, "spin:150~300:1150")
            .into_iter()
            .filter(|f| f["kind"] == "memoryless_path" && f["extra"].as_f64().unwrap() >= SMALL)
            .collect();
        let claimed = claimed_paths(&out, "spin:150~300:1150");
        assert!(claimed.iter().all(|c| c.starts_with("memoryless")), "false path claimed {claimed:?}: {line}");
        let [m] = &mem[..] else { return Err(format!("{} memoryless paths: {line}", mem.len())) };
        let extra = m["extra"].as_f64().unwrap();
        assert!((800.0..1200.0).contains(&extra), "extra {extra}: {line}");
        assert_eq!(m["evidence"]["attribution"]["by"], "tracer", "{m}");
        let share = m["share"].as_f64().unwrap();
        assert!((0.002..0.005).contains(&share), "share {share} (planted 1/300): {line}");
        assert!(line.contains("the tracer's (reference windows of the tracer's length"), "{line}");
        // What sets the tail: the memoryless path's share of the calls above p99.9.
        assert!(line.contains("what sets p99.9") && line.contains("the memoryless path at +"), "{line}");
        Ok(())
    });
}
