//! The HPC dlopen backends (extrae, vampirtrace, scorep; tracers/src/hpc.rs) run through a
//! stand-in library (support/hpc_standin.c), since none of the real ones is packaged in Debian:
//! each backend finds it under its library's name through its install-prefix variable, resolves
//! its symbols, fires, and tears down; the stand-in counts the calls and every argument that is
//! not what the backend must pass. This exercises lookup, argument passing and teardown, not the
//! tracers' cost: docs/tracers.md, "HPC tracers", says which rows are measured for real.
//!
//! Prints `SKIP <test>: <reason>` and returns when no C compiler is here, or when a real library
//! of that name is installed (the backend would then load it, not the stand-in).
use std::path::{Path, PathBuf};
use std::process::Command;

use tracebench_tracers::{create, hpc, known, CreateOptions};

const CALLS: u32 = 1000;

type Count = unsafe extern "C" fn(*const std::ffi::c_char) -> std::ffi::c_ulong;

/// Builds the stand-in into `dir`, or says why not.
fn build(dir: &Path) -> Result<PathBuf, String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/hpc_standin.c");
    let so = dir.join("standin.so");
    let out = Command::new(&cc)
        .args(["-O2", "-fPIC", "-shared", "-Wall", "-Werror", "-o"])
        .arg(&so)
        .arg(&src)
        .output()
        .map_err(|e| format!("cannot run {cc} ({e}); apt-get install gcc"))?;
    if !out.status.success() {
        panic!("{cc} failed on {}: {}", src.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(so)
}

/// Installs the stand-in as `h`'s first library under a fresh prefix named by `h`'s first
/// variable; returns the installed path, or why the stand-in would not be the one loaded.
fn install(h: &hpc::Hpc, so: &Path, root: &Path) -> Result<PathBuf, String> {
    let prefix = root.join(h.name);
    std::fs::create_dir_all(prefix.join("lib")).unwrap();
    let lib = prefix.join("lib").join(h.libs[0]);
    // A copy, not a link: the dynamic linker would take a link for the same object as the
    // other backends' copies and share the counts.
    std::fs::copy(so, &lib).unwrap();
    std::env::set_var(h.env[0], &prefix);
    match h.find() {
        Some(p) if p == lib => Ok(lib),
        Some(p) => Err(format!(
            "a real {} is installed here ({}): the backend loads it, not the stand-in",
            h.name,
            p.display()
        )),
        None => panic!("{} does not find {} under {}={}", h.name, h.libs[0], h.env[0], prefix.display()),
    }
}

/// Runs `h` through the stand-in: create, `CALLS` fires, drop; then the stand-in's counts.
fn run(h: &hpc::Hpc, test: &str) -> Option<impl Fn(&str) -> u64> {
    let root = tempfile::tempdir().unwrap();
    let so = match build(root.path()) {
        Ok(so) => so,
        Err(why) => {
            println!("SKIP {test}: {why}");
            return None;
        }
    };
    let lib = match install(h, &so, root.path()) {
        Ok(l) => l,
        Err(why) => {
            println!("SKIP {test}: {why}");
            return None;
        }
    };
    // Loaded here first, so the counts outlive the backend's dlclose in its Drop.
    // SAFETY: the stand-in's constructors are empty.
    let probe = unsafe { libloading::Library::new(&lib) }.unwrap();
    let info = known().into_iter().find(|i| i.name == h.name).unwrap();
    assert_eq!(info.availability, Ok(()), "{}: list must show it available with the stand-in", h.name);
    let t = create(h.name, &CreateOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", h.name));
    assert_eq!(t.config()["library"], lib.display().to_string());
    for i in 0..CALLS {
        t.fire(i);
    }
    drop(t);
    std::env::remove_var(h.env[0]);
    // SAFETY: the stand-in's standin_count(const char*).
    let count: Count = unsafe { *probe.get::<Count>(b"standin_count").unwrap() };
    Some(move |what: &str| {
        let _keep = (&probe, &root);
        let c = std::ffi::CString::new(what).unwrap();
        // SAFETY: a NUL-terminated name; the library stays loaded while `probe` lives.
        unsafe { count(c.as_ptr()) as u64 }
    })
}

#[test]
fn extrae_calls_init_event_and_fini_through_the_standin() {
    let Some(n) = run(&hpc::EXTRAE, "extrae_calls_init_event_and_fini_through_the_standin") else { return };
    assert_eq!(n("bad"), 0, "an argument was not Extrae_event(81000, payload + 1)");
    assert_eq!((n("extrae_init"), n("extrae_event"), n("extrae_fini")), (1, u64::from(CALLS), 1));
    assert_eq!(n("extrae_last"), u64::from(CALLS), "the last value is payload + 1");
}

#[test]
fn vampirtrace_opens_and_closes_one_region_per_call_through_the_standin() {
    let test = "vampirtrace_opens_and_closes_one_region_per_call_through_the_standin";
    let Some(n) = run(&hpc::VAMPIRTRACE, test) else { return };
    assert_eq!(n("bad"), 0, "VT_User_start__/end__ got other arguments or were not paired");
    assert_eq!((n("vt_start"), n("vt_end")), (u64::from(CALLS), u64::from(CALLS)));
}

#[test]
fn scorep_registers_once_then_opens_and_closes_one_region_per_call_through_the_standin() {
    let test = "scorep_registers_once_then_opens_and_closes_one_region_per_call_through_the_standin";
    let Some(n) = run(&hpc::SCOREP, test) else { return };
    assert_eq!(n("bad"), 0, "SCOREP_User_RegionBegin/End got other arguments or were not paired");
    // The first Begin/End (in create) registers the region; every call then passes its handle.
    assert_eq!(n("scorep_register"), 1);
    assert_eq!((n("scorep_begin"), n("scorep_end")), (u64::from(CALLS) + 1, u64::from(CALLS) + 1));
}
