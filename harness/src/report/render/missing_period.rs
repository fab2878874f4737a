//! The sentence for a period the tracer's geometry predicts and no path shows: what the outliers
//! show at that period, and the reason that holds for their numbers.
use crate::report::render::numbers::{p_small, signed};

/// "no periodic path found [expected: ...]", what the fold at that period shows, and what the
/// outliers show at it.
pub(super) fn missing(p: &crate::report::findings::MissingPeriod, unit: &str) -> String {
    // A path about every N calls shows in the table as "~N": the line says what it lacks, an
    // exact period, rather than deny a periodic path.
    let about = p.about_every.iter().map(|m| format!("{m:.0}")).collect::<Vec<_>>().join(", ");
    // With the fold's finding, the search's "none" is said of what it looks at, the slow calls.
    let among = if p.folded.is_some() { " among the slow calls" } else { "" };
    let what = match (p.beside_other_periods, about.is_empty()) {
        (true, _) => format!("no periodic path{among} at the expected period"),
        (false, true) => format!("no periodic path found{among}"),
        (false, false) => format!("no path at an exact period found{among} (only about every {about} events)"),
    };
    let mut s = format!("{what} [expected: {}]", p.expected.how);
    if let Some(f) = &p.folded {
        s.push_str(&format!(
            "; yet one phase of every {} calls is slower than its neighbours in {} of the {} sequences folded at \
             that period ({}% of its calls lie above their neighbours' median, {}% of the others; {} on \
             average; p {} with no path at any phase): the path the geometry predicts, {}",
            f.period,
            f.standing_out,
            f.sequences,
            pct(f.phase_above),
            pct(f.rest_above),
            signed(f.extra, unit),
            p_small(f.p_value),
            if f.extra < f.threshold_above_median {
                format!(
                    "its typical call under the slow threshold ({} above the fast path's median), where the search \
                     does not look",
                    signed(f.threshold_above_median, unit)
                )
            } else {
                "which the search over slow calls did not claim".to_string()
            }
        ));
    }
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

/// A share as a whole percent, or to one decimal below 10% and above 99% (short of all).
fn pct(x: f64) -> String {
    if x < 0.1 || (x > 0.99 && x < 1.0) {
        format!("{:.1}", (1000.0 * x).floor() / 10.0)
    } else {
        format!("{:.0}", 100.0 * x)
    }
}
