//! The report of a `run --instructions singlestep` directory: exact instruction counts
//! per call, no timing. Code paths are exact values, not bands: each distinct count is a path,
//! with its share of the calls, its kernel entries, and its period where it recurs at one
//! interval (LTTng-UST's sub-buffer switch; survey Figure 7(d) for the counts per tracer).
use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::plot::{self, PathBars};
use crate::report::findings::{ReportJson, TracerFindings, REPORT_JSON_SCHEMA};
use crate::report::load::{csv_err, read_run_json, tracers_of};
use crate::report::model::ReportError;
use crate::report::render::page::Page;
use crate::report::side::function_profile;

/// Whether run.json says the run was stepped.
pub fn is_stepped(dir: &Path) -> bool {
    read_run_json(dir).map(|r| r["instructions"]["mode"] == "singlestep").unwrap_or(false)
}

/// One path: an exact count, or (a rare path that enters the kernel, such as printf's buffer
/// flush, whose count follows what it writes) a band of counts `instructions..=instructions_max`.
#[derive(Debug, Clone, PartialEq)]
pub struct Path1 {
    pub instructions: u64,
    pub instructions_max: u64,
    pub calls: usize,
    pub share: f64,
    /// Kernel entries per call on this path (min, max).
    pub kernel: (u64, u64),
    /// Calls between two of its calls when every gap is the same (within each repetition).
    pub period: Option<u64>,
    /// (smallest, largest) gap otherwise.
    pub gaps: Option<(u64, u64)>,
    /// First and last iteration on this path (first repetition).
    pub span: (u64, u64),
}

/// (iteration, user_instructions, kernel_entries, repetition) rows -> paths, most calls first.
pub fn paths(rows: &[(u64, u64, u64, u64)]) -> Vec<Path1> {
    let mut exact: BTreeMap<u64, Vec<(u64, u64, u64)>> = BTreeMap::new();
    for &(it, u, k, rep) in rows {
        exact.entry(u).or_default().push((rep, it, k));
    }
    let n = rows.len().max(1);
    // Rare counts (under 1% of calls each) that enter the kernel as often as each other, within
    // 10% of the band's lowest count, are one path: a flush whose count follows the bytes it
    // writes (printf: 1504 to 1578 instructions and one write(2), every ~430 calls).
    let kernel_of = |v: &[(u64, u64, u64)]| {
        let k = v[0].2;
        v.iter().all(|x| x.2 == k).then_some(k).filter(|&k| k >= 1)
    };
    let mut by: BTreeMap<u64, (u64, Vec<(u64, u64, u64)>)> = BTreeMap::new();
    let mut band: Option<(u64, u64)> = None; // (lowest count, kernel entries) of the open band
    for (u, v) in exact {
        let rare = (v.len() as f64) < 0.01 * n as f64;
        match (rare.then(|| kernel_of(&v)).flatten(), band) {
            (Some(k), Some((lo, bk))) if k == bk && u as f64 <= 1.1 * lo as f64 => {
                let e = by.get_mut(&lo).expect("the open band");
                e.0 = u;
                e.1.extend(v);
            }
            (k, _) => {
                band = k.map(|k| (u, k));
                by.insert(u, (u, v));
            }
        }
    }
    let mut out: Vec<Path1> = by
        .into_iter()
        .map(|(u, (umax, mut v))| {
            v.sort_unstable();
            let kmin = v.iter().map(|x| x.2).min().unwrap_or(0);
            let kmax = v.iter().map(|x| x.2).max().unwrap_or(0);
            let gaps: Vec<u64> = v.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| w[1].1 - w[0].1).collect();
            // A period needs at least two equal gaps (three calls); one gap is just a distance.
            let (period, range) = match (gaps.iter().min(), gaps.iter().max()) {
                (Some(&lo), Some(&hi)) if lo == hi && gaps.len() >= 2 => (Some(lo), None),
                (Some(&lo), Some(&hi)) => (None, Some((lo, hi))),
                _ => (None, None),
            };
            let first_rep: Vec<u64> = v.iter().filter(|x| x.0 == v[0].0).map(|x| x.1).collect();
            Path1 {
                span: (first_rep[0], *first_rep.last().unwrap_or(&first_rep[0])),
                instructions: u,
                instructions_max: umax,
                calls: v.len(),
                share: v.len() as f64 / n as f64,
                kernel: (kmin, kmax),
                period,
                gaps: range,
            }
        })
        .collect();
    out.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.instructions.cmp(&b.instructions)));
    out
}

