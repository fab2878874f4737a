//! What the report's pages show, in report.json (`overview`, added in schema 1): per tracer row
//! its rank, its net cost above the floor with the interval across repetitions, p50 and p99, its
//! paths in short form, a table of its findings and its full sentences; the orderings the data
//! leave undecided; the survey check's verdicts. The terminal table (render/terminal.rs) and
//! report.html (render/mod.rs) render from this alone, read back from report.json, so
//! another tool sees exactly what a reader sees.
use serde::{Deserialize, Serialize};

use crate::report::findings::Report;
use crate::report::findings::{ranking, survey_check::SurveyVerdict, Finding, TracerFindings};
use crate::report::model::{FigureRef, TracerReport};
use crate::report::render::finding_rows::{finding_rows, FindingRow};
use crate::report::render::numbers::{percent, signed_duration};
use crate::report::render::path_line::{self, Markup};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overview {
    /// `none`'s mean latency (ns) at the fewest threads, the floor the net costs are above.
    pub floor_ns: Option<f64>,
    /// Rows in rank order (cheapest first), then `none`, then rows without a summary.
    pub tracers: Vec<OverviewRow>,
    pub undecided: Vec<UndecidedPair>,
    /// Every pair of ranked rows the comparison judged (findings/comparison.rs).
    #[serde(default)]
    pub pairs: Vec<crate::report::findings::comparison::PairJudged>,
    /// The ranking's sentences (report.md's "Which tracer costs least here").
    pub ranking: Vec<String>,
    pub survey: Vec<SurveySentence>,
    /// Blocked calls, missing events, an interrupted run: said before the table.
    pub notes: Vec<String>,
    /// Synthetic data or an interrupted run, said first on the page.
    pub banner: Option<String>,
    /// The run's facts (host, command, clock, ...) as (what, words).
    pub facts: Vec<(String, String)>,
    /// The tables of report.md and report.html (tables.rs).
    pub tables: Vec<crate::report::render::tables::Table>,
    /// The figures under figures/ (NAME.png and .svg).
    pub figures: Vec<FigureRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverviewRow {
    pub name: String,
    pub label: String,
    /// `#rrggbb`, the row's colour in every figure (plot/palette.rs).
    pub colour: String,
    /// 1 = cheapest; None for `none` (the floor) and rows without a summary.
    pub rank: Option<usize>,
    pub mean_ns: Option<f64>,
    /// Mean above the floor (the raw mean without a `none` row).
    pub net_ns: Option<f64>,
    /// Lowest and highest repetition's net cost, and the repetitions.
    pub net_interval: Option<(f64, f64, usize)>,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// Latency paths above the fast path, cheapest first.
    pub paths: Vec<PathShort>,
    pub findings: Vec<FindingRow>,
    /// The full sentences (the terminal's `--explain`, report.md's code paths).
    pub sentences: Vec<String>,
    /// The survey check's sentences about this row (also among `sentences`).
    pub survey: Vec<String>,
    /// Its latency folded on its main period (folded.rs; None without a periodic path).
    #[serde(default)]
    pub folded: Option<crate::report::render::folded::Folded>,
    /// What sets its p99: the calls above it by population, largest first (the
    /// TailSplit finding; empty without one).
    #[serde(default)]
    pub tail: Vec<TailShort>,
}

/// One population's share of a row's calls above p99, in short form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailShort {
    /// "path 810", "machine", "random path", "no path", "fast spread", ...
    pub who: String,
    pub share: f64,
    /// The full name the sentences use ("the path every 810").
    pub what: String,
}

impl TailShort {
    pub fn text(&self) -> String {
        format!("{:.0}% {}", 100.0 * self.share, self.who)
    }
}

/// A path in short form: `810 (+1.63 µs, 0.12%)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathShort {
    /// "810", "405.5", "~1630" (about every), "1/2000" (irregular), "51 folded" (one phase of
    /// the expected period slower than its neighbours, which the search over slow calls did not
    /// claim).
    pub every: String,
    pub extra_ns: f64,
    /// Calls on the path among all the calls analysed.
    pub share: f64,
}

