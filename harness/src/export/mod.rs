//! History in the systems users already run: `--export FORMAT=FILE` on `run`, `scale`
//! and `gate`, and `tracebench export DIR --format FORMAT`.
//!
//! tracebench keeps no history of its own. A continuous-benchmarking service (Bencher,
//! github-action-benchmark) stores one point per commit and machine; this module turns a results
//! directory into the JSON those services read. Each format is one [`Exporter`] in its own file
//! (as hyperfine keeps its exporters); what they share is the model of a results directory
//! ([`Results`], [`Row`]) and the benchmark names ([`benchmarks`]).
//!
//! The numbers are re-read from the files (summary.csv, repetitions.csv, run.json and, for the
//! p10 of a single repetition, events.csv), never from the runner's memory, so that
//! `tracebench export DIR` and `run --export` write the same bytes for the same directory.
pub mod bmf;
pub mod github_benchmark;
mod model;

pub use model::{Interval, Metric, Results, Row, RunMeta};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Error;

/// Confidence of the `latency` interval when there are several repetitions. The gate judges at
/// 99% by default; a history point is a description, not a decision, so the usual 95%.
pub const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples and seed: fixed, so that exporting one directory twice gives one file.
const RESAMPLES: usize = 10_000;
const SEED: u64 = 0x6578_706f_7274;

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Bencher Metric Format: `{benchmark: {measure: {value, lower_value, upper_value}}}`.
    Bmf,
    /// github-action-benchmark's `customSmallerIsBetter`: `[{name, unit, value, range, extra}]`.
    GithubBenchmark,
}

impl Format {
    pub const ALL: [Format; 2] = [Format::Bmf, Format::GithubBenchmark];

    pub fn name(self) -> &'static str {
        match self {
            Format::Bmf => "bmf",
            Format::GithubBenchmark => "github-benchmark",
        }
    }

    pub fn parse(s: &str) -> Result<Format, Error> {
        Format::ALL.into_iter().find(|f| f.name() == s.trim()).ok_or_else(|| {
            Error::Usage(format!(
                "unknown export format '{s}': use bmf (Bencher) or github-benchmark (github-action-benchmark)"
            ))
        })
    }

    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Bmf => Box::new(bmf::Bmf),
            Format::GithubBenchmark => Box::new(github_benchmark::GithubBenchmark),
        }
    }
}

/// One format: renders the benchmarks of one export as the file's text.
pub trait Exporter {
    fn format(&self) -> Format;
    fn render(&self, benches: &[Benchmark]) -> Result<String, Error>;
}

/// One `--export FORMAT=FILE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSpec {
    pub format: Format,
    pub path: PathBuf,
}

impl ExportSpec {
    /// Parses `FORMAT=FILE`.
    pub fn parse(s: &str) -> Result<ExportSpec, Error> {
        let Some((f, file)) = s.split_once('=') else {
            return Err(Error::Usage(format!(
                "--export {s}: give the file too, as FORMAT=FILE (e.g. --export {}=bench.json)",
                if s.trim().is_empty() { "bmf" } else { s.trim() }
            )));
        };
        let format = Format::parse(f)?;
        if file.trim().is_empty() {
            return Err(Error::Usage(format!(
                "--export {s}: the file is empty; give one, e.g. --export {f}=bench.json"
            )));
        }
        Ok(ExportSpec { format, path: PathBuf::from(file) })
    }
}

/// Parses every `--export` value and checks that each file can be written (its directory exists)
/// and that no two write one file, so that bad input fails before any measurement.
pub fn parse_specs(values: &[String]) -> Result<Vec<ExportSpec>, Error> {
    let mut out: Vec<ExportSpec> = Vec::new();
    for v in values {
        let s = ExportSpec::parse(v)?;
        let parent = match s.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(Error::Usage(format!(
                "--export {v}: directory {} does not exist; create it or write the file elsewhere",
                parent.display()
            )));
        }
        if s.path.is_dir() {
            return Err(Error::Usage(format!("--export {v}: {} is a directory; give a file name", s.path.display())));
        }
        if out.iter().any(|o| o.path == s.path) {
            return Err(Error::Usage(format!("--export {v}: {} is given twice", s.path.display())));
        }
        out.push(s);
    }
    Ok(out)
}

/// The gate's verdict on one row, carried as metadata of the candidate's values.
#[derive(Debug, Clone, PartialEq)]
pub struct GateNote {
    pub verdict: String,
    /// `candidate / baseline - 1`.
    pub change: f64,
    pub ci: Option<(f64, f64)>,
    pub confidence: f64,
    pub metric: String,
    pub estimator: String,
    pub baseline: String,
}

