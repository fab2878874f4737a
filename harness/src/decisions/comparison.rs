//! Comparing two tracers' costs over paired rounds (`stats::compare`): the ranking, the survey's
//! orderings, and a run that adds rounds until decided. Its α is not [`super::claims::ALPHA`]: it
//! bounds a false decision between two rows over every look a run makes, as the regression gate's
//! 99 % intervals do, where `claims::ALPHA` bounds a false discovery of a path or a population.

decisions! {
    reexported:
    /// The chance of a false decision (cheaper either way, or the same) over every look a run
    /// makes: 99 % intervals, as the regression gate's.
    calibrated_by: "the unit tests `stats::compare::tests::a_true_equality_is_almost_never_called_cheaper` and `the_looks_spend_alpha_once`";
    use ALPHA from crate::stats::compare;

    /// Two rows whose costs differ by less than this share of the cheaper one's cost are the
    /// same: the regression gate's default margin, so that "the same" means one thing in the
    /// report, in a run that adds rounds until decided, and in CI.
    calibrated_by: "the regression gate's default margin, not a fit of its own; the unit test `stats::compare::tests::a_change_of_exactly_the_margin_is_almost_never_called_beyond_it`";
    use MARGIN from crate::stats::compare;
}
