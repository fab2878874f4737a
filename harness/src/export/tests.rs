//! The exports on synthetic results directories, and their shape against the published formats:
//! Bencher's BMF JSON Schema (fixtures/bmf.schema.json, from https://bencher.dev/bmf.json) and
//! github-action-benchmark's `BenchmarkResult` (`{name, value, unit, range?, extra?}` with string
//! `range` and `extra`, src/extract.ts; `range` parsed by src/extractRangeInfo.ts).
use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

use super::model::contain;
use super::*;
use crate::results::table::Table;

const SCHEMA: &str = include_str!("fixtures/bmf.schema.json");
const BMF_EXAMPLE: &str = include_str!("fixtures/bmf-example.json");
const GHB_EXAMPLE: &str = include_str!("fixtures/github-benchmark-example.json");

fn write(p: &Path, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

fn run_json(tracers: Value) -> String {
    json!({
        "tracebench": {"version": "0.1.0", "git_commit": "abc123"},
        "host": {"hostname": "ci-1", "cpu_model": "Test CPU", "kernel": "Linux 6.1 x86_64"},
        "clock": {"info": {"kind": "tsc", "resolution_ns": 10.0}},
        "interrupted": false,
        "tracers": tracers,
    })
    .to_string()
}

/// A results directory with three repetitions of `lw` (instructions counted, cycles not for one
/// row) and of `none`.
fn three_repetitions(dir: &Path) {
    write(
        &dir.join("summary.csv"),
        "tracer,threads,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns,instructions_mean,cycles_mean,mom_ns\n\
         none,1,6000,0,14.1,4.9,10.0,20.0,20.0,10.0,20.0,5.000,,14.110\n\
         lw,1,5900,100,34.9,5.0,30.0,40.0,40.0,30.0,50.0,120.500,90.250,34.791\n",
    );
    write(
        &dir.join("repetitions.csv"),
        "tracer,threads,repetition,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns,instructions_mean,cycles_mean,mom_ns\n\
         none,1,0,2000,0,14.1,4.9,10.0,20.0,20.0,10.0,20.0,5.0,,14.118\n\
         none,1,1,2000,0,14.1,4.9,10.0,20.0,20.0,10.0,20.0,5.0,,14.068\n\
         none,1,2,2000,0,14.1,4.9,10.0,20.0,20.0,10.0,20.0,5.0,,14.143\n\
         lw,1,0,1950,50,34.5,5.0,30.0,40.0,40.0,30.0,40.0,120.0,90.0,34.524\n\
         lw,1,1,1975,25,34.8,5.0,30.0,40.0,40.0,30.0,50.0,121.0,90.5,34.799\n\
         lw,1,2,1975,25,35.5,5.0,40.0,40.0,40.0,30.0,40.0,120.5,90.25,35.526\n",
    );
    write(
        &dir.join("run.json"),
        &run_json(json!([
            {"name": "none", "dir": "none", "version": "0.1.0", "config": {"kind": "empty call"}},
            {"name": "lw", "dir": "lw", "version": "0.2.0", "config": {"ring_events": 1024}},
        ])),
    );
}

/// One repetition of `ftrace` with the given trace clock, with its events.csv (latencies 1..=100).
fn one_repetition(dir: &Path, clock: &str) {
    write(
        &dir.join("summary.csv"),
        "tracer,threads,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns,mom_ns\n\
         ftrace,1,100,0,50.5,29.0,50.5,90.1,99.01,1.0,100.0,50.500\n",
    );
    write(
        &dir.join("repetitions.csv"),
        "tracer,threads,repetition,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns,mom_ns\n\
         ftrace,1,0,100,0,50.5,29.0,50.5,90.1,99.01,1.0,100.0,50.500\n",
    );
    let mut ev = String::from("tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
    for i in 0..100 {
        // Out of order on purpose: p10 must not depend on the file's order.
        let lat = (i * 37) % 100 + 1;
        ev.push_str(&format!("ftrace,1,0,1,{i},{lat},0,1\n"));
    }
    write(&dir.join("ftrace").join("events.csv"), &ev);
    write(
        &dir.join("run.json"),
        &run_json(json!([{"name": "ftrace", "dir": "ftrace", "version": "linux 6.1",
            "config": {"instance": format!("/sys/kernel/tracing/instances/tracebench-{clock}"), "trace_clock": clock}}])),
    );
}

fn src(dir: &Path, suffix: Option<&str>) -> Source {
    Source { results: Results::open(dir).unwrap(), suffix: suffix.map(String::from) }
}

fn by_name<'a>(b: &'a [Benchmark], n: &str) -> &'a Benchmark {
    b.iter()
        .find(|x| x.name == n)
        .unwrap_or_else(|| panic!("no {n} in {:?}", b.iter().map(|x| &x.name).collect::<Vec<_>>()))
}

