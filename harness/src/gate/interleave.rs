//! `--interleave`: the gate runs both sides itself, alternately, in ABBA order.
//!
//! Noise on a shared machine comes in bursts that slow whole repetitions. Running all of A and
//! then all of B lets one burst land on one side only and read as a change; alternating
//! A B B A A B B A ... spreads bursts (and slow drifts: thermal, a neighbour's build) evenly
//! over both sides, and the ABBA order also cancels a linear drift within each block of four
//! (Kalibera & Jones 2013 randomise the order of executions for the same reason).
//!
//! How a side's command is invoked (documented in the README): for repetition `i` (0-based)
//! of side `A` (baseline) or `B` (candidate), the gate runs
//!
//! ```text
//! /bin/sh -c 'CMD "$@"' tracebench-gate --repeats 1 --out WORK/A-i
//! ```
//!
//! i.e. `CMD --repeats 1 --out WORK/A-i` with the two options appended safely quoted, where CMD is
//! the --baseline-cmd string, with the directory of the running `tracebench` first on PATH (so
//! `tracebench` in CMD is this same binary) and `TRACEBENCH_GATE_SIDE` (`baseline` or
//! `candidate`) and `TRACEBENCH_GATE_REPETITION` (`i`) in the environment. Its stdout and
//! stderr go to `WORK/A-i.log`. It must exit 0 and leave `WORK/A-i/repetitions.csv`.
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::input::Results;
use super::{GateArgs, GateError};
use crate::runner::supervise::{self, Ended};

/// A working directory: the user's `--out` (kept; it must be ours alone, see
/// `results::owner::check_private`), or a private temporary one (mkdtemp: random name, 0700) removed on
/// drop. A predictable name under /tmp could be planted by another user first.
struct WorkDir {
    path: PathBuf,
    keep: bool,
    _temp: Option<tempfile::TempDir>,
}

impl WorkDir {
    fn new(out: Option<&Path>) -> Result<Self, GateError> {
        let out_dir = |e: std::io::Error, p: &Path| crate::error::Error::OutDir {
            path: p.display().to_string(),
            why: e.to_string(),
        };
        let Some(p) = out else {
            let t = tempfile::Builder::new()
                .prefix("tracebench-gate-")
                .tempdir()
                .map_err(|e| out_dir(e, Path::new("/tmp")))?;
            return Ok(WorkDir { path: t.path().to_path_buf(), keep: false, _temp: Some(t) });
        };
        if p.join("A-0").exists() {
            return Err(GateError::Usage(format!(
                "--out {}: it already holds an interleaved run (A-0); pick a new directory",
                p.display()
            )));
        }
        crate::results::ResultsDir::create(p)?;
        Ok(WorkDir { path: p.to_path_buf(), keep: true, _temp: None })
    }
}

#[derive(Clone, Copy)]
enum Side {
    A,
    B,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::A => "baseline",
            Side::B => "candidate",
        }
    }
    fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
}

/// The order of the 2K runs: pairs AB, BA, AB, BA... (ABBA blocks).
fn schedule(k: usize) -> Vec<(Side, usize)> {
    (0..k).flat_map(|i| if i % 2 == 0 { [(Side::A, i), (Side::B, i)] } else { [(Side::B, i), (Side::A, i)] }).collect()
}

/// The last non-empty line of a log, for the one-line error.
fn last_line(log: &Path) -> String {
    std::fs::read_to_string(log)
        .ok()
        .and_then(|s| s.lines().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_string()))
        .unwrap_or_else(|| "no output".into())
}

