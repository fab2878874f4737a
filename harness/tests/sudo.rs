//! Results made under sudo belong to the user who ran sudo: the CI example runs
//! `sudo tracebench run --out base-run` and then `tracebench gate` without sudo. Replayed here as
//! root with SUDO_UID/SUDO_GID naming `nobody`, and the unprivileged steps run as `nobody`
//! (setpriv).
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

const NOBODY: u32 = 65534;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracebench"))
}

fn usable() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success());
    if !root || !setpriv {
        println!("SKIP sudo hand-back test: needs root and setpriv");
    }
    root && setpriv
}

fn chown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: chown of a path this test made.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, uid) }, 0, "chown {}", p.display());
}

/// `tracebench ARGS` as nobody.
fn as_nobody(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_tracebench")])
        .args(args)
        .current_dir(cwd)
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .output()
        .unwrap()
}

/// Every entry under `p` (itself included): (path, uid, mode).
fn tree(p: &Path) -> Vec<(String, u32, u32)> {
    let m = std::fs::symlink_metadata(p).unwrap();
    let mut out = vec![(p.display().to_string(), m.uid(), m.mode() & 0o7777)];
    if m.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            out.extend(tree(&e.unwrap().path()));
        }
    }
    out
}

/// A world-traversable scratch directory (nobody must reach its own directory inside).
fn scratch() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    t
}

#[test]
fn results_made_under_sudo_go_to_the_sudo_user_and_stay_private() {
    if !usable() {
        return;
    }
    let t = scratch();
    let home = t.path().join("home");
    std::fs::create_dir(&home).unwrap();
    chown(&home, NOBODY);
    let run = |out: &str| {
        let o = bin()
            .args(["run", "-q", "--tracer", "none", "-n", "300", "--repeats", "3", "--out", out])
            .current_dir(&home)
            .env("SUDO_UID", "65534")
            .env("SUDO_GID", "65534")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // A missing parent too: made under the user's directory, so it is theirs as well.
    run("ci/base-run");
    run("ci/head-run");
    assert_eq!(std::fs::metadata(home.join("ci")).unwrap().uid(), NOBODY);
    for (path, uid, mode) in tree(&home.join("ci/base-run")).into_iter().chain(tree(&home.join("ci/head-run"))) {
        assert_eq!(uid, NOBODY, "{path} is not the sudo user's");
        let dir = Path::new(&path).is_dir();
        assert_eq!(mode, if dir { 0o700 } else { 0o600 }, "{path} mode {mode:o}");
    }
    // The CI step after it, without sudo: the gate reads both and writes its outputs.
    let o = as_nobody(
        &[
            "gate",
            "--baseline",
            "ci/base-run",
            "--candidate",
            "ci/head-run",
            "--markdown",
            "ci/gate.md",
            "--junit",
            "ci/gate.xml",
        ],
        &home,
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(home.join("ci/gate.md").is_file());
    // A root report (sudo) written into the user's results directory is theirs too.
    let o = bin()
        .args(["report", "ci/base-run"])
        .current_dir(&home)
        .env("SUDO_UID", "65534")
        .env("SUDO_GID", "65534")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for (path, uid, _) in tree(&home.join("ci/base-run")) {
        assert_eq!(uid, NOBODY, "{path} (written by a sudo report) is not the sudo user's");
    }
}

#[test]
fn a_root_run_elsewhere_stays_root_and_says_why_it_cannot_be_read() {
    if !usable() {
        return;
    }
    let t = scratch();
    // Under sudo, but --out is not under a directory of the sudo user: it stays root's.
    let o = bin()
        .args(["run", "-q", "--tracer", "none", "-n", "300", "--out", "root-run"])
        .current_dir(t.path())
        .env("SUDO_UID", "65534")
        .env("SUDO_GID", "65534")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::metadata(t.path().join("root-run")).unwrap().uid(), 0);
    // Read without sudo: the real cause, not "not a results directory".
    for args in [
        vec!["gate", "--baseline", "root-run", "--candidate", "root-run"],
        vec!["export", "root-run", "--format", "bmf"],
        vec!["report", "root-run"],
    ] {
        let o = as_nobody(&args, t.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("permission denied: root-run is owned by root (made under sudo?)"), "{args:?}: {err}");
        assert!(!err.contains("not a results directory"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
