//! A tracer's findings as the rows of report.html's card table (report.json's
//! `overview.tracers[].findings`): kind, period or rate, phase, share, extra cost, p-value and
//! whose, every cell a text, "—" where a finding has none.
use serde::{Deserialize, Serialize};

use crate::report::findings::{Attribution, Finding, LevelShape, MetricFindings, RateTest};
use crate::report::render::numbers::{percent, sig3, signed_duration};

const DASH: &str = "—";

/// One finding as a table row (report.html's card): every cell text, "—" where it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingRow {
    pub kind: String,
    pub period_or_rate: String,
    pub phase: String,
    pub share: String,
    pub extra: String,
    pub p_value: String,
    pub whose: String,
}

/// Whose a population is by its reference windows (None: the run has none).
fn rate_whose(t: Option<&RateTest>) -> String {
    t.map_or("undecided (no reference windows)".into(), |t| whose(&t.attribution))
}

fn whose(a: &Attribution) -> String {
    match a {
        Attribution::Tracer => "tracer".into(),
        Attribution::Machine => "machine".into(),
        Attribution::Undecided { .. } => "undecided".into(),
    }
}

fn cell(kind: &str) -> FindingRow {
    FindingRow {
        kind: kind.into(),
        period_or_rate: DASH.into(),
        phase: DASH.into(),
        share: DASH.into(),
        extra: DASH.into(),
        p_value: DASH.into(),
        whose: DASH.into(),
    }
}

fn p(v: f64) -> String {
    if v < crate::decisions::claims::ALPHA {
        format!("< {}", crate::decisions::claims::ALPHA)
    } else {
        sig3(v)
    }
}

