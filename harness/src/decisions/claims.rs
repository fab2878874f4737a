//! The claim level every finding is held to, and the permutation null of the periodic search.

decisions! {
    /// The chance of a false claim the report allows, for every kind of claim: a period (its
    /// permutation p-value), a sub-period, a population said to be the tracer's (divided by the
    /// populations the row tests: Bonferroni), a burst of near calls, a regular spacing of an
    /// irregular path (times the windows tried), a harness cycle that gathers slow calls (after
    /// the union bound over residues and cycles), an expected period's outliers on one phase, one phase of the expected period slower than its
    /// neighbours (the fold, over its phases, sequences and periods tried), and
    /// a level that holds more outside disturbances than the base's rate gives.
    calibrated_by: "`make calibrate`: the seeded battery's null kinds must stay at or below 1 % false claims (`findings::MAX_EXACT`, `findings::MAX_IRREGULAR`)";
    pub const ALPHA: f64 = 0.001;

    /// Null reruns of the whole periodic search behind a claim: with none as strong as the data's
    /// lattice, p = 1 / 1001, the fewest reruns for which that p is below ALPHA.
    calibrated_by: "arithmetic on ALPHA; the battery's null kinds check the resulting error rate";
    pub const NULL_RUNS: u32 = 1000;

    /// Confidence of the intervals that decide whose a population or a level is: the ratio of
    /// the tracer's rate to the reference windows' (a population), and the sentinels' bootstrap
    /// interval of their shift (a dated level).
    calibrated_by: "`make calibrate`'s null stalls and speed-phases kinds (nothing said to be the tracer's); scripts/machine-phase.sh";
    pub const INTERVAL_CONFIDENCE: f64 = 0.99;
}
