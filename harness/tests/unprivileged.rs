//! A user without root, with `kernel.perf_event_paranoid` 2, measures the rows that need no root
//! (issue 15, item 3): the getrusage fallback detector runs, and the terminal, run.json and the
//! report say what it cannot see and how to get the full one. Really run as another user: needs
//! root to create the user (`tbuser`, kept for later runs) and to set the sysctl, which is put
//! back when the test ends, even on failure.
use std::path::Path;
use std::process::{Command, Output};

const USER: &str = "tbuser";
const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Puts perf_event_paranoid back on drop (a failing assertion unwinds through it).
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(PARANOID, &self.0);
    }
}

fn uid_of(user: &str) -> Option<u32> {
    let o = Command::new("id").args(["-u", user]).output().ok()?;
    String::from_utf8_lossy(&o.stdout).trim().parse().ok().filter(|_| o.status.success())
}

fn as_user(cmd: &str) -> Output {
    Command::new("su").args([USER, "-c", &format!("cd /tmp && {cmd}")]).output().unwrap()
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn an_unprivileged_user_measures_with_the_weak_detector_and_is_told_so() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("SKIP unprivileged test: needs root to create the user {USER} and set perf_event_paranoid");
        return;
    }
    if uid_of(USER).is_none() && !Command::new("useradd").args(["-m", USER]).status().is_ok_and(|s| s.success()) {
        println!("SKIP unprivileged test: cannot create the user {USER} (useradd failed)");
        return;
    }
    let Some(uid) = uid_of(USER) else {
        println!("SKIP unprivileged test: no user {USER}");
        return;
    };
    let Ok(before) = std::fs::read_to_string(PARANOID) else {
        println!("SKIP unprivileged test: cannot read {PARANOID}");
        return;
    };
    let _restore = Restore(before.trim().to_string());
    std::fs::write(PARANOID, "2").unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let c = std::ffi::CString::new(tmp.path().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: chown of a directory this test made, to the test user, so that it can write there.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, uid) }, 0);
    let out = tmp.path().join("r");
    let bin = Path::new(env!("CARGO_BIN_EXE_tracebench"));
    let o = as_user(&format!("{} run --tracer none,lw,printf -n 2000 --quiet --out {}", quote(bin), quote(&out)));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "as {USER}: {err}");
    // The terminal: loud, and names what is not seen and the way to the full detector.
    let warning = err.lines().find(|l| l.contains("WEAK disturbance detector")).unwrap_or_else(|| panic!("{err}"));
    for needle in ["getrusage(RUSAGE_THREAD)", "interrupts", "timer ticks", "run as root", "perf_event_paranoid=1"] {
        assert!(warning.contains(needle), "'{needle}' missing from: {warning}");
    }
    // run.json says the same, and what the detector watched.
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let d = &run["disturbance"];
    assert!(d["weak"].as_str().unwrap().contains("interrupts"), "{d}");
    assert!(d["watched"][0].as_str().unwrap().starts_with("getrusage"), "{d}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    for t in ["none", "lw", "printf"] {
        assert!(summary.lines().any(|l| l.starts_with(&format!("{t},1,2000,"))), "{t} not measured: {summary}");
    }
    // The report's header.
    let o = as_user(&format!("{} report {}", quote(bin), quote(&out)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("WEAK disturbance detector"), "report.md header lacks the weak detector");
    // `tracebench list` marks the rows that need root and says why to this user.
    let o = as_user(&format!("{} list", quote(bin)));
    let list = String::from_utf8_lossy(&o.stdout);
    let ftrace = list.lines().find(|l| l.starts_with("ftrace ")).unwrap();
    assert!(ftrace.contains("[root]"), "{ftrace}");
    let none = list.lines().find(|l| l.starts_with("none ")).unwrap();
    assert!(!none.contains("[root]"), "{none}");
}
