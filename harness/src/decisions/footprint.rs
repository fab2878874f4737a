//! The harness's footprint: slow calls gathered on a few residues of the harness's own cycles
//! (its sample page, its sentinel windows), tested in every report.

decisions! {
    /// A cycle is claimed when its worst window, besides p below ALPHA, holds at least this
    /// multiple of its even share of the slow calls: a long run makes any small unevenness
    /// significant, so p alone would flag harmless cycles.
    calibrated_by: "`make footprint` (scripts/footprint.sh): lttng-ust's 49 % of slow calls on three residues of 64, against the even 4.7 %";
    pub const MIN_SHARE_RATIO: f64 = 2.0;

    /// Residues per window: a miss that spills over lands on the call after the harness's work or
    /// one or two later.
    calibrated_by: "`make footprint`: three consecutive residues";
    pub const RESIDUES_PER_WINDOW: u64 = 3;
}
