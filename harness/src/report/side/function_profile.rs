//! The per-function profile of a stepped run's paths, as the report shows it: a line
//! per tracer (its main path's top functions) and per other path (what it adds: "the 2389-
//! instruction path adds 1456 instructions: lib_ring_buffer_switch_slow +900, ...; and 4 system
//! calls: futex 2, write 2"), instructions_by_function.csv (one row per tracer, path and
//! function), per path a `.folded` file and its flame graph, a card per path in report.html, and
//! a `function_profile` finding per path in report.json.
use std::path::Path;

use crate::analysis::function_profile::{self as fp, FunctionProfile, PathFunctions};
use crate::report::findings::{Finding, MetricFindings, TracerFindings};
use crate::report::model::ReportError;
use crate::report::render::page::Card;
use crate::results::profile::{Profile, PROFILE_JSON};
use crate::results::read::ReadError;
use crate::results::write_atomic_io as write_atomic;

pub const FUNCTIONS_CSV: &str = "instructions_by_function.csv";

/// instructions_by_function.csv's columns (docs/output.md): one row per tracer, path, function;
/// self and inclusive are mean instructions per call of the path.
pub const COLUMNS: [&str; 8] = [
    "tracer",
    "path_instructions",
    "path_instructions_max",
    "calls",
    "function",
    "module",
    "self_instructions",
    "inclusive_instructions",
];

/// Top functions shown per path (the CSV and report.json hold them all).
const TOP: usize = 12;

/// One tracer's profiled paths: its main path first, then the paths the report says.
pub struct Profiled {
    pub name: String,
    pub dir: String,
    pub paths: Vec<PathFunctions>,
}

/// The tracer's profile.json cut into its paths (`lo..=hi` each, main first); None for a run
/// without one (stepped by a version that wrote no profile.json).
pub fn read(dir: &Path, name: &str, tdir: &str, paths: &[(u64, u64)]) -> Result<Option<Profiled>, ReportError> {
    let p = match Profile::read(&dir.join(tdir).join(PROFILE_JSON)) {
        None => return Ok(None),
        Some(p) => p?,
    };
    let paths = paths.iter().filter_map(|&(lo, hi)| fp::of_path(&p, lo, hi)).collect::<Vec<_>>();
    Ok((!paths.is_empty()).then(|| Profiled { name: name.into(), dir: tdir.into(), paths }))
}

fn count_text(p: &PathFunctions) -> String {
    if p.instructions == p.instructions_max {
        p.instructions.to_string()
    } else {
        format!("{}-{}", p.instructions, p.instructions_max)
    }
}

fn syscalls_text(p: &PathFunctions) -> String {
    if p.syscalls.is_empty() {
        return "no system calls".into();
    }
    let s: Vec<String> =
        p.syscalls.iter().map(|(n, v)| format!("{n} {}", fp::signed(*v).trim_start_matches('+'))).collect();
    format!("system calls {}", s.join(", "))
}

/// The lines: per tracer its main path's top functions, and what each other path adds.
pub fn lines(ps: &[Profiled]) -> Vec<String> {
    let mut out = Vec::new();
    for t in ps {
        let main = &t.paths[0];
        let top: Vec<String> = main
            .functions
            .iter()
            .take(4)
            .map(|f| format!("{} {}", f.function, fp::signed(f.self_).trim_start_matches('+')))
            .collect();
        out.push(format!(
            "{}: its {}-instruction path, per call, by function (self instructions): {}; {}.",
            t.name,
            count_text(main),
            top.join(", "),
            syscalls_text(main)
        ));
        for p in &t.paths[1..] {
            let d = p.versus(main);
            let sys = d.syscalls.map(|s| format!("; and {s}")).unwrap_or_default();
            let n = fp::signed(d.instructions.abs()).trim_start_matches('+').to_string();
            let how = if d.instructions < 0.0 {
                format!("has {n} instructions fewer")
            } else {
                format!("adds {n} instructions")
            };
            out.push(format!(
                "{}: the {}-instruction path {how}: {}{sys}.",
                t.name,
                count_text(p),
                fp::difference_text(&d.functions, 5)
            ));
        }
    }
    out
}

