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
pub use interleave::plain_words;
mod render;
pub mod verdict;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;
use thiserror::Error;

use crate::results;
use crate::results::columns;
use input::Results;
use verdict::{Config, Estimator, Judgement, Verdict};

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

/// Parses "5%", "0.05" (a fraction below 1) into a fraction.
fn parse_fraction(s: &str, what: &str, example: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => match t.parse::<f64>() {
            Ok(v) if v < 1.0 => Ok(v),
            Ok(_) => {
                return Err(format!("{what} '{s}' is ambiguous: write it as a percentage ({example}%) or a fraction"))
            }
            Err(e) => Err(e),
        },
    }
    .map_err(|_| format!("{what} '{s}' is not a number: write it as e.g. {example}%"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{what} '{s}' must be a non-negative percentage, e.g. {example}%"));
    }
    Ok(v)
}

fn parse_threshold(s: &str) -> Result<f64, String> {
    parse_fraction(s, "threshold", "5")
}

fn parse_confidence(s: &str) -> Result<f64, String> {
    let v = parse_fraction(s, "confidence", "99")?;
    if v <= 0.5 || v >= 1.0 {
        return Err(format!("confidence '{s}' must lie between 50% and 100% (exclusive), e.g. 99%"));
    }
    Ok(v)
}

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Exit status: 0 pass, 1 a regression (or an inconclusive row with --strict), 2 usage or \
                        data error.\nMethod and examples: the user guide, docs/ci-gate.md.")]
pub struct GateArgs {
    /// Checks a side's command line before anything runs (the CLI's `precheck_gate_command`, which
    /// knows tracebench's own options); `Err` is the one line to print.
    #[arg(skip)]
    pub precheck: Option<fn(&str, &str) -> Result<(), String>>,
    /// What an interleaved gate holds for all its runs (the CLI's `gate_hold`: each tracer's
    /// parent-side guard, e.g. LTTng's session daemon), so that every run does not start and stop
    /// it again: each start and stop costs tens of ms of wall time.
    #[arg(skip)]
    pub hold: Option<fn(&str) -> Vec<Box<dyn std::any::Any + Send>>>,
    /// Baseline results directory (the --out of `tracebench run --repeats K`).
    #[arg(long, value_name = "DIR", required_unless_present = "interleave", conflicts_with = "interleave")]
    pub baseline: Option<PathBuf>,
    /// Candidate results directory.
    #[arg(long, value_name = "DIR", required_unless_present = "interleave", conflicts_with = "interleave")]
    pub candidate: Option<PathBuf>,
    /// Smallest relative change that matters: "regressed" needs the whole confidence interval above it.
    /// Not applied to exact counts (`--instructions singlestep`): see --count-threshold.
    #[arg(long, default_value = "5%", value_parser = parse_threshold)]
    pub threshold: f64,
    /// Exact counts only (user_instructions of `run --instructions singlestep`): how many
    /// instructions per call a change may add or remove and still be "unchanged". Default 0: any
    /// increase, one instruction included, fails.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub count_threshold: u64,
    /// Confidence level of the bootstrap interval.
    #[arg(long, default_value = "99%", value_parser = parse_confidence)]
    pub confidence: f64,
    /// Fail (exit 1) on an inconclusive row too.
    #[arg(long)]
    pub strict: bool,
    /// Per-repetition column to compare. auto: instructions_mean when both sides counted
    /// instructions with a PMU; user_instructions for `run --instructions singlestep` results
    /// (exact counts); else mom_ns (median of block means, which a stall the detector cannot see
    /// does not move) when both sides have it, else mean_ns. Or any numeric column of
    /// repetitions.csv (p50_ns, cycles_mean...).
    #[arg(long, default_value = "auto", value_name = "COLUMN")]
    pub metric: String,
    /// How the per-repetition values of the two sides are compared.
    #[arg(long, value_enum, default_value_t = Estimator::HodgesLehmann)]
    pub estimator: Estimator,
    /// Compare repetition i of each side with each other (median of per-pair ratios). On by
    /// default with --interleave, where the two runs of a pair ran back to back; give it to
    /// re-judge the merged OUT/baseline and OUT/candidate of an interleaved gate.
    #[arg(long, conflicts_with = "unpaired")]
    pub paired: bool,
    /// Compare the two sides as independent samples even with --interleave.
    #[arg(long)]
    pub unpaired: bool,
    /// Fewer repetitions per side than this give "inconclusive" without an interval.
    #[arg(long, default_value_t = 5, value_name = "K", value_parser = clap::value_parser!(u64).range(2..))]
    pub min_repeats: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..=10_000_000))]
    pub resamples: u64,
    /// Seed of the bootstrap: a fixed seed makes a verdict reproducible from the files alone.
    #[arg(long, default_value_t = 0x7472_6163_6562_6e63)]
    pub seed: u64,
    /// Also write the verdicts as markdown (for a PR comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the verdicts as JUnit XML (one test case per tracer x threads).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the verdicts as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run both sides here, alternately in ABBA order, instead of reading two directories.
    #[arg(long, requires_all = ["baseline_cmd", "candidate_cmd"])]
    pub interleave: bool,
    /// Baseline command for --interleave: run as `sh -c 'CMD "$@"' -- --repeats 1 --out DIR`
    /// (so `tracebench run --tracer X --label NAME ...`, or anything that writes a results dir).
    #[arg(long, value_name = "CMD", requires = "interleave")]
    pub baseline_cmd: Option<String>,
    /// Candidate command for --interleave (invoked like --baseline-cmd).
    #[arg(long, value_name = "CMD", requires = "interleave")]
    pub candidate_cmd: Option<String>,
    /// Repetitions per side for --interleave.
    #[arg(long, default_value_t = 16, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub repeats: u64,
    /// With --interleave: while a row is inconclusive after K pairs, run K more (up to M per
    /// side) and judge again. With L = ceil(M/K) looks, each interval is computed at confidence
    /// 1 - (1 - C)/L (Bonferroni), so that the chance of a wrong "regressed" over all looks stays
    /// within the --confidence asked.
    #[arg(long, value_name = "M", requires = "interleave", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub max_repeats: Option<u64>,
    /// Keep the interleaved runs in DIR (DIR/A-<i>, DIR/B-<i>, merged DIR/baseline and
    /// DIR/candidate) instead of a temporary directory.
    #[arg(long, short = 'o', value_name = "DIR", requires = "interleave")]
    pub out: Option<PathBuf>,
    /// Also write the candidate's values, with each row's verdict, for a benchmark-history
    /// service: FORMAT=FILE with FORMAT bmf or github-benchmark; repeatable.
    #[arg(long, value_name = "FORMAT=FILE")]
    pub export: Vec<String>,
}

