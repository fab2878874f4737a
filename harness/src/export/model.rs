//! The model of a results directory as the exporters see it: one [`Row`] per tracer and thread
//! count, re-read from summary.csv, repetitions.csv, run.json and events.csv.
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value;

use super::{CONFIDENCE, RESAMPLES, SEED};
use crate::error::Error;
use crate::results::table::Table;
use crate::stats::{self, bootstrap};

/// Run-level facts of run.json carried as metadata (github-benchmark's `extra`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunMeta {
    /// `hostname (cpu model)`.
    pub host: Option<String>,
    pub kernel: Option<String>,
    /// The clock of the timed window (`tsc`, `monotonic`...).
    pub clock: Option<String>,
    pub clock_resolution_ns: Option<f64>,
    /// `version (git commit)` of the tracebench that measured.
    pub tracebench: Option<String>,
    /// `run`, `scale` or `kernel`.
    pub mode: Option<String>,
}

impl RunMeta {
    pub fn from_run_json(run: &Value) -> RunMeta {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).map(String::from);
        let host = run.get("host");
        let name = s(host.and_then(|h| h.get("hostname")));
        let cpu = s(host.and_then(|h| h.get("cpu_model")));
        let info = run.get("clock").and_then(|c| c.get("info"));
        let tb = run.get("tracebench");
        let version = s(tb.and_then(|t| t.get("version")));
        let commit = s(tb.and_then(|t| t.get("git_commit")));
        RunMeta {
            host: match (name, cpu) {
                (Some(n), Some(c)) => Some(format!("{n} ({c})")),
                (n, c) => n.or(c),
            },
            kernel: s(host.and_then(|h| h.get("kernel"))),
            clock: s(info.and_then(|i| i.get("kind"))),
            clock_resolution_ns: info.and_then(|i| i.get("resolution_ns")).and_then(Value::as_f64),
            tracebench: match (version, commit) {
                (Some(v), Some(c)) => Some(format!("{v} ({c})")),
                (v, c) => v.or(c),
            },
            mode: s(run.get("mode")),
        }
    }
}

/// A value with an optional interval around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub value: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

impl Metric {
    pub fn point(value: f64) -> Metric {
        Metric { value, lower: None, upper: None }
    }
    /// Half the interval's width, for github-benchmark's "± x".
    pub fn half_width(&self) -> Option<f64> {
        Some((self.upper? - self.lower?) / 2.0)
    }
}

/// Where the `latency` interval comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Interval {
    /// Percentile bootstrap of the median of the per-repetition `mom_ns` values.
    Bootstrap { repetitions: usize, confidence: f64 },
    /// p10 and p90 of the kept calls (one repetition).
    Calls { calls: u64 },
    /// No interval: one repetition and no events.csv to take p10 from.
    None,
}

impl Interval {
    pub fn describe(&self) -> String {
        match self {
            Interval::Bootstrap { repetitions, confidence } => {
                format!("{:.0}% bootstrap interval of the median over {repetitions} repetitions", confidence * 100.0)
            }
            Interval::Calls { calls } => format!("p10..p90 of {calls} calls (one repetition)"),
            Interval::None => "none (one repetition, no events.csv)".into(),
        }
    }
}

/// One tracer at one thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub tracer: String,
    pub threads: u32,
    /// `mom_ns` (summary.csv), with the interval `interval` says.
    pub latency: Metric,
    pub interval: Interval,
    pub p50: f64,
    pub p99: f64,
    /// discarded / (kept + discarded).
    pub discard_fraction: f64,
    /// Mean per call of every counter that was measured (a counter absent here was not).
    pub counters: Vec<(String, f64)>,
    pub tracer_version: Option<String>,
    /// The tracer's `config` in run.json, for names that would collide.
    pub config: Value,
}

/// What a results directory holds, as the exports see it.
#[derive(Debug, Clone)]
pub struct Results {
    /// The directory (or, for an interleaved gate without --out, its command).
    pub source: String,
    pub meta: RunMeta,
    pub rows: Vec<Row>,
}

fn not_results(dir: &Path, why: &str) -> Error {
    Error::Usage(format!(
        "{} is not a results directory: {why}; pass the --out directory of `tracebench run` or `scale`",
        dir.display()
    ))
}

fn num(t: &Table, r: &[String], col: &str, what: &str) -> Result<f64, Error> {
    let c = t
        .col(col)
        .ok_or_else(|| Error::Data { path: t.path.display().to_string(), why: format!("no '{col}' column{what}") })?;
    let s = r[c].trim();
    if s.is_empty() {
        return Ok(f64::NAN);
    }
    s.parse::<f64>()
        .map_err(|_| Error::Data { path: t.path.display().to_string(), why: format!("{col} = '{s}' is not a number") })
}

