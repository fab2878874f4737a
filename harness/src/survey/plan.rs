//! The survey's experiments (sections 6 and 7) as a plan: which `run`, `scale`, `sweep` and
//! stepped run each published table or figure needs, with the tracers this machine has, and for
//! each one it cannot make, why and how to make it. Nothing runs here; `survey::run` executes the
//! steps through the runner and the report, the same stages the other commands use.
use std::path::Path;
use std::time::Duration;

use crate::clock::ClockKind;
use crate::runner::Options;

/// The survey's user-space tracers (Table 4, Figures 7 and 8), as (tracer, the survey's name).
pub const USER_TRACERS: [(&str, &str); 8] = [
    ("none", "None"),
    ("lw", "LW-UST"),
    ("vampirtrace", "VampirTrace"),
    ("extrae", "Extrae"),
    ("lttng-ust", "LTTng-UST"),
    ("printf", "Printf"),
    ("lttng-tracef", "LTTng-tracef"),
    ("systemtap", "SystemTap"),
];

/// ftrace's clock sources of Figure 6.
pub const FTRACE_CLOCKS: [&str; 3] = ["global", "local", "counter"];

/// Figure 9's tracers of open(): the untraced call, ftrace, strace.
pub const OPEN_TRACERS: [&str; 3] = ["open", "ftrace-open", "strace-open"];

/// How a step measures: the command it is the library form of.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `tracebench run`.
    Run,
    /// `tracebench scale`.
    Scale,
    /// `tracebench run --instructions singlestep`.
    Stepped,
    /// `tracebench sweep --vary KNOB=V1,...`.
    Sweep(String),
}

