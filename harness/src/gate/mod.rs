//! `tracebench gate`: the CI regression gate.
//!
//! It compares a baseline and a candidate, per tracer and thread count, on per-repetition
//! statistics only (see `verdict` for the method and the README for the user-facing text), and
//! exits 0 (pass), 1 (a regression, or an inconclusive row under `--strict`) or 2 (usage or data
//! error). Input is either two results directories or, with `--interleave`, two commands that
//! the gate runs itself in ABBA order (`interleave`).
mod functions;
pub mod input;
mod interleave;
mod modes;
mod paths;
pub use interleave::plain_words;
mod args;
pub use args::GateArgs;
mod render;
pub mod verdict;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;
use thiserror::Error;

use crate::results;
use crate::results::columns;
use input::Results;

/// The row whose cost is the harness's own call: `--net` subtracts it.
const FLOOR: &str = "none";
use verdict::{ChangeVerdict, Config, Judgement};

#[derive(Debug, Error)]
pub enum GateError {
    #[error("{dir}: not a results directory: {why}")]
    NotAResultsDir { dir: PathBuf, why: String },
    #[error("{path}: {why}")]
    Csv { path: PathBuf, why: String },
    #[error("baseline and candidate do not match: {0}")]
    Mismatch(String),
    #[error("{0}")]
    Usage(String),
    #[error("{side} command (repetition {repetition}) failed: {why}; log: {log}")]
    Command { side: &'static str, repetition: usize, why: String, log: PathBuf },
    #[error("interrupted by a signal; the interleaved runs were stopped")]
    Interrupted,
    /// A side's run was interrupted (run.json): its rows lack repetitions or thread counts.
    #[error("{dir}: {line}")]
    InterruptedRun { dir: PathBuf, line: String },
    /// Any other error met while gating (reading files, writing outputs): still a data or usage
    /// error as far as CI is concerned, so it exits 2, not 1.
    #[error("{0}")]
    Other(String),
}

impl From<crate::error::Error> for GateError {
    fn from(e: crate::error::Error) -> Self {
        GateError::Other(e.to_string())
    }
}

/// The gate reserves 1 for "a regression": all its errors are usage or data errors.
impl crate::error::ExitCode for GateError {
    fn exit_code(&self) -> i32 {
        2
    }
}

/// One judged row.
#[derive(Debug, Clone, Serialize)]
pub struct JudgedRow {
    pub tracer: String,
    pub threads: u32,
    pub metric: String,
    #[serde(flatten)]
    pub judgement: Judgement,
    /// The per-repetition values judged, as (repetition, value), so that the JSON alone can be
    /// re-analysed.
    pub baseline_values: Vec<(u64, f64)>,
    pub candidate_values: Vec<(u64, f64)>,
}

/// Everything the renderers need.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub baseline: String,
    pub candidate: String,
    pub interleaved: bool,
    pub metric: String,
    /// How the two sides' values were compared, in words (the median of paired differences with
    /// the sign test's interval, or the Hodges-Lehmann shift with the Mann-Whitney interval).
    pub estimator: String,
    pub paired: bool,
    /// Changes are relative to each tracer's cost net of the baseline's `none` row (`--net`).
    pub net: bool,
    pub threshold: f64,
    /// `--count-threshold`: instructions per call an exact count may move and stay unchanged.
    pub count_threshold: u64,
    pub confidence: f64,
    pub strict: bool,
    pub rows: Vec<JudgedRow>,
    pub pass: bool,
    pub exit_code: i32,
    /// Set when --max-repeats let the gate add repetitions (see `GateArgs::max_repeats`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<Sequential>,
}

/// How a sequential (--max-repeats) gate went.
#[derive(Debug, Clone, Serialize)]
pub struct Sequential {
    /// Looks planned (L) and taken.
    pub looks_planned: usize,
    pub looks_taken: usize,
    pub repeats: usize,
    pub max_repeats: usize,
    /// The confidence asked for over all looks; `Report::confidence` is each look's.
    pub overall_confidence: f64,
}

