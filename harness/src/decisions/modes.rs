//! Modes of the latency (and counter) histograms, and the thresholds above the fast path that the
//! periodic search and the irregular paths look above.

decisions! {
    /// Kernel width for latency modes: 5 % or 15 ns, whichever is wider. The TSC here ticks in
    /// ~10 ns steps (26 ticks of a 2.596 GHz TSC), which would otherwise split one path into a
    /// comb of modes: 15 ns is one and a half clock steps.
    calibrated_by: "the unit test `stats::hist::tests::two_modes_on_a_quantised_comb` and the survey's measurements on this machine";
    pub const LAT_BW: (f64, f64) = (0.05, 15.0);

    /// Kernel width for instruction-count modes: 1 % or 2. Instruction counts of one path are
    /// nearly exact (survey: 870 / 927 / 1,638).
    calibrated_by: "the survey's instruction counts (single-step runs)";
    pub const INS_BW: (f64, f64) = (0.01, 2.0);

    /// A mode (frequent path) holds at least this share of calls, and MIN_MODE_CALLS calls: rarer
    /// paths are found by their period instead (LTTng's sub-buffer switch is 0.12 % of calls).
    calibrated_by: "the unit test `stats::hist::tests::mode_medians_interpolate_and_modes_below_the_fraction_are_dropped`; LTTng's measured switch share";
    pub const MIN_MODE_FRACTION: f64 = 0.001;

    /// ... and at least this many calls. Pass 2 and the irregular paths both use it.
    calibrated_by: "the battery's null kinds (`make calibrate`): fewer calls make no irregular path";
    pub const MIN_MODE_CALLS: u64 = 10;

    /// Slow calls are those this many kernel widths above the fast path's median (never past the
    /// valley to the next mode): a call 4 widths up lies beyond the fast path's kernel-smoothed
    /// bulk. The permutation null reruns every threshold, so the widths set the search's power,
    /// not its error rate.
    calibrated_by: "`make calibrate`'s planted kinds (power); the null kinds show the error rate does not depend on it";
    pub const SLOW_WIDTHS: f64 = 4.0;

    /// A second, lower threshold the search also looks above (cheaper paths close to the fast one).
    calibrated_by: "`make calibrate`'s planted kinds (power)";
    pub const LOW_WIDTHS: f64 = 3.0;

    /// Calls kept for the search and for irregular paths: above this many widths, below the lowest
    /// threshold the search uses, so every threshold has its calls.
    calibrated_by: "an ordering, not a fit: below LOW_WIDTHS";
    pub const KEEP_WIDTHS: f64 = 2.0;

    /// A tight fast path: periods are also searched above this quantile of it ...
    calibrated_by: "ftrace-open's +130 ns page crossing on 1262 ns (a survey run), not a fit";
    pub const TIGHT_QUANTILE: f64 = 0.9;

    /// ... plus this many absolute kernel widths (two clock steps here).
    calibrated_by: "ftrace-open's +130 ns page crossing on 1262 ns";
    pub const TIGHT_WIDTHS: f64 = 2.0;

    /// Bound on the slow calls pass 2 keeps per tracer (40 bytes each, about 40 MB, and as much
    /// again while the paths are read from them): the report's memory whatever the run's length.
    /// A run whose slow calls would pass it is read in a sample (analysis/sample.rs).
    calibrated_by: "the memory bound (a 10M-call report within 256 MB), not a fit";
    pub const MAX_SLOW_INDICES: usize = 1_000_000;

    /// A sampled run's sample is planned to hold this share of MAX_SLOW_INDICES by pass 1's
    /// histogram, leaving the rest for slow calls that come denser in its first part.
    calibrated_by: "headroom for a phase twice as dense early on, not a fit";
    pub const SAMPLE_FILL: f64 = 0.5;

    reexported:
    /// Histogram bins per decade: 2.3 % wide bins, finer than any code-path gap worth reporting.
    calibrated_by: "the unit test `stats::hist::tests::histogram_quantiles_within_a_bin`";
    use BINS_PER_DECADE from crate::stats::hist;

    /// Two neighbouring peaks of the smoothed histogram are two modes only when the density
    /// between them falls below this share of the lower peak (shallower dips are the kernel's
    /// ripple on one path, such as the TSC's 10 ns comb).
    calibrated_by: "the unit tests `stats::hist::tests::two_modes_on_a_quantised_comb` and `close_peaks_merge_into_the_taller_one`";
    use VALLEY_SHARE from crate::stats::hist;

    /// The Gaussian kernel is cut at this many standard deviations (0.3 % of its weight beyond).
    calibrated_by: "the normal distribution, not a fit";
    use KERNEL_SIGMAS from crate::stats::hist;
}
