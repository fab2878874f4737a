//! Stage 4, merge: the cells' rows become one events.csv and discarded.csv per tracer (by
//! concatenation: the cells wrote them in final form), and the summaries per tracer x thread
//! count (summary.csv) and per repetition (repetitions.csv).
use std::collections::BTreeMap;

use super::plan::Plan;
use super::supervise::CellRun;
use crate::error::Error;
use crate::results::rows::{self, DiscardsWriter, EventsWriter, SummaryRow};
use crate::results::{ResultsDir, DISCARDED_CSV, EVENTS_CSV, REPETITIONS_CSV, SUMMARY_CSV};
use crate::stats;

/// Blocks of `mom_ns`: a stall must hit 5 of 10 blocks to move it.
pub const MOM_BLOCKS: usize = 10;

/// Latencies and counter sums of one group of cells.
#[derive(Default)]
struct Acc {
    lat: Vec<f64>,
    discarded: u64,
    sums: Vec<(f64, usize)>,
}

impl Acc {
    fn new(counters: usize) -> Self {
        Acc { sums: vec![(0.0, 0); counters], ..Default::default() }
    }
    fn add(&mut self, latency: f64, counters: &[Option<f64>]) {
        self.lat.push(latency);
        for (s, v) in self.sums.iter_mut().zip(counters) {
            if let Some(v) = v {
                s.0 += v;
                s.1 += 1;
            }
        }
    }
    fn row(mut self, tracer: &str, threads: usize, repetition: Option<usize>) -> SummaryRow {
        let mom = stats::median_of_means(&self.lat, MOM_BLOCKS);
        let s = stats::summarize(&mut self.lat);
        SummaryRow {
            mom,
            tracer: tracer.into(),
            threads,
            repetition,
            kept: s.n,
            discarded: self.discarded,
            s,
            counter_means: self.sums.iter().map(|(sum, n)| (*n > 0).then(|| sum / *n as f64)).collect(),
        }
    }
}

/// Merges the cells into the results directory; returns the summary rows (per tracer x threads).
pub fn merge(out: &ResultsDir, plan: &Plan, runs: &[CellRun], columns: &[String]) -> Result<Vec<SummaryRow>, Error> {
    let mut summary_rows = Vec::new();
    let mut rep_rows = Vec::new();
    for (ri, row) in plan.rows.iter().enumerate() {
        let mine: Vec<&CellRun> = runs.iter().filter(|c| c.row == ri && c.result.is_some()).collect();
        if mine.is_empty() {
            continue;
        }
        let dir = out.tracer_dir(&row.dir)?;
        let mut ev = EventsWriter::create(&dir.join(EVENTS_CSV), columns)?;
        let mut ds = DiscardsWriter::create(&dir.join(DISCARDED_CSV))?;
        let mut by_threads: BTreeMap<usize, Acc> = BTreeMap::new();
        let mut by_rep: BTreeMap<(usize, usize), Acc> = BTreeMap::new();
        for c in &mine {
            let (t, rep) = (c.spec.threads, c.spec.repetition);
            let cell_events = c.spec.dir.join(EVENTS_CSV);
            ev.append_body_of(&cell_events)?;
            ds.append_body_of(&c.spec.dir.join(DISCARDED_CSV))?;
            let discarded: u64 = c.result.as_ref().map(|r| r.threads.iter().map(|x| x.discarded).sum()).unwrap_or(0);
            let a = by_threads.entry(t).or_insert_with(|| Acc::new(columns.len()));
            a.discarded += discarded;
            let b = by_rep.entry((t, rep)).or_insert_with(|| Acc::new(columns.len()));
            b.discarded += discarded;
            rows::for_each_event(&cell_events, columns, |lat, ctr| {
                a.add(lat, ctr);
                b.add(lat, ctr);
            })?;
        }
        ev.commit()?;
        ds.commit()?;
        for (t, a) in by_threads {
            summary_rows.push(a.row(&row.name, t, None));
        }
        for ((t, rep), a) in by_rep {
            rep_rows.push(a.row(&row.name, t, Some(rep)));
        }
    }
    rows::write_summary(&out.file(SUMMARY_CSV), &summary_rows, columns, false)?;
    rows::write_summary(&out.file(REPETITIONS_CSV), &rep_rows, columns, true)?;
    Ok(summary_rows)
}
