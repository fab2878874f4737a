//! A user without root, who may not open perf events (`kernel.perf_event_paranoid` 2 and no
//! CAP_PERFMON), measures the rows that need no root: the getrusage fallback
//! detector runs, and the terminal, run.json and the report say what it cannot see and how to get
//! the full one.
//!
//! Changes no machine-wide setting and creates no user: the run is started as `nobody`, in a
//! directory of the test's own, with perf_event_open(2) denied to it (and its children) by a
//! seccomp filter that answers EACCES, which is what the kernel answers such a user for the
//! detector's kernel-side events. Needs root only to switch to `nobody`.
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

const USER: &str = "nobody";

fn uid_gid_of(user: &str) -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let o = Command::new("id").args([flag, user]).output().ok()?;
        String::from_utf8_lossy(&o.stdout).trim().parse().ok().filter(|_| o.status.success())
    };
    Some((id("-u")?, id("-g")?))
}

/// In the child, after the switch to the user (std sets the ids before pre_exec closures run):
/// no new privileges, then a filter that fails perf_event_open with EACCES and allows the rest.
fn deny_perf_event_open() -> std::io::Result<()> {
    let stmt = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
    let jeq = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let mut prog = [
        // The system call number (offset 0 of struct seccomp_data).
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
        jeq(libc::SYS_perf_event_open as u32, 0, 1),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ERRNO | libc::EACCES as u32),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ];
    let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_mut_ptr() };
    // SAFETY: prctl with a filter program that lives until the call returns (the kernel copies it).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog as *const libc::sock_fprog) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Runs the tracebench binary with `args` as the user, perf events denied, in `home`.
fn as_user(ids: (u32, u32), home: &Path, args: &[&std::ffi::OsStr]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tracebench"));
    c.args(args).current_dir(home).env("HOME", home).env("TMPDIR", home).env_remove("RUST_LOG");
    c.uid(ids.0).gid(ids.1);
    // SAFETY: prctl only, in the forked child before exec.
    unsafe { c.pre_exec(deny_perf_event_open) };
    c.output().unwrap()
}

#[test]
fn an_unprivileged_user_measures_with_the_weak_detector_and_is_told_so() {
    let test = "an_unprivileged_user_measures_with_the_weak_detector_and_is_told_so";
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("SKIP {test}: needs root to run tracebench as the user {USER}");
        return;
    }
    let Some(ids) = uid_gid_of(USER) else {
        println!("SKIP {test}: no user {USER} on this machine");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let c = std::ffi::CString::new(home.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: chown of the directory this test made, to the user, so that it can write there.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), ids.0, ids.1) }, 0);
    let out = home.join("r");
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let o = as_user(
        ids,
        home,
        &[
            os("run"),
            os("--tracer"),
            os("none,lw,printf"),
            os("-n"),
            os("2000"),
            os("--quiet"),
            os("--out"),
            out.as_os_str(),
        ],
    );
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
    let o = as_user(ids, home, &[os("report"), out.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("WEAK disturbance detector"), "report.md header lacks the weak detector");
    // `tracebench list` marks the rows that need root and says why to this user.
    let o = as_user(ids, home, &[os("list")]);
    let list = String::from_utf8_lossy(&o.stdout);
    let ftrace = list.lines().find(|l| l.starts_with("ftrace ")).unwrap();
    assert!(ftrace.contains("[root]"), "{ftrace}");
    let none = list.lines().find(|l| l.starts_with("none ")).unwrap();
    assert!(!none.contains("[root]"), "{none}");
}
