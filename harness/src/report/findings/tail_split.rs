//! What sets a tail, as a finding: the calls above p99 (or p99.9) by population, the
//! outliers among them named by the reference windows' band their extra cost falls in.
use serde::Serialize;

use crate::analysis::attribution::Attributions;
use crate::analysis::code_paths::{self, CodePaths};
use crate::analysis::dated::Attribution;

use super::share;

/// Who a share of a tail's calls belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TailWho {
    PeriodicPath,
    IrregularPath,
    MemorylessPath,
    /// Slow calls the reference windows meet as often (the machine's stalls).
    Machine,
    SpeedPhase,
    /// Outliers on no path that no band of the reference windows told either way.
    NoPath,
    /// The fast path's own spread (above the quantile, below the slow threshold).
    FastPath,
}

/// One population's share of a tail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TailPart {
    pub who: TailWho,
    /// What the report calls it: "slow path every 810", "the machine's slow calls".
    pub what: String,
    pub calls: u64,
    pub share: f64,
}

/// What sets a tail: the calls above p99 (or p99.9) split by population, the
/// largest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TailSplit {
    pub quantile: f64,
    /// The calls counted lie above this (ns): the upper edge of the quantile's histogram bin.
    pub above_ns: f64,
    pub calls: u64,
    pub parts: Vec<TailPart>,
}

/// A tail's calls by population, the largest share first.
pub(super) fn tail_split(cp: &CodePaths, t: &code_paths::Tail, attr: Option<&Attributions>) -> TailSplit {
    use code_paths::TailClass;
    let band = |e: f32, tracer: bool| {
        attr.and_then(|a| {
            a.bands.iter().find(|b| {
                (b.test.attribution == Attribution::Tracer) == tracer
                    && e as f64 >= b.test.extra_lo
                    && b.test.extra_hi.is_none_or(|h| (e as f64) < h)
            })
        })
    };
    let mut parts: Vec<TailPart> = Vec::new();
    for &(class, extra) in &t.members {
        let (who, what) = match class {
            TailClass::Periodic(i) => {
                (TailWho::PeriodicPath, format!("the path every {}", cp.periodic[i].period_text()))
            }
            TailClass::OnPeriod(i) => (
                TailWho::PeriodicPath,
                format!("calls on the period of the path every {} that do not take it", cp.periodic[i].period_text()),
            ),
            TailClass::Stretch(i) => (
                TailWho::PeriodicPath,
                format!("the slower stretch after the path every {}", cp.periodic[i].period_text()),
            ),
            TailClass::Irregular(i) if attr.is_some_and(|a| a.machine_path(i)) => {
                (TailWho::Machine, "the machine's slow calls".into())
            }
            TailClass::Irregular(i) if attr.is_some_and(|a| a.not_tracers(i)) => {
                (TailWho::NoPath, "slow calls not decided whose".into())
            }
            TailClass::Irregular(i) if cp.irregular[i].is_phase() => (TailWho::SpeedPhase, "speed phases".into()),
            TailClass::Irregular(i) => {
                let p = &cp.irregular[i];
                let what = match (p.spacing, &p.keyed) {
                    (Some(s), _) => format!("the path about every {:.0}", s.median),
                    (None, Some(_)) => format!("the keyed path at +{:.0} ns", p.delta),
                    (None, None) => format!("the irregular path at +{:.0} ns", p.delta),
                };
                (TailWho::IrregularPath, what)
            }
            TailClass::Phase => (TailWho::SpeedPhase, "speed phases".into()),
            TailClass::Outlier => match (band(extra, true), band(extra, false)) {
                (Some(b), _) => (TailWho::MemorylessPath, format!("the memoryless path at +{:.0} ns", b.extra)),
                (None, Some(_)) => (TailWho::Machine, "the machine's slow calls".into()),
                (None, None) => (TailWho::NoPath, "outliers on no path".into()),
            },
            TailClass::FastPath => (TailWho::FastPath, "the fast path's own spread".into()),
        };
        match parts.iter_mut().find(|p| p.what == what) {
            Some(p) => p.calls += 1,
            None => parts.push(TailPart { who, what, calls: 1, share: 0.0 }),
        }
    }
    let n = t.members.len() as u64;
    parts.iter_mut().for_each(|p| p.share = share(p.calls, n));
    parts.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.what.cmp(&b.what)));
    TailSplit { quantile: t.quantile, above_ns: t.above, calls: n, parts }
}
