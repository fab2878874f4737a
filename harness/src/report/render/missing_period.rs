//! The sentence for a period the tracer's geometry predicts and no path shows: what the outliers
//! show at that period, and the reason that holds for their numbers.
use crate::report::render::numbers::signed;

/// "no periodic path found [expected: ...]", and what the outliers show at that period.
pub(super) fn missing(p: &crate::report::findings::MissingPeriod, unit: &str) -> String {
    // A path about every N calls shows in the table as "~N": the line says what it lacks, an
    // exact period, rather than deny a periodic path.
    let about = p.about_every.iter().map(|m| format!("{m:.0}")).collect::<Vec<_>>().join(", ");
    let what = match (p.beside_other_periods, about.is_empty()) {
        (true, _) => "no periodic path at the expected period".to_string(),
        (false, true) => "no periodic path found".to_string(),
        (false, false) => format!("no path at an exact period found (only about every {about} events)"),
    };
    let mut s = format!("{what} [expected: {}]", p.expected.how);
    if let Some(l) = &p.on_lattice {
        let taken = crate::decisions::periodic::TAKEN;
        // The reason said is the one that holds for these numbers: a share below the threshold,
        // or, at or above it, that the search did not make them one path.
        let why = if (l.calls as f64) < taken * l.slots as f64 {
            format!(
                "a period over part of the run (e.g. from a change of event size) is not claimed, as an exact \
                 period needs at least {:.0}% of its slots",
                100.0 * taken
            )
        } else {
            format!(
                "they fill at least {:.0}% of the slots, but the period search did not claim them as one path",
                100.0 * taken
            )
        };
        s.push_str(&format!(
            "; {} outliers lie exactly {} calls apart, iterations {} to {} ({} to {}), {} of the {} slots of that \
             phase in the run: {why}",
            l.calls,
            l.period,
            l.first,
            l.last,
            signed(l.extra.0, unit),
            signed(l.extra.1, unit),
            l.calls,
            l.slots,
        ));
    }
    s
}
