//! `tracebench survey`: the survey's experiments of sections 6 and 7 that this machine can make,
//! in one command. A plan of steps (plan.rs), each the library form of `run`, `scale`, `sweep`
//! or a stepped run, then that step's report (the same `report` stages), then its figures and
//! tables copied under the survey's numbers (collect.rs). What cannot be made is listed with the
//! reason and the fix in OUT/not-made.txt and at the end of the run.
pub mod collect;
pub mod plan;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::runner::{self, supervise, Mode};
use plan::{Kind, Machine, NotMade, Plan, Size};

/// `tracebench survey`'s settings (the CLI's arguments as plain data).
#[derive(Debug, Clone)]
pub struct Settings {
    pub budget: Duration,
    pub quick: bool,
    pub kernel: bool,
    pub out: Option<PathBuf>,
    pub quiet: bool,
}

/// The figures' size: one column of a two-column article, with a PDF beside the PNG and SVG.
const FIGURE_SIZE: (f32, f32) = (3.3, 2.5);
/// Table 4's columns as the survey prints them: average, STD, 90th percentile.
const TABLE_COLUMNS: [&str; 4] = ["tracer", "mean", "std", "p90"];

/// What this machine has, for the plan.
pub fn probe_machine() -> Machine {
    let availability =
        tracebench_tracers::known().into_iter().map(|i| (i.name.to_string(), i.availability.clone())).collect();
    let set: Vec<String> = crate::counters::SET1.iter().map(|s| s.to_string()).collect();
    let no_pmu = match crate::counters::probe(&set) {
        Ok(a) if a.unsupported.is_empty() => None,
        Ok(a) => Some(a.unsupported.first().map(|(_, why)| why.clone()).unwrap_or_default()),
        Err(e) => Some(e.to_string()),
    };
    let no_kbench =
        (!Path::new(crate::kernel::DEVICE).exists()).then(|| format!("{} not found", crate::kernel::DEVICE));
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    Machine { availability, no_pmu, no_kbench, cores }
}

/// Runs the survey; returns the exit code (0: every planned step ran, 1: a step failed, 130:
/// interrupted).
pub fn run(s: &Settings, argv: &[String]) -> Result<i32, Error> {
    let out = s
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(format!("survey-{}", crate::results::utc_stamp())));
    crate::results::check_new_dir(&out)?;
    let size = Size { quick: s.quick, budget: s.budget, kernel: s.kernel };
    let Plan { steps, mut not_made } = plan::plan(&probe_machine(), &out, &size);
    if s.kernel {
        if let Some(n) = not_made.iter().find(|n| n.what.contains("(kernel)")) {
            eprintln!("tracebench: survey: no kernel steps: {}", n.why);
        }
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    for d in [out.clone(), out.join("steps"), out.join("figures"), out.join("tables")] {
        crate::results::owner::subdir(&d).map_err(|e| Error::io(&d, e))?;
    }
    crate::plot::set_options(crate::plot::FigureOptions {
        size_in: Some(FIGURE_SIZE),
        dpi: 300,
        pdf: true,
        titles: true,
    });
    crate::report::render::table_files::set_columns(&TABLE_COLUMNS.map(String::from)).map_err(Error::Usage)?;
    supervise::install_handlers();
    let began = Instant::now();
    let pb = progress(steps.len(), s.quiet);
    let mut made: Vec<String> = Vec::new();
    let mut failed = 0;
    for step in &steps {
        if supervise::stopped() {
            break;
        }
        if began.elapsed() >= s.budget {
            not_made.push(NotMade {
                what: step.what.into(),
                why: format!("the --budget of {} s was spent before this step began", s.budget.as_secs()),
                fix: "give a larger --budget".into(),
            });
            pb.inc(1);
            continue;
        }
        pb.set_message(step.what);
        let res = match &step.kind {
            Kind::Run | Kind::Stepped => runner::run(&step.opts, Mode::Run, argv),
            Kind::Scale => runner::run(&step.opts, Mode::Scale, argv),
            Kind::Sweep(vary) => runner::sweep::run_sweep(&step.opts, vary, argv),
        };
        let dir = step.opts.out.clone().unwrap_or_default();
        match res {
            Ok(130) => break,
            Ok(code) => {
                if code != 0 {
                    failed += 1;
                    pb.suspend(|| {
                        eprintln!("tracebench: survey: {}: a cell failed (see {})", step.what, dir.display())
                    });
                }
                match collect::report(step, &dir) {
                    Ok(()) => collect::outputs(step, &dir, &out, &mut made, &mut not_made)?,
                    Err(e) => not_made.push(collect::failed(step, &e.to_string())),
                }
            }
            Err(e) => {
                failed += 1;
                not_made.push(collect::failed(step, &e.to_string()));
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    if supervise::stopped() {
        eprintln!("tracebench: interrupted; the survey's outputs made so far are in {}", out.display());
        return Ok(130);
    }
    collect::table6(&steps, &out, &mut made, &mut not_made)?;
    collect::write_lists(&out, &made, &not_made)?;
    print_end(&out, &made, &not_made, began.elapsed());
    Ok(if failed > 0 { 1 } else { 0 })
}

fn progress(steps: usize, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(steps as u64);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} experiments  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// The end of the run: what was made, and each thing not made with its reason and fix.
fn print_end(out: &Path, made: &[String], not_made: &[NotMade], took: Duration) {
    println!("survey: {} files in {} in {:.0} s:", made.len(), out.display(), took.as_secs_f64());
    for m in made {
        println!("  {m}");
    }
    println!("not made here ({}, also in {}):", not_made.len(), out.join(collect::NOT_MADE).display());
    for n in not_made {
        println!("  {}", collect::not_made_line(n));
    }
}
