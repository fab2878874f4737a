//! `tracebench system show | tune | reset`: is this machine fit to measure one call?
//!
//! `show` runs one check per thing that moves a per-call figure before any tracer is involved
//! (the clock, the measuring CPU and its SMT sibling, frequency, interrupts, the hypervisor's
//! steal, perf's limits, the PMU, the tracers), each OK, WARN or BAD with its fix. `tune` applies
//! what can be undone, recording every previous value first (`state`); `reset` puts them back byte
//! for byte. `show --counters` cross-checks the PMU's counters against known quantities
//! (`selfcheck`). Every run records the checks in run.json (`for_run`), and the report's header
//! repeats the ones that matter for its numbers.
//!
//! Every file is read under a root directory ([`Sys`]): `/` on the machine, a fake tree in tests.
pub mod checks_clock;
pub mod checks_cpu;
pub mod checks_perf;
pub mod checks_virt;
pub mod render;
pub mod selfcheck;
pub mod snapshot;
pub mod state;
#[cfg(test)]
mod tests;
pub mod tune;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde::Serialize;

/// How much a check's finding threatens the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Level {
    #[serde(rename = "OK")]
    Ok,
    #[serde(rename = "WARN")]
    Warn,
    #[serde(rename = "BAD")]
    Bad,
}

impl Level {
    pub fn word(self) -> &'static str {
        match self {
            Level::Ok => "OK",
            Level::Warn => "WARN",
            Level::Bad => "BAD",
        }
    }
}

/// One line of `system show`.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The group: clock, cpu, frequency, interrupts, virtualization, perf, counters, tracers.
    pub group: &'static str,
    pub level: Level,
    /// What was found, with its figures.
    pub text: String,
    /// How to fix it (WARN and BAD only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What it does to the measured numbers, when it does something; the report's header says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matters: Option<String>,
}

impl Check {
    pub fn ok(group: &'static str, text: impl Into<String>) -> Check {
        Check { group, level: Level::Ok, text: text.into(), fix: None, matters: None }
    }
    pub fn warn(group: &'static str, text: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { group, level: Level::Warn, text: text.into(), fix: Some(fix.into()), matters: None }
    }
    pub fn bad(group: &'static str, text: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { group, level: Level::Bad, text: text.into(), fix: Some(fix.into()), matters: None }
    }
    /// A file this user cannot read: said, never guessed.
    pub fn unreadable(group: &'static str, what: &str, path: &Path) -> Check {
        Check::warn(group, format!("{what}: unknown, cannot read {}", path.display()), "run as root to check it")
    }
    pub fn matters(mut self, m: impl Into<String>) -> Check {
        self.matters = Some(m.into());
        self
    }
}

/// The root the system's files are read and written under: `/` on the machine, a directory
/// shaped like it in tests (so tune and reset can be tested on knobs this VM lacks).
#[derive(Debug, Clone)]
pub struct Sys {
    pub root: PathBuf,
}

impl Sys {
    pub fn real() -> Sys {
        Sys { root: PathBuf::from("/") }
    }
    /// `rel` is absolute as on the machine (`/sys/...`), joined under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }
    pub fn read(&self, rel: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.path(rel))
    }
    /// The trimmed content, or None when absent, unreadable or empty.
    pub fn get(&self, rel: &str) -> Option<String> {
        self.read(rel).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }
    /// Whether `rel` exists but this user cannot read it (so "absent" is not said of it).
    pub fn denied(&self, rel: &str) -> bool {
        matches!(self.read(rel), Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied)
    }
}