/// Checks that both sides measured the same things, and picks the metric column.
fn compatible(base: &Results, cand: &Results, metric: &str) -> Result<String, GateError> {
    let (cb, cc) = (base.table.counter_columns(), cand.table.counter_columns());
    if cb != cc {
        let list = |s: &BTreeSet<String>| {
            if s.is_empty() {
                "none".to_string()
            } else {
                s.iter().map(|c| c.trim_end_matches("_mean")).collect::<Vec<_>>().join(",")
            }
        };
        return Err(GateError::Mismatch(format!(
            "counters differ (baseline: {}, candidate: {}); run both sides with the same --counters on machines \
             with the same PMU",
            list(&cb),
            list(&cc)
        )));
    }
    let (kb, kc) = (base.keys(), cand.keys());
    let show = |k: &(String, u32)| format!("{}, {} thread(s)", k.0, k.1);
    if let Some(k) = kb
        .iter()
        .find(|k| !kc.contains(k))
        .map(|k| (k, "baseline"))
        .or_else(|| kc.iter().find(|k| !kb.contains(k)).map(|k| (k, "candidate")))
    {
        return Err(GateError::Mismatch(format!(
            "{} is in the {} only; rows are matched by tracer name and thread count, so run both sides with the \
             same --threads and give two specs one name with `tracebench run --tracer SPEC --label NAME`",
            show(k.0),
            k.1
        )));
    }
    let m = if metric == "auto" {
        // Instruction counts are nearly deterministic where a PMU exists, so they are the
        // primary metric then; time otherwise: the median of block means, which a stall the
        // detector cannot see (the host descheduling the vCPU) does not move
        // (`stats::median_of_means`), or the mean for results written before it existed.
        if cb.contains("instructions_mean") {
            "instructions_mean"
        } else if base.table.col(crate::results::columns::USER_INSTRUCTIONS).is_some() {
            // A stepped run: exact counts, no timing.
            crate::results::columns::USER_INSTRUCTIONS
        } else if base.table.col(columns::MOM).is_some() && cand.table.col(columns::MOM).is_some() {
            columns::MOM
        } else {
            columns::MEAN
        }
    } else {
        metric
    };
    for r in [base, cand] {
        if r.table.col(m).is_none() {
            return Err(GateError::Usage(format!(
                "--metric {m}: {} has no such column (columns: {})",
                r.table.path.display(),
                r.table.header.join(",")
            )));
        }
    }
    Ok(m.to_string())
}