/// (iteration, user_instructions, kernel_entries, repetition) per call.
type Rows = Vec<(u64, u64, u64, u64)>;

/// The rows, and how many calls had a vDSO clock retry left out.
fn read_rows(path: &Path) -> Result<(Rows, u64), ReportError> {
    let f = crate::results::events_file::open(path).map_err(|source| {
        ReportError::Read(crate::results::read::ReadError::Io { path: path.to_path_buf(), source })
    })?;
    let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(f);
    let h: Vec<String> = r.headers().map_err(|e| csv_err(path, e))?.iter().map(String::from).collect();
    let col = |n: &str| crate::results::read::col(&h, n, path);
    let (ci, cu, ck, cr) = (col("iteration")?, col("user_instructions")?, col("kernel_entries")?, col("repetition")?);
    let cc = h.iter().position(|c| c == "clock_retries");
    let mut rows = Vec::new();
    let mut retried = 0u64;
    for (n, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| csv_err(path, e))?;
        let num = |c: usize| -> Result<u64, ReportError> {
            rec.get(c).and_then(|s| s.trim().parse().ok()).ok_or_else(|| {
                ReportError::Read(crate::results::read::ReadError::Parse {
                    path: path.to_path_buf(),
                    line: n as u64 + 2,
                    msg: format!("column {}: not a whole number", h[c]),
                })
            })
        };
        rows.push((num(ci)?, num(cu)?, num(ck)?, num(cr)?));
        if let Some(c) = cc {
            retried += u64::from(num(c)? > 0);
        }
    }
    Ok((rows, retried))
}

/// "941", or "1504-1578" for a band.
fn count_text(p: &Path1) -> String {
    if p.instructions_max == p.instructions {
        p.instructions.to_string()
    } else {
        format!("{}-{}", p.instructions, p.instructions_max)
    }
}

/// "1 kernel entry", "4 kernel entries", "0-1 kernel entries".
fn entries(k: (u64, u64)) -> String {
    match k {
        (1, 1) => "1 kernel entry".into(),
        (a, b) if a == b => format!("{a} kernel entries"),
        (a, b) => format!("{a}-{b} kernel entries"),
    }
}

/// The period of a rarer path (a main path's "period" is just its share).
fn period_text(p: &Path1) -> String {
    if p.share >= 0.5 {
        return "-".into();
    }
    match (p.period, p.gaps) {
        // Consecutive calls: a range of payloads (e.g. the two-digit iteration numbers).
        (Some(1), _) => format!("every call of iterations {}-{}", p.span.0, p.span.1),
        (Some(n), _) => format!("every {n} calls"),
        (None, Some((lo, hi))) if lo == hi => format!("{lo} calls apart (too few calls for a period)"),
        (None, Some((lo, hi))) if hi as f64 <= 1.1 * lo as f64 => format!("every {lo}-{hi} calls (no exact period)"),
        (None, Some((lo, hi))) => format!("irregular ({lo}-{hi} calls apart)"),
        _ => "-".into(),
    }
}

/// "1 call", "8 calls".
fn calls_text(n: usize) -> String {
    if n == 1 {
        "1 call".into()
    } else {
        format!("{n} calls")
    }
}

/// The period clause of a rarer path in the summary line: a path seen on one call says where (the
/// table's bare "-" says nothing in a sentence), and a path with no period to give has no clause.
fn period_clause(p: &Path1) -> Option<String> {
    if p.calls == 1 {
        return Some(format!("once, at iteration {}", p.span.0));
    }
    Some(period_text(p)).filter(|t| t != "-")
}

