//! `tracebench system show | tune | reset` end to end: show as root and as `nobody`,
//! the bad inputs (exit 2, one line), tune then reset byte-identical on this machine, a tune
//! killed halfway then reset on a fake sysfs/procfs root, the counter check here (no PMU: exit
//! 3), and run.json's `system` key.
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_tracebench");
const GROUPS: [&str; 8] = ["clock", "cpu", "frequency", "interrupts", "virtualization", "perf", "counters", "tracers"];

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn tb(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// Every line is `LEVEL group: ...`, every group is there, the tally counts them, and the last
/// line is the verdict: exit 4 "not fit (...)" exactly when a line is BAD, naming each BAD line;
/// else 3 "fit with warnings (N)" when N lines WARN; else 0 "fit to measure".
fn check_show(o: &Output, who: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    let (checks, tail) = lines.split_at(lines.len() - 2);
    let (tally, verdict) = (&tail[..1], tail[1]);
    for l in checks {
        assert!(["OK ", "WARN", "BAD "].iter().any(|p| l.starts_with(p)), "{who}: {l}");
        if !l.starts_with("OK") {
            assert!(l.contains("; fix: "), "{who}: a WARN or BAD line says its fix: {l}");
        }
    }
    for g in GROUPS {
        assert!(checks.iter().any(|l| l.split_whitespace().nth(1) == Some(g)), "{who}: no {g} line in\n{out}");
    }
    let bad = checks.iter().filter(|l| l.starts_with("BAD")).count();
    assert!(tally[0].ends_with(&format!("{bad} BAD")), "{who}: {}", tally[0]);
    let warn = checks.iter().filter(|l| l.starts_with("WARN")).count();
    if bad > 0 {
        assert_eq!(o.status.code(), Some(4), "{who}: {out}");
        assert!(verdict.starts_with("verdict: not fit ("), "{who}: {verdict}");
        for l in checks.iter().filter(|l| l.starts_with("BAD")) {
            let rest = l[4..].trim_start(); // the group, then the text
            let text = rest.split_once(' ').unwrap().1.trim_start().split("; fix:").next().unwrap();
            assert!(verdict.contains(text), "{who}: the verdict names '{text}': {verdict}");
        }
    } else if warn > 0 {
        assert_eq!(o.status.code(), Some(3), "{who}: {out}");
        assert_eq!(verdict, format!("verdict: fit with warnings ({warn})"), "{who}");
    } else {
        assert_eq!(o.status.code(), Some(0), "{who}: {out}");
        assert_eq!(verdict, "verdict: fit to measure", "{who}");
    }
    out
}

/// Busy loops on every online CPU for `secs` seconds (a busy machine), joined on return.
fn hogs<T>(secs: f64, f: impl FnOnce() -> T) -> T {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let t = std::time::Instant::now();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && t.elapsed().as_secs_f64() < secs {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let r = f();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    r
}

/// A busy machine (a hog on every CPU) is not fit to measure on: exit 4, the busy CPUs named,
/// and `--cpus` checks every CPU it lists.
#[test]
fn show_on_a_busy_machine_is_not_fit() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let last: usize = online.trim().rsplit(['-', ',']).next().unwrap().parse().unwrap();
    let list = if last > 0 { format!("{},{last}", last - 1) } else { "0".into() };
    let o = hogs(6.0, || tb(&["system", "show", "--cpus", &list]));
    let out = check_show(&o, "busy");
    assert_eq!(o.status.code(), Some(4), "{out}");
    for c in list.split(',') {
        assert!(out.contains(&format!("BAD  cpu             cpu {c} busy")), "cpu {c} checked and busy:\n{out}");
        assert!(
            out.contains(&format!("device IRQs aimed at cpu {c}"))
                || out.contains(&format!("no device IRQ aimed at cpu {c}"))
                || out.contains("IRQ affinity unknown"),
            "{out}"
        );
    }
    assert!(out.lines().last().unwrap().contains(&format!("cpu {last} busy")), "{out}");
}

#[test]
fn show_as_root_checks_every_group() {
    let o = tb(&["system", "show"]);
    let out = check_show(&o, "this user");
    assert!(out.contains("steal ") && out.contains("over 1.00 s"), "{out}");
    println!("{out}");
}

#[test]
fn show_as_nobody_says_what_it_cannot_see() {
    if !is_root() {
        println!("SKIP show_as_nobody: needs root to run as nobody");
        return;
    }
    let o = Command::new("su")
        .args(["-s", "/bin/sh", "nobody", "-c", &format!("cd / && {BIN} system show")])
        .output()
        .unwrap();
    if String::from_utf8_lossy(&o.stderr).contains("Permission denied") && o.stdout.is_empty() {
        println!("SKIP show_as_nobody: nobody cannot run {BIN}");
        return;
    }
    let out = check_show(&o, "nobody");
    let paranoid: i32 =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap().trim().parse().unwrap();
    if paranoid >= 2 {
        assert!(out.contains("WARN perf") && out.contains("this user may not watch kernel events"), "{out}");
        assert!(out.contains("WEAK disturbance detector"), "{out}");
    }
    println!("{out}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let one_line = |o: &Output, needle: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "'{needle}' not in {err}");
    };
    one_line(&tb(&["system", "show", "--cpu", "4096"]), "--cpu 4096: no such online CPU");
    one_line(&tb(&["system", "show", "--threads", "4096"]), "--threads 4096: a run measures on one CPU per thread");
    one_line(&tb(&["system", "show", "--cpus", "0,4096"]), "--cpu 4096: no such online CPU");
    let fake = tempfile::tempdir().unwrap();
    let root = fake.path().to_str().unwrap();
    one_line(&tb(&["system", "reset", "--sys-root", root]), "nothing to reset");
    if is_root() {
        for cmd in ["tune", "reset"] {
            let o = Command::new("su")
                .args(["-s", "/bin/sh", "nobody", "-c", &format!("cd / && {BIN} system {cmd}")])
                .output()
                .unwrap();
            one_line(&o, "needs root");
        }
    }
}

/// The knob files tune may touch on this machine, with their bytes.
fn knob_files() -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths: Vec<PathBuf> = [
        "/proc/irq/default_smp_affinity",
        "/proc/sys/kernel/perf_event_max_sample_rate",
        "/proc/sys/kernel/randomize_va_space",
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
        "/sys/devices/system/cpu/cpufreq/boost",
        "/proc/sys/kernel/perf_user_access",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for d in std::fs::read_dir("/proc/irq").unwrap().flatten() {
        paths.push(d.path().join("smp_affinity_list"));
    }
    for d in std::fs::read_dir("/sys/devices/system/cpu").unwrap().flatten() {
        for f in ["scaling_governor", "scaling_min_freq", "scaling_max_freq"] {
            paths.push(d.path().join("cpufreq").join(f));
        }
    }
    paths.into_iter().filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b))).collect()
}

