//! Every column name of the output contract, in one place. The contract only ever appends
//! columns, so readers find columns by name, never by position.

/// events.csv: these, then one column per counter read in the run, then [`EVENTS_TAIL`].
pub const EVENTS_HEAD: [&str; 6] = ["tracer", "threads", "thread", "cpu", "iteration", "latency_ns"];
/// `t_ns` (appended last): the start of the call's window, ns from the start of the cell's first
/// timed window, on the run's clock; empty where the cell has no time (`--kernel`). A stepped
/// run's events.csv ([`STEPPED_EVENTS`]) has no timing column, this one included.
pub const EVENTS_TAIL: [&str; 3] = ["repetition", "counter_set", T_NS];
pub const T_NS: &str = "t_ns";
/// sentinels.csv (with `--sentinel-every K` > 0): one row per kept sentinel window, an empty
/// call timed between the tracer's; `iteration` is the tracer call it precedes.
pub const SENTINELS: [&str; 8] = ["tracer", "threads", "thread", "cpu", "iteration", T_NS, "latency_ns", "repetition"];
/// reference.csv (with `--reference-every R` > 0): the kept reference windows (a loop as long as
/// the tracer's fast path, runner/reference.rs) per bin of latency, per thread and repetition.
pub const REFERENCE: [&str; 8] =
    ["tracer", "threads", "thread", "repetition", "loop_iterations", "latency_lo_ns", "latency_hi_ns", "windows"];
/// discarded.csv.
pub const DISCARDS: [&str; 8] =
    ["tracer", "threads", "thread", "cpu", "iteration", "latency_ns", "reason", "repetition"];
pub const TRACER: &str = "tracer";
pub const THREADS: &str = "threads";
pub const KEPT: &str = "kept";
pub const DISCARDED: &str = "discarded";
pub const MEAN: &str = "mean_ns";
pub const STD: &str = "std_ns";
pub const P50: &str = "p50_ns";
pub const P90: &str = "p90_ns";
pub const P99: &str = "p99_ns";
pub const MIN: &str = "min_ns";
pub const MAX: &str = "max_ns";
/// summary.csv: `tracer,threads`; repetitions.csv adds `repetition` after them.
pub const SUMMARY_KEY: [&str; 2] = [TRACER, THREADS];
pub const REPETITION: &str = "repetition";
/// Then these statistics of the kept calls' latency.
pub const SUMMARY_STATS: [&str; 9] = [KEPT, DISCARDED, MEAN, STD, P50, P90, P99, MIN, MAX];
/// Then `<counter>_mean` per counter, then the appended columns.
pub const COUNTER_MEAN_SUFFIX: &str = "_mean";
/// Median of the means of 10 blocks of consecutive kept calls (added after the counters).
pub const MOM: &str = "mom_ns";
/// Kept calls in which the measuring thread went to sleep inside the tracer (a voluntary context
/// switch: a lock, a write that waits), appended after `mom_ns`: the tracer's cost, kept, but
/// counted so a mean that holds them can be read.
pub const BLOCKED: &str = "blocked";
/// The mean latency of those calls (empty when there are none).
pub const BLOCKED_MEAN: &str = "blocked_mean_ns";
pub const LATENCY: &str = "latency_ns";
/// events.csv columns the report reads by name.
pub const THREAD: &str = "thread";
pub const ITERATION: &str = "iteration";
pub const COUNTER_SET: &str = "counter_set";

/// sweep.csv: one row per tracer, knob value and thread count. `slow_period`, `slow_extra_ns`
/// and `slow_share` are the tracer's own main slow path as the report finds it (empty when none).
/// The `vs_previous*` columns judge the row against the same curve's row at the previous value
/// (`results::sweep_steps`, empty at a curve's first value): `a_cheaper` (the previous value
/// costs less: the curve rises), `b_cheaper`, `same` (within the margin) or `undecided`; this
/// value's cost over the previous one's, less one, relative to the cheaper one's cost (net of
/// `none` when `vs_previous_net`), with its interval; the rounds compared, and when undecided
/// the rounds that would decide at the spread seen.
pub const SWEEP: [&str; 19] = [
    "tracer",
    "param",
    "value",
    "threads",
    "kept",
    "mean_ns",
    "p50_ns",
    "p90_ns",
    "mom_ns",
    "slow_period",
    "slow_extra_ns",
    "slow_share",
    "vs_previous",
    "vs_previous_estimate",
    "vs_previous_lo",
    "vs_previous_hi",
    "vs_previous_net",
    "vs_previous_rounds",
    "vs_previous_rounds_needed",
];

// --- `run --instructions singlestep` (see `singlestep`) ---
// A stepped run writes no timing column: single-stepped time is meaningless. Its events.csv has
// the same key columns with these in place of `latency_ns` and the counters.
/// User-space instructions of one call, counted by single-stepping (not a PMU count).
pub const USER_INSTRUCTIONS: &str = "user_instructions";
/// System calls + traps (uprobe int3) + page faults the call made; their kernel instructions are
/// not counted.
pub const KERNEL_ENTRIES: &str = "kernel_entries";
/// Passes of the vDSO clock read's retry loop left out of `user_instructions`: a tick landing in
/// the (slow, stepped) read forces them; unstepped they are a rare accident (see
/// `singlestep::stepper::Vdso`).
pub const CLOCK_RETRIES: &str = "clock_retries";
/// events.csv of a stepped run (no `t_ns` either: a stepped run has no timing column at all).
pub const STEPPED_EVENTS: [&str; 10] = [
    "tracer",
    "threads",
    "thread",
    "cpu",
    "iteration",
    USER_INSTRUCTIONS,
    KERNEL_ENTRIES,
    "repetition",
    "counter_set",
    CLOCK_RETRIES,
];
/// discarded.csv of a stepped run (a call a signal landed in: its handler was stepped too).
pub const STEPPED_DISCARDS: [&str; 8] =
    ["tracer", "threads", "thread", "cpu", "iteration", USER_INSTRUCTIONS, "reason", "repetition"];
/// summary.csv of a stepped run (repetitions.csv adds `repetition` after `threads`):
/// `user_instructions` is the main path's exact count (the most frequent one), the same on every
/// run of a build and the gate's exact metric (`gate --metric user_instructions`); `main_share`
/// is its share of the calls; `user_instructions_mean` averages every path.
pub const STEPPED_SUMMARY_STATS: [&str; 9] = [
    "kept",
    "discarded",
    USER_INSTRUCTIONS,
    "main_share",
    "user_instructions_mean",
    "user_instructions_min",
    "user_instructions_p50",
    "user_instructions_max",
    "kernel_entries_mean",
];
