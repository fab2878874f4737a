//! profile.json: where a stepped run's instructions went, per exact count. Each cell
//! of a `--instructions singlestep` run writes one (`runner::singlestep`), the merge sums them
//! per tracer, and the report (`report::side::function_profile`) and the gate read it: both need
//! it, so it lives here, below both.
//!
//! A folded stack is `outermost;...;leaf` function names, the leaf being the function whose
//! instruction ran, the others those of the open `call`s (the shadow call stack); its number is
//! the instructions run there over all the count's calls. The self counts of a count's stacks sum
//! to `user_instructions * calls` exactly.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::results::read::ReadError;

pub const PROFILE_JSON: &str = "profile.json";

/// The calls of one exact user-instruction count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CountProfile {
    pub user_instructions: u64,
    pub calls: u64,
    /// Folded stack -> instructions, over all the calls.
    pub stacks: BTreeMap<String, u64>,
    /// System-call name -> calls made, over all the calls.
    pub syscalls: BTreeMap<String, u64>,
}

/// One tracer's (or cell's) profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub counts: Vec<CountProfile>,
    /// Function -> the module (file name) its code is in.
    #[serde(default)]
    pub modules: BTreeMap<String, String>,
}

impl Profile {
    /// Adds another cell's counts (same count: summed).
    pub fn add(&mut self, other: Profile) {
        self.modules.extend(other.modules);
        for c in other.counts {
            match self.counts.iter_mut().find(|x| x.user_instructions == c.user_instructions) {
                Some(x) => {
                    x.calls += c.calls;
                    for (k, v) in c.stacks {
                        *x.stacks.entry(k).or_default() += v;
                    }
                    for (k, v) in c.syscalls {
                        *x.syscalls.entry(k).or_default() += v;
                    }
                }
                None => self.counts.push(c),
            }
        }
        self.counts.sort_by_key(|c| c.user_instructions);
    }

    pub fn write(&self, path: &Path) -> Result<(), Error> {
        crate::results::write_json(path, self)
    }

    /// None when there is no file (a timed run, or one stepped by a version that wrote none).
    pub fn read(path: &Path) -> Option<Result<Profile, ReadError>> {
        let text = std::fs::read_to_string(path).ok()?;
        Some(serde_json::from_str(&text).map_err(|e| ReadError::Parse {
            path: path.to_path_buf(),
            line: e.line() as u64,
            msg: format!("not a stepped run's profile: {e}"),
        }))
    }
}

/// The cells' profiles `cells` summed into `dest`; nothing is written when they hold no count.
pub fn sum_into(dest: &Path, cells: &[PathBuf]) -> Result<(), Error> {
    let mut sum = Profile::default();
    for c in cells {
        if let Some(cell) = Profile::read(c) {
            sum.add(cell.map_err(|e| Error::Measurement(e.to_string()))?);
        }
    }
    if !sum.counts.is_empty() {
        sum.write(dest)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_add_up_per_count() {
        let c = |n: u64, calls: u64, s: &str, v: u64| CountProfile {
            user_instructions: n,
            calls,
            stacks: [(s.to_string(), v)].into(),
            syscalls: BTreeMap::new(),
        };
        let mut p = Profile { counts: vec![c(10, 2, "a;b", 20)], modules: [("a".into(), "x".into())].into() };
        p.add(Profile {
            counts: vec![c(10, 1, "a;b", 10), c(7, 1, "a", 7)],
            modules: [("b".into(), "y".into())].into(),
        });
        assert_eq!(p.modules.len(), 2);
        assert_eq!(p.counts.len(), 2);
        assert_eq!(p.counts[0].user_instructions, 7);
        assert_eq!((p.counts[1].calls, p.counts[1].stacks["a;b"]), (3, 30));
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(PROFILE_JSON);
        p.write(&f).unwrap();
        assert_eq!(Profile::read(&f).unwrap().unwrap(), p);
        assert!(Profile::read(&d.path().join("none.json")).is_none());
    }
}