/// `tracebench system ...`.
#[derive(Args, Debug, Clone)]
pub struct SystemArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Action {
    /// One line per check (OK, WARN or BAD, with the fix), then the verdict: exits 0 fit to
    /// measure, 3 fit with warnings, 4 not fit (a BAD check).
    Show(ShowArgs),
    /// (root) Apply what can be undone: governor, min = max frequency, turbo off, IRQs off the
    /// measuring CPUs, perf's sample rate; records every previous value first for `reset`.
    Tune(TuneArgs),
    /// (root) Put back every value `tune` changed, byte for byte.
    Reset(ResetArgs),
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// The measuring CPUs, comma-separated: every CPU a run will use (default: the last online
    /// CPU, as `run` uses; `--threads N` gives the N CPUs `run --threads N` and `scale` use).
    #[arg(long = "cpus", visible_alias = "cpu", value_delimiter = ',', value_name = "LIST")]
    pub cpus: Vec<usize>,
    /// Check the CPUs a run with this many threads measures on (as `run --threads N`, `scale`).
    #[arg(long, conflicts_with = "cpus")]
    pub threads: Option<usize>,
    /// Also cross-check the PMU's counters against known counts (exit 3: could not check; 4: a
    /// counter failed).
    #[arg(long)]
    pub counters: bool,
    /// (tests) Read the system's files under this directory instead of /.
    #[arg(long, hide = true)]
    pub sys_root: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct TuneArgs {
    /// The measuring CPUs to keep quiet, comma-separated (default: the last online CPU, the one
    /// `run` measures on first).
    #[arg(long = "cpus", visible_alias = "cpu", value_delimiter = ',', value_name = "LIST")]
    pub cpu: Vec<usize>,
    /// Keep quiet the CPUs a run with this many threads measures on (as `run --threads N`, `scale`).
    #[arg(long, conflicts_with = "cpu")]
    pub threads: Option<usize>,
    /// Also turn address-space randomization off (kernel.randomize_va_space = 0).
    #[arg(long)]
    pub aslr: bool,
    /// (tests) Tune the files under this directory instead of /.
    #[arg(long, hide = true)]
    pub sys_root: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ResetArgs {
    /// (tests) Reset the files under this directory instead of /.
    #[arg(long, hide = true)]
    pub sys_root: Option<PathBuf>,
}

/// What `system` refuses, each with its fix; all are exit 2.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    #[error("--cpu {cpu}: no such online CPU (online: {online}); pick one of them")]
    UnknownCpu { cpu: usize, online: String },
    #[error("--threads {threads}: a run measures on one CPU per thread and {online} are online; give 1 to {online}")]
    TooManyThreads { threads: usize, online: usize },
    #[error("system {0} changes kernel settings and needs root; run it with sudo")]
    NotRoot(&'static str),
    #[error("no recorded tuning state at {0}: nothing to reset (`tracebench system tune` records one)")]
    NoState(String),
    #[error("{0}")]
    State(String),
}

impl crate::error::ExitCode for SystemError {
    fn exit_code(&self) -> i32 {
        2
    }
}

fn sys_of(root: &Option<PathBuf>) -> Sys {
    root.as_ref().map(|r| Sys { root: r.clone() }).unwrap_or_else(Sys::real)
}

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The online CPUs under `sys`.
pub fn online(sys: &Sys) -> Vec<usize> {
    match sys.get("/sys/devices/system/cpu/online") {
        Some(s) => crate::host::parse_cpu_list(&s),
        None => crate::host::online_cpus(),
    }
}

/// `cpu` if it is online, else the usage error; None picks the last online CPU.
pub fn measuring_cpu(sys: &Sys, cpu: Option<usize>) -> Result<usize, SystemError> {
    let on = online(sys);
    let text = || on.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    match cpu {
        Some(c) if on.contains(&c) => Ok(c),
        Some(c) => Err(SystemError::UnknownCpu { cpu: c, online: text() }),
        None => on.last().copied().ok_or(SystemError::UnknownCpu { cpu: 0, online: text() }),
    }
}

/// The CPUs named by `--cpus LIST` (each online), or the first `threads` of a run's order
/// ([`crate::host::measuring_order`]), or the last online CPU.
pub fn measuring_cpus(sys: &Sys, list: &[usize], threads: Option<usize>) -> Result<Vec<usize>, SystemError> {
    let mut cpus = Vec::new();
    for &c in list {
        let c = measuring_cpu(sys, Some(c))?;
        if !cpus.contains(&c) {
            cpus.push(c);
        }
    }
    if !cpus.is_empty() {
        return Ok(cpus);
    }
    let first = measuring_cpu(sys, None)?;
    let order = crate::host::measuring_order(&online(sys), first);
    match threads {
        Some(t) if t == 0 || t > order.len() => Err(SystemError::TooManyThreads { threads: t, online: order.len() }),
        Some(t) => Ok(order[..t].to_vec()),
        None => Ok(vec![first]),
    }
}

/// Entry point of `tracebench system`.
pub fn run(a: &SystemArgs) -> Result<i32, SystemError> {
    match &a.action {
        Action::Show(s) => {
            let sys = sys_of(&s.sys_root);
            let cpus = measuring_cpus(&sys, &s.cpus, s.threads)?;
            let checks = show(&sys, &cpus, CheckWindow::Measure(std::time::Duration::from_secs(1)), None, &[]);
            render::print(&checks);
            let counters = s.counters.then(|| selfcheck::run_and_print(cpus[0]));
            let v = render::verdict(&checks, counters);
            println!("{}", v.line);
            Ok(v.code)
        }
        Action::Tune(t) => {
            if !is_root() && t.sys_root.is_none() {
                return Err(SystemError::NotRoot("tune"));
            }
            let sys = sys_of(&t.sys_root);
            let cpus = measuring_cpus(&sys, &t.cpu, t.threads)?;
            tune::tune(&sys, &tune::Plan { cpus, aslr: t.aslr }, &mut |_| true).map(|_| 0)
        }
        Action::Reset(r) => {
            if !is_root() && r.sys_root.is_none() {
                return Err(SystemError::NotRoot("reset"));
            }
            tune::reset(&sys_of(&r.sys_root)).map(|all| if all { 0 } else { 1 })
        }
    }
}

/// Over what the time-dependent checks (steal, busy CPUs, interrupts) are measured.
pub enum CheckWindow {
    /// Sample now, wait this long, sample again (`system show`).
    Measure(std::time::Duration),
    /// Since this snapshot (a run's `for_run`: the run itself is the window).
    Since(snapshot::Snapshot),
}

/// Every check, in the order they are printed. `clock`: a calibration already made (a run's),
/// else one is made here.
/// `ours`: CPUs our own work kept busy during the window (a run's measuring CPUs), whose load
/// says nothing about other work.
pub fn show(
    sys: &Sys,
    cpus: &[usize],
    window: CheckWindow,
    clock: Option<&crate::clock::ClockInfo>,
    ours: &[usize],
) -> Vec<Check> {
    let (before, after, seconds) = match window {
        CheckWindow::Measure(d) => {
            let b = snapshot::Snapshot::take(sys);
            std::thread::sleep(d);
            (b, snapshot::Snapshot::take(sys), d.as_secs_f64())
        }
        CheckWindow::Since(b) => {
            let secs = b.taken.elapsed().as_secs_f64();
            (b, snapshot::Snapshot::take(sys), secs)
        }
    };
    let shares = snapshot::cpu_shares(&before, &after);
    let mut out = checks_clock::checks(sys, clock);
    // Each per-CPU group for every measuring CPU, the groups in their order.
    for &cpu in cpus {
        out.extend(checks_cpu::cpu(sys, cpu, &shares, ours));
    }
    for &cpu in cpus {
        out.extend(checks_cpu::frequency(sys, cpu));
    }
    for &cpu in cpus {
        out.extend(checks_cpu::interrupts(sys, cpu, &before, &after));
    }
    for &cpu in cpus {
        out.extend(checks_virt::checks(sys, cpu, &shares, seconds));
    }
    for &cpu in cpus {
        out.extend(checks_perf::perf(sys, cpu));
    }
    out.extend(checks_perf::counters(sys));
    out.push(checks_perf::tracers());
    dedup(out)
}

/// A machine-wide check (turbo, perf's limits) is said once, not once per measuring CPU.
fn dedup(checks: Vec<Check>) -> Vec<Check> {
    let mut seen = std::collections::HashSet::new();
    checks.into_iter().filter(|c| seen.insert((c.group, c.level, c.text.clone()))).collect()
}

/// What a run records under run.json's `system` key: the checks over the run itself (steal,
/// busy CPUs and interrupts since `since`, the run's own clock calibration).
/// Every measuring CPU of the run is checked (`scale`'s too), and run.json's `system.cpus` names
/// them: the CPUs a run's threads used, which `system tune --threads N` keeps quiet.
///
/// `others`: the share of the measuring CPUs' time (and those CPUs) that went to work other than the run's own
/// cells (their busy time less the cells' CPU time), when it could be measured: the check
/// `system show` makes on an idle CPU, which the run's own cells would otherwise hide.
pub fn for_run(
    since: snapshot::Snapshot,
    clock: &crate::clock::ClockInfo,
    cpus: &[usize],
    others: Option<(f64, &[usize])>,
) -> serde_json::Value {
    let cpus = if cpus.is_empty() { vec![0] } else { cpus.to_vec() };
    let mut checks = show(&Sys::real(), &cpus, CheckWindow::Since(since), Some(clock), &cpus);
    checks.extend(others.map(|(b, measuring)| checks_cpu::others_during_run(b, measuring)));
    let mut j = render::json(&checks, "the run");
    j["cpus"] = serde_json::json!(cpus);
    j
}