/// Where a survey output is taken from in its step's report.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// figures/NAME.{png,svg,pdf}.
    Figure(&'static str),
    /// tables/NAME.{csv,tex}.
    Table(&'static str),
    /// Drawn by the survey from the step's sweep.csv: mean latency against threads, a line per
    /// ftrace clock.
    ClockLines,
    /// instructions_by_function.csv and the flame graphs of the stepped run.
    Profile,
}

#[derive(Debug, Clone)]
pub struct Output {
    /// The file name without extension, e.g. `survey-fig8`.
    pub name: &'static str,
    pub from: Source,
}

/// One experiment: its results go to OUT/steps/KEY/.
#[derive(Debug, Clone)]
pub struct Step {
    pub key: &'static str,
    /// What of the survey it makes, for the progress bar and the summary.
    pub what: &'static str,
    pub kind: Kind,
    pub opts: Options,
    pub outputs: Vec<Output>,
}

/// An output this machine cannot make (or makes only in part): why, the fix, what it gives instead.
#[derive(Debug, Clone, PartialEq)]
pub struct NotMade {
    pub what: String,
    pub why: String,
    pub fix: String,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub steps: Vec<Step>,
    pub not_made: Vec<NotMade>,
}

/// What the plan needs to know about the machine (probed by `survey::run`, given by tests).
#[derive(Debug, Clone)]
pub struct Machine {
    /// Per tracer name: Ok, or (why, fix).
    pub availability: Vec<(String, Result<(), (String, String)>)>,
    /// Why the survey's counters cannot be read (None: a PMU gives them).
    pub no_pmu: Option<String>,
    /// Why kbench-module's /dev/kbench cannot be used (None: it can).
    pub no_kbench: Option<String>,
    pub cores: usize,
}

impl Machine {
    fn why_not(&self, tracer: &str) -> Option<(String, String)> {
        match self.availability.iter().find(|(n, _)| n == tracer) {
            Some((_, Ok(()))) => None,
            Some((_, Err(e))) => Some(e.clone()),
            None => Some(("this build does not know it".into(), "rebuild tracebench with its backend".into())),
        }
    }
}

/// How long and how large each experiment is.
#[derive(Debug, Clone)]
pub struct Size {
    pub quick: bool,
    pub budget: Duration,
    pub kernel: bool,
}

fn base(out: &Path, key: &str, size: &Size) -> Options {
    Options {
        tracer: Vec::new(),
        label: Vec::new(),
        iterations: if size.quick { 300 } else { 5000 },
        threads: Vec::new(),
        cpu: None,
        clock: ClockKind::Tsc,
        counters: Vec::new(),
        counter_sets: 1,
        repeats: if size.quick { 1 } else { 3 },
        out: Some(out.join("steps").join(key)),
        timeout: 300,
        quiet: true,
        timings: false,
        ftrace_clock: None,
        subbuf_size: None,
        num_subbuf: None,
        kernel: false,
        payload_size: 4,
        probe_site: None,
        otf_buffer_size: None,
        otf2_chunk_size: None,
        keep_trace: false,
        export: Vec::new(),
        singlestep: false,
        sentinel_every: crate::runner::timed::DEFAULT_SENTINEL_EVERY,
        reference_every: crate::runner::reference::DEFAULT_REFERENCE_EVERY,
        budget: None,
    }
}

fn not_made(what: impl Into<String>, why: impl Into<String>, fix: impl Into<String>) -> NotMade {
    NotMade { what: what.into(), why: why.into(), fix: fix.into() }
}

/// The tracers of `names` this machine runs; a not-made line for each of the others.
fn usable(m: &Machine, names: &[(&str, &str)], what: &str, nm: &mut Vec<NotMade>) -> Vec<String> {
    let mut ok = Vec::new();
    for (t, survey) in names {
        match m.why_not(t) {
            None => ok.push(t.to_string()),
            Some((why, fix)) => nm.push(not_made(format!("{what}: the {survey} row ({t})"), why, fix)),
        }
    }
    ok
}

/// The plan of the survey's experiments on machine `m`, results under `out`.
pub fn plan(m: &Machine, out: &Path, size: &Size) -> Plan {
    let mut steps = Vec::new();
    let mut nm = Vec::new();
    let user = usable(m, &USER_TRACERS, "Table 4, Figures 7 and 8, Table 6", &mut nm);
    let threads: Vec<usize> = (1..=m.cores.max(1)).take(if size.quick { 2 } else { usize::MAX }).collect();
    if user.len() > 1 {
        let mut o = base(out, "table4", size);
        o.tracer = user.clone();
        // The rest of the budget's first quarter decides the pairs of Table 4's ranking.
        o.budget = (!size.quick).then(|| size.budget / 4);
        let mut outputs = vec![Output { name: "survey-table4", from: Source::Table("table4_latency") }];
        if m.no_pmu.is_none() {
            outputs.push(Output { name: "survey-fig7", from: Source::Figure("latency_vs_counters") });
            outputs.push(Output { name: "survey-table6", from: Source::Table("table6_counters") });
        }
        steps.push(Step { key: "table4", what: "Table 4 (latency)", kind: Kind::Run, opts: o, outputs });
        let stepped: Vec<String> =
            user.iter().filter(|t| tracebench_tracers::registry::singlestep_support(t).is_ok()).cloned().collect();
        let mut o = base(out, "instructions", size);
        o.tracer = stepped;
        o.singlestep = true;
        o.iterations = if size.quick { 50 } else { crate::runner::singlestep::DEFAULT_ITERATIONS };
        o.repeats = 1;
        let mut outputs = vec![Output { name: "survey-fig10", from: Source::Profile }];
        if m.no_pmu.is_some() {
            outputs.insert(0, Output { name: "survey-fig7", from: Source::Figure("instructions") });
        }
        steps.push(Step {
            key: "instructions",
            what: "Figures 7 and 10 (instructions per call, per function)",
            kind: Kind::Stepped,
            opts: o,
            outputs,
        });
        let mut o = base(out, "scale", size);
        o.tracer = user.clone();
        o.threads = threads.clone();
        steps.push(Step {
            key: "scale",
            what: "Figure 8 (user-space scalability)",
            kind: Kind::Scale,
            opts: o,
            outputs: vec![Output { name: "survey-fig8", from: Source::Figure("scalability") }],
        });
    }
    if let Some(why) = &m.no_pmu {
        nm.push(not_made(
            "Figure 7 (a)-(c) and Table 6's L1 misses, cache misses and CPU cycles",
            format!("no hardware counters: {why}"),
            "run on bare metal or a VM with a virtual PMU (KVM: -cpu host); survey-fig7 here is panel (d), the \
             exact instructions per call from single-stepping, and survey-table6 has latency and instructions",
        ));
    }
    nm.push(not_made(
        "Figure 10 as time per step (callback, clock, serialisation, ring buffer)",
        "the survey timed the steps of LTTng's and ftrace's kernel tracepoints, which need the kernel lab",
        "survey-fig10.csv and the survey-fig10-*.svg flame graphs here give each user-space tracer's call \
         per function, in instructions from single-stepping",
    ));
    match m.why_not("ftrace") {
        None => {
            let mut o = base(out, "ftrace-clocks", size);
            o.tracer = vec!["ftrace".into()];
            o.threads = threads.clone();
            steps.push(Step {
                key: "ftrace-clocks",
                what: "Figure 6 (ftrace clocks against threads)",
                kind: Kind::Sweep(format!("ftrace-clock={}", FTRACE_CLOCKS.join(","))),
                opts: o,
                outputs: vec![Output { name: "survey-fig6", from: Source::ClockLines }],
            });
        }
        Some((why, fix)) => nm.push(not_made("Figure 6 (ftrace clocks)", why, fix)),
    }
    let open: Vec<(&str, &str)> = OPEN_TRACERS.iter().map(|t| (*t, *t)).collect();
    let open = usable(m, &open, "Figure 9", &mut nm);
    if open.len() > 1 {
        let mut o = base(out, "open", size);
        o.tracer = open;
        let lengths = if size.quick { "1,256" } else { "1,16,64,256,1024,4095" };
        steps.push(Step {
            key: "open",
            what: "Figure 9 (open() against file name length)",
            kind: Kind::Sweep(format!("payload-size={lengths}")),
            opts: o,
            outputs: vec![Output { name: "survey-fig9", from: Source::Figure("sweep-mean") }],
        });
    }
    nm.push(not_made(
        "Figure 9: the LTTng curve",
        "LTTng traces system calls with its kernel tracer (lttng-modules, kernel modules); tracebench has no \
         LTTng open() backend",
        "the kernel lab (docs/kernel-lab.md) is where kernel tracers run",
    ));
    if size.kernel {
        kernel_steps(m, out, size, &threads, &mut steps, &mut nm);
    }
    Plan { steps, not_made: nm }
}

/// With --kernel: Tables 3 and 5 and Figures 3-5 from kbench-module, or why not.
fn kernel_steps(m: &Machine, out: &Path, size: &Size, threads: &[usize], steps: &mut Vec<Step>, nm: &mut Vec<NotMade>) {
    let what = "Tables 3 and 5, Figures 3, 4 and 5 (kernel)";
    if let Some(why) = &m.no_kbench {
        nm.push(not_made(
            what,
            format!("{why}; the kernel lab is a qemu VM that builds and loads kbench-module, not available here"),
            "make -C kbench-module && sudo insmod kbench-module/kbench.ko on a kernel that loads modules, or the \
             kernel lab (docs/kernel-lab.md)",
        ));
        return;
    }
    let mut o = base(out, "kernel", size);
    o.tracer = tracebench_tracers::kernel::KERNEL_TRACERS.iter().map(|t| t.to_string()).collect();
    o.kernel = true;
    o.sentinel_every = 0;
    o.reference_every = 0;
    steps.push(Step {
        key: "kernel",
        what: "Table 3 (kernel latency)",
        kind: Kind::Run,
        opts: o.clone(),
        outputs: vec![Output { name: "survey-table3", from: Source::Table("table3_latency") }],
    });
    o.out = Some(out.join("steps").join("kernel-scale"));
    o.threads = threads.to_vec();
    steps.push(Step {
        key: "kernel-scale",
        what: "Figure 5 (kernel scalability)",
        kind: Kind::Scale,
        opts: o,
        outputs: vec![Output { name: "survey-fig5", from: Source::Figure("scalability") }],
    });
    if m.no_pmu.is_some() {
        nm.push(not_made("Figures 3 and 4 (kernel counters)", "no hardware counters", "a machine with a PMU"));
    }
    nm.push(not_made(
        "Table 5 (empty ioctl() traced)",
        "the kernel lab's ioctl() rows are not a survey step yet",
        "tracebench run --kernel in the kernel lab (docs/kernel-lab.md)",
    ));
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
