//! Speed phases of the machine (modes that come in long stretches or crowd into part of the run),
//! two speed levels of window means, and the slower stretch locked to a periodic path.

decisions! {
    /// Phase windows: a mode holding the majority of this many consecutive iterations in
    /// stretches covering most of its calls is a phase of the machine, not a path. A path of share
    /// f < 1/2 taken independently of its neighbours almost never holds a 64-call window.
    calibrated_by: "`make calibrate`'s null machine-phases and speed-phases kinds";
    pub const WINDOW: u64 = 64;

    /// Share of a mode's calls inside its majority windows above which it is a phase.
    calibrated_by: "`make calibrate`'s null machine-phases kind";
    pub const PHASE_SHARE: f64 = 0.6;

    /// Calls per window for the busiest quarter: enough that a path taken independently of time
    /// puts about a third of its calls in the busiest quarter of the windows (Poisson, 16 +- 4).
    calibrated_by: "the unit test `analysis::phases::tests::a_path_spread_over_time_is_not_clustered_and_one_in_a_third_of_the_run_is`";
    pub const CALLS_PER_WINDOW: u64 = 16;

    /// Fewer windows than this and the busiest quarter says nothing (two of eight windows).
    calibrated_by: "an argument: a quarter of fewer windows is one or two";
    pub const MIN_QUARTER_WINDOWS: usize = 8;

    /// Share of a mode's calls in the busiest quarter of its windows above which it comes and
    /// goes with time: a phase of the machine, not a code path.
    calibrated_by: "the unit test `analysis::phases::tests::a_path_spread_over_time_is_not_clustered_and_one_in_a_third_of_the_run_is`";
    pub const CLUSTERED_SHARE: f64 = 0.75;

    /// A window's mean counts only when at least this share of its calls were kept (at or below
    /// the slow threshold): a window mostly of outliers says nothing of the speed around them.
    calibrated_by: "an argument, not a fit";
    pub const WINDOW_KEPT: f64 = 0.75;

    /// Window means needed before two levels are looked for: with fewer (1024 calls) a tenth of
    /// them is one or two windows, too few to show a level and its spread.
    calibrated_by: "the unit test `analysis::phases::tests::two_speed_levels_in_stretches_and_none_in_noise`";
    pub const MIN_WINDOWS: usize = 16;

    /// Two levels lie at least this share of the low level apart (a 10 ns clock step on a 100 ns
    /// call) ...
    calibrated_by: "the TSC's 10 ns step; the unit test `analysis::phases::tests::two_speed_levels_in_stretches_and_none_in_noise`";
    pub const LEVEL_GAP: f64 = 0.1;

    /// ... and at least this many times either group's standard deviation apart.
    calibrated_by: "the unit test `analysis::phases::tests::two_speed_levels_in_stretches_and_none_in_noise`";
    pub const LEVEL_SPREADS: f64 = 4.0;

    /// Each level holds at least a tenth of the windows (the divisor of their count).
    calibrated_by: "the unit test `analysis::phases::tests::two_speed_levels_in_stretches_and_none_in_noise`";
    pub const LEVEL_MIN_SHARE: usize = 10;

    /// Levels come in stretches when they change at most this share of the times a random order
    /// of the same windows would (1 + 2 n p (1 - p) expected changes).
    calibrated_by: "the unit test `analysis::phases::tests::two_speed_levels_in_stretches_and_none_in_noise`";
    pub const STRETCHED: f64 = 0.5;

    /// Bins per period at most when a periodic path's period is folded (fewer for short periods:
    /// one call each). At LTTng-UST's 810-call period a bin holds ~13 calls per period, and a
    /// stretch of ~300 calls spans ~24 bins: enough bins to date the stretch, enough calls per bin
    /// over a 5-switch run to average out noise.
    calibrated_by: "`make calibrate`'s planted tracer-stretch kind";
    pub const STRETCH_BINS: u64 = 64;

    /// A folded bin is slower when its mean stands this many standard errors above the typical
    /// bin: a normal bin passes 4 SE with probability 3e-5, so 64 bins tried give ~0.2 % per
    /// period.
    calibrated_by: "the normal tail; `make calibrate`'s planted tracer-stretch kind and null kinds";
    pub const STRETCH_SE: f64 = 4.0;
}