#[test]
fn tune_then_reset_leaves_every_file_as_it_was() {
    if !is_root() {
        println!("SKIP tune_then_reset: needs root");
        return;
    }
    if Path::new("/run/tracebench/system-tune.json").exists() {
        println!("SKIP tune_then_reset: a tune of someone else's is in place (/run/tracebench/system-tune.json)");
        return;
    }
    let before = knob_files();
    let o = tb(&["system", "tune", "--aslr"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    let set = out.lines().filter(|l| l.starts_with("set ")).count();
    let r = tb(&["system", "reset"]);
    let rout = String::from_utf8_lossy(&r.stdout).into_owned();
    assert!(r.status.success(), "{rout}");
    assert_eq!(rout.lines().filter(|l| l.starts_with("restored ")).count(), set, "{out}\n{rout}");
    // What was absent here is said, not an error.
    assert!(
        out.lines().all(|l| ["quiet: ", "set ", "kept ", "absent ", "failed ", "state: ", "nothing "]
            .iter()
            .any(|p| l.starts_with(p))),
        "{out}"
    );
    assert_eq!(knob_files(), before, "tune + reset changed a file:\n{out}\n{rout}");
    println!("{out}{rout}");
}

#[test]
fn a_tune_killed_halfway_is_reset_on_a_fake_root() {
    let d = tempfile::tempdir().unwrap();
    let w = |p: &str, v: &str| {
        let f = d.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, v).unwrap();
    };
    w("sys/devices/system/cpu/online", "0-3\n");
    w("proc/irq/default_smp_affinity", "f\n");
    w("proc/sys/kernel/perf_event_max_sample_rate", "100000\n");
    // 1000 IRQs print ~80 KiB, more than a pipe holds: with its output unread, tune blocks
    // halfway through, so the kill below always lands mid-tune.
    const N: usize = 1000;
    for i in 0..N {
        w(&format!("proc/irq/{i}/smp_affinity_list"), "0-3\n");
    }
    let snap = || -> Vec<Vec<u8>> {
        (0..N).map(|i| std::fs::read(d.path().join(format!("proc/irq/{i}/smp_affinity_list"))).unwrap()).collect()
    };
    let before = snap();
    let root = d.path().to_str().unwrap();
    let mut child =
        Command::new(BIN).args(["system", "tune", "--sys-root", root]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < 5 {
        if lines.next().unwrap().unwrap().starts_with("set ") {
            seen += 1;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("run/tracebench/system-tune.json")).unwrap())
            .unwrap();
    let recorded = state["entries"].as_array().unwrap().len();
    assert!((5..N).contains(&recorded), "killed mid-tune: {recorded} of {N} IRQs recorded");
    let changed = snap().iter().filter(|b| b.as_slice() != b"0-3\n").count();
    assert!(changed > 0 && changed <= recorded, "{changed} changed, {recorded} recorded");
    let r = tb(&["system", "reset", "--sys-root", root]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
    assert_eq!(snap(), before);
    assert_eq!(std::fs::read_to_string(d.path().join("proc/irq/default_smp_affinity")).unwrap(), "f\n");
}

#[test]
fn the_counter_check_says_it_cannot_run_without_a_pmu() {
    let o = tb(&["system", "show", "--counters"]);
    let out = String::from_utf8_lossy(&o.stdout);
    if out.contains("counters: PASS") || out.contains("counters: FAIL") {
        println!("SKIP the_counter_check_without_a_pmu: this machine has a PMU\n{out}");
        return;
    }
    // Could not check is a warning (3); a BAD line (a busy shared machine) makes it not fit (4).
    let bad = out.lines().any(|l| l.starts_with("BAD"));
    assert_eq!(o.status.code(), Some(if bad { 4 } else { 3 }), "{out}");
    assert!(out.contains("counters: NOT CHECKED") && out.contains("nothing passed"), "{out}");
    assert!(out.lines().last().unwrap().starts_with("verdict: "), "the verdict ends the output: {out}");
}

#[test]
fn a_run_records_the_checks_in_run_json() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = tb(&["run", "--tracer", "none", "-n", "500", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let s = &run["system"];
    assert!(s["how"].as_str().unwrap().contains("over the run"), "{s}");
    let checks = s["checks"].as_array().unwrap();
    for g in GROUPS {
        assert!(checks.iter().any(|c| c["group"] == g), "no {g} in {s}");
    }
    assert_eq!(s["bad"].as_u64().unwrap() as usize, checks.iter().filter(|c| c["level"] == "BAD").count());
}

/// `scale` (and `run --threads N`) records the checks of every measuring CPU, and names them.
#[test]
fn a_scale_records_the_checks_of_every_measuring_cpu() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        println!("SKIP a_scale_records_every_cpu: one CPU");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o =
        tb(&["scale", "--tracer", "none", "-n", "300", "--threads", "2", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let s = &run["system"];
    let used: Vec<u64> = s["cpus"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
    assert_eq!(used.len(), 2, "{s}");
    for c in used {
        let online = format!("cpu {c} (measuring) online");
        assert!(
            s["checks"].as_array().unwrap().iter().any(|x| x["text"] == online.as_str()),
            "no check of cpu {c}: {s}"
        );
    }
}
