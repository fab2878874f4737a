//! A path at the expected period that costs less than the fast path's spread: each sequence
//! folded at that period (`analysis::folded_period`).

decisions! {
    /// A sequence is folded only if it holds at least this many periods: fewer calls per phase
    /// cannot set one phase apart, and the counters of a long period in a short run would cost
    /// memory for nothing.
    calibrated_by: "the unit test `analysis::folded_period::tests::a_phase_of_the_expected_period_stands_out_only_where_planted` (the null at every length from 8 periods; power held at 50 periods and more)";
    pub const MIN_CYCLES: u64 = 8;

    /// Neighbours either side of a call whose median it is marked against: close enough to
    /// move with a speed phase (whose level holds for hundreds of calls), enough for a median.
    calibrated_by: "the unit test's rows with speed phases and slower stretches (power and the null)";
    pub const NEIGHBOURS: usize = 4;

    /// Whole periods tried around the expected one, either side: an event that grows by a byte
    /// over the run moves a switch every 810 calls to 809 or 811 (`near_expected`'s 2 calls).
    calibrated_by: "the same margin as the expected period's match (2 calls); the chance is multiplied by the periods tried";
    pub const PERIOD_SLACK: u64 = 2;

    /// A sequence's best phase stands out when its chance (over every phase) is below this; the
    /// row counts such sequences against the binomial of this level over the sequences folded.
    calibrated_by: "the unit test's null battery (no planted path: at most ALPHA of the rows claim one)";
    pub const SEQUENCE_LEVEL: f64 = 0.01;
}