/// One tracer row of a stepped run, as read: its paths, most calls first.
struct Stepped {
    name: String,
    dir: String,
    spec: String,
    calls: usize,
    /// Calls a vDSO clock read retried in (because of the stepping), not counted.
    retried: u64,
    paths: Vec<Path1>,
}

/// Writes report.md, report.html and figures/instructions.{png,svg}; returns the lines printed.
pub fn write(dir: &Path) -> Result<Vec<String>, ReportError> {
    let tracers = read(dir)?;
    let mut lines = say(&tracers);
    draw_figure(dir, &tracers)?;
    // Per path, per function: the paths the lines say, from each profile.json.
    let mut profiled = Vec::new();
    for t in &tracers {
        let ranges: Vec<(u64, u64)> = said(&t.paths).iter().map(|q| (q.instructions, q.instructions_max)).collect();
        profiled.extend(function_profile::read(dir, &t.name, &t.dir, &ranges)?);
    }
    lines.extend(function_profile::lines(&profiled));
    let cards = function_profile::write_files(dir, &profiled)?;
    let mut page = page(&tracers, lines.clone());
    page.cards = cards;
    page.write(dir)?;
    write_report_json(dir, &function_profile::findings(&profiled))?;
    Ok(lines)
}

/// The tracer rows of run.json that have an events.csv with at least one call, and their paths.
fn read(dir: &Path) -> Result<Vec<Stepped>, ReportError> {
    let run: Value = read_run_json(dir)?;
    let mut out = Vec::new();
    for t in tracers_of(&run) {
        let p = dir.join(&t.dir).join(crate::results::EVENTS_CSV);
        if !crate::results::events_file::exists(&p) {
            continue;
        }
        let (data, retried) = read_rows(&p)?;
        let paths = paths(&data);
        if paths.is_empty() {
            continue;
        }
        out.push(Stepped { name: t.name, dir: t.dir, spec: t.spec, calls: data.len(), retried, paths });
    }
    Ok(out)
}

/// The main path, the three most frequent other paths, and any path that enters the kernel (a
/// flush, a sub-buffer switch: the costly ones) however rare: the paths the report says.
fn said(ps: &[Path1]) -> Vec<&Path1> {
    let rest = ps.iter().skip(1).enumerate().filter(|(i, q)| *i < 3 || q.kernel.0 >= 1).map(|(_, q)| q);
    ps.iter().take(1).chain(rest).collect()
}

/// report.json of a stepped run: a `function_profile` finding per said path of each tracer.
fn write_report_json(dir: &Path, tracers: &[TracerFindings]) -> Result<(), ReportError> {
    let json = ReportJson { schema: REPORT_JSON_SCHEMA, tracers, survey_check: &[] };
    let path = dir.join("report.json");
    let mut text = serde_json::to_string_pretty(&json)
        .map_err(|e| ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source: e.into() }))?;
    text.push('\n');
    crate::results::write_atomic_io(&path, text.as_bytes())
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path, source }))
}

