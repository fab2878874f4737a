//! The gate's command line: what CI passes and how the threshold and confidence are read.
use std::path::PathBuf;

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
    /// Confidence level of the interval (two-sided).
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
    /// Judge each tracer's own cost: the change and the threshold are relative to the tracer's
    /// value minus the baseline's `none` row (same repetition and thread count), not to its raw
    /// value, which includes the harness's own call. Needs `none` among the baseline's tracers.
    #[arg(long)]
    pub net: bool,
    /// Compare repetition i of each side with each other (median of per-pair differences). On by
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
