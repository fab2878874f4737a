//! Who owns a results directory: this user alone while the command writes it
//! ([`check_private`]), and, for results made under sudo, the user who ran sudo afterwards.
//!
//! `sudo tracebench run --out base-run` would otherwise leave a root-owned 0700 directory that the next,
//! unprivileged CI step could not read. When tracebench runs as root with `SUDO_UID` and
//! `SUDO_GID` set, and an output lies under a directory that user owns, the outputs this command
//! made are handed to that user when the command ends ([`hand_back`]): their modes stay 0700 and
//! 0600. During the command everything stays root's, so the user cannot swap a file root reads
//! back; the hand-back itself never follows a link (`lchown`, a walk by `symlink_metadata`).
//!
//! Writers register what they make ([`made_dir`], [`made_file`]); `cli::run` calls [`hand_back`]
//! once the command is over. A directory this user cannot read gets its own error ([`unreadable`]).
use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::Error;

/// What the command made that goes to the sudo user at its end: the topmost new directory of an
/// output (walked whole), or a file written into a directory that user already owned.
static MADE: Mutex<Vec<(PathBuf, u32, u32)>> = Mutex::new(Vec::new());

/// The user who ran sudo, when we are root under sudo: (uid, gid). None otherwise (a plain root
/// login keeps its files, an unprivileged user owns its own).
pub fn sudo_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    sudo_user_from(std::env::var("SUDO_UID").ok().as_deref(), std::env::var("SUDO_GID").ok().as_deref())
}

/// [`sudo_user`]'s parsing: both set, both numbers, and not root itself.
pub fn sudo_user_from(uid: Option<&str>, gid: Option<&str>) -> Option<(u32, u32)> {
    let uid: u32 = uid?.trim().parse().ok()?;
    let gid: u32 = gid?.trim().parse().ok()?;
    (uid != 0).then_some((uid, gid))
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    }
}

/// For an output `path` about to be made: the topmost component that does not exist yet, when
/// the nearest existing directory above it is owned by `uid` (a real directory, not a link). That
/// component is what this command will make, and what goes back to the user.
pub fn new_top_under(path: &Path, uid: u32) -> Option<PathBuf> {
    let abs = absolute(path);
    let mut top = None;
    let mut cur = abs.as_path();
    loop {
        match fs::symlink_metadata(cur) {
            Ok(m) => return if m.is_dir() && m.uid() == uid { top } else { None },
            Err(_) => {
                top = Some(cur.to_path_buf());
                cur = cur.parent()?;
            }
        }
    }
}

/// Call before making the output directory `path` (and its missing parents): under sudo, the new
/// part goes to the user at the end of the command if the directory above it is theirs.
pub fn made_dir(path: &Path) {
    let Some((uid, gid)) = sudo_user() else { return };
    if let Some(top) = new_top_under(path, uid) {
        MADE.lock().unwrap_or_else(|e| e.into_inner()).push((top, uid, gid));
    }
}

/// Call after writing the file `dest`: under sudo, it goes to the user at the end of the command
/// when its directory is theirs (a report written into a results directory they own).
pub fn made_file(dest: &Path) {
    let Some((uid, gid)) = sudo_user() else { return };
    let dir = match absolute(dest).parent() {
        Some(p) => p.to_path_buf(),
        None => return,
    };
    if fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == uid) {
        MADE.lock().unwrap_or_else(|e| e.into_inner()).push((absolute(dest), uid, gid));
    }
}

/// Hands every registered output to the sudo user: each entry still owned by root, a directory
/// with everything under it, links themselves (`lchown`) and never what they point to. Returns a
/// line per path that could not be handed back (said on stderr by the caller, not an error: the
/// results are there).
pub fn hand_back() -> Vec<String> {
    let made = std::mem::take(&mut *MADE.lock().unwrap_or_else(|e| e.into_inner()));
    let mut failed = Vec::new();
    for (path, uid, gid) in made {
        if let Err(e) = give(&path, uid, gid) {
            failed.push(format!("could not hand {} to uid {uid} (sudo's user): {e}", path.display()));
        }
    }
    failed
}

