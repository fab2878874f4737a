//! tune/reset on a fake sysfs/procfs root (this VM lacks most knobs), the checks' parsers, and the
//! counter self-check's decisions over fake counters.
use std::path::Path;

use super::selfcheck::{self, Chase, CounterSource, Outcome, PerCall, Spin};
use super::tune::{self, Plan};
use super::{checks_cpu, snapshot, state, Level, Sys, SystemError};

/// The files of a machine with 4 CPUs, intel_pstate, cpufreq on cpus 1 and 2, and three IRQs.
const TREE: [(&str, &str); 14] = [
    ("sys/devices/system/cpu/online", "0-3\n"),
    ("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n"),
    ("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n"),
    ("sys/devices/system/cpu/cpu1/cpufreq/scaling_min_freq", "800000\n"),
    ("sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq", "3500000\n"),
    ("sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "performance\n"),
    ("sys/devices/system/cpu/cpu2/cpufreq/scaling_min_freq", "3500000\n"),
    ("sys/devices/system/cpu/cpu2/cpufreq/scaling_max_freq", "3500000\n"),
    ("proc/irq/5/smp_affinity_list", "0-3\n"),
    ("proc/irq/6/smp_affinity_list", "0\n"),
    ("proc/irq/7/smp_affinity_list", "1-2\n"),
    ("proc/irq/default_smp_affinity", "f\n"),
    ("proc/sys/kernel/perf_event_max_sample_rate", "100000\n"),
    ("proc/sys/kernel/randomize_va_space", "2\n"),
];

fn fake() -> (tempfile::TempDir, Sys) {
    let d = tempfile::tempdir().unwrap();
    for (p, v) in TREE {
        let f = d.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, v).unwrap();
    }
    let sys = Sys { root: d.path().to_path_buf() };
    (d, sys)
}

fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    TREE.iter().map(|(p, _)| (p.to_string(), std::fs::read(root.join(p)).unwrap())).collect()
}

fn read(sys: &Sys, p: &str) -> String {
    sys.read(p).unwrap()
}

fn plan() -> Plan {
    Plan { cpus: vec![1, 2], aslr: true }
}

