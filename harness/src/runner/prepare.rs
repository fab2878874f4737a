//! Stage 3, prepare: the results directory of a plan, after checking that its files fit on the
//! disk, with the `.cells` directory its cells write into until the merge.
use super::plan::Plan;
use super::probe::Probe;
use super::timings::Timings;
use super::{protocol, space};
use crate::error::Error;
use crate::results::ResultsDir;

/// A plan with the directory its results go to.
pub struct Prepared {
    pub plan: Plan,
    pub out: ResultsDir,
}

impl Prepared {
    /// Where each cell's directory is made (removed once run.json is written).
    pub fn cells_dir(&self) -> std::path::PathBuf {
        self.out.path.join(".cells")
    }
}

/// The disk check (a warning where the files may not fit), then the directory.
pub fn prepare(plan: Plan, probe: &Probe, t: &mut Timings) -> Result<Prepared, Error> {
    let e = space::estimate(&plan, plan.cell.iterations, plan.repeats, probe.columns.len(), plan.cell.sentinel_every);
    space::check(&plan.out, e)?;
    t.mark("counters");
    let p = results_dir(plan)?;
    t.mark("prepare");
    Ok(p)
}

/// The plan's results directory and its `.cells` directory, made new.
pub fn results_dir(plan: Plan) -> Result<Prepared, Error> {
    let out = ResultsDir::create(&plan.out)?;
    let p = Prepared { plan, out };
    protocol::make_cells_dir(&p.cells_dir())?;
    Ok(p)
}