/// One judged row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
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
    pub estimator: Estimator,
    pub paired: bool,
    pub threshold: f64,
    /// `--count-threshold`: instructions per call an exact count may move and stay unchanged.
    pub count_threshold: u64,
    pub confidence: f64,
    pub strict: bool,
    pub rows: Vec<Row>,
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
        estimator: args.estimator,
        resamples: args.resamples as usize,
        seed: args.seed,
        paired: (args.paired || interleaved) && !args.unpaired,
        min_repetitions: args.min_repeats as usize,
    };
    let mut rows = Vec::new();
    for (tracer, threads) in base.keys() {
        let b = base.values(&tracer, threads, &metric)?;
        let c = cand.values(&tracer, threads, &metric)?;
        // Exact counts (a stepped run's main path): any change is a verdict.
        let exact = (metric == crate::results::columns::USER_INSTRUCTIONS)
            .then(|| verdict::judge_exact(&b, &c, args.count_threshold as f64));
        let judgement = match exact {
            Some(Some(j)) => functions::named(j, &base.dir, &cand.dir, &tracer),
            // Counts that should be exact but are not: said, then judged statistically.
            Some(None) => {
                let mut j = verdict::judge(&b, &c, &cfg);
                j.why = format!("{}: {}", verdict::not_exact(&b, &c), j.why);
                j
            }
            None => modes::annotate(verdict::judge(&b, &c, &cfg), &b, &c, cfg.threshold),
        };
        rows.push(Row { tracer, threads, metric: metric.clone(), judgement, baseline_values: b, candidate_values: c });
    }
    if rows.is_empty() {
        return Err(GateError::Csv {
            path: base.table.path.clone(),
            why: "no rows: the run measured nothing (did every cell fail?)".into(),
        });
    }
    let regressed = rows.iter().any(|r| r.judgement.verdict == Verdict::Regressed);
    let inconclusive = rows.iter().any(|r| r.judgement.verdict == Verdict::Inconclusive);
    let pass = !regressed && !(args.strict && inconclusive);
    Ok(Report {
        baseline: base.dir.display().to_string(),
        candidate: cand.dir.display().to_string(),
        interleaved,
        metric,
        estimator: args.estimator,
        paired: cfg.paired,
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
        let open = report.rows.iter().filter(|r| r.judgement.verdict == Verdict::Inconclusive).count();
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
                estimator: report.estimator.name().to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions() {
        assert_eq!(parse_threshold("5%").unwrap(), 0.05);
        assert_eq!(parse_threshold("0.05").unwrap(), 0.05);
        assert!(parse_threshold("5").unwrap_err().contains("ambiguous"));
        assert!(parse_threshold("x%").is_err());
        assert!(parse_threshold("-1%").is_err());
        assert!((parse_confidence("99%").unwrap() - 0.99).abs() < 1e-12);
        assert!(parse_confidence("100%").is_err());
        assert!(parse_confidence("40%").is_err());
    }
}