#[test]
fn tune_changes_what_it_should_and_reset_puts_every_byte_back() {
    let (d, sys) = fake();
    let before = snapshot(d.path());
    tune::tune(&sys, &plan(), &mut |_| true).unwrap();
    assert_eq!(read(&sys, "/sys/devices/system/cpu/intel_pstate/no_turbo"), "1\n");
    assert_eq!(read(&sys, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), "performance\n");
    assert_eq!(read(&sys, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_min_freq"), "3500000\n");
    assert_eq!(read(&sys, "/proc/irq/5/smp_affinity_list"), "0,3\n");
    assert_eq!(read(&sys, "/proc/irq/6/smp_affinity_list"), "0\n", "an IRQ not on a measuring CPU stays");
    assert_eq!(read(&sys, "/proc/irq/7/smp_affinity_list"), "0,3\n");
    assert_eq!(read(&sys, "/proc/irq/default_smp_affinity"), "9\n");
    assert_eq!(read(&sys, "/proc/sys/kernel/perf_event_max_sample_rate"), "1\n");
    assert_eq!(read(&sys, "/proc/sys/kernel/randomize_va_space"), "0\n");
    // cpu 2 was already right: not recorded. Absent knobs (boost, perf_user_access) were not made.
    let st = state::load(&sys).unwrap().unwrap();
    assert!(!st.entries.iter().any(|e| e.path.contains("cpu2")), "{st:?}");
    assert!(!sys.exists("/sys/devices/system/cpu/cpufreq/boost"));
    assert!(!sys.exists("/proc/sys/kernel/perf_user_access"));
    assert_ne!(snapshot(d.path()), before);
    assert!(tune::reset(&sys).unwrap());
    assert_eq!(snapshot(d.path()), before, "reset must restore every touched file byte for byte");
    assert!(state::load(&sys).unwrap().is_none(), "the state goes once everything is restored");
}

#[test]
fn aslr_is_left_alone_without_the_flag() {
    let (_d, sys) = fake();
    tune::tune(&sys, &Plan { aslr: false, ..plan() }, &mut |_| true).unwrap();
    assert_eq!(read(&sys, "/proc/sys/kernel/randomize_va_space"), "2\n");
    tune::reset(&sys).unwrap();
}

#[test]
fn an_interrupted_tune_leaves_a_state_that_restores_what_changed() {
    for stop_after in 1..=4 {
        let (d, sys) = fake();
        let before = snapshot(d.path());
        // go_on returning false is a kill at that point: nothing after it runs, no cleanup.
        tune::tune(&sys, &plan(), &mut |n| n < stop_after).unwrap();
        let st = state::load(&sys).unwrap().unwrap();
        assert_eq!(st.entries.len(), stop_after, "one entry per change made");
        assert_ne!(snapshot(d.path()), before);
        assert!(tune::reset(&sys).unwrap());
        assert_eq!(snapshot(d.path()), before, "stopped after {stop_after}");
    }
}

#[test]
fn the_entry_is_saved_before_the_file_changes() {
    let (_d, sys) = fake();
    let mut seen = Vec::new();
    // At each change, the state on disk already holds the file's old bytes.
    tune::tune(&sys, &plan(), &mut |n| {
        let st = state::load(&sys).unwrap().unwrap();
        seen.push((n, st.entries.len()));
        true
    })
    .unwrap();
    assert!(seen.iter().all(|(n, k)| n == k), "{seen:?}");
    tune::reset(&sys).unwrap();
}

#[test]
fn a_second_tune_keeps_the_values_found_first() {
    let (d, sys) = fake();
    let before = snapshot(d.path());
    tune::tune(&sys, &plan(), &mut |_| true).unwrap();
    std::fs::write(sys.path("/proc/sys/kernel/perf_event_max_sample_rate"), "500\n").unwrap();
    tune::tune(&sys, &plan(), &mut |_| true).unwrap();
    assert!(tune::reset(&sys).unwrap());
    assert_eq!(snapshot(d.path()), before);
}

#[test]
fn reset_without_state_is_a_usage_error() {
    let (_d, sys) = fake();
    let e = tune::reset(&sys).unwrap_err();
    assert!(matches!(e, SystemError::NoState(_)), "{e}");
    assert_eq!(crate::error::ExitCode::exit_code(&e), 2);
    assert!(e.to_string().contains("nothing to reset"), "{e}");
}

#[test]
fn a_state_file_others_may_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, sys) = fake();
    tune::tune(&sys, &plan(), &mut |_| true).unwrap();
    let p = state::path(&sys);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(matches!(tune::reset(&sys), Err(SystemError::State(_))));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(tune::reset(&sys).unwrap());
}

#[test]
fn an_unknown_cpu_is_refused() {
    let (_d, sys) = fake();
    assert_eq!(super::measuring_cpu(&sys, None).unwrap(), 3);
    let e = super::measuring_cpu(&sys, Some(9)).unwrap_err();
    assert!(e.to_string().contains("--cpu 9") && e.to_string().contains("0,1,2,3"), "{e}");
}

#[test]
fn frequency_checks_read_the_tree() {
    let (_d, sys) = fake();
    let c = checks_cpu::frequency(&sys, 1);
    assert_eq!(c[0].level, Level::Warn, "{c:?}");
    assert!(c[0].text.contains("powersave") && c[0].matters.is_some());
    assert!(c[1].text.contains("800000 and 3500000"));
    assert!(c[2].text.contains("turbo on"));
    let c = checks_cpu::frequency(&sys, 2);
    assert_eq!((c[0].level, c[1].level), (Level::Ok, Level::Ok), "{c:?}");
}

#[test]
fn cpu_masks_and_proc_files_parse() {
    assert_eq!(checks_cpu::mask_has("3", 1), Some(true));
    assert_eq!(checks_cpu::mask_has("00000000,00000001", 1), Some(false));
    assert_eq!(checks_cpu::mask_has("00000001,00000000", 32), Some(true));
    let irqs = snapshot::parse_interrupts(
        "           CPU0       CPU1\n 24:          0          7  IO-APIC   6-edge      ACPI:Ged\nLOC:   100   200   Local timer interrupts\nERR:          0\n",
    );
    assert_eq!(irqs[0].counts, vec![0, 7]);
    assert_eq!(irqs[0].desc, "IO-APIC 6-edge ACPI:Ged");
    assert_eq!(irqs[1].label, "LOC");
    assert_eq!(irqs[2].counts, vec![0]);
    let a = snapshot::parse_stat("cpu  1 2 3\ncpu1 100 0 0 800 0 0 0 0 0 0\n");
    let b = snapshot::parse_stat("cpu1 150 0 0 920 0 0 0 30 0 0\n");
    let snap = |stat| snapshot::Snapshot { taken: std::time::Instant::now(), stat, irqs: vec![] };
    let share = snapshot::cpu_shares(&snap(a), &snap(b))[&1];
    let (busy, steal) = (share.busy, share.steal);
    assert!((busy - 80.0 / 200.0).abs() < 1e-9 && (steal - 30.0 / 200.0).abs() < 1e-9, "{busy} {steal}");
}

