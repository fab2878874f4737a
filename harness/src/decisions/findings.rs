//! What the report says from the analysis (orders, scaling, expected periods, sweeps), and the
//! targets the calibration battery holds the analysis to.

decisions! {
    /// The line between flat and contended growth across thread counts: the mean at the most
    /// threads against 1.25 times the mean at the fewest, by the one comparison. The survey's
    /// contended tracers more than double (printf, ftrace).
    calibrated_by: "the survey's thread scaling; the unit test `report::findings::survey_check::tests::scaling_never_decides_the_wrong_way_on_seeded_repetitions`";
    pub const FLAT_MAX: f64 = 1.25;

    /// A sweep's slow-path period ratio within this relative change of the value ratio is called
    /// proportional to the knob (of 1: independent of it). The mean's curve is judged step by step
    /// by the comparison's own margin instead (`stats::compare::MARGIN`).
    calibrated_by: "the sweeps of docs/sweeps.md, not a fit";
    pub const SWEEP_FLAT: f64 = 0.10;

    /// Fewest outliers on one phase of a tracer's expected period worth saying: two are a gap,
    /// not a lattice (said when their chance at random positions is below ALPHA).
    calibrated_by: "the unit test `report::findings::expected_tests::the_expectation_goes_to_the_path_on_exactly_that_period`";
    pub const MIN_ON_LATTICE: usize = 3;

    /// The share of the battery's null runs allowed an exact period claimed falsely, per null
    /// kind.
    calibrated_by: "the target `make calibrate` is held to";
    pub const MAX_EXACT: f64 = 0.01;

    /// The share of the battery's null runs allowed an irregular path, or a population said to be
    /// the tracer's, on runs that hold no path at all, per null kind.
    calibrated_by: "the target `make calibrate` is held to";
    pub const MAX_IRREGULAR: f64 = 0.01;

    /// The share of the generative battery's random compositions allowed any false claim (a
    /// path, period or phase that was not planted, or a path said twice): the 95 % upper bound
    /// of the measured share must stay below it.
    calibrated_by: "the target `make calibrate`'s generative battery is held to";
    pub const MAX_FALSE_RUNS: f64 = 0.01;

    /// The share of a seeded subset of the generative battery's compositions that today's model
    /// is held below (a unit test): a regression past it fails, while the target is MAX_FALSE_RUNS.
    calibrated_by: "the unit test `analysis::calibration_battery::generative::tests::a_seeded_subset_stays_below_the_ceiling`, at the rate the battery measured";
    pub const GENERATIVE_CEILING: f64 = 0.05;
}
