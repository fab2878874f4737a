//! Each step of a sweep's curve (value i against value i+1 of one tracer row) judged by the one
//! comparison (`stats::compare`), so that the sweep's page says a curve grows or falls only where
//! the repetitions decide it, and sweep.csv records the same outcomes the page states.
//!
//! The evidence of a value is its row's repetitions' means (OUT/KNOB=VALUE/repetitions.csv, the
//! statistic the page prints and the report's ranking compares). A sweep interleaves the values
//! round by round (repetition r of every value before r+1 of any), so repetition r of one value
//! is paired with repetition r of the next: the pairing cancels what the machine did in that
//! round. The `none` row of the same value and thread count, when the sweep ran one, is the
//! floor that relative differences are net of, as in the ranking.
//!
//! The runner (writing sweep.csv) and the report (saying the laws) both call [`judge_sweep`] on
//! the same files, so the column and the sentence cannot disagree.
use std::collections::HashMap;
use std::path::Path;

use super::read::{read_summary, SummaryRow};
use super::{dir_name, REPETITIONS_CSV};
use crate::stats::compare::{compare, Comparison, ALPHA, MARGIN};

/// One line of sweep.csv as far as the steps need it: which curve and value it is.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepKey {
    pub tracer: String,
    pub value: String,
    pub threads: u32,
}

/// Per-repetition values (repetition index, ns) of one row at one value.
pub type Reps = Vec<(u32, f64)>;

/// Whether a row is the untraced floor: `none`, whatever its options (`none:...`).
fn is_floor(tracer: &str) -> bool {
    tracer.split([':', '@']).next().is_some_and(|k| k.eq_ignore_ascii_case("none"))
}

fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Compares the row at one value (`a`) with the same row at the next (`b`): B's cost over A's.
/// Paired by repetition index when both hold the same repetitions (the sweep's interleaving);
/// `floor_a`/`floor_b` are the `none` rows of those two values, of which the cheaper value's is
/// the floor, since the comparison nets the cheaper row's cost. None when either has no
/// repetition to compare.
pub fn judge_step(a: &Reps, b: &Reps, floor_a: Option<&Reps>, floor_b: Option<&Reps>) -> Option<Comparison> {
    let finite = |r: &Reps| -> Reps {
        let mut v: Reps = r.iter().copied().filter(|x| x.1.is_finite()).collect();
        v.sort_by_key(|x| x.0);
        v
    };
    let (a, b) = (finite(a), finite(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let paired = a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0);
    let av: Vec<f64> = a.iter().map(|x| x.1).collect();
    let bv: Vec<f64> = b.iter().map(|x| x.1).collect();
    let (cheap, floor) = if median(&av) <= median(&bv) { (&a, floor_a) } else { (&b, floor_b) };
    // The floor in the cheaper row's round order where it ran every one of those rounds (then
    // the comparison pairs it round by round); otherwise all of it (compared by its median).
    let floor: Option<Vec<f64>> = floor.map(finite).filter(|f| !f.is_empty()).map(|f| {
        let by_rep: HashMap<u32, f64> = f.iter().copied().collect();
        let aligned: Option<Vec<f64>> = cheap.iter().map(|(r, _)| by_rep.get(r).copied()).collect();
        aligned.unwrap_or_else(|| f.iter().map(|x| x.1).collect())
    });
    Some(compare(&av, &bv, floor.as_deref(), paired, MARGIN, ALPHA))
}

/// One curve's steps: `values[i]` against `values[i + 1]`, with each value's floor.
pub fn judge_curve(values: &[Reps], floors: &[Option<Reps>]) -> Vec<Option<Comparison>> {
    (1..values.len())
        .map(|i| {
            let f = |k: usize| floors.get(k).and_then(Option::as_ref);
            judge_step(&values[i - 1], &values[i], f(i - 1), f(i))
        })
        .collect()
}

/// For each line of sweep.csv (`keys`, in file order), its row against the same curve's line at
/// the previous value: None at a curve's first value, or where a value's directory holds no
/// repetition of the row. A curve is a tracer and thread count, or a tracer alone when the knob
/// is the thread count.
pub fn judge_sweep(root: &Path, knob: &str, keys: &[SweepKey]) -> Vec<Option<Comparison>> {
    let mut files: HashMap<String, Vec<SummaryRow>> = HashMap::new();
    let mut reps_of = |value: &str, tracer: Option<&str>, threads: u32| -> Option<Reps> {
        let rows = files.entry(value.to_string()).or_insert_with(|| {
            let path = root.join(format!("{knob}={}", dir_name(value))).join(REPETITIONS_CSV);
            read_summary(&path, true).unwrap_or_default()
        });
        let v: Reps = rows
            .iter()
            .filter(|r| r.threads == threads && tracer.map_or(is_floor(&r.tracer), |t| r.tracer == t))
            .map(|r| (r.repetition.unwrap_or(0), r.mean))
            .collect();
        (!v.is_empty()).then_some(v)
    };
    let curve = |k: &SweepKey| (k.tracer.clone(), if knob == "threads" { 0 } else { k.threads });
    let mut last: HashMap<(String, u32), (Reps, Option<Reps>)> = HashMap::new();
    let mut out = Vec::new();
    for k in keys {
        let this = reps_of(&k.value, Some(&k.tracer), k.threads).unwrap_or_default();
        let floor = reps_of(&k.value, None, k.threads);
        let prev = last.insert(curve(k), (this.clone(), floor.clone()));
        out.push(prev.and_then(|(p, pf)| judge_step(&p, &this, pf.as_ref(), floor.as_ref())));
    }
    out
}

#[cfg(test)]
#[path = "sweep_steps_tests.rs"]
mod tests;
