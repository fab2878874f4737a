//! `system show --counters`: counters that check themselves against known quantities.
//!
//! - `instructions` per call of `none` and `lw` against the exact single-step count of the same
//!   call (`run --instructions singlestep`), and on a loop whose count is known by construction
//!   (two instructions per iteration);
//! - `cycles` on that loop against the TSC and the nominal ratio (cycles per TSC tick: 1 when
//!   the core runs at its nominal rate, `scaling_cur_freq` / TSC rate where cpufreq says so);
//! - a pointer chase over four times the last-level cache: about one LLC miss per load; over
//!   half the L1 data cache: about none.
//!
//! The decisions ([`evaluate`]) are pure over a [`CounterSource`], so they are tested with fake
//! counters here, where there is no PMU. Without one, nothing passes: the outcome is
//! [`Outcome::CannotCheck`] and the exit code 3, which a script tells from 0 (every counter
//! passed) and 1 (one failed).
pub mod real;

/// Mean per call of one tracer, from the PMU's `instructions` and from single-stepping.
#[derive(Debug, Clone, PartialEq)]
pub struct PerCall {
    pub tracer: String,
    pub pmu: f64,
    pub stepped: f64,
}

/// A loop of known length, measured once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spin {
    pub iterations: u64,
    /// User-space instructions (the loop retires exactly 2 per iteration).
    pub instructions: f64,
    pub cycles: f64,
    pub tsc_ticks: f64,
}

/// A pointer chase: one dependent load per node.
#[derive(Debug, Clone, PartialEq)]
pub struct Chase {
    pub bytes: usize,
    pub loads: f64,
    /// (event name, count) of the last-level-cache misses.
    pub llc: Option<(String, f64)>,
    pub l1_misses: Option<f64>,
}

/// Where the figures come from: the PMU ([`real::Pmu`]) or a test's fake.
pub trait CounterSource {
    /// Err(why) when there is no PMU to check.
    fn pmu(&mut self) -> Result<(), String>;
    /// none's and lw's instructions per call, and how the counters were read ("rdpmc", "read()").
    fn per_call(&mut self) -> Result<(Vec<PerCall>, String), String>;
    fn spin(&mut self, iterations: u64) -> Result<Spin, String>;
    fn chase(&mut self, bytes: usize) -> Result<Chase, String>;
    /// (LLC bytes, L1D bytes) of the measuring CPU.
    fn caches(&self) -> (Option<usize>, Option<usize>);
    /// Cycles per TSC tick the core should run at, and where that came from.
    fn nominal_ratio(&self) -> (f64, String);
}

#[derive(Debug, Clone, PartialEq)]
pub struct CounterVerdict {
    pub counter: String,
    pub pass: bool,
    pub figures: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    CannotCheck(String),
    Checked(Vec<CounterVerdict>),
}

impl Outcome {
    /// 0 every counter passed, 1 one failed, 3 could not check.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::CannotCheck(_) => 3,
            Outcome::Checked(v) if v.iter().all(|x| x.pass) => 0,
            Outcome::Checked(_) => 1,
        }
    }
}

/// The most the PMU's and the stepped count may differ per call (net of `none`).
pub const INSTR_SLACK: f64 = 2.0;
/// The most rdpmc's own window may add to `none` (clock and counter reads).
pub const RDPMC_WINDOW_MAX: f64 = 64.0;
pub const RATIO_SLACK: f64 = 0.05;
pub const SPIN_SHORT: u64 = 1_000;
pub const SPIN_LONG: u64 = 1_001_000;

fn failed(counter: &str, e: String) -> CounterVerdict {
    CounterVerdict { counter: counter.into(), pass: false, figures: format!("could not measure: {e}") }
}

pub fn evaluate(src: &mut dyn CounterSource) -> Outcome {
    if let Err(why) = src.pmu() {
        return Outcome::CannotCheck(why);
    }
    let mut v = match src.per_call() {
        Ok((calls, method)) => judge_per_call(&calls, &method),
        Err(e) => vec![failed("instructions (none, lw)", e)],
    };
    match (src.spin(SPIN_SHORT), src.spin(SPIN_LONG)) {
        (Ok(a), Ok(b)) => v.extend(judge_spin(&a, &b, src.nominal_ratio())),
        (Err(e), _) | (_, Err(e)) => v.push(failed("instructions, cycles (spin)", e)),
    }
    let (llc, l1) = src.caches();
    match (llc, l1) {
        (Some(llc), Some(l1)) => {
            let big = (4 * llc).min(1 << 30);
            match (src.chase(big), src.chase(l1 / 2)) {
                (Ok(b), Ok(s)) => v.extend(judge_chase(&b, &s, 4 * llc)),
                (Err(e), _) | (_, Err(e)) => v.push(failed("cache misses (chase)", e)),
            }
        }
        _ => v.push(failed("cache misses (chase)", "cache sizes unknown (/sys/devices/system/cpu/cpuN/cache)".into())),
    }
    Outcome::Checked(v)
}