fn run_one(cmd: &str, side: Side, i: usize, work: &WorkDir) -> Result<Results, GateError> {
    let out = work.path.join(format!("{}-{i}", side.letter()));
    let log_path = work.path.join(format!("{}-{i}.log", side.letter()));
    let io = |p: &Path, e: std::io::Error| crate::error::Error::io(p, e);
    let log = File::create(&log_path).map_err(|e| io(&log_path, e))?;
    let log2 = log.try_clone().map_err(|e| io(&log_path, e))?;
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(dir) = std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf)) {
        let mut p = dir.into_os_string();
        p.push(":");
        p.push(&path);
        path = p;
    }
    let fail = |why: String| GateError::Command {
        side: side.name(),
        repetition: i,
        why,
        log: if work.keep { log_path.clone() } else { PathBuf::from("(removed; pass --out DIR to keep it)") },
    };
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{cmd} \"$@\""))
        .arg("tracebench-gate")
        .arg("--repeats")
        .arg("1")
        .arg("--out")
        .arg(&out)
        .env("PATH", path)
        .env("TRACEBENCH_GATE_SIDE", side.name())
        .env("TRACEBENCH_GATE_REPETITION", i.to_string())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| fail(format!("cannot start /bin/sh: {e}")))?;
    let mut child = child;
    // Blocks in waitpid (no wake-ups during the measurement); a stop forwards SIGTERM, which
    // tears the child's tracer down.
    let ended = supervise::wait(&mut child, None, None, Some(libc::SIGTERM))
        .map_err(|e| fail(format!("waiting for it: {e}")))?;
    drop(child);
    if supervise::stopped() {
        return Err(GateError::Interrupted);
    }
    if ended != Ended::Exited(0) {
        let how = match ended {
            Ended::Exited(code) => format!("exit status {code}"),
            Ended::Signalled(sig) => format!("killed by signal {sig}"),
            Ended::TimedOut => "timed out".to_string(),
        };
        return Err(fail(format!("{how}: {}", last_line(&log_path))));
    }
    if !out.join(crate::results::REPETITIONS_CSV).is_file() {
        return Err(fail(format!(
            "it exited 0 but wrote no {}; the command must accept `--repeats 1 --out DIR` and write a results \
             directory there (e.g. `tracebench run --tracer X --label NAME`)",
            out.join(crate::results::REPETITIONS_CSV).display()
        )));
    }
    Results::open(&out)
}

/// The words of a plain command line (quotes and backslashes as the shell reads them), or `None`
/// when the shell would do more than split it (expansions, redirections, several commands): only
/// the shell can tell what such a line runs.
pub fn plain_words(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        x => w.push(x),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' | '\\' => return None,
                        x => w.push(x),
                    }
                }
            }
            '\\' => cur.get_or_insert_with(String::new).push(chars.next()?),
            '$' | '`' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | '{' | '~' | '#' | '\n' => {
                return None
            }
            x => cur.get_or_insert_with(String::new).push(x),
        }
    }
    words.extend(cur);
    Some(words)
}

/// An interleaved gate in progress: the pairs run so far, and what is needed to run more
/// (`--max-repeats` extends an inconclusive gate).
pub struct Interleaved {
    baseline_cmd: String,
    candidate_cmd: String,
    work: WorkDir,
    a: Option<Results>,
    b: Option<Results>,
    /// Pairs run so far: repetitions 0..done of each side.
    pub done: usize,
    started: Instant,
    // Every run is a `tracebench run` that opens and closes a disturbance detector twice;
    // holding its tracepoints here makes that cost milliseconds instead of a second per run.
    _keep_alive: crate::disturbance::KeepAlive,
    // The tracers' parent-side guards (`GateArgs::hold`): an LTTng run whose session daemon is
    // already up neither starts it (76 ms here), nor its consumer daemon (136 ms), nor stops it
    // (65 ms). Dropped after the last run, before the keep-alive.
    _held: Vec<Box<dyn std::any::Any + Send>>,
}

impl Interleaved {
    pub fn start(args: &GateArgs) -> Result<Self, GateError> {
        let (ca, cb) = (args.baseline_cmd.as_deref().unwrap_or(""), args.candidate_cmd.as_deref().unwrap_or(""));
        for (c, flag) in [(ca, "--baseline-cmd"), (cb, "--candidate-cmd")] {
            if c.trim().is_empty() {
                return Err(GateError::Usage(format!(
                    "{flag} is empty; give a command such as 'tracebench run --tracer spin:200 --label spin'"
                )));
            }
        }
        if let Some(check) = args.precheck {
            for (c, flag) in [(ca, "--baseline-cmd"), (cb, "--candidate-cmd")] {
                check(c, flag).map_err(GateError::Usage)?;
            }
        }
        let work = WorkDir::new(args.out.as_deref())?;
        let held = args.hold.map(|h| [ca, cb].into_iter().flat_map(h).collect()).unwrap_or_default();
        // SIGINT/SIGTERM only set STOP: the child is stopped (SIGTERM, so its tracer is torn
        // down), the work directory removed, and the gate exits 130. The handler is installed
        // without SA_RESTART, so a blocked waitpid returns EINTR.
        supervise::install_handlers();
        Ok(Interleaved {
            baseline_cmd: ca.to_string(),
            candidate_cmd: cb.to_string(),
            work,
            a: None,
            b: None,
            done: 0,
            started: Instant::now(),
            _held: held,
            _keep_alive: crate::disturbance::KeepAlive::hold(),
        })
    }

