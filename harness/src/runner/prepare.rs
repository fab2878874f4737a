//! Stage 3, prepare: the results directory of a plan, with the `.cells` directory its cells
//! write into until the merge, and the path of each row's directory, named once here and handed
//! down to the merge.
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use super::plan::Plan;
use crate::error::Error;
use crate::results::{ResultsDir, PRIVATE_DIR_MODE};

/// A plan with the directory its results go to.
pub struct Prepared {
    pub plan: Plan,
    pub out: ResultsDir,
    /// Where each cell's directory is made (removed once run.json is written).
    pub cells: PathBuf,
    /// Each row's directory, by plan row: made by the merge when it writes the row's first file,
    /// so a row that measured nothing has none.
    pub row_dirs: Vec<PathBuf>,
}

/// The plan's results directory and its `.cells` directory, made new (the cells' directory must
/// not exist yet: nothing of another run is read back as a cell's).
pub fn prepare(plan: Plan) -> Result<Prepared, Error> {
    let out = ResultsDir::create(&plan.out)?;
    let cells = out.file(".cells");
    std::fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(&cells).map_err(|e| Error::OutDir {
        path: cells.display().to_string(),
        why: format!("cannot make it ({e}); it must not exist yet"),
    })?;
    let row_dirs = plan.rows.iter().map(|r| out.file(&r.dir)).collect();
    Ok(Prepared { plan, out, cells, row_dirs })
}