/// none: the PMU counts the call plus the window's own reads (never fewer than the call; with
/// rdpmc, a few dozen at most). lw: net of none, the PMU and the stepped count agree.
pub fn judge_per_call(calls: &[PerCall], method: &str) -> Vec<CounterVerdict> {
    let Some(none) = calls.iter().find(|c| c.tracer == "none") else {
        return vec![failed("instructions", "no none row".into())];
    };
    let offset = none.pmu - none.stepped;
    let cap = if method == "rdpmc" { RDPMC_WINDOW_MAX } else { f64::INFINITY };
    let mut out = vec![CounterVerdict {
        counter: "instructions (none)".into(),
        pass: offset >= -0.5 && offset <= cap,
        figures: format!(
            "PMU {:.1} per call ({method}), stepped {:.1}: the window's own reads add {offset:.1} (allowed 0..{})",
            none.pmu,
            none.stepped,
            if cap.is_finite() { format!("{cap:.0}") } else { "any, read() counts its system call".into() }
        ),
    }];
    for c in calls.iter().filter(|c| c.tracer != "none") {
        let (p, s) = (c.pmu - none.pmu, c.stepped - none.stepped);
        out.push(CounterVerdict {
            counter: format!("instructions ({})", c.tracer),
            pass: (p - s).abs() <= INSTR_SLACK,
            figures: format!("net of none: PMU {p:.1}, stepped {s:.1} per call (allowed difference {INSTR_SLACK})"),
        });
    }
    out
}

/// The loop retires 2 instructions per iteration; its cycles per TSC tick are the nominal ratio.
pub fn judge_spin(a: &Spin, b: &Spin, nominal: (f64, String)) -> Vec<CounterVerdict> {
    let n = (b.iterations - a.iterations) as f64;
    let instr = b.instructions - a.instructions;
    let ticks = b.tsc_ticks - a.tsc_ticks;
    let ratio = if ticks > 0.0 { (b.cycles - a.cycles) / ticks } else { f64::NAN };
    vec![
        CounterVerdict {
            counter: "instructions (spin)".into(),
            pass: (instr - 2.0 * n).abs() <= INSTR_SLACK,
            figures: format!("{instr:.0} for {n:.0} more iterations of a 2-instruction loop (exactly {:.0})", 2.0 * n),
        },
        CounterVerdict {
            counter: "cycles (spin)".into(),
            pass: (ratio / nominal.0 - 1.0).abs() <= RATIO_SLACK,
            figures: format!(
                "{ratio:.3} cycles per TSC tick against {:.3} ({}), allowed {:.0}%",
                nominal.0,
                nominal.1,
                100.0 * RATIO_SLACK
            ),
        },
    ]
}

/// Four times the LLC: most loads miss it (about one miss per load); half of L1: none do.
pub fn judge_chase(big: &Chase, small: &Chase, wanted: usize) -> Vec<CounterVerdict> {
    let per = |x: Option<f64>, c: &Chase| x.map(|m| m / c.loads.max(1.0));
    let mut out = Vec::new();
    let capped = if big.bytes < wanted { " (capped at 1 GiB)" } else { "" };
    match (&big.llc, &small.llc) {
        (Some((name, b)), Some((_, s))) => {
            let (pb, ps) = (b / big.loads.max(1.0), s / small.loads.max(1.0));
            out.push(CounterVerdict {
                counter: name.clone(),
                pass: (0.5..=1.5).contains(&pb) && ps <= 0.05,
                figures: format!(
                    "{pb:.2} per load over {} MiB{capped} (want about 1), {ps:.3} over {} KiB (want about 0)",
                    big.bytes >> 20,
                    small.bytes >> 10
                ),
            });
        }
        _ => out.push(failed("LLC misses", "neither LLC-load-misses nor cache-misses opens".into())),
    }
    match (per(big.l1_misses, big), per(small.l1_misses, small)) {
        (Some(pb), Some(ps)) => out.push(CounterVerdict {
            counter: "L1-dcache-load-misses".into(),
            pass: pb >= 0.5 && ps <= 0.05,
            figures: format!(
                "{pb:.2} per load over {} MiB (want about 1), {ps:.3} in L1 (want about 0)",
                big.bytes >> 20
            ),
        }),
        _ => out.push(failed("L1-dcache-load-misses", "does not open".into())),
    }
    out
}

/// Runs the checks on this machine's PMU and prints one line per counter; returns the exit code.
pub fn run_and_print(cpu: usize) -> i32 {
    let outcome = evaluate(&mut real::Pmu::new(cpu));
    for l in lines(&outcome) {
        println!("{l}");
    }
    outcome.exit_code()
}

pub fn lines(o: &Outcome) -> Vec<String> {
    match o {
        Outcome::CannotCheck(why) => {
            vec![format!("counters: NOT CHECKED, {why}; nothing passed (exit 3: could not check)")]
        }
        Outcome::Checked(v) => {
            let mut out: Vec<String> = v
                .iter()
                .map(|x| format!("counters: {} {}: {}", if x.pass { "PASS" } else { "FAIL" }, x.counter, x.figures))
                .collect();
            let bad = v.iter().filter(|x| !x.pass).count();
            out.push(format!("counters: {} of {} checks passed", v.len() - bad, v.len()));
            out
        }
    }
}