#[test]
fn latency_is_mom_ns_with_the_bootstrap_interval_over_repetitions() {
    let d = tempfile::tempdir().unwrap();
    three_repetitions(d.path());
    let b = benchmarks(&[src(d.path(), None)], &HashMap::new()).unwrap();
    assert_eq!(b.len(), 2);
    let lw = by_name(&b, "tracebench/lw/threads=1");
    assert_eq!(lw.row.latency.value, 34.791, "summary.csv's mom_ns, not a recomputation");
    // The median of three values resampled: its 2.5% and 97.5% percentiles are the extremes.
    assert_eq!((lw.row.latency.lower, lw.row.latency.upper), (Some(34.524), Some(35.526)));
    assert_eq!(lw.row.interval, Interval::Bootstrap { repetitions: 3, confidence: CONFIDENCE });
    assert_eq!((lw.row.p50, lw.row.p99), (30.0, 40.0));
    assert!((lw.row.discard_fraction - 100.0 / 6000.0).abs() < 1e-12);
    assert_eq!(lw.row.counters, vec![("instructions".to_string(), 120.5), ("cycles".to_string(), 90.25)]);
    assert_eq!(lw.row.tracer_version.as_deref(), Some("0.2.0"));
    let none = by_name(&b, "tracebench/none/threads=1");
    // cycles was not measured for this row: left out, never 0.
    assert_eq!(none.row.counters, vec![("instructions".to_string(), 5.0)]);
    assert_eq!(none.meta.host.as_deref(), Some("ci-1 (Test CPU)"));
    assert_eq!(none.meta.clock_resolution_ns, Some(10.0));
}

#[test]
fn the_interval_is_widened_to_contain_the_pooled_value() {
    let m = contain(36.0, 34.5, 35.5);
    assert_eq!((m.lower, m.upper), (Some(34.5), Some(36.0)));
    let m = contain(35.0, 34.5, 35.5);
    assert_eq!((m.lower, m.upper), (Some(34.5), Some(35.5)));
    assert_eq!(m.half_width(), Some(0.5));
}

#[test]
fn one_repetition_takes_p10_and_p90_of_the_calls() {
    let d = tempfile::tempdir().unwrap();
    one_repetition(d.path(), "local");
    let r = Results::open(d.path()).unwrap();
    let row = &r.rows[0];
    // Latencies 1..=100: p10 is 10.9; p90 is summary.csv's.
    assert!((row.latency.lower.unwrap() - 10.9).abs() < 1e-9, "{:?}", row.latency);
    assert_eq!(row.latency.upper, Some(90.1));
    assert_eq!(row.interval, Interval::Calls { calls: 100 });
    // Without events.csv there is no interval rather than an invented one.
    std::fs::remove_file(d.path().join("ftrace/events.csv")).unwrap();
    let r = Results::open(d.path()).unwrap();
    assert_eq!(r.rows[0].latency, Metric::point(50.5));
    assert_eq!(r.rows[0].interval, Interval::None);
}

#[test]
fn colliding_names_get_the_configuration_that_differs() {
    let d = tempfile::tempdir().unwrap();
    let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
    one_repetition(&a, "local");
    one_repetition(&b, "global");
    one_repetition(&c, "global");
    // Alone: no configuration in the name.
    let one = benchmarks(&[src(&a, None)], &HashMap::new()).unwrap();
    assert_eq!(one[0].name, "tracebench/ftrace/threads=1");
    // Two clocks: the clock tells them apart (the instance path differs too, but is no knob).
    let two = benchmarks(&[src(&a, None), src(&b, None)], &HashMap::new()).unwrap();
    let names: Vec<&str> = two.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        ["tracebench/ftrace/threads=1/trace_clock=local", "tracebench/ftrace/threads=1/trace_clock=global"]
    );
    // Same configuration twice: an error that names the two sources, not a silent overwrite.
    let e = benchmarks(&[src(&b, None), src(&c, None)], &HashMap::new()).unwrap_err().to_string();
    assert!(e.contains("would both be named") && e.contains(&*c.display().to_string()), "{e}");
    // A sweep's suffix keeps them apart.
    let s = benchmarks(&[src(&b, Some("subbuf=8k")), src(&c, Some("subbuf=64k"))], &HashMap::new()).unwrap();
    assert_eq!(s[1].name, "tracebench/ftrace/threads=1/subbuf=64k");
}