impl GateNote {
    pub fn describe(&self) -> String {
        let pct = |x: f64| format!("{:+.1}%", x * 100.0);
        let ci = match self.ci {
            Some((lo, hi)) => format!(" [{}, {}] at {:.0}%", pct(lo), pct(hi), self.confidence * 100.0),
            None => String::new(),
        };
        format!(
            "{} (change {}{ci}; {}, {}) vs {}",
            self.verdict,
            pct(self.change),
            self.metric,
            self.estimator,
            self.baseline
        )
    }
}

/// One benchmark of an export: a row, its stable name, and the metadata that goes with it.
#[derive(Debug, Clone)]
pub struct Benchmark {
    pub name: String,
    pub row: Row,
    pub meta: RunMeta,
    pub gate: Option<GateNote>,
}

/// One results directory of an export, with the benchmark-name suffix of a sweep (`knob=value`).
#[derive(Debug, Clone)]
pub struct Source {
    pub results: Results,
    pub suffix: Option<String>,
}

/// Configuration keys that tell two rows of one tracer apart when their names would collide
/// (run.json `tracers[].config`, searched at any depth), after the mode (`run`, `scale`,
/// `kernel`) and the timing clock.
const KNOBS: [&str; 9] = [
    "trace_clock",
    "probe_site",
    "subbuf_size",
    "num_subbuf",
    "buffer_size_kb",
    "session_mode",
    "runtime",
    "otf_buffer_size",
    "otf2_chunk_size",
];

fn find_scalar<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(key).filter(|x| !x.is_object() && !x.is_array() && !x.is_null()) {
                return Some(x);
            }
            m.values().find_map(|x| find_scalar(x, key))
        }
        _ => None,
    }
}

fn knob_values(b: &Benchmark) -> Vec<(&'static str, Option<String>)> {
    let mut out = vec![("mode", b.meta.mode.clone()), ("clock", b.meta.clock.clone())];
    for k in KNOBS {
        let v = find_scalar(&b.row.config, k).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        out.push((k, v));
    }
    out
}

/// A name segment: `/` would split the hierarchy, and whitespace reads badly in a chart title.
fn segment(s: &str) -> String {
    s.chars().map(|c| if c == '/' || c.is_whitespace() { '_' } else { c }).collect()
}

/// The benchmarks of an export, named `tracebench/<tracer>/threads=<n>[/<suffix>]`; where two
/// rows would share a name, the configuration values that differ between them are appended
/// (`/trace_clock=global`); rows that still collide are an error.
pub fn benchmarks(sources: &[Source], gate: &HashMap<(String, u32), GateNote>) -> Result<Vec<Benchmark>, Error> {
    let mut out: Vec<(Benchmark, &str)> = Vec::new();
    for s in sources {
        for r in &s.results.rows {
            let mut name = format!("tracebench/{}/threads={}", segment(&r.tracer), r.threads);
            if let Some(x) = &s.suffix {
                name.push('/');
                name.push_str(x);
            }
            out.push((
                Benchmark {
                    name,
                    row: r.clone(),
                    meta: s.results.meta.clone(),
                    gate: gate.get(&(r.tracer.clone(), r.threads)).cloned(),
                },
                &s.results.source,
            ));
        }
    }
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (b, _)) in out.iter().enumerate() {
        groups.entry(b.name.clone()).or_default().push(i);
    }
    for idx in groups.values().filter(|g| g.len() > 1) {
        let vals: Vec<_> = idx.iter().map(|&i| knob_values(&out[i].0)).collect();
        for (k, (knob, _)) in vals[0].iter().enumerate() {
            if vals.iter().any(|v| v[k].1 != vals[0][k].1) {
                for (j, &i) in idx.iter().enumerate() {
                    let v = vals[j][k].1.as_deref().unwrap_or("none");
                    out[i].0.name.push_str(&format!("/{knob}={}", segment(v)));
                }
            }
        }
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (b, src) in &out {
        if let Some(first) = seen.insert(&b.name, src) {
            return Err(Error::Usage(format!(
                "two rows would both be named '{}' (from {first} and {src}) and their configurations do not tell \
                 them apart; export them separately",
                b.name
            )));
        }
    }
    Ok(out.into_iter().map(|(b, _)| b).collect())
}

