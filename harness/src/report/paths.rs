//! What the code-path analysis finds (survey section 7.1: the fast path, a middle path every
//! PAGE_SIZE / EVENT_SIZE events, the slow path every SUB-BUFFER_SIZE / EVENT_SIZE events), and
//! how one tracer's paths are said in one line. The finding itself is `analyze.rs`.
use super::phases::WINDOW;
use super::stream::{Reservoir, Running};
use crate::stats::hist::{LogHistogram, Mode};

/// A mode (frequent path) must hold at least this many calls (and `analyze`'s MIN_MODE_FRACTION
/// of them); rarer paths are found by their period instead. Shared by pass 2 (`analyze`) and the
/// irregular-path step (`irregular`), so it lives here, below both.
pub(super) const MIN_MODE_CALLS: u64 = 10;

/// One frequent but irregular code path of one metric (a mode of the histogram whose calls
/// follow no period, such as a printf flush whose spacing drifts with the formatted length).
#[derive(Debug, Clone)]
pub struct CodePath {
    pub mode: Mode,
    /// Median difference to the dominant path's median (ns, or counter units).
    pub delta: f64,
    /// Calls of the mode on no periodic path.
    pub calls: u64,
    /// Median spacing of consecutive calls on this path and the share within 10 % of it.
    pub spacing: Option<(f64, f64)>,
    /// The share of its calls in the busiest quarter of the run (phases.rs), when the run is long
    /// enough to tell; at or above CLUSTERED_SHARE it is a phase of the machine, not a path.
    pub clustered: Option<f64>,
}

impl CodePath {
    pub fn is_phase(&self) -> bool {
        self.clustered.is_some_and(|c| c >= super::phases::CLUSTERED_SHARE)
    }
}

/// A path taken every `period` calls (survey section 7.1), or `phases` times in every `period`
/// calls at evenly spread phases: a mean period of `period / phases` that is not a whole number
/// (fractional.rs).
#[derive(Debug, Clone)]
pub struct PeriodicPath {
    pub period: u64,
    pub phases: u64,
    /// Slow calls on the lattice.
    pub hits: u64,
    /// Kept calls on the lattice (pass 3): `hits` of them were slow.
    pub slots: u64,
    /// Median extra cost of the slow calls on the lattice over the dominant path's median.
    pub extra: f64,
    /// Kept calls on the lattice above `cut` (half-way to the path's cost): those taking it.
    pub taken: u64,
    pub cut: f64,
    /// The search's evidence for the lattice (its statistic: log10 of a fixed-lattice chance,
    /// not a probability; null.rs calibrates it).
    pub log10_chance: f64,
    /// Calibrated p-value: (1 + null reruns of the whole search as strong) / (1 + reruns).
    pub p_value: f64,
    pub null_runs: u32,
    /// First iteration on the lattice in the first sequence (the phase).
    pub phase: u64,
    /// (sequence, residue) of each sequence holding the lattice.
    pub(super) residues: Vec<(u64, u64)>,
    /// Calls just after this path's, on the same period and also slow: (offset, extra cost, calls),
    /// such as the call after LTTng's sub-buffer switch. One path, not two.
    pub followers: Vec<(u64, f64, u64)>,
    /// The calls of each period folded from the path's own call on (pass 3), and the slower
    /// stretch they show right after it, if any (locked.rs): the tracer's, with this path.
    pub(super) profile: Option<super::locked::Profile>,
    pub stretch: Option<super::locked::Stretch>,
}

impl PeriodicPath {
    /// Calls between two calls of the path, on average.
    pub fn mean_period(&self) -> f64 {
        self.period as f64 / self.phases.max(1) as f64
    }

    /// The period as the report says it: `810`, or `56.5` where it is not a whole number.
    pub fn period_text(&self) -> String {
        if self.phases <= 1 {
            self.period.to_string()
        } else {
            format!("{:.1}", self.mean_period())
        }
    }
}

/// A lattice the search found but the permutation null did not confirm (null.rs): said, so the
/// reader knows it was tried, but not claimed as a path.
#[derive(Debug, Clone)]
pub struct RejectedLattice {
    pub period: u64,
    pub hits: u64,
    pub p: f64,
    pub null_runs: u32,
}

