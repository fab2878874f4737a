//! The state `system tune` leaves for `system reset`: every file it changed, with the bytes it
//! held before, in `/run/tracebench/system-tune.json` (under the [`Sys`] root).
//!
//! Owned like the other run state (`tracebench_tracers::owned`): a directory of this user's, mode
//! 0700, that is not a link; a file of this user's that no one else may write; written to a
//! temporary file in that directory and renamed, so a reader never sees half of it. Tune saves
//! the entry of each file before it changes the file, so a tune killed halfway leaves a state
//! from which reset restores everything it had changed.
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Sys, SystemError};

/// One file tune changed (or was about to change when it saved this).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedFile {
    /// The path on the machine (`/proc/sys/...`), under the root.
    pub path: String,
    /// What the knob is, in words.
    pub what: String,
    /// Its exact bytes before tune, in hex (sysfs values are text, but nothing is assumed).
    pub before_hex: String,
}

impl SavedFile {
    pub fn before(&self) -> Vec<u8> {
        (0..self.before_hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&self.before_hex[2 * i..2 * i + 2], 16).ok())
            .collect()
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// In the order tune changed them; reset restores them in the reverse order.
    pub entries: Vec<SavedFile>,
}

/// `ROOT/run/tracebench`, made 0700 if `create`; refused unless it is this user's private
/// directory (not a link someone planted, not writable by others).
pub fn dir(sys: &Sys, create: bool) -> Result<PathBuf, SystemError> {
    let d = sys.path("/run/tracebench");
    if create {
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&d);
    }
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let m = std::fs::symlink_metadata(&d).map_err(|_| SystemError::NoState(file_in(&d).display().to_string()))?;
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(SystemError::State(format!(
            "{} is not a private directory of this user (a link, another owner, or writable by others); remove it",
            d.display()
        )));
    }
    Ok(d)
}

fn file_in(dir: &std::path::Path) -> PathBuf {
    dir.join("system-tune.json")
}

pub fn path(sys: &Sys) -> PathBuf {
    file_in(&sys.path("/run/tracebench"))
}

/// The recorded state, or None when there is none.
pub fn load(sys: &Sys) -> Result<Option<State>, SystemError> {
    let Ok(d) = dir(sys, false) else { return Ok(None) };
    let p = file_in(&d);
    let Ok(m) = std::fs::symlink_metadata(&p) else { return Ok(None) };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if !m.is_file() || m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(SystemError::State(format!("{}: not a regular file of this user's; remove it", p.display())));
    }
    let text = std::fs::read_to_string(&p).map_err(|e| SystemError::State(format!("{}: {e}", p.display())))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| SystemError::State(format!("{}: not a tune state ({e}); remove it", p.display())))
}

/// Writes the state atomically (temporary file in the private directory, then rename).
pub fn save(sys: &Sys, s: &State) -> Result<(), SystemError> {
    let p = file_in(&dir(sys, true)?);
    let mut text = serde_json::to_string_pretty(s).map_err(|e| SystemError::State(e.to_string()))?;
    text.push('\n');
    crate::results::atomic::write_atomic(&p, text.as_bytes()).map_err(|e| SystemError::State(e.to_string()))
}

pub fn remove(sys: &Sys) {
    let _ = std::fs::remove_file(path(sys));
}