impl PathShort {
    pub fn text(&self) -> String {
        format!("{} ({}, {})", self.every, signed_duration(self.extra_ns), percent(self.share))
    }
}

/// Two rows whose order the data leave open, and what would decide it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UndecidedPair {
    pub cheaper: String,
    pub costlier: String,
    pub why: String,
    /// `--repeats` that would decide it at the spread seen so far; None when the difference sits
    /// about on the margin (more rounds would not soon decide it).
    pub repeats_to_decide: Option<u32>,
}

/// One survey-check sentence with its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveySentence {
    pub verdict: String,
    pub tracers: Vec<String>,
    pub text: String,
}

/// The overview of `r`; the page's banner, facts and tables as render/mod.rs made them.
pub fn of(
    r: &Report,
    banner: Option<String>,
    facts: Vec<(String, String)>,
    tables: Vec<crate::report::render::tables::Table>,
) -> Overview {
    let rk = ranking::rank(r);
    let mut tracers = Vec::new();
    let find = |name: &str| r.findings.iter().find(|f| f.name == name);
    for (i, e) in rk.entries.iter().enumerate() {
        let mut row = row(r, e.tracer, find(&e.tracer.name));
        row.rank = Some(i + 1);
        row.net_ns = Some(e.cost);
        row.net_interval = e.spread;
        tracers.push(row);
    }
    for t in r.tracers.iter().filter(|t| !rk.entries.iter().any(|e| std::ptr::eq(e.tracer, *t))) {
        tracers.push(row(r, t, find(&t.name)));
    }
    let undecided = rk
        .undecided
        .iter()
        .map(|(a, b, why, rounds)| UndecidedPair {
            cheaper: a.clone(),
            costlier: b.clone(),
            why: why.clone(),
            repeats_to_decide: rounds.map(|n| n as u32),
        })
        .collect();
    let survey = r
        .survey_checks
        .iter()
        .map(|c| SurveySentence {
            verdict: verdict_word(c.verdict).into(),
            tracers: c.tracers.clone(),
            text: c.text.clone(),
        })
        .collect();
    // A machine the run's own checks found not fit is said before any decision taken on it.
    let unfit = (!rk.unfit.is_empty())
        .then(|| format!("machine not fit to measure ({}): every decision below was taken on it", rk.unfit.join("; ")));
    let notes = crate::results::read::interrupted_line(&r.run)
        .into_iter()
        .chain(unfit)
        .chain(r.notes.iter().cloned())
        .collect();
    Overview {
        floor_ns: rk.floor,
        tracers,
        undecided,
        pairs: rk.pairs.clone(),
        ranking: ranking::lines(&rk),
        survey,
        notes,
        banner,
        facts,
        tables,
        figures: r.figures.clone(),
    }
}

fn verdict_word(v: SurveyVerdict) -> &'static str {
    match v {
        SurveyVerdict::Agrees => "agrees",
        SurveyVerdict::AgreesInPart => "agrees in part",
        SurveyVerdict::Departs => "departs",
        SurveyVerdict::Undecided => "undecided",
        SurveyVerdict::NotCompared => "not compared",
        SurveyVerdict::Found => "found",
        SurveyVerdict::Mismatch => "mismatch",
        SurveyVerdict::Note => "note",
    }
}

fn row(r: &Report, t: &TracerReport, f: Option<&TracerFindings>) -> OverviewRow {
    let base = t.base();
    let latency = f.and_then(|f| f.metrics.iter().find(|m| m.metric == "latency"));
    let paths = latency.map(|m| paths(&m.findings, m.calls)).unwrap_or_default();
    let findings = f.map(|f| f.metrics.iter().flat_map(|m| finding_rows(m)).collect()).unwrap_or_default();
    let mut sentences: Vec<String> = f
        .map(|f| f.metrics.iter().map(|m| path_line::line(&t.label, m, Markup::Terminal)).collect())
        .unwrap_or_default();
    let survey: Vec<String> = r
        .survey_checks
        .iter()
        .filter(|c| c.tracers.iter().any(|x| x == &t.label || x == &t.name))
        .map(|c| c.text.clone())
        .collect();
    sentences.extend(survey.iter().cloned());
    sentences.extend(t.note.clone());
    OverviewRow {
        name: t.name.clone(),
        label: t.label.clone(),
        colour: crate::plot::palette::hex(t.colour),
        rank: None,
        mean_ns: base.map(|s| s.mean),
        net_ns: None,
        net_interval: None,
        p50_ns: base.map(|s| s.p50),
        p99_ns: base.map(|s| s.p99),
        paths,
        findings,
        sentences,
        survey,
        folded: folded(r, t),
        tail: latency.map(tail).unwrap_or_default(),
    }
}

