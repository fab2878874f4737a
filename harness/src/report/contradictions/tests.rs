//! Each rule finds the contradiction it is about, planted into a clean synthetic report, and
//! says nothing of the clean one.
use super::{check, Said};
use crate::report::render::overview::{PathShort, SurveySentence};

fn clean() -> (tempfile::TempDir, Said) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("r");
    let o = crate::report::side::synthetic::Options { tracers: 5, rows: 3000, threads: vec![1], counters: false };
    crate::report::side::synthetic::write(&dir, &o).unwrap();
    crate::report::build(&dir, 100, 100).unwrap();
    let s = Said::read(&dir).unwrap();
    (d, s)
}

fn rules(s: &Said) -> Vec<&'static str> {
    check(s).iter().map(|c| c.rule).collect()
}

fn row<'a>(s: &'a mut Said, name: &str) -> &'a mut crate::report::render::overview::OverviewRow {
    s.overview.tracers.iter_mut().find(|r| r.name == name).unwrap()
}

#[test]
fn a_clean_report_has_none_and_each_planted_contradiction_is_found() {
    let (_d, s) = clean();
    assert_eq!(check(&s), vec![], "the synthetic report");

    // The table's "~810" beside "shows no periodic slow path".
    let (_d, mut s) = clean();
    let r = row(&mut s, "lttng-ust");
    r.paths = vec![PathShort { every: "~810".into(), extra_ns: 1840.0, share: 0.001 }];
    r.sentences.push("Departs from the survey: lttng-ust shows no periodic slow path in 40000 calls.".into());
    assert!(rules(&s).contains(&"periodic-vs-none"), "{:?}", check(&s));

    // A survey line agreeing on a period the table does not show.
    let (_d, mut s) = clean();
    s.overview.survey.push(SurveySentence {
        verdict: "agrees".into(),
        tracers: vec!["lttng-ust".into()],
        text: "Agrees with the survey: lttng-ust takes a slow path every 999 events (+700 ns, 10 calls), one per \
               sub-buffer switch."
            .into(),
    });
    assert!(rules(&s).contains(&"survey-path-vs-table"), "{:?}", check(&s));

    // A folded phase of the expected period: the survey line and the table's "P folded" agree,
    // or one says what the other does not.
    let phase = |p: u32| SurveySentence {
        verdict: "agrees".into(),
        tracers: vec!["lttng-ust".into()],
        text: format!(
            "Agrees with the survey: one phase of every {p} events of lttng-ust is slower than its neighbours (+200 \
             ns, in 6 of 6 sequences), one per sub-buffer switch as in section 7.1."
        ),
    };
    let folded = |p: u32| PathShort { every: format!("{p} folded"), extra_ns: 200.0, share: 0.001 };
    let (_d, mut s) = clean();
    s.overview.survey.push(phase(810));
    assert!(rules(&s).contains(&"survey-path-vs-table"), "{:?}", check(&s));
    let (_d, mut s) = clean();
    s.overview.survey.push(phase(810));
    row(&mut s, "lttng-ust").paths.push(folded(810));
    assert!(!rules(&s).contains(&"survey-path-vs-table"), "{:?}", check(&s));
    let (_d, mut s) = clean();
    s.overview.survey.push(phase(810));
    row(&mut s, "lttng-ust").paths = vec![folded(811)];
    assert!(rules(&s).contains(&"survey-path-vs-table"), "{:?}", check(&s));
    let (_d, mut s) = clean();
    s.overview.survey.push(SurveySentence {
        verdict: "departs".into(),
        tracers: vec!["lttng-ust".into()],
        text: "Departs from the survey: lttng-ust shows no periodic slow path in 40000 calls (49.4 sub-buffers of 810 \
               events); section 7.1 finds one per sub-buffer switch."
            .into(),
    });
    row(&mut s, "lttng-ust").paths = vec![folded(810)];
    assert!(rules(&s).contains(&"survey-path-vs-table"), "{:?}", check(&s));
    // An ordering line that departs and names the row among others is not the sub-buffer line.
    let (_d, mut s) = clean();
    s.overview.survey.push(SurveySentence {
        verdict: "departs".into(),
        tracers: vec!["lttng-ust".into(), "printf".into()],
        text: "Departs from the survey (Table 4): mean latency orders as lttng-ust < printf.".into(),
    });
    row(&mut s, "lttng-ust").paths.push(folded(810));
    assert!(!rules(&s).contains(&"survey-path-vs-table"), "{:?}", check(&s));

    // 20 of the 25 slots meet "at least 80%": "needs at least 80%" denies what it quotes; a bare
    // "needs 80%" does not say how the threshold applies.
    for (text, _why) in [
        ("t: 20 of the 25 slots of that phase in the run: an exact period needs at least 80% of its slots", "meets it"),
        ("t: 6 of the 7 slots: an exact period needs 80% of its slots", "bare"),
        ("t: 3 of the 50 slots: they fill at least 80% of the slots", "below it"),
    ] {
        let (_d, mut s) = clean();
        row(&mut s, "lw").sentences.push(text.into());
        assert!(rules(&s).contains(&"threshold-as-applied"), "{text}: {:?}", check(&s));
    }
    // A part larger than its whole, and a part within it.
    let (_d, mut s) = clean();
    row(&mut s, "lw").sentences.push("t: 99 outliers lie exactly 51 calls apart, 99 of the 98 slots.".into());
    assert!(rules(&s).contains(&"part-of-whole"), "{:?}", check(&s));
    let (_d, mut s) = clean();
    row(&mut s, "lw").sentences.push("t: 98 outliers lie exactly 51 calls apart, 98 of the 98 slots.".into());
    assert!(!rules(&s).contains(&"part-of-whole"), "{:?}", check(&s));

    // The same share on the side its sentence says is no contradiction.
    let (_d, mut s) = clean();
    let t = "t: 28 of the 50 slots: an exact period needs at least 80% of its slots";
    row(&mut s, "lw").sentences.push(t.into());
    s.md.push_str(t);
    assert_eq!(check(&s), vec![]);

    // The terminal's order line against a pair the comparison found the other way.
    let (_d, mut s) = clean();
    if let Some(p) = s.overview.pairs.first_mut() {
        let (a, b) = (p.a.clone(), p.b.clone());
        p.outcome = "b_cheaper".into();
        s.terminal.push(format!("order: decided, {a} < {b}"));
        s.overview.survey.push(SurveySentence {
            verdict: "departs".into(),
            tracers: vec![b.clone(), a.clone()],
            text: format!(
                "Departs from the survey: {b} (1 ns) and {a} (2 ns) cost the same (words), but the survey ..."
            ),
        });
        let r = rules(&s);
        assert!(r.contains(&"pair-order") && r.contains(&"survey-order"), "{:?}", check(&s));
    }

    // A verdict whose sentence says the opposite.
    let (_d, mut s) = clean();
    s.overview.survey.push(SurveySentence {
        verdict: "agrees".into(),
        tracers: vec![],
        text: "Departs from the survey: x.".into(),
    });
    assert!(rules(&s).contains(&"verdict-word"), "{:?}", check(&s));

    // report.md without a row's sentence.
    let (_d, mut s) = clean();
    row(&mut s, "lw").sentences.push("lw: a sentence report.md never says".into());
    assert!(rules(&s).contains(&"md-vs-json"), "{:?}", check(&s));

    // A tail giving outliers more calls than the row has.
    let (_d, mut s) = clean();
    let t = s.json["tracers"].as_array_mut().unwrap().iter_mut().find(|t| t["name"] == "lw").unwrap();
    let f = t["metrics"][0]["findings"].as_array_mut().unwrap();
    f.push(serde_json::json!({"kind": "tail_split", "quantile": 0.99, "above_ns": 100.0, "calls": 5,
        "parts": [{"who": "no_path", "what": "outliers on no path", "calls": 5, "share": 1.0}]}));
    f.retain(|x| x["kind"] != "outliers");
    assert!(rules(&s).contains(&"tail-vs-counts"), "{:?}", check(&s));
}

/// `tracebench __contradictions` on a directory no report was written in says what to run first.
#[test]
fn a_directory_without_a_report_is_refused_with_what_to_run() {
    let d = tempfile::tempdir().unwrap();
    let e = super::check_dir(d.path()).unwrap_err();
    assert!(e.contains("run `tracebench report` on it first"), "{e}");
    std::fs::write(d.path().join("report.json"), "{").unwrap();
    let e = super::check_dir(d.path()).unwrap_err();
    assert!(e.contains("not JSON"), "{e}");
    std::fs::write(d.path().join("report.json"), "{}").unwrap();
    let e = super::check_dir(d.path()).unwrap_err();
    assert!(e.contains("no overview this version reads"), "{e}");
}
