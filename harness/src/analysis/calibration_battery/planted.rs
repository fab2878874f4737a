//! The generative battery planted into real runs (`tracebench __calibrate --generative N --real`,
//! `make calibrate-real`): the in-memory battery draws the machine's noise from a model; here
//! this machine supplies it. Each composition's tracer components (its fast-path spread and its
//! paths) become a plan file that the `spin:BASE+PLAN` tracer plays, one extra cost per
//! iteration, in one real `tracebench run`; the machine's components of the grammar are left
//! out, since the real machine has its own. The run's events.csv and reference windows are then
//! analysed as `report` analyses them, and every claim is scored as the in-memory battery scores
//! it (generative.rs).
//!
//! Each composition runs as one sequence of all its calls: the spin plays one plan in every
//! process and cannot tell one repetition from another. So a periodic path keeps the phase of
//! its first sequence, and a path keyed to the call is a fixed set of iterations of that one
//! sequence. The runs are made one after another, never side by side: each pins a core.
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use super::generative::{judge, named, short, table, GenerativeTally, Score};
use super::grammar::{compose, tracer_schedule, Component, Run};
use crate::analysis::analyze;
use crate::analysis::attribution::{attribute, load};
use crate::results::read::{read_run_json, tracers_of, ReadError};

/// A failed step of a real run, as the battery reports it.
fn failed(path: &Path, what: String) -> ReadError {
    ReadError::Io { path: path.to_path_buf(), source: std::io::Error::other(what) }
}

/// The components a real run plants: the tracer's, one sequence's worth.
fn tracer_side(run: &Run) -> Vec<Component> {
    run.components
        .iter()
        .filter(|c| {
            !matches!(
                c,
                Component::Phases { .. }
                    | Component::Stalls { .. }
                    | Component::CoTenant { .. }
                    | Component::Timer { .. }
            )
        })
        .map(|c| match c {
            Component::Periodic { period, phases, extra, cost, stretch } => Component::Periodic {
                period: *period,
                phases: phases[..1].to_vec(),
                extra: *extra,
                cost: *cost,
                stretch: *stretch,
            },
            c => c.clone(),
        })
        .collect()
}

/// Writes the plan of `extra` (ns per iteration) to `path`, readable by this user alone.
fn write_plan(path: &Path, extra: &[f32]) -> Result<(), ReadError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let io = |source| ReadError::Io { path: path.to_path_buf(), source };
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(io)?;
    let mut b = Vec::with_capacity(16 + 4 * extra.len());
    b.extend_from_slice(tracebench_tracers::spin::PLAN_MAGIC);
    b.extend_from_slice(&(extra.len() as u64).to_le_bytes());
    for e in extra {
        b.extend_from_slice(&e.to_le_bytes());
    }
    f.write_all(&b).map_err(io)
}

/// One composition planted into a real run in `work` (a private directory), analysed and scored.
/// The results directory is kept in `work` when a claim was false, so that it can be read.
pub fn real_one(seed: u64, max_calls: u64, work: &Path, exe: &Path) -> Result<Score, ReadError> {
    let t0 = std::time::Instant::now();
    let composed = compose(seed, max_calls);
    let n = composed.seqs.iter().map(Vec::len).sum::<usize>() as u64;
    let run = Run { seqs: Vec::new(), reference: Vec::new(), components: tracer_side(&composed), base: composed.base };
    // Iterations past n: discarded windows take iteration numbers too.
    let len = n + n / 4 + 1000;
    let plan = work.join(format!("plan-{seed:016x}.bin"));
    write_plan(&plan, &tracer_schedule(seed, &run.components, n, len))?;
    let out = work.join(format!("run-{seed:016x}"));
    let tracer = format!("spin:{}+{}", run.base, plan.display());
    let o = Command::new(exe)
        .args(["run", "--tracer", &tracer, "-n", &n.to_string(), "--quiet", "--out"])
        .arg(&out)
        .output()
        .map_err(|e| failed(exe, format!("cannot start a real run: {e}")))?;
    if !o.status.success() {
        return Err(failed(&out, format!("the real run failed: {}", String::from_utf8_lossy(&o.stderr).trim())));
    }
    let meta =
        tracers_of(&read_run_json(&out)?).into_iter().next().ok_or_else(|| failed(&out, "no tracer row".into()))?;
    let a = analyze(&out.join(&meta.dir).join(crate::results::EVENTS_CSV), None, 0, 0)?;
    let mut s = Score {
        calls: a.rows as u64,
        labels: run.components.iter().map(Component::label).collect(),
        ..Score::default()
    };
    if let Some(cp) = a.code_paths.iter().find(|c| c.metric == "latency") {
        let attr = attribute(cp, load(&out, &meta.dir, a.threads)?.as_ref()).unwrap_or_default();
        let mut why = Vec::new();
        s.false_claims = judge(&run, cp, &attr, &mut why);
        s.named = run.components.iter().filter_map(|x| named(x, cp, &attr).map(|k| (x.label(), k))).collect();
        if s.any_false() {
            s.why = format!(
                "seed {seed:#x}: {n} calls of {tracer}, kept in {}\n  planted {:?}\n  false: {}",
                out.display(),
                run.components.iter().map(short).collect::<Vec<_>>(),
                why.join("; ")
            );
        }
    }
    if !s.any_false() {
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_file(&plan);
    }
    s.secs = t0.elapsed().as_secs_f64();
    Ok(s)
}

/// `--generative N --real`: up to `runs` compositions planted into real runs, one after another,
/// stopping at whole runs once `budget_s` seconds have passed; the table on stdout (with the
/// in-memory battery's target), each false claim on stderr with the directory kept for it.
pub fn main(runs: u32, seed: u64, max_calls: u64, budget_s: f64) -> Result<i32, ReadError> {
    let t0 = std::time::Instant::now();
    let exe = std::env::current_exe().map_err(|e| failed(Path::new("tracebench"), e.to_string()))?;
    let work = tracebench_tracers::owned::private_workdir("planted")
        .map_err(|source| ReadError::Io { path: "the private state directory".into(), source })?;
    let mut t = GenerativeTally::default();
    for i in 0..runs {
        if t0.elapsed().as_secs_f64() > budget_s {
            break;
        }
        let sd = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ (i as u64).wrapping_mul(0x9E37_79B9);
        let s = real_one(sd, max_calls, work.path(), &exe)?;
        if s.any_false() {
            eprintln!("{}", s.why);
        }
        t.add(&s);
    }
    let kept = t.false_runs > 0;
    let dir = if kept { Some(work.keep()) } else { None };
    println!("planted into real runs of the spin tracer on this machine (its own noise, not the grammar's):");
    let (s, ok) = table(&t, seed, t0.elapsed().as_secs_f64());
    print!("{s}");
    if let Some(d) = dir {
        println!("the runs with a false claim are kept in {}", d.display());
    }
    Ok(if ok { 0 } else { 1 })
}