/// A speed phase of the machine: a mode whose calls come in long contiguous stretches of
/// iterations (the VM drifts between speeds over seconds). Not a code path.
#[derive(Debug, Clone)]
pub struct SpeedPhase {
    pub mode: Mode,
    pub delta: f64,
    /// Maximal runs of windows where this mode holds the majority.
    pub stretches: u64,
}

/// Code paths of one metric (latency, or instructions when a PMU exists).
#[derive(Debug, Clone)]
pub struct CodePaths {
    pub metric: String,
    pub unit: &'static str,
    /// The dominant (most frequent) mode and the share of calls in it at or below `threshold`.
    pub dominant: Mode,
    pub fast_fraction: f64,
    /// Calls above this value count as slow (candidates for a periodic path).
    pub threshold: f64,
    pub periodic: Vec<PeriodicPath>,
    /// Lattices the search found and the null refused.
    pub rejected: Vec<RejectedLattice>,
    pub irregular: Vec<CodePath>,
    pub phases: Vec<SpeedPhase>,
    /// Slow calls on no path (interrupts and other noise), and the calls analysed.
    pub outliers: u64,
    /// When most calls in no mode hold the majority of their 64-call windows: the number of
    /// stretches they come in (a speed phase too broad to form one mode).
    pub outliers_in_stretches: Option<u64>,
    /// Two speed levels of the machine in the means of 64-call windows (phases.rs), when they are
    /// too close to form latency modes of their own.
    pub levels: Option<super::phases::Levels>,
    pub rows: u64,
    /// Calls per sequence (the shortest sequence's extent, in iterations).
    pub seq_len: u64,
    /// The metric's column (None: latency).
    pub(super) col: Option<usize>,
}

impl CodePaths {
    /// The main slow path's mean spacing and extra cost: the costliest periodic path, or else the
    /// costliest irregular path with a spacing (printf's flush, whose period drifts with the line:
    /// its median spacing, issue 24).
    pub fn main_slow_path(&self) -> Option<(f64, f64)> {
        if let Some(p) = self.periodic.iter().max_by(|x, y| x.extra.total_cmp(&y.extra)) {
            return Some((p.mean_period(), p.extra));
        }
        self.irregular
            .iter()
            .filter(|p| !p.is_phase() && p.delta > 0.0)
            .filter_map(|p| p.spacing.map(|s| (s.0, p.delta)))
            .max_by(|x, y| x.1.total_cmp(&y.1))
    }
}