fn key(t: &Table, r: &[String]) -> Result<(String, u32), Error> {
    let (tc, thc) = (t.col("tracer"), t.col("threads"));
    let (Some(tc), Some(thc)) = (tc, thc) else {
        return Err(Error::Data { path: t.path.display().to_string(), why: "no 'tracer' or 'threads' column".into() });
    };
    let th = r[thc].trim().parse::<u32>().map_err(|_| Error::Data {
        path: t.path.display().to_string(),
        why: format!("threads = '{}' is not a whole number", r[thc]),
    })?;
    Ok((r[tc].clone(), th))
}

/// The `<counter>_mean` columns in file order (`mean_ns` does not end in `_mean`).
fn counter_columns(t: &Table) -> Vec<String> {
    t.header.iter().filter(|h| h.ends_with("_mean")).cloned().collect()
}

const NO_MOM: &str = " (results written before tracebench had mom_ns; re-run to export them)";

impl Results {
    /// Reads a results directory: summary.csv and/or repetitions.csv (at least one), run.json
    /// when present, and the tracers' events.csv for p10 when a row has one repetition.
    pub fn open(dir: &Path) -> Result<Results, Error> {
        if !dir.is_dir() {
            return Err(not_results(dir, "no such directory"));
        }
        let (sp, rp) = (dir.join(crate::results::SUMMARY_CSV), dir.join(crate::results::REPETITIONS_CSV));
        if let Some(why) = crate::results::owner::unreadable(dir) {
            return Err(Error::Usage(why));
        }
        if !sp.is_file() && !rp.is_file() {
            return Err(not_results(dir, "it has neither summary.csv nor repetitions.csv"));
        }
        let summary = if sp.is_file() { Some(Table::read(&sp)?) } else { None };
        let reps = if rp.is_file() { Some(Table::read(&rp)?) } else { None };
        let run = if dir.join(crate::results::RUN_JSON).is_file() {
            Some(crate::results::read::read_run_json(dir).map_err(data)?)
        } else {
            None
        };
        if run.as_ref().and_then(|r| r.pointer("/instructions/mode")).and_then(Value::as_str) == Some("singlestep") {
            return Err(Error::Usage(format!(
                "{} is a `--instructions singlestep` run: its exact counts have no latency to export; compare two \
                 such runs with `tracebench gate --metric user_instructions` instead",
                dir.display()
            )));
        }
        if run.as_ref().and_then(|r| r.get("interrupted")).and_then(Value::as_bool) == Some(true) {
            return Err(Error::Usage(format!(
                "{}: the run was interrupted (run.json), so its rows may lack repetitions; re-run it to export it",
                dir.display()
            )));
        }
        Results::from_tables(&dir.display().to_string(), summary.as_ref(), reps.as_ref(), run.as_ref(), Some(dir))
    }