/// Renders `benches` in every format asked for and writes each file atomically.
pub fn write(specs: &[ExportSpec], benches: &[Benchmark]) -> Result<(), Error> {
    for s in specs {
        let text = s.format.exporter().render(benches)?;
        crate::results::write_atomic(&s.path, text.as_bytes())?;
    }
    Ok(())
}

/// The `--export` files after a run (or a sweep's runs), unless it was interrupted (its rows may
/// lack repetitions) or measured nothing: then one line says why none was written.
pub fn export_run(
    specs: &[ExportSpec],
    dirs: &[(&Path, Option<String>)],
    interrupted: bool,
    nothing_measured: bool,
) -> Result<(), Error> {
    if specs.is_empty() {
        return Ok(());
    }
    if interrupted {
        eprintln!("tracebench: interrupted, so the --export files were not written (the rows may lack repetitions)");
    } else if nothing_measured {
        eprintln!("tracebench: no row was measured, so the --export files were not written");
    } else {
        export_dirs(specs, dirs)?;
    }
    Ok(())
}

/// Exports results directories: the entry point of `run --export`, `scale --export` and a sweep
/// (one directory per knob value, each with its `knob=value` suffix).
pub fn export_dirs(specs: &[ExportSpec], dirs: &[(&Path, Option<String>)]) -> Result<(), Error> {
    if specs.is_empty() {
        return Ok(());
    }
    let sources = dirs
        .iter()
        .map(|(d, suffix)| Ok(Source { results: Results::open(d)?, suffix: suffix.clone() }))
        .collect::<Result<Vec<_>, Error>>()?;
    write(specs, &benchmarks(&sources, &HashMap::new())?)
}

/// `tracebench export DIR... --format FORMAT [--out FILE]`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExportArgs {
    /// Results directories (several are merged into one file).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// bmf (Bencher Metric Format) or github-benchmark (github-action-benchmark's customSmallerIsBetter).
    #[arg(long, short = 'f', value_name = "FORMAT")]
    pub format: String,
    /// Write here (atomically) instead of to stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: &ExportArgs) -> Result<i32, Error> {
    let format = Format::parse(&args.format)?;
    let spec = match &args.out {
        Some(p) => parse_specs(&[format!("{}={}", format.name(), p.display())])?.pop(),
        None => None,
    };
    let mut sources = Vec::new();
    for d in &args.dirs {
        for (dir, suffix) in sweep_dirs(d)? {
            sources.push(Source { results: Results::open(&dir)?, suffix });
        }
    }
    let benches = benchmarks(&sources, &HashMap::new())?;
    match spec {
        Some(s) => write(&[s], &benches)?,
        None => print!("{}", format.exporter().render(&benches)?),
    }
    Ok(0)
}

/// A results directory with its benchmark-name suffix, as `sweep --export` names its rows: a
/// sweep's directory (it holds sweep.csv) is each of its `KNOB=VALUE/` directories in the sweep's
/// order, suffixed `KNOB=VALUE`; one such directory alone keeps its suffix too; any other
/// directory is itself, with none. `threads=N` is in every name already, so it adds none.
fn sweep_dirs(d: &Path) -> Result<Vec<(PathBuf, Option<String>)>, Error> {
    use crate::results::{dir_name, table::Table, SWEEP_CSV};
    let suffix = |knob: &str, v: &str| (knob != "threads").then(|| format!("{knob}={v}"));
    if d.join(SWEEP_CSV).is_file() {
        let t = Table::read(&d.join(SWEEP_CSV))?;
        let (Some(cp), Some(cv)) = (t.col("param"), t.col("value")) else {
            return Err(Error::Data {
                path: d.join(SWEEP_CSV).display().to_string(),
                why: "no param or value column; pass the --out directory of a `tracebench sweep`".into(),
            });
        };
        let mut out: Vec<(PathBuf, Option<String>)> = Vec::new();
        for r in &t.rows {
            let dir = d.join(format!("{}={}", r[cp], dir_name(&r[cv])));
            if !out.iter().any(|o| o.0 == dir) {
                out.push((dir, suffix(&r[cp], &r[cv])));
            }
        }
        return Ok(out);
    }
    let name = d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let in_sweep = d.parent().is_some_and(|p| p.join(SWEEP_CSV).is_file());
    Ok(vec![(d.to_path_buf(), name.split_once('=').filter(|_| in_sweep).and_then(|(k, v)| suffix(k, v)))])
}

#[cfg(test)]
mod tests;