/// `lchown`s `path` (and, for a real directory, everything under it) that root owns.
pub fn give(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    let m = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if m.uid() == 0 {
        std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    }
    if m.is_dir() {
        for entry in fs::read_dir(path)? {
            give(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// When `dir` exists but this user may not read it: the one line to say instead of "not a
/// results directory" (a run made under sudo, read by the CI step after it without sudo).
pub fn unreadable(dir: &Path) -> Option<String> {
    let m = fs::metadata(dir).ok()?;
    let denied = if m.is_dir() {
        fs::read_dir(dir).err().is_some_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
    } else {
        return None;
    };
    if !denied {
        return None;
    }
    let owner = if m.uid() == 0 { "root (made under sudo?)".to_string() } else { format!("uid {}", m.uid()) };
    Some(format!(
        "permission denied: {} is owned by {owner}; read it as its owner, or `sudo chown -R $(id -u):$(id -g) {}` \
         (tracebench hands results made under sudo to the sudo user when their directory is that user's)",
        dir.display(),
        dir.display()
    ))
}

/// An existing output directory must be ours alone: owned by the effective user, not writable by
/// group or others, and not reached through a link someone else owns. The run writes the cells'
/// specs and rows there and reads them back, as root too; a directory another user can write
/// would let them swap a spec or plant a link. Its parent must not let others replace
/// it either (writable by others without the sticky bit).
pub fn check_private(path: &Path) -> Result<(), Error> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let refuse = |why: String| Err(Error::Usage(format!("--out {}: {why}", path.display())));
    check_parent(path, refuse)?;
    let Ok(link) = fs::symlink_metadata(path) else { return Ok(()) };
    if link.file_type().is_symlink() && link.uid() != me && link.uid() != 0 {
        return refuse(format!("it is a link owned by uid {}; pass the real directory", link.uid()));
    }
    let Ok(m) = fs::metadata(path) else { return refuse("it is a dangling link; pass a real directory".into()) };
    if !m.is_dir() {
        return refuse("it is not a directory; pass a new or empty directory".into());
    }
    if m.uid() != me {
        return refuse(format!(
            "it is owned by uid {}, not by you (uid {me}), so its owner could swap what this run writes and \
             reads back; pass a directory of your own, or a new path",
            m.uid()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return refuse(format!(
            "group or others can write it (mode {:o}); run `chmod go-w {}` or pass a new path",
            m.mode() & 0o7777,
            path.display()
        ));
    }
    Ok(())
}

/// Refuses a path whose parent lets others replace it: writable by everyone without the sticky
/// bit (a sticky /tmp is fine: there nobody renames or removes another user's entry).
fn check_parent(path: &Path, refuse: impl Fn(String) -> Result<(), Error>) -> Result<(), Error> {
    let abs =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(path) };
    let Some(parent) = abs.parent() else { return Ok(()) };
    let Ok(m) = fs::metadata(parent) else { return Ok(()) };
    if m.mode() & 0o002 != 0 && m.mode() & 0o1000 == 0 {
        return refuse(format!(
            "its parent directory {} is writable by everyone without the sticky bit, so anyone could replace \
             it; pick a directory elsewhere",
            parent.display()
        ));
    }
    Ok(())
}

/// Makes `path` as a private (0700) directory, or accepts an existing real directory (not a
/// link): figures and tracer directories inside a results directory.
pub fn subdir(path: &Path) -> std::io::Result<()> {
    made_dir(path);
    match fs::DirBuilder::new().mode(super::PRIVATE_DIR_MODE).create(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if fs::symlink_metadata(path)?.is_dir() {
                Ok(())
            } else {
                Err(std::io::Error::other("exists and is not a directory (a link?); remove it"))
            }
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sudo_user_needs_both_ids_and_not_root() {
        assert_eq!(sudo_user_from(Some("1000"), Some("1000")), Some((1000, 1000)));
        assert_eq!(sudo_user_from(Some("1000"), None), None);
        assert_eq!(sudo_user_from(None, Some("1000")), None);
        assert_eq!(sudo_user_from(Some("0"), Some("0")), None);
        assert_eq!(sudo_user_from(Some("x"), Some("1")), None);
    }

    #[test]
    fn the_new_part_under_a_directory_of_the_user_is_found() {
        let d = tempfile::tempdir().unwrap();
        let me = fs::metadata(d.path()).unwrap().uid();
        let out = d.path().join("a/b/run");
        assert_eq!(new_top_under(&out, me), Some(d.path().join("a")));
        // Not that user's directory: nothing is handed back.
        assert_eq!(new_top_under(&out, me + 1), None);
        // An existing output: nothing new to hand back.
        assert_eq!(new_top_under(d.path(), me), None);
    }

    #[test]
    fn a_planted_link_is_never_followed() {
        let d = tempfile::tempdir().unwrap();
        let me = fs::metadata(d.path()).unwrap().uid();
        let gid = fs::metadata(d.path()).unwrap().gid();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
        // Walks without error and does not descend into the link's target.
        give(d.path(), me, gid).unwrap();
        assert!(fs::symlink_metadata(d.path().join("link")).unwrap().file_type().is_symlink());
    }
}
