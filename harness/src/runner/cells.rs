//! Stage 4, supervise: the plan's cells, numbered by round, one child process each, one after
//! another, under each backend's parent-side guard (supervise.rs); with `--budget`, the rounds
//! added until every pair of rows is decided (rounds.rs).
use std::ops::Range;
use std::path::Path;

use super::plan::Plan;
use super::prepare::Prepared;
use super::probe::Probe;
use super::protocol::CellSpec;
use super::rounds;
use super::supervise::{self, CellRun};
use super::timings::Timings;
use crate::error::Error;

/// What the cells gave: each cell's run, in order, and the rounds made (the planned ones and
/// those `--budget` added).
pub struct Ran {
    pub runs: Vec<CellRun>,
    pub rounds: usize,
}

/// The planned rounds, then the added ones; the guards are released before returning.
pub fn run(p: &Prepared, probe: &Probe, t: &mut Timings) -> Result<Ran, Error> {
    supervise::install_handlers();
    // A round: its cells, supervised one after another.
    let round = |reps: Range<usize>, first_id: usize| {
        let cells = round_cells(&p.plan, reps, first_id, probe, &p.cells);
        supervise::run_cells(cells, &p.plan)
    };
    let guards = supervise::parent_guards(&p.plan, probe)?;
    t.mark("guards");
    let mut runs = round(0..p.plan.repeats, 0)?;
    let mut rounds = p.plan.repeats;
    if let Some(budget) = p.plan.budget {
        rounds = rounds::add_until_decided(&p.plan, &probe.columns, &mut runs, budget, t.began(), round)?;
    }
    t.mark("cells");
    t.add_cells(runs.iter().filter_map(|r| r.result.as_ref().map(|x| &x.phases)));
    drop(guards);
    t.mark("guards_release");
    Ok(Ran { runs, rounds })
}

/// The cells of rounds `reps` (a round: every row, set and thread count once), numbered
/// from `first_id` (each cell's directory is its number): the planned rounds, and the rounds
/// `--budget` adds after them. Repetitions are outermost, so repeats interleave across tracers
/// and bursts of noise hit every tracer alike instead of one. Each cell reads the counters of
/// its set that can be read here, and writes the union's columns.
pub fn round_cells(
    plan: &Plan,
    reps: Range<usize>,
    first_id: usize,
    probe: &Probe,
    cells_dir: &Path,
) -> Vec<(usize, CellSpec)> {
    let (clock, run_id) = (&probe.machine.clock, &probe.machine.run_id);
    let mut cells: Vec<(usize, CellSpec)> = Vec::new();
    for rep in reps {
        for (si, _) in plan.sets.iter().enumerate() {
            for (ri, r) in plan.rows.iter().enumerate() {
                for &t in &plan.threads {
                    let id = first_id + cells.len();
                    cells.push((
                        ri,
                        CellSpec {
                            id,
                            spec: r.spec.clone(),
                            label: r.name.clone(),
                            threads: t,
                            cpus: plan.cpus[..t].to_vec(),
                            iterations: plan.cell.iterations,
                            counters: probe.avail[si].available.clone(),
                            columns: probe.columns.to_vec(),
                            counter_set: si + 1,
                            repetition: rep,
                            clock: plan.cell.clock,
                            tsc_hz: clock.tsc_hz,
                            resolution_ns: clock.resolution_ns,
                            opts: plan.cell.tracer.clone(),
                            run_id: run_id.to_string(),
                            dir: cells_dir.join(format!("{id:04}")),
                            kernel: plan.cell.kernel,
                            payload_size: Some(plan.cell.payload_size),
                            singlestep: plan.cell.singlestep,
                            sentinel_every: plan.cell.sentinel_every,
                            reference_every: plan.cell.reference_every,
                        },
                    ));
                }
            }
        }
    }
    cells
}

/// The exit status the cells earn: 130 when stopped, 1 when a cell failed, else 0; the line
/// that says where the results are.
pub fn exit_code(runs: &[CellRun], out: &Path) -> Result<i32, Error> {
    if supervise::stopped() {
        eprintln!("tracebench: interrupted; results measured so far are in {}", out.display());
        return Ok(130);
    }
    let failed = runs.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        eprintln!(
            "tracebench: {failed} cell(s) failed (see above and run.json); the other results are in {}",
            out.display()
        );
        return Ok(1);
    }
    Ok(0)
}
