//! The merge's skeleton, shared by timed and stepped runs: one pass per tracer row, which makes
//! the row's directory, joins its cells' files into its own (events.csv, discarded.csv, and the
//! per-cell files the run has, `Joined`), and reads its cells into groups per
//! thread count and per repetition (merge.rs for timed runs, `singlestep` for stepped ones).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::prepare::Prepared;
use super::supervise::CellRun;
use crate::error::Error;
use crate::results::profile::{self, PROFILE_JSON};
use crate::results::rows::{DiscardsWriter, EventsWriter, ReferenceWriter, SentinelsWriter};
use crate::results::{DISCARDED_CSV, EVENTS_CSV, REFERENCE_CSV, SENTINELS_CSV};

/// A per-cell file the merge joins per tracer row, where the row's cells wrote it: profile.json
/// (stepped cells), sentinels.csv (timed cells with `--sentinel-every K > 0`) and reference.csv
/// (cells with reference windows).
#[derive(Debug, Clone, Copy)]
pub enum Joined {
    Profile,
    Sentinels,
    Reference,
}

/// What stage 4 accumulates per group of cells (a thread count, or a thread count and a
/// repetition): latencies and counter sums for a timed run, exact counts for a stepped one.
pub trait Group {
    type Row;
    fn discarded(&mut self) -> &mut u64;
    /// Calls kept so far: a group with none writes no row.
    fn kept(&self) -> usize;
    /// Kept calls that slept inside the tracer (timed runs only).
    fn add_blocked(&mut self, _calls: u64, _ns: f64) {}
    fn row(self, tracer: &str, threads: usize, repetition: Option<usize>) -> Self::Row;
}

/// Stage 4's skeleton, shared by timed and stepped runs: each tracer's cells are concatenated into
/// its events.csv and discarded.csv (`writers` makes them in the tracer's directory, given the
/// rows its cells planned: `results::events_file` picks the file's form by it), each of `joined`
/// that its cells wrote is joined into the row's, and `feed` reads one cell's events.csv into
/// its two groups. A row none of whose cells measured has no directory. Returns the rows per
/// thread count and per repetition.
pub fn concatenate<G: Group>(
    p: &Prepared,
    runs: &[CellRun],
    joined: &[Joined],
    writers: impl Fn(&Path, u64) -> Result<(EventsWriter, DiscardsWriter), Error>,
    new: impl Fn(usize) -> G,
    mut feed: impl FnMut(&Path, &mut G, &mut G) -> Result<(), Error>,
) -> Result<(Vec<G::Row>, Vec<G::Row>), Error> {
    let (mut summary_rows, mut rep_rows) = (Vec::new(), Vec::new());
    for ((ri, row), dir) in p.plan.rows.iter().enumerate().zip(&p.row_dirs) {
        let mine: Vec<&CellRun> = runs.iter().filter(|c| c.row == ri && c.result.is_some()).collect();
        if mine.is_empty() {
            continue;
        }
        crate::results::owner::subdir(dir).map_err(|e| Error::io(dir, e))?;
        for &j in joined {
            let name = match j {
                Joined::Profile => PROFILE_JSON,
                Joined::Sentinels => SENTINELS_CSV,
                Joined::Reference => REFERENCE_CSV,
            };
            let cells: Vec<PathBuf> = mine.iter().map(|c| c.spec.dir.join(name)).filter(|f| f.exists()).collect();
            if cells.is_empty() {
                continue;
            }
            // Joined by the module that owns the format: the profiles summed, the CSV files under
            // one header.
            let dest = dir.join(name);
            match j {
                Joined::Profile => profile::sum_into(&dest, &cells)?,
                Joined::Sentinels => SentinelsWriter::create(&dest)?.commit_joined(&cells)?,
                Joined::Reference => ReferenceWriter::create(&dest)?.commit_joined(&cells)?,
            }
        }
        let planned: u64 = mine.iter().map(|c| (c.spec.iterations * c.spec.threads) as u64).sum();
        let (mut ev, mut ds) = writers(dir, planned)?;
        let mut by_threads: BTreeMap<usize, G> = BTreeMap::new();
        let mut by_rep: BTreeMap<(usize, usize), G> = BTreeMap::new();
        // Each group's kept calls, from the cells' results, before its rows are read.
        let (mut n_threads, mut n_rep) = (BTreeMap::<usize, usize>::new(), BTreeMap::<(usize, usize), usize>::new());
        for c in &mine {
            let kept: usize = c.result.as_ref().map_or(0, |r| r.threads.iter().map(|x| x.kept).sum());
            *n_threads.entry(c.spec.threads).or_default() += kept;
            *n_rep.entry((c.spec.threads, c.spec.repetition)).or_default() += kept;
        }
        for c in &mine {
            let (t, rep) = (c.spec.threads, c.spec.repetition);
            let cell_events = c.spec.dir.join(EVENTS_CSV);
            ev.append_body_of(&cell_events)?;
            ds.append_body_of(&c.spec.dir.join(DISCARDED_CSV))?;
            let threads = c.result.as_ref().map(|r| r.threads.as_slice()).unwrap_or_default();
            let discarded: u64 = threads.iter().map(|x| x.discarded).sum();
            let (blocked, blocked_ns) =
                (threads.iter().map(|x| x.blocked).sum(), threads.iter().map(|x| x.blocked_ns).sum());
            let a = by_threads.entry(t).or_insert_with(|| new(n_threads[&t]));
            *a.discarded() += discarded;
            a.add_blocked(blocked, blocked_ns);
            let b = by_rep.entry((t, rep)).or_insert_with(|| new(n_rep[&(t, rep)]));
            *b.discarded() += discarded;
            b.add_blocked(blocked, blocked_ns);
            feed(&cell_events, a, b)?;
            // The cell's copy is not read again: gone now, the disk holds one copy of the rows
            // at a time, not two (the cells' directory goes only when the run ends).
            crate::results::events_file::remove(&cell_events)?;
        }
        ev.commit()?;
        ds.commit()?;
        summary_rows
            .extend(by_threads.into_iter().filter(|(_, a)| a.kept() > 0).map(|(t, a)| a.row(&row.name, t, None)));
        rep_rows.extend(
            by_rep.into_iter().filter(|(_, a)| a.kept() > 0).map(|((t, rep), a)| a.row(&row.name, t, Some(rep))),
        );
    }
    Ok((summary_rows, rep_rows))
}