/// The lines: what the counts are, each tracer's paths, the main paths over the `none` floor,
/// and LTTng-UST's fast path against lw's.
fn say(tracers: &[Stepped]) -> Vec<String> {
    let mut lines = vec![
        "Counts are exact user-space instructions per call, from single-stepping the measuring thread (run.json: \
         instructions); no time was measured. Kernel instructions are not counted: a call's kernel entries (system \
         calls, traps, page faults) are given beside its count."
            .to_string(),
    ];
    // Keyed by spec (`none`, `lw`, `lttng-ust` are found by what ran), said by row name: a plugin's
    // spec is a path and its arguments (`plugin:./libnutrace.so:events=256`), its name is `nutrace`.
    let mut main: BTreeMap<String, (String, u64)> = BTreeMap::new();
    for t in tracers {
        let (ps, first) = (&t.paths, &t.paths[0]);
        main.insert(t.spec.clone(), (t.name.clone(), first.instructions));
        let mut s = format!(
            "{}: {} instructions on {:.1}% of {} calls ({})",
            t.name,
            first.instructions,
            100.0 * first.share,
            t.calls,
            entries(first.kernel)
        );
        let shown = said(ps)[1..].to_vec();
        for q in &shown {
            let when = period_clause(q).map(|w| format!(", {w}")).unwrap_or_default();
            s.push_str(&format!("; {} on {} ({}{when})", count_text(q), calls_text(q.calls), entries(q.kernel)));
        }
        if ps.len() > shown.len() + 1 {
            s.push_str(&format!("; {} more paths", ps.len() - shown.len() - 1));
        }
        if t.retried > 0 {
            s.push_str(&format!(
                "; on {} calls a vDSO clock read retried because of the stepping, and that pass is not counted",
                t.retried
            ));
        }
        lines.push(format!("{s}."));
    }
    if let (Some(&(_, none)), true) = (main.get("none"), main.len() > 1) {
        let over: Vec<String> = main
            .iter()
            .filter(|(k, _)| *k != "none")
            .map(|(_, (name, v))| format!("{name} {}", *v as i64 - none as i64))
            .collect();
        lines.push(format!(
            "Over the `none` floor ({none} instructions: the call and its dynamic dispatch), the main paths add: {}.",
            over.join(", ")
        ));
    }
    if let (Some(&(_, l)), Some(&(_, u))) = (main.get("lw"), main.get("lttng-ust")) {
        // One definition of "N times" in every report (ranking::times): net of the floor.
        let floor = main.get("none").map(|&(_, n)| n as f64);
        if let Some(x) = crate::report::findings::ranking::times(u as f64, l as f64, floor, "as many") {
            let net = match floor {
                Some(f) => format!(" ({} and {} over the `none` floor)", u as f64 - f, l as f64 - f),
                None => String::new(),
            };
            lines.push(format!("LTTng-UST's fast path is {u} user-space instructions against lw's {l}: {x}{net}."));
        }
    }
    lines
}

/// figures/instructions: each tracer's main path as a bar, its six next paths as dots.
fn draw_figure(dir: &Path, tracers: &[Stepped]) -> Result<(), ReportError> {
    let figs = dir.join("figures");
    crate::results::owner::subdir(&figs)
        .map_err(|source| ReportError::Read(crate::results::read::ReadError::Io { path: figs.clone(), source }))?;
    let fig = PathBars {
        title: "User-space instructions per call (bars: main path; dots: rarer paths)".into(),
        y_desc: "instructions per call (exact)".into(),
        bars: tracers
            .iter()
            .map(|t| {
                let rest = t.paths.iter().skip(1).take(6).map(|q| q.instructions).collect();
                (t.name.clone(), t.paths[0].instructions, rest)
            })
            .collect(),
    };
    plot::save(&fig, &figs, "instructions")?;
    Ok(())
}