    /// Runs pairs `done..k` (ABBA order continues where it stopped).
    pub fn extend_to(&mut self, k: usize) -> Result<(), GateError> {
        let plan: Vec<(Side, usize)> = schedule(k).into_iter().filter(|&(_, i)| i >= self.done).collect();
        let t0 = Instant::now();
        for (n, &(side, i)) in plan.iter().enumerate() {
            eprint!("gate: [{}/{}] {} repetition {} ... ", n + 1, plan.len(), side.name(), i);
            let t = Instant::now();
            let cmd = if matches!(side, Side::A) { &self.baseline_cmd } else { &self.candidate_cmd };
            let r = run_one(cmd, side, i, &self.work);
            match &r {
                Ok(_) => eprintln!("{:.1} s", t.elapsed().as_secs_f64()),
                Err(_) => eprintln!("failed"),
            }
            let r = r?;
            let acc = if matches!(side, Side::A) { &mut self.a } else { &mut self.b };
            match acc {
                None => {
                    let mut first = r.clone();
                    first.table.rows.clear();
                    first.append(r, i)?;
                    *acc = Some(first);
                }
                Some(a) => a.append(r, i)?,
            }
        }
        self.done = self.done.max(k);
        eprintln!("gate: {} runs in {:.1} s", plan.len(), t0.elapsed().as_secs_f64());
        Ok(())
    }

    /// The merged per-repetition tables so far, named by their commands.
    pub fn results(&self) -> (Results, Results) {
        let mut a = self.a.clone().expect("extend_to ran at least one pair");
        let mut b = self.b.clone().expect("extend_to ran at least one pair");
        a.dir = PathBuf::from(format!("`{}`", self.baseline_cmd));
        b.dir = PathBuf::from(format!("`{}`", self.candidate_cmd));
        (a, b)
    }

    /// Ends the gate's runs: with --out, writes the merged tables (plus the first run.json) so
    /// that the gate can be re-judged later with
    /// `tracebench gate --paired --baseline OUT/baseline --candidate OUT/candidate`.
    pub fn finish(self) -> Result<(Results, Results), GateError> {
        eprintln!("gate: {} pairs in {:.1} s", self.done, self.started.elapsed().as_secs_f64());
        let (mut a, mut b) = self.results();
        if self.work.keep {
            for (r, side) in [(&mut a, Side::A), (&mut b, Side::B)] {
                let dir = self.work.path.join(side.name());
                r.write_repetitions(&dir)?;
                let src = self.work.path.join(format!("{}-0", side.letter())).join(crate::results::RUN_JSON);
                if src.is_file() {
                    std::fs::copy(&src, dir.join(crate::results::RUN_JSON))
                        .map_err(|e| crate::error::Error::io(&src, e))?;
                }
                r.dir = dir;
            }
        }
        Ok((a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_command_lines_split_like_the_shell() {
        let w = plain_words("tracebench run --tracer 'a b' --label \"x\" c\\ d").unwrap();
        assert_eq!(w, ["tracebench", "run", "--tracer", "a b", "--label", "x", "c d"]);
        assert!(plain_words("tracebench run --tracer $T").is_none());
        assert!(plain_words("make bench && tracebench run").is_none());
        assert!(plain_words("tracebench run 'open").is_none());
    }

    #[test]
    fn abba_order() {
        let s: String = schedule(4).iter().map(|(s, _)| s.letter()).collect();
        assert_eq!(s, "ABBAABBA");
        let reps: Vec<usize> = schedule(3).iter().map(|&(_, i)| i).collect();
        assert_eq!(reps, [0, 0, 1, 1, 2, 2]);
    }
}