/// Judges every (tracer, threads) row; pure given the two tables.
pub fn evaluate(base: &Results, cand: &Results, args: &GateArgs, interleaved: bool) -> Result<Report, GateError> {
    let metric = compatible(base, cand, &args.metric)?;
    let cfg = Config {
        threshold: args.threshold,
        confidence: args.confidence,
        paired: (args.paired || interleaved) && !args.unpaired,
        min_repetitions: args.min_repeats as usize,
    };
    let exact_metric = metric == crate::results::columns::USER_INSTRUCTIONS;
    if args.net && exact_metric {
        return Err(GateError::Usage(
            "--net judges a time net of the none row; exact instruction counts (user_instructions) have no floor to \
             subtract: drop --net"
                .into(),
        ));
    }
    let mut rows = Vec::new();
    for (tracer, threads) in base.keys() {
        if args.net && tracer == FLOOR {
            continue;
        }
        let b = base.values(&tracer, threads, &metric)?;
        let c = cand.values(&tracer, threads, &metric)?;
        let floor = if args.net {
            if !base.keys().contains(&(FLOOR.to_string(), threads)) {
                return Err(GateError::Usage(format!(
                    "--net needs a `none` row at {threads} thread(s) in the baseline ({}): add none to its --tracer \
                     list, or drop --net",
                    base.dir.display()
                )));
            }
            Some(base.values(FLOOR, threads, &metric)?)
        } else {
            None
        };
        // Exact counts (a stepped run's main path): any change is a verdict.
        let exact = exact_metric.then(|| verdict::judge_exact(&b, &c, args.count_threshold as f64));
        let judgement = match exact {
            Some(Some(j)) => {
                let j = functions::named(j, &base.dir, &cand.dir, &tracer);
                every_path(j, base, cand, &tracer, args.count_threshold as f64)
            }
            // Counts that should be exact but are not: said, then judged statistically.
            Some(None) => {
                let mut j = verdict::judge(&b, &c, None, &cfg);
                j.why = format!("{}: {}", verdict::not_exact(&b, &c), j.why);
                j
            }
            None => modes::annotate(verdict::judge(&b, &c, floor.as_deref(), &cfg), &b, &c, cfg.threshold),
        };
        rows.push(JudgedRow {
            tracer,
            threads,
            metric: metric.clone(),
            judgement,
            baseline_values: b,
            candidate_values: c,
        });
    }
    if rows.is_empty() {
        return Err(GateError::Csv {
            path: base.table.path.clone(),
            why: "no rows: the run measured nothing (did every cell fail?)".into(),
        });
    }
    let regressed = rows.iter().any(|r| r.judgement.verdict == ChangeVerdict::Regressed);
    let inconclusive = rows.iter().any(|r| r.judgement.verdict == ChangeVerdict::Inconclusive);
    let pass = !regressed && !(args.strict && inconclusive);
    Ok(Report {
        baseline: base.dir.display().to_string(),
        candidate: cand.dir.display().to_string(),
        interleaved,
        metric,
        estimator: if cfg.paired {
            "median of the paired differences, sign-test interval".into()
        } else {
            "Hodges-Lehmann shift, Mann-Whitney interval".into()
        },
        paired: cfg.paired,
        net: args.net,
        threshold: args.threshold,
        count_threshold: args.count_threshold,
        confidence: args.confidence,
        strict: args.strict,
        rows,
        pass,
        exit_code: if pass { 0 } else { 1 },
        sequential: None,
    })
}

/// An exact main path that did not move: the rarer paths are compared too (`paths`), where both
/// sides kept their events.
fn every_path(mut j: Judgement, base: &Results, cand: &Results, tracer: &str, tolerance: f64) -> Judgement {
    if j.verdict != ChangeVerdict::Unchanged {
        return j;
    }
    let (Some(b), Some(c)) = (paths::read(&base.dir, tracer), paths::read(&cand.dir, tracer)) else {
        j.why = format!("{}; the rarer paths were not compared (a side has no stepped events.csv)", j.why);
        return j;
    };
    let (moved, per_call) = paths::moved(&b, &c);
    if moved.is_empty() {
        j.why = format!("{}; no other path's share moved ({} and {} calls)", j.why, b.calls, c.calls);
    } else if per_call.abs() > tolerance {
        j.verdict = if per_call > 0.0 { ChangeVerdict::Regressed } else { ChangeVerdict::Improved };
        j.why = format!("the main path is unchanged, but {}", paths::said(&moved, per_call));
    } else {
        j.why = format!("{}; {}, within --count-threshold {tolerance}", j.why, paths::said(&moved, per_call));
    }
    j
}

/// Runs the gate; returns the process exit code (0 pass, 1 fail, 130 interrupted). Every error
/// is a usage or data error as far as CI is concerned: it comes back as a `GateError`, which
/// the CLI prints in one line and exits 2.
pub fn run(args: &GateArgs) -> Result<i32, GateError> {
    match run_inner(args) {
        Ok(code) => Ok(code),
        Err(GateError::Interrupted) => {
            eprintln!("tracebench: gate interrupted; the interleaved runs were stopped");
            Ok(130)
        }
        Err(e) => Err(e),
    }
}

