//! The command line. `main` calls [`run`], which parses, dispatches and maps errors to one line
//! on stderr and an exit code (0 ok, 1 a measurement failed, 2 bad input, 130 interrupted).
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::clock::ClockKind;
use crate::error::ExitCode;

mod one_line;

#[derive(Parser, Debug)]
#[command(
    name = "tracebench",
    version,
    about = "Measures what one tracer event costs (Gebai & Dagenais 2018, Algorithm 1)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure tracers, one pinned thread each (survey Table 4).
    Run(RunArgs),
    /// Measure tracers at several thread counts, one pinned thread per core (survey Figure 8; Figure 5
    /// with --kernel; Figure 6 needs one run per ftrace clock: `survey` makes it).
    Scale(RunArgs),
    /// Turn one knob of the tracers into a curve: one run per value, interleaved, in OUT/KNOB=VALUE/,
    /// joined in OUT/sweep.csv (survey 7.1, 7.3 and Figure 9).
    Sweep(SweepArgs),
    /// The survey's experiments (sections 6 and 7) this machine can make, in one command within a
    /// time budget: its tables and figures in OUT/tables/survey-tableN.* and OUT/figures/survey-figN.*,
    /// and what this machine cannot make, with the reason and the fix, in OUT/not-made.txt.
    Survey(SurveyArgs),
    /// List every known tracer, whether it can run here, and if not why and how to fix it.
    List,
    /// CI regression gate: compares a baseline and a candidate (two results directories, or
    /// two commands run here in ABBA order) per tracer and thread count; exits 0 pass, 1 a
    /// regression, 2 usage or data error.
    Gate(crate::gate::GateArgs),
    /// Convert a results directory for a benchmark-history service (Bencher, github-action-benchmark).
    Export(crate::export::ExportArgs),
    /// Tables, figures and code-path analysis of a results directory: DIR/report.html, report.md, figures/.
    Report(crate::report::ReportArgs),
    /// Is this machine fit to measure? `show` checks it (OK/WARN/BAD with the fix), `tune` applies
    /// what can be undone (root), `reset` puts it back.
    System(crate::system::SystemArgs),
    /// Print tracebench.h, the C header of the plugin ABI, e.g.
    /// `tracebench plugin-header > tracebench.h && cc -O2 -fPIC -shared -I . -o libmy.so my.c`.
    PluginHeader,
    /// (internal) Measure one cell in this process: its spec comes on stdin, its rows go to DIR.
    #[command(name = "__cell", hide = true)]
    Cell { dir: PathBuf },
    /// (internal) The code-path analysis's calibration battery (`make calibrate`): seeded null and
    /// planted runs, a table of false discoveries and power; exit 1 when a target is missed.
    #[command(name = "__calibrate", hide = true)]
    Calibrate {
        /// Runs of each of the ten kinds.
        #[arg(long, default_value_t = 40)]
        runs: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Instead of the listed kinds, N runs composed at random from the grammar of cost
        /// components (the generative battery), as many as fit in --budget-s seconds.
        #[arg(long)]
        generative: Option<u32>,
        /// The generative battery's longest run (calls); most runs are much shorter.
        #[arg(long, default_value_t = 200_000)]
        max_calls: u64,
        /// The generative battery's wall-time budget (seconds): it stops at whole runs.
        #[arg(long, default_value_t = 110.0)]
        budget_s: f64,
        /// Print each generative run that made a false claim (its components and claims) on stderr.
        #[arg(long)]
        explain: bool,
        /// Plant each composition's tracer paths into a real run (the spin tracer plays them) and
        /// score the analysis of that run: this machine's noise instead of the grammar's.
        #[arg(long, requires = "generative")]
        real: bool,
    },
    /// (internal) Reads the reports of DIR... (`tracebench report` written) for sentences their own
    /// tables, findings or other sentences contradict (scripts/contradictions.sh); exit 1 on any.
    #[command(name = "__contradictions", hide = true)]
    Contradictions {
        #[arg(required = true, num_args = 1..)]
        dirs: Vec<PathBuf>,
    },
    /// (internal) Single-step one measuring thread (`--instructions singlestep`).
    #[command(name = "__stepper", hide = true)]
    Stepper { pid: i32, tid: i32 },
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Tracers to measure, comma-separated (`tracebench list` shows them), or `all`.
    #[arg(long, short = 't', value_delimiter = ',', required = true)]
    pub tracer: Vec<String>,
    /// Row names for the tracers, in the same order (e.g. to gate two builds of one tracer).
    #[arg(long, value_delimiter = ',')]
    pub label: Vec<String>,
    /// Kept (undisturbed) iterations per thread [default: 5000]; with --instructions singlestep, the
    /// stepped calls [default: 2000], of which any a signal landed in is discarded, not replaced.
    #[arg(long, short = 'n')]
    pub iterations: Option<usize>,
    /// Thread counts; `run` defaults to 1, `scale` to 1..=online cores.
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// CPU of the first measuring thread (default: the last online CPU).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Clock of the timed window.
    #[arg(long, value_enum, default_value_t = ClockKind::Tsc)]
    pub clock: ClockKind,
    /// Counters, up to four (default: the survey's first set).
    #[arg(long, value_delimiter = ',')]
    pub counters: Vec<String>,
    /// 2 also runs the survey's second set (bus-cycles, dTLB-load-misses, branch-misses, branch-instructions).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub counter_sets: u8,
    /// Repetitions, each tracer in its own process per repetition, interleaved.
    #[arg(long, default_value_t = 1)]
    pub repeats: usize,
    /// Add interleaved rounds after --repeats until every pair of tracers is decided (one is
    /// cheaper, or the two cost the same within 5%) or this much time has passed: 60s, 5m, 90.
    #[arg(long, value_name = "DURATION", value_parser = parse_budget)]
    pub budget: Option<std::time::Duration>,
    /// Output directory (default: results/<UTC timestamp>/).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Seconds one cell may take before it is killed and reported as hung.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// No progress bar and no table.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print where the run's wall time went, phase by phase, on stderr (run.json's `timings`).
    #[arg(long)]
    pub timings: bool,
    /// ftrace clock: local, global, counter, x86-tsc, mono.
    #[arg(long)]
    pub ftrace_clock: Option<String>,
    /// LTTng sub-buffer size (e.g. 8k).
    #[arg(long)]
    pub subbuf_size: Option<String>,
    /// LTTng sub-buffer count.
    #[arg(long)]
    pub num_subbuf: Option<u32>,
    /// OTF 1 write buffer of the otf backend, 1k to 16M (default 8k): a flush every
    /// buffer / record calls.
    #[arg(long, value_name = "BYTES")]
    pub otf_buffer_size: Option<String>,
    /// OTF2 event chunk size of the otf2 backend (OTF2_Archive_Open), 256k to 16M (default
    /// 256k): a flush every chunk / record calls.
    #[arg(long, value_name = "BYTES")]
    pub otf2_chunk_size: Option<String>,
    /// Keep the trace archives the otf and otf2 backends write (their path is printed and in
    /// run.json) instead of removing them after the cell.
    #[arg(long)]
    pub keep_trace: bool,
    /// Run the loop inside kbench-module (survey Algorithm 1 in the kernel; needs /dev/kbench).
    #[arg(long)]
    pub kernel: bool,
    /// Bytes one event records (default 4: the iteration index). With --kernel: 4, 64, 256 or
    /// 1024; in user space, 1 to 4096 for the backends `tracebench list` marks `[payload A..B B]`
    /// (lw, printf, lttng-*, ftrace, ftrace-raw, uprobe, perf, ebpf), 4 for the others.
    #[arg(long, default_value_t = 4)]
    pub payload_size: u32,
    /// First instruction of the uprobe site: nop5, push or ret (uprobe, ebpf, perf, bpftrace,
    /// systemtap; default nop5).
    #[arg(long, value_parser = ["nop5", "push", "ret"])]
    pub probe_site: Option<String>,
    /// Also write the results for a benchmark-history service, as FORMAT=FILE with FORMAT bmf
    /// (Bencher) or github-benchmark (github-action-benchmark); repeatable.
    #[arg(long, value_name = "FORMAT=FILE")]
    pub export: Vec<String>,
    /// Count instructions instead of timing: `singlestep` steps every call with ptrace and writes
    /// its exact user-space instruction count and kernel entries (no PMU needed, no timing).
    /// `run` only: `scale` and `sweep` refuse it (one stepped run per value or thread count).
    #[arg(long, value_parser = ["singlestep"])]
    pub instructions: Option<String>,
    /// Every K-th timed window times an empty call (the `none` tracer) instead, written to
    /// sentinels.csv: the machine's speed beside the tracer's calls; 0 turns them off (always off
    /// with --kernel and --instructions).
    #[arg(long, value_name = "K", default_value_t = crate::runner::timed::DEFAULT_SENTINEL_EVERY)]
    pub sentinel_every: u64,
    /// Every R-th of the other windows times a loop as long as the tracer's fast path, counted in
    /// reference.csv: the machine's stalls at the rate the tracer's calls meet them, so the report
    /// can tell the machine's slow calls from the tracer's; 0 turns them off (always off with
    /// --kernel and --instructions).
    #[arg(long, value_name = "R", default_value_t = crate::runner::reference::DEFAULT_REFERENCE_EVERY)]
    pub reference_every: u64,
}

