//! Outliers and tails: which tails are split into populations, and whose each population is
//! (the tracer's, the machine's, or undecided), tested against the reference windows.

decisions! {
    /// The tails whose populations the report splits: what sets p99 and p99.9.
    calibrated_by: "a choice of what to report, not a fit";
    pub const TAIL_QUANTILES: [f64; 2] = [0.99, 0.999];

    /// A population is the machine's when the tracer's rate is at most this multiple of the
    /// reference windows' (upper end of the INTERVAL_CONFIDENCE interval): the machine then
    /// accounts for at least half of it.
    calibrated_by: "`make calibrate`'s null stalls kind and planted stalls-beside-a-path kind";
    pub const MACHINE_RATIO: f64 = 2.0;

    /// A band of outliers spans this factor of extra cost (a path's calls within +-20 % of its
    /// median fit one) ...
    calibrated_by: "`make calibrate`'s null kinds (the scan counts two tests per band width) and planted memoryless kind";
    pub const BAND_FACTOR: f32 = 1.5;

    /// ... and holds at least this many calls to be tested.
    calibrated_by: "`make calibrate`'s planted memoryless kind";
    pub const BAND_MIN_CALLS: usize = 10;

    /// A band is a mode of its own, and so a path, only where the outliers per ns just below it
    /// (one band width down, the part above the slow threshold) are at most this share of the
    /// band's own, and fewer than equal densities give by chance (binomial tail below ALPHA over
    /// the row's tests); otherwise it is a stretch of one tail that falls from the fast path.
    calibrated_by: "`make calibrate --generative`'s heavy-tailed spreads (false paths) and memoryless paths (power)";
    pub const BAND_DIP: f64 = 0.5;

    /// Two populations meet in a band when their extras add up to within this factor of the
    /// band's edges: each extra is a median over calls that spread about it.
    calibrated_by: "`make calibrate --generative`'s second modes beside drifting paths (false paths)";
    pub const COINCIDENCE_SLACK: f64 = 1.2;

    /// Bands tested per row, at most (the densest first).
    calibrated_by: "the Bonferroni cost of more tests against the battery's planted kinds";
    pub const MAX_BANDS: usize = 3;

    /// Calls of a band within this many iterations of another of its calls are near neighbours;
    /// more near ones than calls at random positions would have (binomial tail below ALPHA) make
    /// a burst, not a rate.
    calibrated_by: "`make calibrate`'s null speed-phases kind";
    pub const NEAR: u64 = 8;
}
