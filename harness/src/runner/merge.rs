//! Stage 4, merge: the cells' rows become one events.csv and discarded.csv per tracer (by
//! concatenation: the cells wrote them in final form; sentinels.csv and reference.csv too when
//! the cells wrote them), and the summaries per tracer x thread count (summary.csv) and per
//! repetition (repetitions.csv). A group with no kept call (a cell a Ctrl-C stopped before its
//! first) writes no row: a kept-0 row with NaN statistics would read as data; run.json says the
//! run was interrupted and where (`export`). Every file is written by `results`, which owns its
//! format.
use super::concat::{concatenate, Group, Joined};
use super::merge_acc::Acc;
use super::prepare::Prepared;
use super::singlestep;
use super::supervise::CellRun;
use super::timings::Timings;
use crate::error::Error;
use crate::results::rows::{self, DiscardsWriter, EventsWriter, MergedRow};
use crate::results::stepped::StepSummaryRow;
use crate::results::{DISCARDED_CSV, EVENTS_CSV, REPETITIONS_CSV, SUMMARY_CSV};

pub use super::merge_acc::MOM_BLOCKS;

/// What the merge made: a timed run's summary rows (per tracer x threads), or a stepped run's.
pub struct Merged {
    pub summaries: Vec<MergedRow>,
    pub stepped: Option<Vec<StepSummaryRow>>,
}

/// The cells of a prepared run into its results directory; `columns` are the counter columns.
pub fn merge_run(p: &Prepared, columns: &[String], runs: &[CellRun], t: &mut Timings) -> Result<Merged, Error> {
    let merged = if !p.plan.cell.singlestep {
        Merged { summaries: merge(p, runs, columns)?, stepped: None }
    } else {
        // --instructions singlestep: its own columns and table (`singlestep`).
        Merged { summaries: Vec::new(), stepped: Some(singlestep::merge(p, runs)?) }
    };
    t.mark("merge");
    Ok(merged)
}

impl Group for Acc {
    type Row = MergedRow;
    fn discarded(&mut self) -> &mut u64 {
        &mut self.discarded
    }
    fn kept(&self) -> usize {
        Acc::kept(self)
    }
    fn add_blocked(&mut self, calls: u64, ns: f64) {
        self.blocked += calls;
        self.blocked_ns += ns;
    }
    fn row(self, tracer: &str, threads: usize, repetition: Option<usize>) -> MergedRow {
        Acc::row(self, tracer, threads, repetition)
    }
}

/// A timed run's cells into the results directory; returns the summary rows (per tracer x
/// threads).
fn merge(p: &Prepared, runs: &[CellRun], columns: &[String]) -> Result<Vec<MergedRow>, Error> {
    let joined: &[Joined] =
        if p.plan.cell.sentinel_every > 0 { &[Joined::Sentinels, Joined::Reference] } else { &[Joined::Reference] };
    let (summary_rows, rep_rows) = concatenate(
        p,
        runs,
        joined,
        |dir, planned_rows| {
            Ok((
                EventsWriter::create(&dir.join(EVENTS_CSV), columns, planned_rows)?,
                DiscardsWriter::create(&dir.join(DISCARDED_CSV))?,
            ))
        },
        |expected| Acc::new(columns.len(), expected),
        |path, a, b| {
            rows::for_each_event(path, columns, |lat, ctr| {
                a.add(lat, ctr);
                b.add(lat, ctr);
            })
        },
    )?;
    rows::write_summary(&p.out.file(SUMMARY_CSV), &summary_rows, columns, false)?;
    rows::write_summary(&p.out.file(REPETITIONS_CSV), &rep_rows, columns, true)?;
    Ok(summary_rows)
}
