//! The load stage: a results directory as the report reads it, through the one reader,
//! `results::read` (run.json, summary.csv, repetitions.csv, events.csv, by column name).
use std::collections::HashMap;

pub use crate::results::dir_name;
pub use crate::results::read::{
    csv_err, read_run_json, read_summary, system_lines, tracers_of, Event, EventCols, Events, Source, SummaryRow,
    TracerMeta,
};

/// Distinct values in first-seen order.
pub fn ordered_unique<T: Clone + Eq + std::hash::Hash>(it: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = HashMap::new();
    let mut out = Vec::new();
    for x in it {
        if seen.insert(x.clone(), ()).is_none() {
            out.push(x);
        }
    }
    out
}