/// The table rows of one metric's findings (kind, period or rate, phase, share, extra cost,
/// p-value, whose).
pub fn finding_rows(m: &MetricFindings) -> Vec<FindingRow> {
    let of = |kind: &str| {
        let mut c = cell(kind);
        if m.metric != "latency" {
            c.kind = format!("{kind} [{}]", m.metric);
        }
        c
    };
    let extra = |v: f64| if m.unit == "ns" { signed_duration(v) } else { format!("{v:+.1}") };
    let share = |n: u64| n as f64 / m.calls.max(1) as f64;
    let mut out = Vec::new();
    for f in &m.findings {
        #[allow(unreachable_patterns)]
        let row = match f {
            Finding::FastPath(x) => FindingRow {
                share: percent(x.share),
                extra: format!(
                    "median {}{}",
                    if m.unit == "ns" { crate::report::render::numbers::duration(x.median) } else { sig3(x.median) },
                    if x.level_step.is_some() { " (lower speed level)" } else { "" }
                ),
                whose: "tracer".into(),
                ..of(if x.single { "single path" } else { "fast path" })
            },
            Finding::PeriodicPath(x) => FindingRow {
                period_or_rate: if x.evenly_spread > 1 {
                    format!("every {:.1} ({} in {})", x.mean_period, x.evenly_spread, x.period)
                } else {
                    format!("every {}", x.period)
                },
                phase: x.phase.to_string(),
                share: percent(share(x.calls)),
                extra: extra(x.extra),
                p_value: p(x.p_value),
                whose: "tracer".into(),
                ..of("periodic path")
            },
            Finding::IrregularPath(x) => FindingRow {
                period_or_rate: match (&x.spacing, &x.keyed) {
                    (Some(s), _) => format!("about every {:.0}", s.median),
                    (None, Some(k)) => {
                        format!("the same {} iterations in each of {} repetitions", k.iterations, k.repetitions)
                    }
                    (None, None) => format!("1 in {:.0}", x.one_in),
                },
                share: percent(x.share),
                extra: extra(x.extra),
                p_value: x.keyed.as_ref().map_or(DASH.into(), |k| p(k.p)),
                whose: x.whose.as_ref().map_or("tracer".into(), |t| whose(&t.attribution)),
                ..of(if x.keyed.is_some() { "keyed path" } else { "irregular path" })
            },
            Finding::MemorylessPath(x) => FindingRow {
                period_or_rate: format!("1 in {:.0}, at random", x.one_in),
                share: percent(x.share),
                extra: extra(x.extra),
                p_value: sig3(x.evidence.p_more),
                whose: whose(&x.evidence.attribution),
                ..of("memoryless path")
            },
            Finding::MachineSlowCalls(x) | Finding::UndecidedSlowCalls(x) => FindingRow {
                period_or_rate: format!("1 in {:.0}", x.one_in),
                share: percent(x.share),
                extra: extra(x.extra),
                whose: whose(&x.evidence.attribution),
                ..of(match f {
                    Finding::MachineSlowCalls(_) => "slow calls, not a path",
                    _ => "slow calls, no path claimed",
                })
            },
            Finding::TailSplit(t) => FindingRow {
                period_or_rate: t
                    .parts
                    .iter()
                    .take(3)
                    .map(|p| format!("{:.0}% {}", 100.0 * p.share, p.what))
                    .collect::<Vec<_>>()
                    .join(", "),
                share: format!("{} calls", t.calls),
                extra: format!("above {}", crate::report::render::numbers::duration(t.above_ns)),
                ..of(if t.quantile >= 0.999 { "what sets p99.9" } else { "what sets p99" })
            },
            Finding::SpeedLevels(l) => {
                let (rate, sh, ex) = match &l.shape {
                    LevelShape::Modes { levels } => (
                        format!("{} levels in stretches", levels.len() + 1),
                        percent(levels.iter().map(|x| x.share).sum()),
                        levels.iter().map(|x| extra(x.extra)).collect::<Vec<_>>().join(", "),
                    ),
                    LevelShape::ComeAndGo { share, extra: e, .. } => {
                        ("comes and goes".into(), percent(*share), extra(*e))
                    }
                    LevelShape::WindowMeans { window, low, high, high_share, .. } => {
                        (format!("{window}-call window means"), percent(*high_share), extra(high - low))
                    }
                    LevelShape::OffPath { share, stretches, .. } => {
                        (format!("{stretches} stretches off path"), percent(*share), DASH.into())
                    }
                };
                FindingRow {
                    period_or_rate: rate,
                    share: sh,
                    extra: ex,
                    whose: whose(&l.attribution),
                    ..of("speed levels")
                }
            }
            Finding::RefusedPeriods(x) => FindingRow {
                period_or_rate: x.lattices.iter().take(3).map(|l| l.period.to_string()).collect::<Vec<_>>().join(", ")
                    + if x.lattices.len() > 3 { ", …" } else { "" },
                p_value: sig3(x.lattices.iter().map(|l| l.p_value).fold(f64::INFINITY, f64::min)),
                ..of("periods refused")
            },
            Finding::MissingPeriod(x) => FindingRow {
                period_or_rate: format!("expected every {:.0}", x.expected.period),
                ..of("no periodic path")
            },
            Finding::Outliers(x) => {
                FindingRow { share: percent(x.share), whose: rate_whose(x.whose.as_ref()), ..of("outliers") }
            }
            Finding::DatedLevels(d) => {
                let owners: std::collections::BTreeSet<String> =
                    d.levels.iter().map(|l| whose(&l.attribution)).collect();
                FindingRow {
                    period_or_rate: format!("{} levels in {} sequences", d.levels.len(), d.sequences),
                    whose: owners.into_iter().collect::<Vec<_>>().join(", "),
                    ..of("levels over time")
                }
            }
            Finding::HarnessCycle(h) => FindingRow {
                period_or_rate: format!("every {} {}", h.length, h.counted_in),
                share: percent(h.share),
                p_value: sig3(h.p_value),
                whose: if h.tracer_path_with_this_period { "harness or tracer".into() } else { "harness".into() },
                ..of("harness cycle")
            },
            _ => of("other"),
        };
        out.push(row);
    }
    out
}