#[test]
fn a_merged_gate_candidate_without_summary_uses_medians_over_repetitions() {
    let d = tempfile::tempdir().unwrap();
    three_repetitions(d.path());
    let reps = Table::read(&d.path().join("repetitions.csv")).unwrap();
    let r = Results::from_tables("`cmd`", None, Some(&reps), None, None).unwrap();
    let lw = r.rows.iter().find(|x| x.tracer == "lw").unwrap();
    assert_eq!(lw.latency.value, 34.799);
    assert_eq!((lw.latency.lower, lw.latency.upper), (Some(34.524), Some(35.526)));
    assert_eq!(lw.counters, vec![("instructions".to_string(), 120.5), ("cycles".to_string(), 90.25)]);
    assert_eq!(r.meta, RunMeta::default());
}

#[test]
fn bad_directories_and_specs_are_one_line_usage_errors() {
    let d = tempfile::tempdir().unwrap();
    let e = Results::open(d.path()).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("not a results directory"), "{e}");
    let e = Results::open(&d.path().join("nope")).unwrap_err();
    assert!(e.to_string().contains("no such directory"), "{e}");
    // Written before mom_ns existed: refused, not exported with another statistic under its name.
    write(
        &d.path().join("summary.csv"),
        "tracer,threads,kept,discarded,mean_ns,std_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns\nlw,1,1,0,1,0,1,1,1,1,1\n",
    );
    let e = Results::open(d.path()).unwrap_err();
    assert!(e.to_string().contains("mom_ns"), "{e}");
    // An interrupted run is refused.
    let d2 = tempfile::tempdir().unwrap();
    three_repetitions(d2.path());
    let mut rj: Value = serde_json::from_str(&std::fs::read_to_string(d2.path().join("run.json")).unwrap()).unwrap();
    rj["interrupted"] = json!(true);
    write(&d2.path().join("run.json"), &rj.to_string());
    assert!(Results::open(d2.path()).unwrap_err().to_string().contains("interrupted"));

    let dir = d.path().display();
    for (v, needle) in [
        ("bmf".to_string(), "give the file too"),
        ("csv=x.json".to_string(), "unknown export format 'csv'"),
        ("bmf=".to_string(), "the file is empty"),
        (format!("bmf={dir}/no/such/x.json"), "does not exist"),
        (format!("bmf={dir}"), "is a directory"),
    ] {
        let e = parse_specs(std::slice::from_ref(&v)).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let s = e.to_string();
        assert!(s.contains(needle) && s.lines().count() == 1, "{v}: {s}");
    }
    let twice = [format!("bmf={dir}/x.json"), format!("github-benchmark={dir}/x.json")];
    assert!(parse_specs(&twice).unwrap_err().to_string().contains("given twice"));
    let ok = parse_specs(&[format!("bmf={dir}/b.json"), format!("github-benchmark={dir}/g.json")]).unwrap();
    assert_eq!(ok[1].format, Format::GithubBenchmark);
}

// ---- BMF against its JSON Schema --------------------------------------------------------------

/// A validator for the JSON Schema keywords that the BMF schema uses (type, properties,
/// patternProperties with the pattern ".+", required). Any other keyword is a test failure, so a
/// change of the published schema cannot pass unnoticed.
fn validate(schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let s = schema.as_object().ok_or(format!("{at}: schema is not an object"))?;
    for k in s.keys() {
        if !["$id", "$schema", "type", "properties", "patternProperties", "required"].contains(&k.as_str()) {
            panic!("schema keyword '{k}' is not understood by this validator");
        }
    }
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => v.is_object(),
            "number" => v.is_number(),
            other => panic!("type {other} not understood"),
        };
        if !ok {
            return Err(format!("{at}: expected {t}, got {v}"));
        }
    }
    let Some(o) = v.as_object() else { return Ok(()) };
    for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
        let r = r.as_str().unwrap();
        if !o.contains_key(r) {
            return Err(format!("{at}: '{r}' is required"));
        }
    }
    for (k, x) in o {
        if let Some(p) = s.get("properties").and_then(|p| p.get(k)) {
            validate(p, x, &format!("{at}/{k}"))?;
        }
        for (pat, p) in s.get("patternProperties").and_then(Value::as_object).into_iter().flatten() {
            assert_eq!(pat, ".+", "pattern not understood");
            if !k.is_empty() {
                validate(p, x, &format!("{at}/{k}"))?;
            }
        }
    }
    Ok(())
}