/// The page: the lines, every path of every tracer in one table, and the figure.
fn page(tracers: &[Stepped], lines: Vec<String>) -> Page {
    let rows = tracers
        .iter()
        .flat_map(|t| {
            t.paths.iter().map(|q| {
                vec![
                    t.name.clone(),
                    count_text(q),
                    q.calls.to_string(),
                    format!("{:.2}%", 100.0 * q.share),
                    if q.kernel.0 == q.kernel.1 {
                        q.kernel.0.to_string()
                    } else {
                        format!("{}-{}", q.kernel.0, q.kernel.1)
                    },
                    period_text(q),
                ]
            })
        })
        .collect();
    Page {
        title: "tracebench: instructions per call (single-stepped)".into(),
        lines,
        tables: vec![(
            "Code paths: each exact count, its calls, kernel entries per call, and its period".into(),
            ["tracer", "instructions", "calls", "share", "kernel entries", "period"].map(String::from).to_vec(),
            rows,
        )],
        figures: vec![("instructions".into(), "Instructions per call, per tracer (survey Figure 7(d) shape)".into())],
        cards: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rare_flush_whose_count_varies_is_one_band() {
        // printf: 1258 on most calls; a write(2) flush of 1504..1578 every ~431 calls.
        let mut rows: Vec<(u64, u64, u64, u64)> = (0..3000).map(|i| (i, 1258, 0, 0)).collect();
        for (j, &(it, u)) in [(261, 1551), (716, 1541), (1162, 1540), (1593, 1525), (2024, 1504)].iter().enumerate() {
            rows[it as usize] = (it, u + j as u64, 1, 0);
        }
        let p = paths(&rows);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!((p[1].instructions, p[1].instructions_max, p[1].calls), (1504 + 4, 1551, 5));
        assert_eq!(period_text(&p[1]), "every 431-455 calls (no exact period)");
    }

    #[test]
    fn paths_are_exact_counts_with_their_period() {
        // 941 on every call but every 810th from 500 (2386, 4 kernel entries), two repetitions.
        let mut rows = Vec::new();
        for rep in 0..2 {
            for it in 0..3000u64 {
                let slow = it >= 500 && (it - 500) % 810 == 0;
                rows.push((it, if slow { 2386 } else { 941 }, if slow { 4 } else { 0 }, rep));
            }
        }
        let p = paths(&rows);
        assert_eq!(p[0].instructions, 941);
        assert_eq!(p[1].instructions, 2386);
        assert_eq!(p[1].calls, 8);
        assert_eq!(p[1].kernel, (4, 4));
        // Gaps across repetitions are not gaps.
        assert_eq!(p[1].period, Some(810));
        assert_eq!(period_text(&p[0]), "-");
        assert_eq!(period_text(&p[1]), "every 810 calls");
        // Two calls are a distance, not a period.
        let two = paths(&[(0, 5, 0, 0), (1, 5, 0, 0), (2, 9, 0, 0), (3, 5, 0, 0), (363, 9, 0, 0)]);
        assert_eq!(two[1].period, None);
        assert_eq!(period_text(&two[1]), "361 calls apart (too few calls for a period)");
    }

    fn stepped(name: &str, spec: &str, rows: &[(u64, u64, u64, u64)]) -> Stepped {
        let paths = paths(rows);
        Stepped { name: name.into(), dir: name.into(), spec: spec.into(), calls: rows.len(), retried: 0, paths }
    }

    #[test]
    fn the_floor_line_names_a_plugin_by_its_row_name_not_its_spec() {
        let none = stepped("none", "none", &[(0, 10, 0, 0), (1, 10, 0, 0)]);
        let plug = stepped("nutrace", "plugin:./libnutrace.so:events=256", &[(0, 941, 0, 0), (1, 941, 0, 0)]);
        let lines = say(&[none, plug]);
        let floor = lines.iter().find(|l| l.starts_with("Over the `none` floor")).expect("the floor line");
        assert!(floor.ends_with("the main paths add: nutrace 931."), "{floor}");
        assert!(!lines.iter().any(|l| l.contains("plugin:")), "{lines:?}");
    }

    #[test]
    fn a_path_seen_on_one_call_says_1_call_once_and_where() {
        // 941 on every call but one: 2389 at iteration 7, with 4 kernel entries.
        let rows: Vec<_> = (0..200u64).map(|i| if i == 7 { (i, 2389, 4, 0) } else { (i, 941, 0, 0) }).collect();
        let lines = say(&[stepped("lttng-ust", "lttng-ust", &rows)]);
        assert!(lines[1].contains("; 2389 on 1 call (4 kernel entries, once, at iteration 7)."), "{}", lines[1]);
        assert!(!lines[1].contains(", -)"), "{}", lines[1]);
        // Two calls: plural, and their distance is the clause.
        let rows: Vec<_> = (0..200u64).map(|i| if i % 100 == 7 { (i, 2389, 4, 0) } else { (i, 941, 0, 0) }).collect();
        let lines = say(&[stepped("lttng-ust", "lttng-ust", &rows)]);
        assert!(lines[1].contains("; 2389 on 2 calls (4 kernel entries, 100 calls apart"), "{}", lines[1]);
    }
}
