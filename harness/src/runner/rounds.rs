//! Rounds added until decided (`--budget`): after the planned repetitions, more interleaved
//! rounds of every row until each pair of rows is decided by the one comparison
//! (`stats::compare`: one is cheaper, or the two cost the same within the margin), or the
//! budget of wall time is spent.
//!
//! The pairs are looked at only at the comparison's fixed looks (10 rounds, then each about 1.41
//! times the last), whose levels sum to its alpha: stopping when decided does not raise the
//! chance of a false decision, and the report, re-made from the files, reaches the outcome the
//! run stopped on. A round is all rows, sets and thread counts once, in the planned order, so
//! the added rounds interleave as the planned ones do.
use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::plan::Plan;
use super::supervise::{self, CellRun};
use crate::error::Error;
use crate::results::{rows, EVENTS_CSV};
use crate::stats::compare::{compare, looks, Comparison, Outcome, ALPHA, MARGIN};

/// A pair of rows (by plan index) the comparison has not decided, with its comparison.
struct Open {
    a: usize,
    b: usize,
    c: Comparison,
}

/// Adds rounds to `runs` until every pair of rows is decided or `budget` has passed since
/// `began`; returns the rounds made. `run_rounds(reps, first_id)` runs the cells of rounds
/// `reps`, numbered from `first_id`; `columns` are the counter columns of the cells' events.
pub(super) fn add_until_decided(
    plan: &Plan,
    columns: &[String],
    runs: &mut Vec<CellRun>,
    budget: Duration,
    began: Instant,
    run_rounds: impl Fn(std::ops::Range<usize>, usize) -> Result<Vec<CellRun>, Error>,
) -> Result<usize, Error> {
    let per_round = runs.len() / plan.repeats.max(1);
    let mut rounds = plan.repeats;
    let mut means: HashMap<usize, Option<f64>> = HashMap::new();
    // Set when the next look does not fit in what is left of the budget: the pairs still open
    // are said once more, then the rounds stop.
    let mut spent = false;
    loop {
        if spent && plan.quiet {
            break;
        }
        let open = open_pairs(plan, columns, runs, &mut means)?;
        if spent {
            eprintln!("tracebench: the --budget is spent after {rounds} rounds; {} pair(s) not decided", open.len());
            break;
        }
        if open.is_empty() {
            if !plan.quiet {
                eprintln!("tracebench: every pair of rows is decided after {rounds} rounds");
            }
            break;
        }
        let next = looks().find(|&n| n > rounds).unwrap_or(rounds + 1);
        if !plan.quiet {
            let names: Vec<String> = open
                .iter()
                .take(6)
                .map(|o| {
                    let about = o.c.rounds_needed.map_or(String::new(), |n| format!(" (about {n} rounds)"));
                    format!("{}/{}{about}", plan.rows[o.a].name, plan.rows[o.b].name)
                })
                .collect();
            let more = open.len().saturating_sub(6);
            eprintln!(
                "tracebench: {rounds} rounds, {} pair(s) open: {}{}; adding rounds to {next}",
                open.len(),
                names.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            );
        }
        // A round's time from the cells so far (each cell's process, start to end); one more
        // round is started only if it fits in what is left.
        let round_time = runs.iter().map(|c| c.seconds).sum::<f64>() / rounds.max(1) as f64;
        let mut added = false;
        while rounds < next {
            if supervise::stopped() || began.elapsed().as_secs_f64() + round_time > budget.as_secs_f64() {
                break;
            }
            runs.extend(run_rounds(rounds..rounds + 1, rounds * per_round)?);
            rounds += 1;
            added = true;
        }
        if rounds < next {
            spent = true;
        } else if !added {
            break;
        }
    }
    Ok(rounds)
}

/// The pairs of rows the comparison leaves undecided, from
/// each round's mean at the fewest threads (cached by cell: a cell's events do not change).
fn open_pairs(
    plan: &Plan,
    columns: &[String],
    runs: &[CellRun],
    cache: &mut HashMap<usize, Option<f64>>,
) -> Result<Vec<Open>, Error> {
    let threads = plan.threads.first().copied().unwrap_or(1);
    let rounds = plan.repeats.max(runs.iter().map(|c| c.spec.repetition + 1).max().unwrap_or(0));
    let mut per_row: Vec<Vec<f64>> = vec![Vec::new(); plan.rows.len()];
    for (ri, row) in per_row.iter_mut().enumerate() {
        for rep in 0..rounds {
            let (mut sum, mut n) = (0.0, 0usize);
            for c in runs.iter().filter(|c| c.row == ri && c.spec.repetition == rep && c.spec.threads == threads) {
                if c.result.is_none() {
                    continue;
                }
                let m = match cache.get(&c.spec.id) {
                    Some(m) => *m,
                    None => {
                        let (mut s, mut k) = (0.0, 0usize);
                        rows::for_each_event(&c.spec.dir.join(EVENTS_CSV), columns, |lat, _| {
                            s += lat;
                            k += 1;
                        })?;
                        let m = (k > 0).then(|| s / k as f64);
                        cache.insert(c.spec.id, m);
                        m
                    }
                };
                if let Some(m) = m {
                    sum += m;
                    n += 1;
                }
            }
            if n > 0 {
                row.push(sum / n as f64);
            }
        }
    }
    // Every pair of rows, the floor's too: the survey's orderings compare `none` with the others.
    let is_floor = |ri: usize| plan.rows[ri].spec == "none";
    let floor = (0..per_row.len()).find(|&ri| is_floor(ri)).map(|ri| per_row[ri].clone());
    let measured: Vec<usize> = (0..per_row.len()).filter(|&ri| !per_row[ri].is_empty()).collect();
    let mut open = Vec::new();
    for (i, &a) in measured.iter().enumerate() {
        for &b in &measured[i + 1..] {
            let paired = per_row[a].len() == per_row[b].len();
            let c = compare(&per_row[a], &per_row[b], floor.as_deref(), paired, MARGIN, ALPHA);
            if c.outcome == Outcome::Undecided {
                open.push(Open { a, b, c });
            }
        }
    }
    Ok(open)
}