#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// KNOB=V1,V2,...: subbuf-size, num-subbuf, payload-size, ftrace-clock, probe-site,
    /// otf-buffer-size, otf2-chunk-size or threads
    /// (sizes take K and M suffixes).
    #[arg(long, required = true)]
    pub vary: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SurveyArgs {
    /// Wall time for all the experiments: 60s, 10m, 1h. A step runs to its end once begun; one
    /// not begun when the budget is spent is listed as not made.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_budget)]
    pub budget: std::time::Duration,
    /// The smallest experiments (300 calls, one repetition, 1 and 2 threads): a check that every
    /// step runs here, in about a minute, not numbers to publish.
    #[arg(long)]
    pub quick: bool,
    /// Also the kernel's Tables 3 and 5 and Figures 3-5 (needs /dev/kbench: docs/kernel-lab.md).
    #[arg(long)]
    pub kernel: bool,
    /// Output directory (default: results/survey-<UTC timestamp>/).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Parses the command line, runs it, and returns the process exit code.
pub fn run() -> i32 {
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let cli = match Cli::try_parse_from(std::env::args_os()) {
        Ok(c) => c,
        // --help and --version print as clap writes them; a usage error is one line, exit 2.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            eprintln!("tracebench: error: {}", one_line::message(&e, &argv));
            return 2;
        }
    };
    let code = dispatch(&cli, &argv);
    // Whatever a command's tracer guards are still tearing down (a session daemon) ends first.
    tracebench_tracers::registry::wait_released();
    // Results made under sudo go to the user who ran sudo (results::owner, docs/security.md).
    for line in crate::results::owner::hand_back() {
        eprintln!("tracebench: warning: {line}");
    }
    code
}

