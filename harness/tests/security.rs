//! A root run on a shared machine: each attack on it, replayed by another user (`nobody`,
//! through setpriv) or with predictable temporary names, fails, and the root run either goes on
//! unharmed or refuses with one line and exit 2.
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NOBODY: u32 = 65534;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracebench"))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn chown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: chown of a path this test made.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, uid) }, 0, "chown {}", p.display());
}

/// A shell script run as `nobody` in the background (the attacker), if setpriv is there.
fn as_nobody(script: &str) -> Option<std::process::Child> {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// Exit code and stderr of a run that must be refused up front.
fn refused(out: &Path) -> (Option<i32>, String) {
    let o = bin().args(["run", "-q", "--tracer", "none", "-n", "200", "--out"]).arg(out).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Attack 2 (its entry point): an `--out` that another user made, or that others can write, is
/// refused with one line and exit 2, and nothing is written into it.
#[test]
fn an_out_directory_others_own_or_can_write_is_refused() {
    if !is_root() {
        println!("SKIP security out-dir test: needs root to make a directory owned by nobody");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown(&theirs, NOBODY);
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let shared_parent = tmp.path().join("shared");
    std::fs::create_dir(&shared_parent).unwrap();
    std::fs::set_permissions(&shared_parent, std::fs::Permissions::from_mode(0o777)).unwrap();
    for (dir, says) in [
        (theirs.clone(), "owned by uid 65534"),
        (open.clone(), "group or others can write it"),
        (shared_parent.join("r"), "writable by everyone without the sticky bit"),
    ] {
        let (code, err) = refused(&dir);
        assert_eq!(code, Some(2), "{}: {err}", dir.display());
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(says), "{}: {err}", dir.display());
        let entries = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert_eq!(entries, 0, "{}: something was written", dir.display());
    }
    assert!(!shared_parent.join("r").exists(), "the refused --out was created");
}

/// Attack 2 (its payload): while a root run measures, `nobody` tries to read the cells' specs,
/// swap them, and plant a `cell.pid` link to a root file. The cells are private (0700), no spec or
/// pid travels through a file, and the run finishes with every cell kept and the file untouched.
#[test]
fn a_running_cell_cannot_be_swapped_or_hijacked() {
    if !is_root() {
        println!("SKIP security cells test: needs root (the attack is another user against root)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "root's file\n").unwrap();
    let out = tmp.path().join("r");
    let log = tmp.path().join("attacker.log");
    std::fs::write(&log, "").unwrap();
    chown(&log, NOBODY);
    let script = format!(
        "end=$(($(date +%s)+8)); while [ $(date +%s) -lt $end ]; do \
           for d in '{out}'/.cells/*; do \
             cat \"$d/cell.json\" >/dev/null 2>&1 && echo read >>'{log}'; \
             echo '{{}}' >\"$d/cell.json\" 2>/dev/null && echo swapped >>'{log}'; \
             ln -sf '{victim}' \"$d/cell.pid\" 2>/dev/null && echo planted >>'{log}'; \
           done; \
           ls '{out}/.cells' >/dev/null 2>&1 && echo listed >>'{log}'; \
         done",
        out = out.display(),
        log = log.display(),
        victim = victim.display()
    );
    let Some(mut attacker) = as_nobody(&script) else {
        println!("SKIP security cells test: setpriv (util-linux) is not installed");
        return;
    };
    let o =
        bin().args(["run", "-q", "--tracer", "none,lw", "-n", "20000", "--repeats", "3", "--out"]).arg(&out).output();
    let _ = attacker.kill();
    let _ = attacker.wait();
    let o = o.unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's file\n");
    let did = std::fs::read_to_string(&log).unwrap();
    assert!(!did.contains("read") && !did.contains("swapped") && !did.contains("planted"), "attacker got in: {did}");
    let m = std::fs::metadata(&out).unwrap();
    assert_eq!(m.mode() & 0o777, 0o700, "results are private by default");
    let reps = std::fs::read_to_string(out.join("repetitions.csv")).unwrap();
    assert_eq!(reps.lines().count(), 1 + 2 * 3, "every cell kept a row: {reps}");
}

/// Attack 1: the LTTng snapshot directory's old name, `/tmp/tracebench-RUNID-PID-snapshot`,
/// planted as a link to a victim directory for every measuring process, as the attacker's watcher
/// did. The run neither uses nor empties it: the victim's subdirectory survives.
#[test]
fn a_planted_snapshot_link_deletes_nothing() {
    if !is_root() {
        println!("SKIP security snapshot test: needs root (LTTng session daemon, root victim)");
        return;
    }
    if let Err((why, _)) = tracebench_tracers::lttng::availability() {
        println!("SKIP security snapshot test: LTTng unavailable: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::create_dir_all(victim.join("precious")).unwrap();
    let out = tmp.path().join("r");
    let mut run = bin()
        .args(["run", "-q", "--tracer", "none,lttng-ust", "-n", "20000", "--repeats", "2", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let parent = run.id();
    let t0 = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut planted = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while run.try_wait().unwrap().is_none() && Instant::now() < deadline {
        // Every process of this run (the parent and its cells), under every run id the parent's
        // start second could have given (`STAMP-PARENTPID`).
        for pid in run_pids(parent) {
            for s in t0.saturating_sub(2)..=t0 + 2 {
                let name = format!("tracebench-{}-{parent}-{pid}-snapshot", stamp(s));
                let p = std::env::temp_dir().join(name);
                if std::os::unix::fs::symlink(&victim, &p).is_ok() {
                    planted.push(p);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let o = run.wait_with_output().unwrap();
    for p in &planted {
        let _ = std::fs::remove_file(p);
    }
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!planted.is_empty(), "the replay planted nothing: it tests nothing");
    assert!(victim.join("precious").is_dir(), "the run emptied the victim directory through a planted link");
}

/// The pids of `parent` and its children.
fn run_pids(parent: u32) -> Vec<u32> {
    let mut v = vec![parent];
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            let ppid = std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|s| s.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<u32>().ok()));
            if ppid == Some(parent) {
                v.push(pid);
            }
        }
    }
    v
}

/// `YYYYMMDDTHHMMSSZ` of a Unix second (the run id's stamp).
fn stamp(secs: u64) -> String {
    let o = Command::new("date").args(["-u", "-d", &format!("@{secs}"), "+%Y%m%dT%H%M%SZ"]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Attack 3 end to end: `tracebench report` as root on results another user can write, with
/// links planted under the writer's old temp names (`.NAME.tmpPID` for every pid) and under the
/// report's own names. No root file is written through them.
#[test]
fn a_report_on_planted_links_overwrites_nothing() {
    if !is_root() {
        println!("SKIP security report test: needs root (the attack is another user against root)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = bin().args(["run", "-q", "--tracer", "none,lw", "-n", "2000", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "root's file\n").unwrap();
    // The report's pid will be one of the next few the kernel hands out.
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid").unwrap().trim().parse().unwrap();
    for name in ["report.md", "report.html"] {
        for pid in last + 1..last + 400 {
            let _ = std::os::unix::fs::symlink(&victim, out.join(format!(".{name}.tmp{pid}")));
        }
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    let o = bin().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's file\n", "a report was written through a link");
    assert!(std::fs::symlink_metadata(out.join("report.md")).unwrap().is_file());
}

/// The cell takes its spec only from its stdin: none there, or one for another directory, is
/// refused with one line and exit 2 (nothing read from a path).
#[test]
fn a_cell_without_its_spec_on_stdin_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let o = bin().arg("__cell").arg(tmp.path()).stdin(Stdio::null()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no cell spec on stdin") && err.contains("this command is tracebench's own"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let mut child = bin().arg("__cell").arg(tmp.path()).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    {
        use std::io::Write;
        let spec = r#"{"id":0,"spec":"none","label":"none","threads":1,"cpus":[0],"iterations":1,"counters":[],"counter_set":0,"repetition":0,"clock":"tsc","tsc_hz":1e9,"resolution_ns":1.0,"opts":{},"run_id":"x","dir":"/elsewhere"}"#;
        child.stdin.take().unwrap().write_all(spec.as_bytes()).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the spec on stdin is for /elsewhere"), "{err}");
}
