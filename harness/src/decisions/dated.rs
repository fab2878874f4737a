//! Dated levels: change points of the window means over time, each level held against the
//! sentinel windows (the machine's speed beside the tracer's) and against the periodic paths it
//! may be locked to.

decisions! {
    /// Segments whose means stand fewer standard errors apart than this are one level.
    calibrated_by: "the unit tests of `analysis::dated`; scripts/machine-phase.sh";
    pub const LEVEL_Z: f64 = 4.0;

    /// Sentinels needed in a level's spans and in the base's to compare them.
    calibrated_by: "the unit tests of `analysis::dated`";
    pub const MIN_SENTINELS: usize = 10;

    /// Sentinels above this multiple of their sequence's median are stalls (a descheduled vCPU),
    /// left out: a speed level moves the floor by tens of percent, a stall by multiples.
    calibrated_by: "the measured stalls of this VM (multiples of the floor) against its speed levels (tens of percent)";
    pub const SENTINEL_STALL: f64 = 3.0;

    /// Bootstrap resamples of the sentinels' interval (seeded: a report is reproducible).
    calibrated_by: "the interval's stability at INTERVAL_CONFIDENCE, not a fit";
    pub const RESAMPLES: usize = 400;

    /// A level is the machine's when the sentinels' relative shift may account for at least this
    /// share of the tracer's.
    calibrated_by: "scripts/machine-phase.sh (a CPU hog on the measuring core); the unit tests of `analysis::dated`";
    pub const MACHINE_SHARE: f64 = 0.5;

    /// Share of a level's segments that must start within two windows of a periodic path's phase
    /// for the level to be locked to the path.
    calibrated_by: "the unit tests of `analysis::dated` (the planted 810-call stretch: 100 of 100 locked)";
    pub const LOCKED_SHARE: f64 = 0.75;

    /// Fewest segments that make a lock (two starts fit any period).
    calibrated_by: "an argument: two starts fit any period";
    pub const MIN_SEGMENTS: usize = 3;

    /// Fewest calls above the cut on one residue for a path to be located in a sequence (one call
    /// fits any residue).
    calibrated_by: "the unit test `analysis::dated::tracer_row::tests::the_residue_is_where_the_slow_calls_sit`";
    pub const MIN_ON_RESIDUE: u32 = 2;

    /// A level had a neighbour on the core when its outside disturbances are significant (below
    /// ALPHA) and their rate at least this multiple of the base's (a large run makes any small
    /// rise significant; a neighbour raises it several-fold).
    calibrated_by: "scripts/machine-phase.sh";
    pub const NEIGHBOUR_RATIO: f64 = 2.0;

    /// Most window means the change points are searched on in one sequence. PELT prunes little when
    /// a level seldom changes, so its time grows with about the square of the windows: past this
    /// many, consecutive windows are merged k at a time (k the fewest that fit), and the report
    /// names the merged windows' calls.
    calibrated_by: "report time of one-sequence runs of 10M and 100M calls (make bench-scale)";
    pub const MAX_WINDOWS: usize = 131_072;

    reexported:
    /// Penalty per change point, in units of ln n (noise variance 1 after scaling).
    calibrated_by: "the unit tests `stats::changepoint::tests::null_series_stay_one_segment` and `a_two_sigma_step_over_twenty_windows_is_found_in_place`";
    use PENALTY_PER_LN_N from crate::stats::changepoint;

    /// Values are clipped this many noise scales around their running median (lone stalls make
    /// no change point).
    calibrated_by: "the unit test `stats::changepoint::tests::lone_stalls_and_constant_series_make_no_change`";
    use CLIP from crate::stats::changepoint;

    /// Running-median width for the clipping (odd).
    calibrated_by: "the unit test `stats::changepoint::tests::lone_stalls_and_constant_series_make_no_change`";
    use MEDIAN_OF from crate::stats::changepoint;
}