/// A PMU whose figures a test sets.
struct Fake {
    pmu: bool,
    calls: Vec<PerCall>,
    instr_per_iter: f64,
    ratio: f64,
    llc_per_load: f64,
    small_per_load: f64,
}

impl Fake {
    fn good() -> Fake {
        Fake {
            pmu: true,
            calls: vec![
                PerCall { tracer: "none".into(), pmu: 30.0, stepped: 8.0 },
                PerCall { tracer: "lw".into(), pmu: 71.0, stepped: 50.0 },
            ],
            instr_per_iter: 2.0,
            ratio: 1.0,
            llc_per_load: 0.8,
            small_per_load: 0.001,
        }
    }
}

impl CounterSource for Fake {
    fn pmu(&mut self) -> Result<(), String> {
        if self.pmu {
            Ok(())
        } else {
            Err("no PMU here".into())
        }
    }
    fn per_call(&mut self) -> Result<(Vec<PerCall>, String), String> {
        Ok((self.calls.clone(), "rdpmc".into()))
    }
    fn spin(&mut self, n: u64) -> Result<Spin, String> {
        let ticks = n as f64 * 1.1 + 500.0;
        Ok(Spin {
            iterations: n,
            instructions: n as f64 * self.instr_per_iter + 40.0,
            cycles: ticks * self.ratio,
            tsc_ticks: ticks,
        })
    }
    fn chase(&mut self, bytes: usize) -> Result<Chase, String> {
        let loads = (bytes / 64) as f64;
        let per = if bytes > 1 << 20 { self.llc_per_load } else { self.small_per_load };
        Ok(Chase { bytes, loads, llc: Some(("LLC-load-misses".into(), per * loads)), l1_misses: Some(per * loads) })
    }
    fn caches(&self) -> (Option<usize>, Option<usize>) {
        (Some(8 << 20), Some(32 << 10))
    }
    fn nominal_ratio(&self) -> (f64, String) {
        (1.0, "fake".into())
    }
}

fn failures(o: &Outcome) -> Vec<String> {
    match o {
        Outcome::Checked(v) => v.iter().filter(|x| !x.pass).map(|x| x.counter.clone()).collect(),
        Outcome::CannotCheck(w) => vec![format!("cannot: {w}")],
    }
}

#[test]
fn right_counters_pass_every_check() {
    let o = selfcheck::evaluate(&mut Fake::good());
    assert_eq!(failures(&o), Vec::<String>::new(), "{o:?}");
    assert_eq!(o.exit_code(), 0);
    assert_eq!(
        match &o {
            Outcome::Checked(v) => v.len(),
            _ => 0,
        },
        6
    );
}

#[test]
fn each_wrong_counter_fails_its_own_check() {
    let cases: Vec<(&str, Box<dyn Fn(&mut Fake)>)> = vec![
        ("instructions (lw)", Box::new(|f: &mut Fake| f.calls[1].pmu += 4.0)),
        ("instructions (none)", Box::new(|f: &mut Fake| f.calls[0].pmu = 5.0)),
        ("instructions (spin)", Box::new(|f: &mut Fake| f.instr_per_iter = 2.001)),
        ("cycles (spin)", Box::new(|f: &mut Fake| f.ratio = 1.2)),
        ("LLC-load-misses", Box::new(|f: &mut Fake| f.llc_per_load = 0.1)),
    ];
    for (counter, spoil) in cases {
        let mut f = Fake::good();
        spoil(&mut f);
        let o = selfcheck::evaluate(&mut f);
        assert!(failures(&o).contains(&counter.to_string()), "{counter}: {o:?}");
        assert_eq!(o.exit_code(), 1);
    }
}