    /// Builds the model from tables already read. `summary` gives the pooled values; without it
    /// (an interleaved gate's merged candidate) they are the medians over repetitions. `dir`,
    /// when given, is where `<tracer dir>/events.csv` is looked for.
    pub fn from_tables(
        source: &str,
        summary: Option<&Table>,
        reps: Option<&Table>,
        run: Option<&Value>,
        dir: Option<&Path>,
    ) -> Result<Results, Error> {
        let meta = run.map(RunMeta::from_run_json).unwrap_or_default();
        let tracers = run.map(crate::results::read::tracers_of).unwrap_or_default();
        let run_tracers: Vec<&Value> = run
            .and_then(|r| r.get("tracers"))
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();

        // Per-repetition rows by key, in first-seen order.
        let mut by_key: BTreeMap<(String, u32), Vec<&Vec<String>>> = BTreeMap::new();
        let mut order: Vec<(String, u32)> = Vec::new();
        if let Some(t) = reps {
            for r in &t.rows {
                let k = key(t, r)?;
                if !by_key.contains_key(&k) {
                    order.push(k.clone());
                }
                by_key.entry(k).or_default().push(r);
            }
        }
        let primary =
            summary.or(reps).ok_or_else(|| Error::Usage("nothing to export: no summary or repetitions".into()))?;
        if let Some(s) = summary {
            order.clear();
            for r in &s.rows {
                order.push(key(s, r)?);
            }
        }
        let mut events: HashMap<String, HashMap<u32, Vec<f64>>> = HashMap::new();
        let mut rows = Vec::new();
        for (i, k) in order.iter().enumerate() {
            let rep_rows = by_key.get(k).cloned().unwrap_or_default();
            let moms: Vec<f64> = match reps {
                Some(t) => rep_rows
                    .iter()
                    .map(|r| num(t, r, "mom_ns", NO_MOM))
                    .collect::<Result<Vec<_>, _>>()?
                    .into_iter()
                    .filter(|v| v.is_finite())
                    .collect(),
                None => Vec::new(),
            };
            // The pooled values: summary.csv's row, else the median over repetitions.
            let (latency_value, p50, p99, p90, kept, discarded, counters);
            if let Some(s) = summary {
                let r = &s.rows[i];
                latency_value = num(s, r, "mom_ns", NO_MOM)?;
                p50 = num(s, r, "p50_ns", "")?;
                p90 = num(s, r, "p90_ns", "")?;
                p99 = num(s, r, "p99_ns", "")?;
                kept = num(s, r, "kept", "")?;
                discarded = num(s, r, "discarded", "")?;
                let mut c = Vec::new();
                for col in counter_columns(s) {
                    let v = num(s, r, &col, "")?;
                    // An empty cell: that counter was not measured for this row; left out.
                    if v.is_finite() {
                        c.push((col.trim_end_matches("_mean").to_string(), v));
                    }
                }
                counters = c;
            } else {
                let t = primary;
                let med = |col: &str, what: &str| -> Result<f64, Error> {
                    let v: Vec<f64> = rep_rows
                        .iter()
                        .map(|r| num(t, r, col, what))
                        .collect::<Result<Vec<_>, _>>()?
                        .into_iter()
                        .filter(|v| v.is_finite())
                        .collect();
                    Ok(if v.is_empty() { f64::NAN } else { stats::median(&v) })
                };
                let sum = |col: &str| -> Result<f64, Error> {
                    rep_rows.iter().map(|r| num(t, r, col, "")).sum::<Result<f64, Error>>()
                };
                latency_value = med("mom_ns", NO_MOM)?;
                p50 = med("p50_ns", "")?;
                p90 = med("p90_ns", "")?;
                p99 = med("p99_ns", "")?;
                kept = sum("kept")?;
                discarded = sum("discarded")?;
                let mut c = Vec::new();
                for col in counter_columns(t) {
                    let v = med(&col, "")?;
                    if v.is_finite() {
                        c.push((col.trim_end_matches("_mean").to_string(), v));
                    }
                }
                counters = c;
            }
            if !latency_value.is_finite() {
                return Err(Error::Data {
                    path: primary.path.display().to_string(),
                    why: format!("{} x {} threads has no mom_ns value", k.0, k.1),
                });
            }

            let meta_of = tracers.iter().position(|t| t.name == k.0);
            let (latency, interval) = if moms.len() > 1 {
                let (_, lo, hi) = bootstrap::one_sample_ci(&moms, stats::median, CONFIDENCE, RESAMPLES, SEED);
                (
                    contain(latency_value, lo, hi),
                    Interval::Bootstrap { repetitions: moms.len(), confidence: CONFIDENCE },
                )
            } else {
                let tdir = meta_of.map(|m| tracers[m].dir.clone()).unwrap_or_else(|| crate::results::dir_name(&k.0));
                let p10 = match dir {
                    Some(d) => {
                        if !events.contains_key(&tdir) {
                            events
                                .insert(tdir.clone(), read_latencies(&d.join(&tdir).join(crate::results::EVENTS_CSV))?);
                        }
                        events[&tdir].get(&k.1).map(|v| stats::percentile_sorted(v, 10.0))
                    }
                    None => None,
                };
                match p10 {
                    Some(p10) if p90.is_finite() => {
                        (contain(latency_value, p10, p90), Interval::Calls { calls: kept as u64 })
                    }
                    _ => (Metric::point(latency_value), Interval::None),
                }
            };
            let total = kept + discarded;
            rows.push(Row {
                tracer: k.0.clone(),
                threads: k.1,
                latency,
                interval,
                p50,
                p99,
                discard_fraction: if total > 0.0 { discarded / total } else { f64::NAN },
                counters,
                tracer_version: meta_of
                    .and_then(|m| run_tracers.get(m))
                    .and_then(|t| t.get("version"))
                    .and_then(Value::as_str)
                    .map(String::from),
                config: meta_of.map(|m| tracers[m].config.clone()).unwrap_or(Value::Null),
            });
        }
        if rows.is_empty() {
            return Err(Error::Data {
                path: primary.path.display().to_string(),
                why: "no rows: the run measured nothing (did every cell fail?)".into(),
            });
        }
        Ok(Results { source: source.to_string(), meta, rows })
    }
}

/// The interval `[lo, hi]`, widened where needed to contain `value`: the pooled `mom_ns` (all
/// calls of all repetitions) is not the statistic bootstrapped (the median of per-repetition
/// values), and a skewed distribution can put a mean-like value above p90, so it can fall just
/// outside; Bencher and github-action-benchmark read an interval as containing its value.
pub(super) fn contain(value: f64, lo: f64, hi: f64) -> Metric {
    Metric { value, lower: Some(lo.min(value)), upper: Some(hi.max(value)) }
}

/// The latencies of an events.csv by thread count, each sorted; an absent file gives none.
/// A report-side reading error, as a data error of the export (exit 2).
fn data(e: crate::results::read::ReadError) -> Error {
    Error::Usage(e.to_string())
}

fn read_latencies(path: &Path) -> Result<HashMap<u32, Vec<f64>>, Error> {
    let mut out: HashMap<u32, Vec<f64>> = HashMap::new();
    if !crate::results::events_file::exists(path) {
        return Ok(out);
    }
    let mut ev = crate::results::read::Events::open(path).map_err(data)?;
    let mut e = crate::results::read::Event::default();
    while ev.next_into(&mut e).map_err(data)? {
        out.entry(e.threads).or_default().push(e.latency);
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.total_cmp(b));
    }
    Ok(out)
}
