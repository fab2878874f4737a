//! The periodic search: lattices of slow calls exactly P apart, their cost splits and folds, and
//! the bound on the calls searched.

decisions! {
    /// A lattice is an exact period only if this share of its kept calls take the path, and a
    /// folded real-valued period only if its path is taken on this share of its slots: a lattice
    /// that most of its calls skip (a page crossed every 83.4 events lands on no single integer
    /// period) is not one. A floor on what "exact" means, not fitted to a run.
    calibrated_by: "a definition; the unit test `analysis::periodic::fractional::tests::phases_of_a_real_period_are_filled_and_others_refused` and the battery's planted kinds";
    pub const TAKEN: f64 = 0.8;

    /// A lattice is an exact period only if this share of its calls stand above their neighbours
    /// (`analysis::periodic::search::rising_share`): a lattice one or two calls off a path's period
    /// slides through the slower stretch after the path and sits on a slow call in every slot,
    /// among slow neighbours. A majority, not a fit: the path's own calls stand out nearly always.
    calibrated_by: "a definition; the unit test `analysis::stretch_after_tests::a_path_with_a_slower_stretch_after_it_keeps_its_period` and the generative battery";
    pub const RISING: f64 = 0.5;

    /// The most kept calls of one lattice whose positions pass 3 keeps, to judge a lattice that
    /// crosses a costlier path's footprint on its calls outside it. A lattice that slides through
    /// a stretch has a long period and few slots; one with more is judged by its share inside.
    calibrated_by: "a bound on memory (16 bytes a slot), not fitted to a run; the unit test `report::findings::lattice_tests::a_lattice_that_slides_through_a_long_stretch_is_no_path`";
    pub const SLOTS_KEPT: usize = 4096;

    /// Lattices searched per threshold: a second and third path beside the first (LTTng's page
    /// crossing beside its sub-buffer switch).
    calibrated_by: "`make calibrate`'s planted coprime and commensurate kinds (power); the null reruns repeat it";
    pub const PER_THRESHOLD: usize = 4;

    /// Lattices searched per costlier band above the slow threshold.
    calibrated_by: "`make calibrate`'s planted kinds (power); the null reruns repeat it";
    pub const PER_BAND: usize = 2;

    /// A lattice is split by cost only when it holds this many calls ...
    calibrated_by: "the battery's planted commensurate kind (two paths every P, not one every P/2)";
    pub const SPLIT_HITS: usize = 8;

    /// ... and each of its cost modes this many.
    calibrated_by: "the battery's planted commensurate kind";
    pub const SPLIT_MODE_CALLS: u64 = 4;

    /// Lattices of one period within this share of each other's cost may be one real-valued
    /// period (only when the mean period is not a whole number).
    calibrated_by: "the unit test `analysis::periodic::fractional::tests::phases_of_a_real_period_are_filled_and_others_refused`";
    pub const SAME_COST: f64 = 0.3;

    /// A lattice that trails a costlier one of the same period by at most this many calls in
    /// every sequence is that path's aftermath (the call after LTTng's switch: offset 1, survey
    /// Fig. 3).
    calibrated_by: "the survey's LTTng runs (offset 1), with margin";
    pub const FOLLOWER_MAX_OFFSET: u64 = 3;

    /// Slow calls the periodic search (and each of its null reruns) looks at, at most: the run's
    /// quietest whole sequences, or else each sequence's first part (`periodic::search_part`).
    /// The same part for the data and for every rerun, so the test stays exact. A bound on the
    /// report's time (about 3 us per call per rerun here, 1000 reruns).
    calibrated_by: "the report's time budget, not a fit";
    pub const MAX_SEARCH_CALLS: usize = 2000;

    /// A claimed lattice is also tested against the conditional null of a coarser lattice of
    /// a divisor of its period, with no path claimed on it, when the other slow calls gather on
    /// that coarser lattice's residue this far beyond chance (the binomial tail, over all the
    /// divisors tried): a path hidden inside another mode (a cheap path whose calls are slow only
    /// where a random second mode meets them) puts slow calls on every slot of its own lattice,
    /// and a chance progression of them looks like a period of its own to a null that draws
    /// positions anywhere. Extra testing can only withdraw a claim (the larger p-value is kept).
    calibrated_by: "the generative battery planted into real runs (a second random mode beside a cheap periodic path); a trigger only: the conditional null decides";
    pub const GATHERED_P: f64 = 1e-4;

    reexported:
    /// Candidate periods whose pairwise GCDs are candidates too (the most frequent differences:
    /// 2P and 3P may be frequent where P is not).
    calibrated_by: "`stats::period`'s unit tests and the battery's planted kinds";
    use GCD_OF from crate::stats::period;

    /// Calls of one sequence on a lattice before they count as its evidence (two calls make a
    /// lattice of any period; fewer count their slots as misses).
    calibrated_by: "`stats::period`'s unit tests; an argument (two points fit any period)";
    use MIN_SEQ_HITS from crate::stats::period;

    /// A call on a found lattice costing more than this times the lattice's 90th-percentile cost
    /// (latency, the fast path included) stays among the calls the next lattice is searched in:
    /// it holds another, costlier path too, whose slot met this one's, and that path keeps its
    /// phase.
    calibrated_by: "the generative battery (a cheap periodic path beside a costly one whose phase lost coinciding slots)";
    use COINCIDENT_FACTOR from crate::stats::period;

    /// A residue of a period is another path's, every d calls for a divisor d of the period,
    /// where the sequence's calls fill that path's lattice as well at a mean cost within this
    /// factor of the residue's own (latency, the fast path included): among equally filled
    /// residues the search then prefers one no such lattice explains. Two paths of the period
    /// that meet on a divisor's lattice (+60 ns at phase 7 and +900 ns at phase 27 of 40) cost
    /// more apart than this.
    calibrated_by: "`report::findings::commensurate_tests` and `lattice_tests` (generated runs); the generative battery";
    use FINER_COST from crate::stats::residues;
}