/// The interleaved gate, with its sequential extension: judge after K pairs and, while a row
/// is inconclusive, after every K more, up to --max-repeats.
fn interleaved(args: &GateArgs) -> Result<(Report, Results), GateError> {
    let k = args.repeats as usize;
    let max = args.max_repeats.map_or(k, |m| m as usize);
    if max < k {
        return Err(GateError::Usage(format!(
            "--max-repeats {max} is below --repeats {k}; give at least {k}, or leave it out"
        )));
    }
    let looks = max.div_ceil(k);
    // Bonferroni: each look may be wrong with probability (1 - C)/L.
    let per_look = GateArgs { confidence: 1.0 - (1.0 - args.confidence) / looks as f64, ..args.clone() };
    let mut il = interleave::Interleaved::start(args)?;
    let mut taken = 0;
    loop {
        il.extend_to((il.done + k).min(max))?;
        taken += 1;
        let (a, b) = il.results();
        let report = evaluate(&a, &b, &per_look, true)?;
        let open = report.rows.iter().filter(|r| r.judgement.verdict == ChangeVerdict::Inconclusive).count();
        if open == 0 || il.done >= max {
            break;
        }
        eprintln!("gate: {open} row(s) inconclusive after {} pairs; running {} more", il.done, k.min(max - il.done));
    }
    let (a, b) = il.finish()?;
    let mut report = evaluate(&a, &b, &per_look, true)?;
    let candidate = b;
    if args.max_repeats.is_some() {
        report.sequential = Some(Sequential {
            looks_planned: looks,
            looks_taken: taken,
            repeats: k,
            max_repeats: max,
            overall_confidence: args.confidence,
        });
    }
    Ok((report, candidate))
}

/// The gate's export: the candidate's values, each row with its verdict. The candidate is a
/// results directory, or (an interleaved gate without --out) the merged table in memory.
fn export(specs: &[crate::export::ExportSpec], cand: &Results, report: &Report) -> Result<(), GateError> {
    if specs.is_empty() {
        return Ok(());
    }
    let results = if cand.dir.is_dir() {
        crate::export::Results::open(&cand.dir)?
    } else {
        let (summary, reps) = if cand.from_summary { (Some(&cand.table), None) } else { (None, Some(&cand.table)) };
        crate::export::Results::from_tables(&cand.dir.display().to_string(), summary, reps, None, None)?
    };
    let notes = report
        .rows
        .iter()
        .map(|r| {
            let j = &r.judgement;
            let note = crate::export::GateNote {
                verdict: j.verdict.as_str().to_string(),
                change: j.change,
                ci: j.ci,
                confidence: report.confidence,
                metric: r.metric.clone(),
                estimator: report.estimator.clone(),
                baseline: report.baseline.clone(),
            };
            ((r.tracer.clone(), r.threads), note)
        })
        .collect();
    crate::export::write(
        specs,
        &crate::export::benchmarks(&[crate::export::Source { results, suffix: None }], &notes)?,
    )?;
    Ok(())
}

fn run_inner(args: &GateArgs) -> Result<i32, GateError> {
    // Checked before any run: a bad --export is a usage error, not a late surprise.
    let exports = crate::export::parse_specs(&args.export)?;
    let (report, candidate) = if args.interleave {
        interleaved(args)?
    } else {
        // clap guarantees both are present without --interleave.
        let (b, c) = (args.baseline.as_ref().unwrap(), args.candidate.as_ref().unwrap());
        let cand = Results::open(c)?;
        if !exports.is_empty() {
            crate::export::Results::open(c)?; // an unexportable candidate fails before the verdict
        }
        (evaluate(&Results::open(b)?, &cand, args, false)?, cand)
    };
    print!("{}", render::terminal(&report));
    if let Some(p) = &args.markdown {
        results::write_atomic(p, render::markdown(&report).as_bytes())?;
    }
    if let Some(p) = &args.junit {
        results::write_atomic(p, render::junit(&report).as_bytes())?;
    }
    if let Some(p) = &args.json {
        results::write_json(p, &report)?;
    }
    export(&exports, &candidate, &report)?;
    Ok(report.exit_code)
}
