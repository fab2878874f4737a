//! Which function grew: when the exact counts of a stepped run moved, the gate says
//! where, from both sides' profile.json: "exact counts: 1 instructions more per call (34 -> 35),
//! identical on every repetition; by function: nutrace_write +1". A reviewer then knows which
//! change to look at without stepping anything again.
use std::path::Path;

use super::verdict::{ChangeVerdict, Judgement};
use crate::analysis::function_profile::{self as fp, PathFunctions};
use crate::results::profile::{Profile, PROFILE_JSON};
use crate::results::read::{read_run_json, tracers_of};

/// The main path (the count with the most calls) of `tracer` in results directory `dir`; None
/// without a profile (a timed run, or one stepped by a version that wrote no profile.json).
fn main_path(dir: &Path, tracer: &str) -> Option<PathFunctions> {
    let run = read_run_json(dir).ok()?;
    let t = tracers_of(&run).into_iter().find(|t| t.name == tracer)?;
    let p = Profile::read(&dir.join(&t.dir).join(PROFILE_JSON))?.ok()?;
    let main =
        p.counts.iter().max_by(|a, b| a.calls.cmp(&b.calls).then(b.user_instructions.cmp(&a.user_instructions)))?;
    fp::of_path(&p, main.user_instructions, main.user_instructions)
}

/// An exact count's judgement, with the functions that moved it when it moved and both sides
/// were profiled.
pub fn named(mut j: Judgement, base: &Path, cand: &Path, tracer: &str) -> Judgement {
    if j.verdict != ChangeVerdict::Unchanged {
        if let Some(f) = change(base, cand, tracer) {
            j.why = format!("{}; {f}", j.why);
        }
    }
    j
}

/// "by function: nutrace_write +1" from the baseline's main path to the candidate's; None where
/// a side has no profile or no function moved.
fn change(base: &Path, cand: &Path, tracer: &str) -> Option<String> {
    let (b, c) = (main_path(base, tracer)?, main_path(cand, tracer)?);
    let d = fp::self_difference(&b, &c);
    (!d.is_empty()).then(|| format!("by function: {}", fp::difference_text(&d, 5)))
}