fn exported(format: Format) -> Value {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    three_repetitions(&a);
    one_repetition(&b, "global");
    let mut notes = HashMap::new();
    notes.insert(
        ("lw".to_string(), 1),
        GateNote {
            verdict: "regressed".into(),
            change: 0.072,
            ci: Some((0.051, 0.09)),
            confidence: 0.99,
            metric: "mom_ns".into(),
            estimator: "hodges-lehmann".into(),
            baseline: "base/".into(),
        },
    );
    let benches = benchmarks(&[src(&a, None), src(&b, None)], &notes).unwrap();
    let text = format.exporter().render(&benches).unwrap();
    assert!(text.ends_with('\n'));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn bmf_follows_the_published_schema() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    // The validator accepts Bencher's own example and rejects broken documents.
    validate(&schema, &serde_json::from_str(BMF_EXAMPLE).unwrap(), "").unwrap();
    for bad in [
        json!([]),
        json!({"b": {"latency": {"lower_value": 1.0}}}),
        json!({"b": {"latency": {"value": "88"}}}),
        json!({"b": {"latency": {"value": 1.0, "upper_value": null}}}),
        json!({"b": {"latency": 3}}),
    ] {
        assert!(validate(&schema, &bad, "").is_err(), "accepted {bad}");
    }
    let doc = exported(Format::Bmf);
    validate(&schema, &doc, "").unwrap();
    let lw = &doc["tracebench/lw/threads=1"];
    assert_eq!(lw["latency"], json!({"value": 34.791, "lower_value": 34.524, "upper_value": 35.526}));
    assert_eq!(lw["latency-p50"], json!({"value": 30.0}));
    assert_eq!(lw["latency-p99"], json!({"value": 40.0}));
    assert_eq!(lw["instructions"], json!({"value": 120.5}));
    assert!(doc["tracebench/none/threads=1"].get("cycles").is_none(), "an absent counter is left out");
    let f = &doc["tracebench/ftrace/threads=1"]["latency"];
    assert_eq!(f["upper_value"], json!(90.1));
    for (_, m) in doc.as_object().unwrap() {
        let l = &m["latency"];
        let (lo, v, hi) = (l["lower_value"].as_f64(), l["value"].as_f64().unwrap(), l["upper_value"].as_f64());
        assert!(lo.unwrap() <= v && v <= hi.unwrap(), "{l}");
        // Measure names: Bencher allows 64 characters.
        assert!(m.as_object().unwrap().keys().all(|k| !k.is_empty() && k.len() <= 64));
    }
    // Also with a real JSON Schema implementation where one is installed.
    python_jsonschema(&doc);
}

fn python_jsonschema(doc: &Value) {
    let d = tempfile::tempdir().unwrap();
    let (sp, dp) = (d.path().join("s.json"), d.path().join("d.json"));
    std::fs::write(&sp, SCHEMA).unwrap();
    std::fs::write(&dp, doc.to_string()).unwrap();
    let code =
        "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))";
    match std::process::Command::new("python3").args(["-c", code]).arg(&sp).arg(&dp).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named") => {
            eprintln!("skip: python3 has no jsonschema module; BMF checked by the built-in validator only")
        }
        Ok(o) => panic!("jsonschema rejected the BMF export: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => eprintln!("skip: no python3 ({e}); BMF checked by the built-in validator only"),
    }
}

// ---- github-action-benchmark's customSmallerIsBetter ----------------------------------------

