//! Stage 4, merge: the cells' rows become one events.csv and discarded.csv per tracer (by
//! concatenation: the cells wrote them in final form; sentinels.csv too when the run has them), and the summaries per tracer x thread
//! count (summary.csv) and per repetition (repetitions.csv). A group with no kept call (a cell a
//! Ctrl-C stopped before its first) writes no row: a kept-0 row with NaN statistics would read as
//! data; run.json says the run was interrupted and where (`export`).
use super::concat::{concatenate, Group};
use super::merge_acc::Acc;
use super::plan::Plan;
use super::prepare::Prepared;
use super::singlestep;
use super::supervise::CellRun;
use super::timings::Timings;
use crate::error::Error;
use crate::results::rows::{
    self, DiscardsWriter, EventsWriter, MergedRow, ReferenceWriter, SentinelsWriter, StepSummaryRow,
};
use crate::results::{
    ResultsDir, DISCARDED_CSV, EVENTS_CSV, REFERENCE_CSV, REPETITIONS_CSV, SENTINELS_CSV, SUMMARY_CSV,
};

pub use super::merge_acc::MOM_BLOCKS;

/// What the merge made: a timed run's summary rows (per tracer x threads), or a stepped run's.
pub struct Merged {
    pub summaries: Vec<MergedRow>,
    pub stepped: Option<Vec<StepSummaryRow>>,
}

/// The cells of a prepared run into its results directory; `columns` are the counter columns.
pub fn merge_run(p: &Prepared, columns: &[String], runs: &[CellRun], t: &mut Timings) -> Result<Merged, Error> {
    // --instructions singlestep: its own columns and table (`singlestep`).
    let stepped = if p.plan.cell.singlestep { Some(singlestep::merge(&p.out, &p.plan, runs)?) } else { None };
    let summaries = if stepped.is_some() {
        Vec::new()
    } else {
        merge(&p.out, &p.plan, runs, columns, p.plan.cell.sentinel_every > 0)?
    };
    t.mark("merge");
    Ok(Merged { summaries, stepped })
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

/// One per-cell file of each tracer row concatenated, its cells in the order of its events.csv,
/// under one header: sentinels.csv (a cell that measured wrote one, headers only when it kept no
/// sentinel) and reference.csv (cells without reference windows wrote none). `create` opens the
/// row's writer; `append` adds a cell's body; `commit` renames it into place.
fn merge_per_row<W>(
    out: &ResultsDir,
    plan: &Plan,
    runs: &[CellRun],
    name: &str,
    create: impl Fn(&std::path::Path) -> Result<W, Error>,
    append: impl Fn(&mut W, &std::path::Path) -> Result<(), Error>,
    commit: impl Fn(W) -> Result<(), Error>,
) -> Result<(), Error> {
    for (ri, row) in plan.rows.iter().enumerate() {
        let mine: Vec<&CellRun> =
            runs.iter().filter(|c| c.row == ri && c.result.is_some() && c.spec.dir.join(name).exists()).collect();
        if mine.is_empty() {
            continue;
        }
        let mut w = create(&out.tracer_dir(&row.dir)?.join(name))?;
        for c in mine {
            append(&mut w, &c.spec.dir.join(name))?;
        }
        commit(w)?;
    }
    Ok(())
}

/// Merges the cells into the results directory; returns the summary rows (per tracer x threads).
pub fn merge(
    out: &ResultsDir,
    plan: &Plan,
    runs: &[CellRun],
    columns: &[String],
    sentinels: bool,
) -> Result<Vec<MergedRow>, Error> {
    if sentinels {
        merge_per_row(
            out,
            plan,
            runs,
            SENTINELS_CSV,
            SentinelsWriter::create,
            |w, p| w.append_body_of(p),
            |w| w.commit(),
        )?;
    }
    merge_per_row(out, plan, runs, REFERENCE_CSV, ReferenceWriter::create, |w, p| w.append_body_of(p), |w| w.commit())?;
    let (summary_rows, rep_rows) = concatenate(
        out,
        plan,
        runs,
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
    rows::write_summary(&out.file(SUMMARY_CSV), &summary_rows, columns, false)?;
    rows::write_summary(&out.file(REPETITIONS_CSV), &rep_rows, columns, true)?;
    Ok(summary_rows)
}