fn dispatch(cli: &Cli, argv: &[String]) -> i32 {
    match &cli.command {
        Command::Run(a) => finish(crate::runner::run(&a.options(), crate::runner::Mode::Run, argv)),
        Command::Scale(a) => finish(crate::runner::run(&a.options(), crate::runner::Mode::Scale, argv)),
        Command::Sweep(a) => finish(crate::runner::sweep::run_sweep(&a.run.options(), &a.vary, argv)),
        Command::Survey(a) => finish(crate::survey::run(
            &crate::survey::Settings {
                budget: a.budget,
                quick: a.quick,
                kernel: a.kernel,
                out: a.out.clone(),
                quiet: a.quiet,
            },
            argv,
        )),
        Command::List => finish(crate::output::list()),
        Command::Gate(a) => {
            let mut a = a.clone();
            a.precheck = Some(precheck_gate_command);
            a.hold = Some(gate_hold);
            finish(crate::gate::run(&a))
        }
        Command::Report(a) => finish(crate::report::run(a)),
        Command::Export(a) => finish(crate::export::run(a)),
        Command::System(a) => finish(crate::system::run(a)),
        Command::PluginHeader => print_plugin_header(),
        Command::Cell { dir } => finish(crate::runner::cell::main(dir)),
        Command::Stepper { pid, tid } => finish(crate::runner::singlestep::stepper::main(*pid, *tid)),
        Command::Contradictions { dirs } => crate::report::contradictions::main(dirs),
        Command::Calibrate { runs, seed, generative, max_calls, budget_s, explain, real } => {
            let b = match generative {
                Some(n) if *real => {
                    crate::analysis::calibration_battery::planted::main(*n, *seed, *max_calls, *budget_s)
                }
                Some(n) => {
                    crate::analysis::calibration_battery::generative::main(*n, *seed, *max_calls, *budget_s, *explain)
                }
                None => crate::analysis::calibration_battery::main(*runs, *seed),
            };
            finish(b.map_err(crate::report::ReportError::from))
        }
    }
}