#[derive(Debug, Clone)]
pub struct CounterStats {
    pub name: String,
    pub running: Running,
    pub hist: LogHistogram,
    /// (counter value, latency ns) pairs for the Figure 3/4/7 scatter.
    pub sample: Reservoir<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct TracerAnalysis {
    /// Thread count analysed (the smallest in the file: code paths are a single-thread matter).
    pub threads: u32,
    pub rows: u64,
    pub latency: LogHistogram,
    pub latency_running: Running,
    pub counters: Vec<CounterStats>,
    /// The first iterations of the first sequence (thread, repetition, counter set).
    pub first_iterations: Vec<(u64, f64)>,
    pub code_paths: Vec<CodePaths>,
}

/// What a run without sentinel windows cannot tell (issue 23): its events hold no measure of
/// the machine's speed beside the tracer's, so a level may be either's.
pub(super) const NO_SENTINELS: &str =
    "this run has no sentinel windows, so the machine's levels cannot be told from the tracer's";

pub(super) fn fmt_val(v: f64, unit: &str) -> String {
    let s = if v.abs() >= 100.0 { format!("{:.0}", v) } else { format!("{:.1}", v) };
    if unit == "ns" {
        format!("{s} ns")
    } else {
        s
    }
}

/// The period a tracer's own geometry predicts for its slow path (survey section 7.1: "the slow
/// path every SUB-BUFFER_SIZE / EVENT_SIZE events"), and how it was computed.
#[derive(Debug, Clone)]
pub struct Expected {
    pub period: f64,
    /// e.g. "sub-buffer 8192 B (84 B header) / event 10.0 B = 810".
    pub how: String,
}

/// A share in percent with one decimal, or more where one decimal would round a share below
/// 100 % up to "100.0" (a line must not say all calls when a few are elsewhere).
pub(super) fn pct(f: f64) -> String {
    let p = 100.0 * f;
    let mut d = 1;
    while d < 4 && p < 100.0 && format!("{p:.d$}").starts_with("100") {
        d += 1;
    }
    format!("{p:.d$}")
}

/// The calibrated p-value as said: "p < 0.001 over 1000 null reruns of the search".
pub(super) fn p_text(p: f64, runs: u32) -> String {
    let rel = if p < super::null::ALPHA { "<" } else { "=" };
    let shown = if p < super::null::ALPHA { super::null::ALPHA } else { p };
    format!("p {rel} {shown:.3} over {runs} null reruns of the search")
}

/// The survey-style line, e.g. "lttng-ust: fast path 99.8% (median 70.1 ns), slow path every
/// 810 events (6 calls, +990 ns; ...)". `expected`: the period the tracer's geometry predicts,
/// printed beside the measured one.
pub fn describe(tracer: &str, cp: &CodePaths, expected: Option<&Expected>) -> String {
    let what = if cp.metric == "latency" { String::new() } else { format!(" [{}]", cp.metric) };
    let sign = |d: f64| if d >= 0.0 { "+" } else { "-" };
    // Paths above the fast one, cheapest first: (extra cost, text).
    let mut above: Vec<(f64, String)> = Vec::new();
    let closest = expected.and_then(|e| {
        cp.periodic
            .iter()
            .enumerate()
            .min_by(|a, b| (a.1.mean_period() - e.period).abs().total_cmp(&(b.1.mean_period() - e.period).abs()))
    });
    for (i, p) in cp.periodic.iter().enumerate() {
        let mean = if p.phases > 1 {
            format!(" on average ({} times in every {} calls, evenly spread: no whole period; ", p.phases, p.period)
        } else {
            " (".to_string()
        };
        let mut t = format!(
            "every {} events{mean}from iteration {}; {} calls, {}{}; {} of {} kept calls on that period take it, {})",
            p.period_text(),
            p.phase,
            p.taken,
            sign(p.extra),
            fmt_val(p.extra.abs(), cp.unit),
            p.taken,
            p.slots,
            p_text(p.p_value, p.null_runs)
        );
        if let Some(st) = &p.stretch {
            t.push_str(&format!(
                ", and the ~{} calls after each cost {}{} more (a slower stretch locked to this path's phase: the \
                 tracer's, not the machine's)",
                st.calls,
                sign(st.extra),
                fmt_val(st.extra.abs(), cp.unit)
            ));
        }
        for (off, extra, n) in &p.followers {
            t.push_str(&format!(
                ", and the call {} after it costs {}{} too ({n} calls)",
                if *off == 1 { "just".to_string() } else { format!("{off} calls") },
                sign(*extra),
                fmt_val(extra.abs(), cp.unit)
            ));
        }
        if let (Some(e), Some((j, _))) = (expected, closest) {
            if i == j {
                t.push_str(&format!(" [expected: {}]", e.how));
            }
        }
        above.push((p.extra, t));
    }
    for p in cp.irregular.iter().filter(|p| !p.is_phase()) {
        let when = match p.spacing {
            Some((med, near)) if near >= 0.5 && med >= 2.0 => format!(
                "about every {med:.0} events (no exact period; {:.0}% of spacings within 10% of that)",
                100.0 * near
            ),
            _ => format!("irregular, about 1 in {:.0} events", cp.rows as f64 / p.calls.max(1) as f64),
        };
        above.push((
            p.delta,
            format!(
                "{:.1}% {when} ({}{})",
                100.0 * p.calls as f64 / cp.rows.max(1) as f64,
                sign(p.delta),
                fmt_val(p.delta.abs(), cp.unit)
            ),
        ));
    }
    above.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n_up = above.iter().filter(|a| a.0 >= 0.0).count();
    let mut parts = Vec::new();
    let dom = &cp.dominant;
    if above.is_empty() {
        parts.push(format!(
            "single code path ({}% of calls, median {})",
            pct(cp.fast_fraction),
            fmt_val(dom.median, cp.unit)
        ));
    } else {
        parts.push(format!("fast path {}% (median {})", pct(cp.fast_fraction), fmt_val(dom.median, cp.unit)));
        let mut up = 0;
        for (d, t) in above {
            let name = if d < 0.0 {
                "faster path".to_string()
            } else {
                up += 1;
                match (n_up, up) {
                    (1, _) => "slow path".into(),
                    (2, 1) => "middle path".into(),
                    (2, 2) => "slow path".into(),
                    // The costliest is the slow path (survey 7.1); the cheaper ones are numbered.
                    (n, u) if u == n => "slow path".into(),
                    _ => format!("path {}", up + 1),
                }
            };
            parts.push(format!("{name} {t}"));
        }
    }
    let mut s = format!("{tracer}{what}: {}", parts.join(", "));
    if let Some(e) = expected.filter(|_| cp.periodic.is_empty()) {
        s.push_str(&format!("; no periodic path found [expected: {}]", e.how));
    }
    if !cp.phases.is_empty() {
        let ph: Vec<String> = cp
            .phases
            .iter()
            .map(|p| {
                format!(
                    "{:.1}% of calls at {}{} in {} stretch{}",
                    100.0 * p.mode.fraction,
                    sign(p.delta),
                    fmt_val(p.delta.abs(), cp.unit),
                    p.stretches,
                    if p.stretches == 1 { "" } else { "es" }
                )
            })
            .collect();
        s.push_str(&format!(
            "; {} speed levels in stretches of calls, not single-call paths ({}; {NO_SENTINELS})",
            if cp.phases.len() == 1 { "two".to_string() } else { (cp.phases.len() + 1).to_string() },
            ph.join(", ")
        ));
    }
    for p in cp.irregular.iter().filter(|p| p.is_phase()) {
        s.push_str(&format!(
            "; {:.1}% of calls at {}{} come and go over the run ({:.0}% of them in its busiest quarter): a phase, \
             not a code path ({NO_SENTINELS})",
            100.0 * p.calls as f64 / cp.rows.max(1) as f64,
            sign(p.delta),
            fmt_val(p.delta.abs(), cp.unit),
            100.0 * p.clustered.unwrap_or(0.0)
        ));
    }
    if let Some(l) = cp.levels.as_ref().filter(|_| cp.phases.is_empty() && cp.outliers_in_stretches.is_none()) {
        s.push_str(&format!(
            "; two speed levels in stretches of calls, not single-call paths: its {WINDOW}-call windows average {} or {} ({:.0}% of them at the \
             higher, in {} stretches; {NO_SENTINELS})",
            fmt_val(l.low, cp.unit),
            fmt_val(l.high, cp.unit),
            100.0 * l.high_share,
            l.stretches
        ));
    }
    if !cp.rejected.is_empty() {
        let r: Vec<String> = cp
            .rejected
            .iter()
            .take(3)
            .map(|r| format!("every {} ({} calls, {})", r.period, r.hits, p_text(r.p, r.null_runs)))
            .collect();
        s.push_str(&format!(
            "; not claimed as periods, as likely among these slow calls at random positions: {}{}",
            r.join(", "),
            if cp.rejected.len() > 3 { format!(" and {} more", cp.rejected.len() - 3) } else { String::new() }
        ));
    }
    if cp.outliers > 0 {
        let pct = 100.0 * cp.outliers as f64 / cp.rows.max(1) as f64;
        // Two decimals, or the first significant digit of a smaller share (0.004%).
        let digits = ((-pct.log10().floor()) as usize).clamp(2, 9);
        match cp.outliers_in_stretches {
            Some(st) => s.push_str(&format!(
                "; {} slow call{} ({pct:.digits$}%) on no path, most of them in {st} stretch{} of consecutive calls: a \
                 slower phase, not a code path ({NO_SENTINELS})",
                cp.outliers,
                if cp.outliers == 1 { "" } else { "s" },
                if st == 1 { "" } else { "es" },
            )),
            None => s.push_str(&format!(
                "; {} outlier{} ({pct:.digits$}%) on no path",
                cp.outliers,
                if cp.outliers == 1 { "" } else { "s" },
            )),
        }
    }
    s
}