/// `BenchmarkResult` of github-action-benchmark: name, value (number) and unit required, range
/// and extra optional strings, nothing else; a range must parse as the action's
/// `extractRangeInfo` does (`(\+-|±)\s*` then a digit and at least one more character, all a number).
fn check_benchmark_result(v: &Value) -> Result<(), String> {
    let a = v.as_array().ok_or("not an array")?;
    for (i, e) in a.iter().enumerate() {
        let o = e.as_object().ok_or(format!("[{i}] is not an object"))?;
        for k in o.keys() {
            if !["name", "value", "unit", "range", "extra"].contains(&k.as_str()) {
                return Err(format!("[{i}]: unknown field {k}"));
            }
        }
        o.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or(format!("[{i}]: name"))?;
        o.get("value").and_then(Value::as_f64).ok_or(format!("[{i}]: value must be a number"))?;
        o.get("unit").and_then(Value::as_str).ok_or(format!("[{i}]: unit must be a string"))?;
        if let Some(r) = o.get("range") {
            let r = r.as_str().ok_or(format!("[{i}]: range must be a string"))?;
            let rest = r.strip_prefix("±").or_else(|| r.strip_prefix("+-")).ok_or(format!("[{i}]: range prefix"))?;
            let num = rest.trim_start();
            if num.len() < 2 || !num.starts_with(|c: char| c.is_ascii_digit()) || num.parse::<f64>().is_err() {
                return Err(format!("[{i}]: range '{r}' does not parse"));
            }
        }
        if let Some(x) = o.get("extra") {
            x.as_str().ok_or(format!("[{i}]: extra must be a string"))?;
        }
    }
    Ok(())
}

#[test]
fn github_benchmark_follows_the_action_s_shape() {
    check_benchmark_result(&serde_json::from_str(GHB_EXAMPLE).unwrap()).unwrap();
    for bad in [
        json!({"name": "x"}),
        json!([{"name": "x", "unit": "ns"}]),
        json!([{"name": "x", "unit": "ns", "value": "1"}]),
        json!([{"name": "x", "unit": "ns", "value": 1, "range": "± 5"}]),
        json!([{"name": "x", "unit": "ns", "value": 1, "extra": {"host": "a"}}]),
        json!([{"name": "x", "unit": "ns", "value": 1, "lower": 1}]),
    ] {
        assert!(check_benchmark_result(&bad).is_err(), "accepted {bad}");
    }
    let doc = exported(Format::GithubBenchmark);
    check_benchmark_result(&doc).unwrap();
    let a = doc.as_array().unwrap();
    assert_eq!(a.len(), 3, "one entry per row");
    let lw = a.iter().find(|e| e["name"] == "tracebench/lw/threads=1").unwrap();
    assert_eq!(lw["unit"], "ns");
    assert_eq!(lw["value"], json!(34.791));
    assert_eq!(lw["range"], "± 0.501");
    let extra = lw["extra"].as_str().unwrap();
    for needle in [
        "host: ci-1 (Test CPU)",
        "kernel: Linux 6.1 x86_64",
        "clock: tsc, resolution 10.00 ns",
        "tracer: lw 0.2.0",
        "tracebench: 0.1.0 (abc123)",
        "95% bootstrap interval of the median over 3 repetitions",
        "instructions: 120.500 per call",
        "gate: regressed (change +7.2% [+5.1%, +9.0%] at 99%; mom_ns, hodges-lehmann) vs base/",
    ] {
        assert!(extra.contains(needle), "'{needle}' not in:\n{extra}");
    }
    let none = a.iter().find(|e| e["name"] == "tracebench/none/threads=1").unwrap();
    let extra = none["extra"].as_str().unwrap();
    assert!(!extra.contains("gate:") && !extra.contains("cycles"), "{extra}");
    let f = a.iter().find(|e| e["name"] == "tracebench/ftrace/threads=1").unwrap();
    assert!(f["extra"].as_str().unwrap().contains("p10..p90 of 100 calls"));
}

#[test]
fn a_run_and_a_scale_of_one_tracer_are_told_apart_by_mode() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    for (dir, mode) in [(&a, "run"), (&b, "scale")] {
        three_repetitions(dir);
        let mut rj: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        rj["mode"] = json!(mode);
        write(&dir.join("run.json"), &rj.to_string());
    }
    let names: Vec<String> =
        benchmarks(&[src(&a, None), src(&b, None)], &HashMap::new()).unwrap().into_iter().map(|b| b.name).collect();
    assert_eq!(
        names,
        [
            "tracebench/none/threads=1/mode=run",
            "tracebench/lw/threads=1/mode=run",
            "tracebench/none/threads=1/mode=scale",
            "tracebench/lw/threads=1/mode=scale"
        ]
    );
}