/// The p99 tail split of a metric's findings in short form.
fn tail(m: &crate::report::findings::MetricFindings) -> Vec<TailShort> {
    use crate::report::findings::TailWho;
    let Some(t) = m.findings.iter().find_map(|f| match f {
        Finding::TailSplit(t) if t.quantile < 0.999 => Some(t),
        _ => None,
    }) else {
        return Vec::new();
    };
    t.parts
        .iter()
        .map(|p| {
            let who = match p.who {
                TailWho::PeriodicPath | TailWho::IrregularPath => {
                    p.what.replace("the path about every ", "path ~").replace("the path every ", "path ")
                }
                TailWho::MemorylessPath => "random path".into(),
                TailWho::Machine => "machine".into(),
                TailWho::SpeedPhase => "phases".into(),
                TailWho::NoPath => "no path".into(),
                TailWho::FastPath => "fast spread".into(),
            };
            TailShort { who, share: p.share, what: p.what.clone() }
        })
        .collect()
}

/// The row's latency folded on its costliest periodic path's period.
fn folded(r: &Report, t: &TracerReport) -> Option<crate::report::render::folded::Folded> {
    let a = t.analysis.as_ref()?;
    let cp = a.code_paths.iter().find(|c| c.metric == "latency")?;
    let main = cp.periodic.iter().max_by(|x, y| x.extra.total_cmp(&y.extra))?;
    let events = r.dir.join(crate::results::dir_name(&t.name)).join(crate::results::EVENTS_CSV);
    crate::report::render::folded::fold(&events, main.period, cp.threshold, a.threads)
}

pub(super) fn paths(findings: &[Finding], calls: u64) -> Vec<PathShort> {
    let share = |n: u64| n as f64 / calls.max(1) as f64;
    // Two paths of one period at different phases (and costs) are told apart by their first
    // call: "1620@435, 1620@1245", not "1620, 1620".
    let same_period =
        |q: u64| findings.iter().filter(|f| matches!(f, Finding::PeriodicPath(p) if p.period == q)).count() > 1;
    findings
        .iter()
        .filter_map(|f| match f {
            Finding::PeriodicPath(p) => Some(PathShort {
                every: match (p.evenly_spread > 1, same_period(p.period)) {
                    (true, _) => format!("{:.1}", p.mean_period),
                    (false, true) => format!("{}@{}", p.period, p.phase),
                    (false, false) => p.period.to_string(),
                },
                extra_ns: p.extra,
                share: share(p.calls),
            }),
            Finding::IrregularPath(p) => Some(PathShort {
                every: match (&p.spacing, &p.keyed) {
                    (Some(s), _) => format!("~{:.0}", s.median),
                    (None, Some(k)) => format!("{} keyed", k.iterations),
                    (None, None) => format!("1/{:.0}", p.one_in),
                },
                extra_ns: p.extra,
                share: p.share,
            }),
            Finding::MemorylessPath(p) => {
                Some(PathShort { every: format!("1/{:.0} random", p.one_in), extra_ns: p.extra, share: p.share })
            }
            // The expected period's phase the fold shows: one call in every P.
            Finding::MissingPeriod(m) => m.folded.as_ref().map(|f| PathShort {
                every: format!("{} folded", f.period),
                extra_ns: f.extra,
                share: 1.0 / f.period as f64,
            }),
            _ => None,
        })
        .collect()
}