/// Plans a side's command before anything runs when it is plainly `tracebench run|scale ...`
/// (as the gate will invoke it, `--repeats 1 --out DIR` appended): a bad option (a tracer's
/// sub-buffer size, an unknown tracer) then exits 2 before the work directory exists, instead of
/// failing in the first repetition. Other commands are the shell's business and are not checked.
pub fn precheck_gate_command(cmd: &str, flag: &str) -> Result<(), String> {
    let Some(mut words) = crate::gate::plain_words(cmd) else { return Ok(()) };
    let is_us = words.first().is_some_and(|w| std::path::Path::new(w).file_name().is_some_and(|n| n == "tracebench"));
    if !is_us || !matches!(words.get(1).map(String::as_str), Some("run" | "scale")) {
        return Ok(());
    }
    words.extend(["--repeats", "1", "--out", "tracebench-gate-precheck"].map(String::from));
    let cli = Cli::try_parse_from(&words).map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or("").trim_start_matches("error: ").to_string();
        format!("{flag} '{cmd}': {first}")
    })?;
    let (a, mode) = match &cli.command {
        Command::Run(a) => (a, crate::runner::Mode::Run),
        Command::Scale(a) => (a, crate::runner::Mode::Scale),
        _ => return Ok(()),
    };
    crate::runner::plan::plan(&a.options(), mode).map(|_| ()).map_err(|e| format!("{flag}: {e}"))
}

/// What an interleaved gate holds for all its runs of `cmd` when it is plainly `tracebench
/// run|scale ...`: each of its tracers' parent-side guards (LTTng's session daemon). Best effort:
/// a guard that cannot be made is left to each run, which then reports why.
pub fn gate_hold(cmd: &str) -> Vec<Box<dyn std::any::Any + Send>> {
    let Some(mut words) = crate::gate::plain_words(cmd) else { return Vec::new() };
    if !words.first().is_some_and(|w| std::path::Path::new(w).file_name().is_some_and(|n| n == "tracebench")) {
        return Vec::new();
    }
    words.extend(["--repeats", "1", "--out", "tracebench-gate-hold"].map(String::from));
    let Ok(Cli { command: Command::Run(a) | Command::Scale(a), .. }) = Cli::try_parse_from(&words) else {
        return Vec::new();
    };
    let opts = a.options();
    let copts = opts.tracer_opts().create_options(0.0, "gate", opts.payload_size);
    let specs: Vec<String> = crate::runner::plan::plan(&opts, crate::runner::Mode::Run)
        .map(|p| p.rows.iter().map(|r| r.spec.clone()).collect())
        .unwrap_or_default();
    if opts.kernel {
        return Vec::new();
    }
    specs
        .iter()
        .filter_map(|s| tracebench_tracers::registry::parent_guard(s, &copts).ok().flatten())
        .map(|g| g as _)
        .collect()
}

/// Whether a command line parses, without running it: Ok for a valid line, or one that asks for
/// `--help`; else clap's first line. The docs test (harness/tests/docs.rs) checks every synopsis
/// the README and the user guide show with it.
pub fn parses<S: AsRef<str>>(words: &[S]) -> Result<(), String> {
    use clap::error::ErrorKind;
    match Cli::try_parse_from(words.iter().map(|w| w.as_ref())) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
        Err(e) => Err(e.to_string().lines().next().unwrap_or("").to_string()),
    }
}

