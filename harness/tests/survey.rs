//! `tracebench survey --quick`, end to end with the real binary: each survey output a tracer of
//! this machine can make is a file under the survey's number; what it cannot make is listed with
//! the reason and the fix, never skipped in silence.
mod common;

use std::path::Path;

use common::tb;

/// `tracebench list`'s available tracers.
fn available() -> Vec<String> {
    let o = tb().arg("list").output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, state) = (w.next()?, w.next()?);
            (state == "available").then(|| name.to_string())
        })
        .collect()
}

fn survey(out: &Path, extra: &[&str]) -> (String, String) {
    let o = tb().args(["survey", "--quick", "--quiet", "--out"]).arg(out).args(extra).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string());
    assert!(o.status.success(), "survey failed ({:?}): {stderr}\n{stdout}", o.status.code());
    (stdout, stderr)
}

#[test]
fn the_quick_survey_names_each_output_after_the_survey_and_says_what_it_did_not_make() {
    let have = available();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("survey");
    let (stdout, _) = survey(&out, &[]);
    let not_made = std::fs::read_to_string(out.join("not-made.txt")).unwrap();
    // Every line says what, why and the fix; and so does the end of the run.
    for l in not_made.lines() {
        assert!(l.contains(": not made here: ") && l.contains(" (fix: "), "{l}");
        assert!(stdout.contains(l), "not said at the end of the run: {l}");
    }
    let user =
        ["none", "lw", "lttng-ust", "printf", "lttng-tracef"].iter().filter(|t| have.iter().any(|h| h == *t)).count();
    let expect: Vec<(&str, bool, &str)> = vec![
        ("tables/survey-table4.csv", user > 1, "fewer than two of Table 4's tracers run here"),
        ("tables/survey-table4.tex", user > 1, "fewer than two of Table 4's tracers run here"),
        ("figures/survey-fig7.svg", user > 1, "fewer than two of Table 4's tracers run here"),
        ("figures/survey-fig8.pdf", user > 1, "fewer than two of Table 4's tracers run here"),
        ("tables/survey-fig10.csv", user > 1, "fewer than two of Table 4's tracers run here"),
        ("tables/survey-table6.tex", user > 1, "fewer than two of Table 4's tracers run here"),
        ("figures/survey-fig6.png", have.iter().any(|h| h == "ftrace"), "ftrace does not run here"),
        (
            "figures/survey-fig9.png",
            have.iter().any(|h| h == "ftrace-open" || h == "strace-open"),
            "no open() tracer runs here",
        ),
    ];
    for (file, makeable, why) in expect {
        if !makeable {
            eprintln!("skipped {file}: {why}");
            continue;
        }
        assert!(
            out.join(file).is_file(),
            "{file} missing; made:\n{}",
            std::fs::read_to_string(out.join("made.txt")).unwrap()
        );
    }
    // Each tracer of Table 4 that is not here is named with its reason.
    for (t, survey_name) in [("vampirtrace", "VampirTrace"), ("extrae", "Extrae"), ("systemtap", "SystemTap")] {
        if !have.iter().any(|h| h == t) {
            assert!(
                not_made.contains(&format!("the {survey_name} row ({t}): not made here: ")),
                "{t} not listed:\n{not_made}"
            );
        }
    }
    // Figure 7: the counters where a PMU gives them, else the single-stepped instructions and a line.
    let pmu = !not_made.contains("no hardware counters");
    if !pmu {
        assert!(not_made.contains("Figure 7 (a)-(c)"), "{not_made}");
    }
    // The kernel's outputs are asked for only with --kernel.
    assert!(!not_made.contains("(kernel)"), "{not_made}");
}

#[test]
fn a_spent_budget_and_a_missing_kernel_module_are_said_not_made() {
    if Path::new("/dev/kbench").exists() {
        eprintln!("skipped: /dev/kbench exists here, so the kernel steps would run");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("survey");
    let (_, stderr) = survey(&out, &["--kernel", "--budget", "1s"]);
    let not_made = std::fs::read_to_string(out.join("not-made.txt")).unwrap();
    assert!(stderr.contains("no kernel steps: /dev/kbench not found"), "{stderr}");
    assert!(not_made.contains("the kernel lab is a qemu VM that builds and loads kbench-module"), "{not_made}");
    // The first step starts; the ones after a second are left, each said.
    assert!(not_made.contains("was spent before this step began (fix: give a larger --budget)"), "{not_made}");
}

#[test]
fn a_survey_into_a_results_directory_that_is_not_empty_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("x"), "").unwrap();
    let o = tb().args(["survey", "--quick", "--out"]).arg(d.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    let o = tb().args(["survey", "--budget", "soon"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give a duration such as 60s"));
}
