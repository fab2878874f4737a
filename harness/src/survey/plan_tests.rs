use super::*;

fn machine(missing: &[&str], pmu: bool) -> Machine {
    let names = ["none", "lw", "vampirtrace", "extrae", "lttng-ust", "printf", "lttng-tracef", "systemtap", "ftrace"];
    let mut availability: Vec<(String, Result<(), (String, String)>)> = names
        .iter()
        .chain(OPEN_TRACERS.iter())
        .map(|n| {
            let a = if missing.contains(n) { Err(("not installed".into(), "install it".into())) } else { Ok(()) };
            (n.to_string(), a)
        })
        .collect();
    availability.dedup_by(|a, b| a.0 == b.0);
    Machine {
        availability,
        no_pmu: (!pmu).then(|| "no PMU".into()),
        no_kbench: Some("/dev/kbench not found".into()),
        cores: 4,
    }
}

fn size(kernel: bool) -> Size {
    Size { quick: true, budget: Duration::from_secs(60), kernel }
}

#[test]
fn every_survey_output_is_planned_or_said_not_made() {
    let p = plan(&machine(&["extrae", "vampirtrace", "systemtap"], false), Path::new("/o"), &size(false));
    let names: Vec<&str> = p.steps.iter().flat_map(|s| s.outputs.iter().map(|o| o.name)).collect();
    for n in ["survey-table4", "survey-fig7", "survey-fig8", "survey-fig6", "survey-fig9", "survey-fig10"] {
        assert!(names.contains(&n), "{n} not planned: {names:?}");
    }
    // Each missing tracer and the PMU's counters are said, with the reason and the fix.
    for t in ["extrae", "vampirtrace", "systemtap"] {
        assert!(p.not_made.iter().any(|n| n.what.contains(t) && n.why == "not installed" && n.fix == "install it"));
    }
    assert!(p.not_made.iter().any(|n| n.why.contains("no hardware counters")));
    // Figure 6 runs one clock per run, as a sweep, at 1 and 2 threads in the quick mode.
    let f6 = p.steps.iter().find(|s| s.key == "ftrace-clocks").unwrap();
    assert_eq!(f6.kind, Kind::Sweep("ftrace-clock=global,local,counter".into()));
    assert_eq!(f6.opts.threads, vec![1, 2]);
    let t4 = p.steps.iter().find(|s| s.key == "table4").unwrap();
    assert_eq!(t4.opts.tracer, ["none", "lw", "lttng-ust", "printf", "lttng-tracef"]);
    assert_eq!(t4.opts.out.as_deref(), Some(Path::new("/o/steps/table4")));
}

#[test]
fn with_a_pmu_figure7_and_table6_come_from_the_counters() {
    let p = plan(&machine(&[], true), Path::new("/o"), &size(false));
    let t4 = p.steps.iter().find(|s| s.key == "table4").unwrap();
    assert!(t4.outputs.iter().any(|o| o.name == "survey-fig7" && o.from == Source::Figure("latency_vs_counters")));
    assert!(!p.not_made.iter().any(|n| n.why.contains("no hardware counters")));
}

#[test]
fn without_kbench_the_kernel_outputs_are_one_not_made_line() {
    let p = plan(&machine(&["ftrace"], false), Path::new("/o"), &size(true));
    let k: Vec<&NotMade> = p.not_made.iter().filter(|n| n.what.contains("(kernel)")).collect();
    assert_eq!(k.len(), 1);
    assert!(k[0].why.contains("/dev/kbench not found") && k[0].why.contains("qemu VM"), "{}", k[0].why);
    assert!(!p.steps.iter().any(|s| s.opts.kernel));
    // No ftrace: Figure 6 is not planned and says why.
    assert!(p.not_made.iter().any(|n| n.what.starts_with("Figure 6") && n.why == "not installed"));
}