/// The plugin ABI's header, embedded so that a `cargo install`ed tracebench, which has no
/// checkout beside it, can still hand its users the header it was built with.
pub const PLUGIN_HEADER: &str = include_str!("../../tracers/include/tracebench.h");

fn print_plugin_header() -> i32 {
    use std::io::Write;
    match std::io::stdout().write_all(PLUGIN_HEADER.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "tracebench: error: cannot write the header to stdout: {e} (fix: redirect it to a writable file)"
            );
            2
        }
    }
}

/// One line on stderr for an error, and its exit code.
fn finish<E: ExitCode>(res: Result<i32, E>) -> i32 {
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tracebench: error: {e}");
            e.exit_code()
        }
    }
}

impl RunArgs {
    /// The runner's plain options (the runner does not depend on the CLI's types).
    pub fn options(&self) -> crate::runner::Options {
        let a = self.clone();
        crate::runner::Options {
            tracer: a.tracer,
            label: a.label,
            iterations: a.iterations.unwrap_or(if a.instructions.is_some() {
                crate::runner::singlestep::DEFAULT_ITERATIONS
            } else {
                5000
            }),
            threads: a.threads,
            cpu: a.cpu,
            clock: a.clock,
            counters: a.counters,
            counter_sets: a.counter_sets,
            repeats: a.repeats,
            out: a.out,
            timeout: a.timeout,
            quiet: a.quiet,
            timings: a.timings,
            ftrace_clock: a.ftrace_clock,
            subbuf_size: a.subbuf_size,
            num_subbuf: a.num_subbuf,
            kernel: a.kernel,
            payload_size: a.payload_size,
            probe_site: a.probe_site,
            otf_buffer_size: a.otf_buffer_size,
            otf2_chunk_size: a.otf2_chunk_size,
            keep_trace: a.keep_trace,
            export: a.export,
            singlestep: a.instructions.is_some(),
            sentinel_every: a.sentinel_every,
            reference_every: a.reference_every,
            budget: a.budget,
        }
    }
}

/// `--budget`: seconds, or a number with `s`, `m` or `h`.
fn parse_budget(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("'{s}': give a duration such as 60s, 5m or 1h")),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(std::time::Duration::from_secs_f64(v * scale)),
        _ => Err(format!("'{s}': give a positive duration such as 60s, 5m or 1h")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_tracer_option_is_refused_before_any_run() {
        let e =
            precheck_gate_command("tracebench run --tracer lttng-ust --subbuf-size 3", "--baseline-cmd").unwrap_err();
        // Refused in the gate's terms; where LTTng is missing, the row is refused for that first,
        // by its name.
        assert!(e.starts_with("--baseline-cmd: "), "{e}");
        match tracebench_tracers::lttng::availability() {
            Ok(()) => assert!(e.contains("--subbuf-size 3"), "{e}"),
            Err(_) => assert!(e.contains("lttng-ust"), "{e}"),
        }
        assert!(precheck_gate_command("tracebench run --tracer lw --bogus", "--baseline-cmd").is_err());
        // Not plainly tracebench: left to the shell.
        assert!(precheck_gate_command("./bench.sh --subbuf-size 3", "--baseline-cmd").is_ok());
    }

    /// An interleaved gate holds its commands' parent guards (LTTng's session daemon)
    /// for all its runs; a command that is not plainly tracebench, or a tracer without a guard,
    /// holds nothing.
    #[test]
    fn an_interleaved_gate_holds_what_its_commands_tracers_need() {
        assert!(gate_hold("tracebench run --tracer lw").is_empty());
        assert!(gate_hold("./bench.sh run --tracer lttng-ust").is_empty());
        assert!(gate_hold("tracebench run --tracer $T").is_empty());
        if tracebench_tracers::lttng::availability().is_err() {
            println!("SKIP an_interleaved_gate_holds_what_its_commands_tracers_need: LTTng is not installed");
            return;
        }
        let held = gate_hold("tracebench run -q --tracer lttng-ust,lw --label a,b -n 100");
        assert_eq!(held.len(), 1, "one guard: lttng-ust's");
        assert!(tracebench_tracers::lttng::running_sessiond().is_some(), "no session daemon while held");
    }
}