#[test]
fn without_a_pmu_nothing_passes() {
    let o = selfcheck::evaluate(&mut Fake { pmu: false, ..Fake::good() });
    assert!(matches!(o, Outcome::CannotCheck(_)));
    assert_eq!(o.exit_code(), 3, "a script must tell 'could not check' from 'passed'");
    let l = selfcheck::lines(&o);
    assert!(l[0].contains("NOT CHECKED") && !l[0].contains("PASS"), "{l:?}");
}

#[test]
fn the_report_header_lists_what_matters_bad_first() {
    use super::Check;
    let checks = vec![
        Check::ok("clock", "invariant TSC"),
        Check::warn("virtualization", "steal 3.1%", "pin the vCPU")
            .matters("steal 3.1% during the check: expect stalls no event shows"),
        Check::warn("cpu", "not in isolcpus", "boot with isolcpus=1"),
        Check::bad("clock", "TSC not invariant", "--clock monotonic").matters("the TSC is not invariant"),
    ];
    let run = serde_json::json!({ "system": super::render::json(&checks, "the run") });
    assert_eq!(
        crate::results::read::system_lines(&run),
        vec![
            "BAD: the TSC is not invariant".to_string(),
            "WARN: steal 3.1% during the check: expect stalls no event shows".to_string()
        ]
    );
    assert!(
        crate::results::read::system_lines(&serde_json::json!({})).is_empty(),
        "runs written before the system check have none"
    );
}

#[test]
fn the_verdict_says_fit_with_warnings_or_not_fit_with_its_reasons() {
    use super::render::{verdict, FIT, FIT_WITH_WARNINGS, NOT_FIT};
    use super::Check;
    let ok = vec![Check::ok("clock", "invariant TSC"), Check::ok("cpu", "cpu 1 idle (0% busy during the check)")];
    let v = verdict(&ok, None);
    assert_eq!((v.line.as_str(), v.code), ("verdict: fit to measure", FIT));
    // --counters that passed change nothing; that could not check is a warning; that failed is not fit.
    assert_eq!(verdict(&ok, Some(0)).code, FIT);
    let v = verdict(&ok, Some(3));
    assert_eq!((v.line.as_str(), v.code), ("verdict: fit with warnings (1)", FIT_WITH_WARNINGS));
    let v = verdict(&ok, Some(1));
    assert_eq!((v.line.as_str(), v.code), ("verdict: not fit (a counter failed its cross-check)", NOT_FIT));
    let mut warned = ok.clone();
    warned.push(Check::warn("cpu", "cpu 1 not in isolcpus", "boot with isolcpus=1"));
    warned.push(Check::warn("frequency", "no cpufreq for cpu 1", "bare metal"));
    let v = verdict(&warned, None);
    assert_eq!((v.line.as_str(), v.code), ("verdict: fit with warnings (2)", FIT_WITH_WARNINGS));
    let mut bad = warned.clone();
    bad.push(Check::bad("cpu", "cpu 1 busy 100% during the check (others run there)", "pick an idle CPU"));
    bad.push(Check::bad("clock", "TSC not invariant", "--clock monotonic"));
    let v = verdict(&bad, Some(3));
    assert_eq!(v.code, NOT_FIT);
    assert_eq!(v.line, "verdict: not fit (cpu 1 busy 100% during the check (others run there); TSC not invariant)");
}

#[test]
fn tune_says_which_cpus_it_keeps_quiet_as_a_run_orders_them() {
    use super::tune::quiet_line;
    // Two CPUs, one tuned: scale's second thread lands where the IRQs go, and tune says so.
    let l = quiet_line(&[0, 1], &[1]);
    assert!(l.starts_with("quiet: cpus 1 (the CPUs `run --threads 1` measures on); IRQs go to cpus 0"), "{l}");
    assert!(l.contains("also measures on cpu 0, which takes them"), "{l}");
    // Both tuned: nowhere to move the IRQs.
    assert!(quiet_line(&[0, 1], &[1, 0]).contains("no CPU is left to take the IRQs"));
    // --threads 2 on four CPUs is the CPUs run's threads take, in that order.
    assert_eq!(crate::host::measuring_order(&[0, 1, 2, 3], 3)[..2], [3, 2]);
    let l = quiet_line(&[0, 1, 2, 3], &[3, 2]);
    assert!(l.contains("IRQs go to cpus 0,1") && l.contains("also measures on cpu 1"), "{l}");
}