/// The figure's name of a path under figures/ (without extension).
fn figure(t: &Profiled, p: &PathFunctions) -> String {
    format!("flame-{}-{}", t.dir, p.instructions)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Read(ReadError::Io { path: path.to_path_buf(), source })
}

/// Writes instructions_by_function.csv, and per path figures/flame-TRACER-COUNT.{folded,svg};
/// returns the cards of report.html.
pub fn write_files(dir: &Path, ps: &[Profiled]) -> Result<Vec<Card>, ReportError> {
    let cpath = dir.join(FUNCTIONS_CSV);
    let csv_err =
        |e: csv::Error| ReportError::Read(ReadError::Parse { path: cpath.clone(), line: 0, msg: e.to_string() });
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(COLUMNS).map_err(csv_err)?;
    let mut cards = Vec::new();
    for t in ps {
        for p in &t.paths {
            for f in &p.functions {
                csv.write_record([
                    t.name.clone(),
                    p.instructions.to_string(),
                    p.instructions_max.to_string(),
                    p.calls.to_string(),
                    f.function.clone(),
                    f.module.clone(),
                    f.self_.to_string(),
                    f.inclusive.to_string(),
                ])
                .map_err(csv_err)?;
            }
            let name = figure(t, p);
            let folded: String = p.folded.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
            let fpath = dir.join("figures").join(format!("{name}.folded"));
            write_atomic(&fpath, folded.as_bytes()).map_err(io(&fpath))?;
            let title = format!("{}: the {}-instruction path", t.name, count_text(p));
            let sub = format!("{} calls; width: user-space instructions over all of them", p.calls);
            let spath = dir.join("figures").join(format!("{name}.svg"));
            let svg = crate::plot::flame::svg(&title, &sub, &p.folded).map_err(io(&spath))?;
            write_atomic(&spath, &svg).map_err(io(&spath))?;
            cards.push(Card {
                title: format!(
                    "{}: the {}-instruction path ({} calls; {})",
                    t.name,
                    count_text(p),
                    p.calls,
                    syscalls_text(p)
                ),
                figure: name,
                caption: "Flame graph of the path: a frame's width is its instructions (inclusive)".into(),
                head: ["function", "module", "self", "inclusive"].map(String::from).to_vec(),
                rows: p
                    .functions
                    .iter()
                    .take(TOP)
                    .map(|f| vec![f.function.clone(), f.module.clone(), fmt(f.self_), fmt(f.inclusive)])
                    .collect(),
            });
        }
    }
    let bytes = csv.into_inner().map_err(|e| csv_err(e.into_error().into()))?;
    write_atomic(&cpath, &bytes).map_err(io(&cpath))?;
    Ok(cards)
}

/// "34", "12.5": a mean per call, whole where it is whole.
fn fmt(v: f64) -> String {
    fp::signed(v).trim_start_matches('+').to_string()
}

/// report.json's rows: per tracer, a `function_profile` finding per path.
pub fn findings(ps: &[Profiled]) -> Vec<TracerFindings> {
    ps.iter()
        .map(|t| {
            let main = &t.paths[0];
            let findings = t
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let name = figure(t, p);
                    Finding::FunctionProfile(FunctionProfile {
                        instructions: p.instructions,
                        instructions_max: p.instructions_max,
                        calls: p.calls,
                        functions: p.functions.clone(),
                        syscalls: p.syscalls.clone(),
                        versus_main: (i > 0).then(|| p.versus(main)),
                        folded: format!("figures/{name}.folded"),
                        flame_graph: format!("figures/{name}.svg"),
                    })
                })
                .collect();
            TracerFindings {
                name: t.name.clone(),
                label: t.name.clone(),
                threads: 1,
                summary: None,
                metrics: vec![MetricFindings {
                    metric: crate::results::columns::USER_INSTRUCTIONS.into(),
                    unit: "instructions",
                    calls: t.paths.iter().map(|p| p.calls).sum(),
                    findings,
                }],
            }
        })
        .collect()
}
