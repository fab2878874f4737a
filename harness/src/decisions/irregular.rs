//! Irregular paths: modes no periodic path explains (printf's flush, whose spacing drifts with
//! the formatted length) and rare paths too few to form a mode, both told from memoryless slow
//! calls by the regularity of their spacing; and the stretches whose starts recur by call count.

decisions! {
    /// A mode is an irregular path only when no lattice explains this share of its calls or more
    /// (the rest of it, left on no lattice, is then its own path).
    calibrated_by: "`make calibrate`: the planted printf-flush and flush-every-8 kinds (power), the null kinds (at most 1 % irregular claims)";
    pub const UNEXPLAINED_SHARE: f64 = 0.2;

    /// A gap within this share of a spacing is that spacing: the window of +-10 % a regular spacing
    /// is looked for in, the slow calls one spacing from a path's own that it takes, the gaps a
    /// spacing's share and a stretch period's mean are taken over.
    calibrated_by: "the battery's planted drifting-rare kind (spacing 2250 to 2750) and printf's flush (spacings 431 to 455)";
    pub const SPACING_TOLERANCE: f64 = 0.1;

    /// A mode without a regular spacing still takes the slow calls one spacing from its own when
    /// at least this share of its gaps lie near their median (a majority); the report says "about
    /// every N events" only then, otherwise "about 1 in N events".
    calibrated_by: "the battery's planted printf-flush kind";
    pub const REGULAR_SHARE: f64 = 0.5;

    /// ... and when that median spacing is at least this many calls (a spacing of one is a
    /// stretch, not a recurring call).
    calibrated_by: "an argument: one call apart is a stretch";
    pub const REGULAR_MIN_SPACING: f64 = 2.0;

    /// ... and when the path's calls are not much rarer overall than that spacing says: "about
    /// every N events" claims about 1 call in N, so a path of 1 call in more than this many times
    /// N recurs at N only within bursts, and is said "about 1 in M events" (its overall rate)
    /// instead. A path seen in some repetitions only stays within it up to a third of them.
    calibrated_by: "an argument: the sentence's rate must be the path's rate within a factor of 3";
    pub const BURST_RATIO: f64 = 3.0;

    /// Spacings a rare path needs before its regularity says anything: random slow calls put about
    /// one gap in ten within 10 % of their median, so half of ten or more is not chance.
    calibrated_by: "`make calibrate`'s null kinds (0 of 160 irregular claims) and its planted drifting-rare kind";
    pub const RARE_MIN_GAPS: usize = 10;

    /// A mode's calls (a cost of their own already sets them apart) need no more gaps than the
    /// binomial test asks for: five of five in one window is already below ALPHA.
    calibrated_by: "`make calibrate`'s null kinds (the binomial bound alone decides)";
    pub const MODE_MIN_GAPS: usize = 3;

    /// The chance that a gap between randomly placed calls falls in the best window of +-10 %
    /// (geometric gaps put about 7.4 % there at most; a margin for other shapes).
    calibrated_by: "the geometric distribution, with margin; `make calibrate`'s null geometric and stalls kinds";
    pub const RANDOM_IN_WINDOW: f64 = 0.15;

    /// Rare paths: slow calls on no path are grouped in cost bands this factor wide (20 %) ...
    calibrated_by: "the battery's planted drifting-rare kind (+3 us, one band)";
    pub const COST_BAND: f64 = 1.2;

    /// ... and a rare path's calls are looked for within this many neighbouring bands (a factor
    /// of 1.7: a flush that wrote more cost more).
    calibrated_by: "the battery's planted drifting-rare and printf-flush kinds";
    pub const RARE_BANDS: i64 = 3;

    /// Calls of a phase mode further apart than this start a new stretch (a phase's 64-call
    /// window); a stretch shorter than this from its first call to its last is a few slow calls,
    /// not a slower stretch, and its start is not counted.
    calibrated_by: "the unit tests `analysis::stretch_starts::tests::stretches_every_810_calls_have_that_period_and_random_ones_none` and `lone_calls_every_p_are_no_stretches`; the battery's planted counted-stretch kind";
    pub const STRETCH_GAP: u64 = super::phases::WINDOW;

    /// Gaps between stretch starts needed before their regularity says anything (five of five in
    /// one window is below ALPHA).
    calibrated_by: "the unit test `analysis::stretch_starts::tests::stretches_every_810_calls_have_that_period_and_random_ones_none`";
    pub const STRETCH_MIN_GAPS: usize = 5;

    /// Keyed populations (analysis/keyed.rs): the cuts of extra cost the count of iterations slow
    /// in every repetition is tested at, per factor of 2 (a cut within 19 % of any cost; the
    /// rotation null counts the cuts scanned, so more cuts cost power, not false claims).
    calibrated_by: "the unit tests `analysis::keyed::tests`; the generative battery's keyed-to-the-call component (power) and its other components (false claims)";
    pub const KEYED_CUTS_PER_OCTAVE: f64 = 4.0;

    /// ... and a band of cost is at most this many cuts wide (a factor of 2): of two keyed paths
    /// at costs further apart one is said at its own cost, not both as one at a cost between (the
    /// widest band would take both, its chance the least); one whose cost varies by less is one.
    calibrated_by: "the unit test `analysis::keyed::tests::of_two_keyed_paths_at_two_costs_one_is_said_at_its_own`; the generative battery's runs with two keyed paths";
    pub const KEYED_BAND_CUTS: usize = 4;

    /// Two repetitions of n iterations have 2n moves against each other (rotations, read either
    /// way): all of them are tried up to this many, so that the observed alignment is not drawn
    /// again by chance among the null's runs and the least p is 1 / 2n, not 1 / (runs + 1).
    calibrated_by: "the unit tests `analysis::keyed::tests`; an argument: 2n moves of 10,000 to 25,000 slow-call lookups cost less than a second";
    pub const KEYED_EXACT_MOVES: u64 = 50_000;
}
