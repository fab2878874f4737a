//! The slow populations without an exact period, as findings: an irregular path of the
//! tracer's, or slow calls that are no path (the machine's, or not decided whose), by what the
//! reference windows say of each (analysis/attribution.rs).
use serde::Serialize;

use super::{share, Finding, RateTest, Spacing};
use crate::analysis::attribution::Attributions;
use crate::analysis::code_paths::{self, CodePaths};
use crate::analysis::dated::Attribution;
use crate::decisions::irregular::{BURST_RATIO, REGULAR_MIN_SPACING, REGULAR_SHARE};

/// A path without an exact period (printf's flush, a rare drifting buffer).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IrregularPath {
    pub calls: u64,
    pub share: f64,
    pub extra: f64,
    /// Some when it recurs at a nearly fixed spacing ("about every N events").
    pub spacing: Option<Spacing>,
    /// Calls per call of the path ("about 1 in N events").
    pub one_in: f64,
    /// Its rate against the reference windows' at the same extra cost (None: no reference
    /// windows); always the tracer's here (the machine's are `MachineSlowCalls`, those the
    /// windows cannot tell `UndecidedSlowCalls`).
    pub whose: Option<RateTest>,
    /// Some when its calls are slow on the same iterations in every repetition (keyed to the call
    /// or its logged value), with the rotation null's chance (analysis/keyed.rs).
    pub keyed: Option<crate::analysis::keyed::Keyed>,
}

/// Slow calls of like cost told apart by the reference windows (attribution.rs): a memoryless
/// path of the tracer's, or the machine's stalls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlowCalls {
    pub calls: u64,
    pub share: f64,
    /// Median extra cost over the fast path's median.
    pub extra: f64,
    pub one_in: f64,
    /// Some when they recur at a nearly fixed spacing (stalls regular in time look so too).
    pub spacing: Option<Spacing>,
    pub evidence: RateTest,
}

/// Each irregular population of `cp` (phases left out): a path of the tracer's into `paths`,
/// one that is no path into `machine`.
pub(super) fn irregular_paths(
    cp: &CodePaths,
    attr: Option<&Attributions>,
    paths: &mut Vec<Finding>,
    machine: &mut Vec<Finding>,
) {
    for (i, p) in cp.irregular.iter().enumerate().filter(|(_, p)| !p.is_phase()) {
        let whose = attr.and_then(|a| a.irregular.get(i).cloned().flatten());
        match whose {
            Some(t) if t.attribution == Attribution::Machine => {
                machine.push(Finding::MachineSlowCalls(slow_calls(cp, p, t)))
            }
            Some(t) if t.attribution != Attribution::Tracer => {
                machine.push(Finding::UndecidedSlowCalls(slow_calls(cp, p, t)))
            }
            whose => paths.push(Finding::IrregularPath(IrregularPath { whose, ..irregular(cp, p) })),
        }
    }
}

fn irregular(cp: &CodePaths, p: &code_paths::CodePath) -> IrregularPath {
    let one_in = cp.rows as f64 / p.calls.max(1) as f64;
    let regular = |s: &Spacing| s.near_share >= REGULAR_SHARE && s.median >= REGULAR_MIN_SPACING;
    let spacing = p.spacing.filter(|s| regular(s) && one_in <= BURST_RATIO * s.median);
    IrregularPath {
        calls: p.calls,
        share: share(p.calls, cp.rows),
        extra: p.delta,
        spacing,
        one_in,
        whose: None,
        keyed: p.keyed.clone(),
    }
}

fn slow_calls(cp: &CodePaths, p: &code_paths::CodePath, evidence: RateTest) -> SlowCalls {
    let i = irregular(cp, p);
    SlowCalls { calls: i.calls, share: i.share, extra: i.extra, one_in: i.one_in, spacing: i.spacing, evidence }
}
