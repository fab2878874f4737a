//! The one renderer of the code-path findings (findings.rs): the survey-style line per tracer
//! and metric, e.g. "lttng-ust: fast path 99.8% (median 70.1 ns), slow path every 810 events
//! (...)". The terminal, report.md and report.html say the same words; they differ only in
//! markup (`Markup`).
use crate::analysis::code_paths::{CodePaths, Expected};
use crate::analysis::footprint::HarnessCycle;
use crate::decisions::claims::ALPHA;
use crate::report::findings::*;
use crate::report::render::numbers::{fmt_val, p_small, share_pct, signed, small_share_pct};

/// Where a line goes. The terminal and report.md (a code block) take it as is; report.html
/// (inside <pre>) escapes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Markup {
    Terminal,
    Markdown,
    Html,
}

impl Markup {
    fn finish(self, line: String) -> String {
        match self {
            Markup::Terminal | Markup::Markdown => line,
            Markup::Html => esc(&line),
        }
    }
}

/// Text escaped for HTML (report.html and the sweep's and comparison's pages).
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Refused lattices said by name, at most; the rest are counted.
const REFUSED_SAID: usize = 3;

/// The line of one tracer's metric from its code paths (the terminal's words).
pub fn describe(tracer: &str, cp: &CodePaths, expected: Option<&Expected>) -> String {
    line(tracer, &of(cp, expected, None, None, None), Markup::Terminal)
}

/// The line of one tracer's metric: the fast path and the paths by cost joined by ", ", then
/// every other finding after "; ".
pub fn line(tracer: &str, m: &MetricFindings, markup: Markup) -> String {
    let what = if m.metric == "latency" { String::new() } else { format!(" [{}]", m.metric) };
    let n_up = m.findings.iter().filter_map(Finding::path_extra).filter(|&d| d >= 0.0).count();
    let mut head = Vec::new();
    let mut tail = Vec::new();
    let mut up = 0;
    for f in &m.findings {
        match f {
            Finding::FastPath(p) => head.push(fast(p, m.unit)),
            Finding::PeriodicPath(p) => head.push(format!("{} {}", name(p.extra, n_up, &mut up), periodic(p, m.unit))),
            Finding::IrregularPath(p) => {
                head.push(format!("{} {}", name(p.extra, n_up, &mut up), irregular(p, m.unit)))
            }
            Finding::MemorylessPath(p) => {
                head.push(format!("{} {}", name(p.extra, n_up, &mut up), memoryless(p, m.unit)))
            }
            Finding::MachineSlowCalls(p) => tail.push(machine_calls(p, m.unit, "not a path")),
            Finding::UndecidedSlowCalls(p) => tail.push(machine_calls(p, m.unit, "no path claimed")),
            // A run shorter than a few of the expected periods cannot show one: say so, rather
            // than a miss (otf2's flush every 17476 calls in a 5000-call run).
            Finding::MissingPeriod(p) if (m.calls as f64) < 4.0 * p.expected.period => tail.push(format!(
                "too few calls to show the expected period [expected: {}; -n {} would]",
                p.expected.how,
                crate::report::findings::expected_period::calls_for(p.expected.period)
            )),
            Finding::MissingPeriod(p) => tail.push(super::missing_period::missing(p, m.unit)),
            Finding::SpeedLevels(l) => tail.push(levels(l, m.unit)),
            Finding::RefusedPeriods(r) => tail.push(refused(r)),
            Finding::Outliers(o) => tail.push(outliers(o)),
            Finding::DatedLevels(d) => tail.push(dated(d, m.unit)),
            Finding::HarnessCycle(h) => tail.push(harness_cycle(h)),
            Finding::TailSplit(t) => tail.push(tail_split(t, m.unit)),
            // A stepped run's, said by its own lines (report/side/function_profile.rs).
            Finding::FunctionProfile(_) => {}
        }
    }
    // The tracer's name is the tracer's to choose (a plugin's): data, never markup.
    let tracer = match markup {
        Markup::Markdown => crate::escape::markdown(tracer),
        Markup::Terminal | Markup::Html => crate::escape::visible(tracer),
    };
    let mut s = format!("{tracer}{what}: {}", head.join(", "));
    for t in tail {
        s.push_str("; ");
        s.push_str(&t);
    }
    markup.finish(s)
}

/// A path's name by its rank above the fast path (survey 7.1): the costliest is the slow path,
/// a cheaper one of two the middle path, the others numbered; below the fast path, a faster path.
fn name(extra: f64, n_up: usize, up: &mut usize) -> String {
    if extra < 0.0 {
        return "faster path".into();
    }
    *up += 1;
    match (n_up, *up) {
        (n, u) if u == n => "slow path".into(),
        (2, 1) => "middle path".into(),
        (_, u) => format!("path {}", u + 1),
    }
}

/// The calibrated p-value as said: "p < 0.001 over 1000 null reruns of the search".
pub(crate) fn p_text(p: f64, runs: u32) -> String {
    let rel = if p < ALPHA { "<" } else { "=" };
    let shown = if p < ALPHA { ALPHA } else { p };
    format!("p {rel} {shown:.3} over {runs} null reruns of the search")
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        one.into()
    } else {
        many.into()
    }
}

fn fast(p: &FastPath, unit: &str) -> String {
    let median = match p.level_step {
        None => fmt_val(p.median, unit),
        Some(step) => format!(
            "{} at the machine's lower speed level; each call judged against its 64-call window's level, the higher one {}",
            fmt_val(p.median, unit),
            signed(step, unit)
        ),
    };
    if p.single {
        format!("single code path ({}% of calls, median {median})", share_pct(p.share))
    } else {
        format!("fast path {}% (median {median})", share_pct(p.share))
    }
}

fn periodic(p: &PeriodicFinding, unit: &str) -> String {
    let mean = if p.evenly_spread > 1 {
        format!(" on average ({} times in every {} calls, evenly spread: no whole period; ", p.evenly_spread, p.period)
    } else {
        " (".to_string()
    };
    let period = if p.evenly_spread > 1 { format!("{:.1}", p.mean_period) } else { p.period.to_string() };
    let mut t = format!(
        "every {period} events{mean}from iteration {}; {} calls, {}; {} of {} kept calls on that period take it, {}",
        p.phase,
        p.calls,
        signed(p.extra, unit),
        p.calls,
        p.slots,
        p_text(p.p_value, p.null_runs)
    );
    if !p.counted_in.is_empty() {
        let mut every: Vec<String> = p.counted_in.iter().map(|q| format!("every {q}")).collect();
        every.dedup();
        let which = match p.counted_in.len() {
            1 => "costlier path".to_string(),
            n => format!("{n} costlier paths"),
        };
        t.push_str(&format!("; its calls on the {which} on its lattice ({}) are counted there", every.join(", ")));
    }
    t.push(')');
    if let Some(st) = &p.stretch {
        t.push_str(&format!(
            ", and the ~{} calls after each cost {} more (a slower stretch locked to this path's phase: {})",
            st.calls,
            signed(st.extra, unit),
            whose(&st.attribution)
        ));
    }
    for f in &p.followers {
        let which = if f.offset == 1 { "just".to_string() } else { format!("{} calls", f.offset) };
        t.push_str(&format!(", and the call {which} after it costs {} too ({} calls)", signed(f.extra, unit), f.calls));
    }
    if let Some(e) = &p.expected {
        t.push_str(&format!(" [expected: {}]", e.how));
    }
    t
}

/// Whose a locked stretch is, as said after its colon.
fn whose(a: &Attribution) -> String {
    match a {
        Attribution::Tracer => "the tracer's, not the machine's".into(),
        Attribution::Machine => "the machine's".into(),
        Attribution::Undecided { why } => why.clone(),
    }
}

/// Whose a speed level is, as said inside its parenthesis.
fn level_owner(a: &Attribution) -> String {
    match a {
        Attribution::Tracer => "the tracer's".into(),
        Attribution::Machine => "the machine's".into(),
        Attribution::Undecided { why } => why.clone(),
    }
}

/// "levels over time (change points on its window means, held against the sentinel windows of the
/// same spans): 3 the tracer's (median +12%, their sentinels +0.3%), ...", then each lock.
fn dated(d: &DatedLevels, unit: &str) -> String {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let mut groups = Vec::new();
    let owners = [
        (Some(Attribution::Tracer), "the tracer's"),
        (Some(Attribution::Machine), "the machine's"),
        (None, "undecided"),
    ];
    // Slower and faster levels apart: a median of both signs would say neither.
    for ((owner, whose), (above, side)) in
        owners.into_iter().flat_map(|o| [(true, "slower"), (false, "faster")].map(move |a| (o.clone(), a)))
    {
        let words = format!("{whose}, {side}");
        let of: Vec<&DatedLevel> = d
            .levels
            .iter()
            .filter(|l| l.above == above)
            .filter(|l| match &owner {
                Some(a) => &l.attribution == a,
                None => matches!(l.attribution, Attribution::Undecided { .. }),
            })
            .collect();
        if of.is_empty() {
            continue;
        }
        let t = median(of.iter().map(|l| l.tracer_shift).collect());
        // The sentinels' evidence and the reason it is undecided: those of the level whose shift
        // is the median, so that every figure in the parentheses is of one level, the one the
        // median names.
        let mut by_shift = of.clone();
        by_shift.sort_by(|a, b| a.tracer_shift.total_cmp(&b.tracer_shift));
        let middle = by_shift[by_shift.len() / 2];
        let sent = match middle.sentinel_shift {
            Some(i) => format!(
                " while their sentinels moved {} (99% interval {} to {})",
                comparison::pct(i.estimate),
                comparison::pct(i.low),
                comparison::pct(i.high)
            ),
            None => String::new(),
        };
        let why = match (&owner, middle.attribution.clone()) {
            (None, Attribution::Undecided { why }) => format!("; {why}"),
            _ => String::new(),
        };
        // The detector's evidence of a neighbour, where it decided the owner.
        // Each sequence's base once, however many of its levels are in the group.
        let mut bases = std::collections::BTreeMap::new();
        let (mut hits, mut calls) = (0, 0);
        for (l, o) in of.iter().filter_map(|l| l.outside.map(|o| (l, o))) {
            hits += o.level;
            calls += o.level_calls;
            bases.insert((l.repetition, l.thread), (o.base, o.base_calls));
        }
        let (base, base_calls) = bases.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let why = if owner == Some(Attribution::Machine) && hits > 0 && calls > 0 && base_calls > 0 {
            format!(
                "{why}; {hits} of their {calls} calls disturbed from outside, against {base} of the base's {base_calls}"
            )
        } else {
            why
        };
        groups.push(format!("{} {words} (median {}{sent}{why})", of.len(), comparison::pct(t)));
    }
    let mut s = format!(
        "{} {} over time in {} of {} sequences (change points on its {}-call window means, held against the sentinel \
         windows of the same spans): {}",
        d.levels.len(),
        plural(d.levels.len() as u64, "level", "levels"),
        d.levels.iter().map(|l| (l.repetition, l.thread)).collect::<std::collections::BTreeSet<_>>().len(),
        d.sequences,
        d.window_calls,
        groups.join(", ")
    );
    if let Some(l) = d.levels.iter().find_map(|l| l.lock) {
        s.push_str(&format!(
            "; the tracer's slower stretch keeps a path's phase: ~{} calls at {} from {} calls after each path's call, \
             every {} events",
            l.length_calls,
            signed(l.extra_ns, unit),
            l.lag_calls,
            l.period
        ));
    }
    s
}

fn irregular(p: &IrregularPath, unit: &str) -> String {
    let when = match &p.spacing {
        Some(s) => format!(
            "about every {:.0} events (no exact period; {:.0}% of spacings within 10% of that)",
            s.median,
            100.0 * s.near_share
        ),
        None => match &p.keyed {
            Some(k) => format!(
                "on the same {} {} in each of {} repetitions (keyed to the call or its logged value, not chance: p {} \
                 that the repetitions align as many when shifted or reversed against each other; {} such moves tried)",
                k.iterations,
                plural(k.iterations, "iteration", "iterations"),
                k.repetitions,
                p_small(k.p),
                k.null_runs
            ),
            None => format!("irregular, about 1 in {:.0} events", p.one_in),
        },
    };
    let whose = p.whose.as_ref().map_or(String::new(), |t| format!(", {}", rate_whose(t)));
    // Below 0.1 % one decimal would say "0.0%" of a path that exists: its first digits instead.
    let share = if p.share < 0.001 { small_share_pct(p.share) } else { format!("{:.1}", 100.0 * p.share) };
    format!("{share}% {when} ({}){whose}", signed(p.extra, unit))
}

/// Whose a slow population is, with the reference windows' evidence (attribution.rs).
fn rate_whose(t: &RateTest) -> String {
    let cost = match t.extra_hi {
        Some(_) => "at that cost or up to a call's length more",
        None => "as slow",
    };
    let seen = format!(
        "reference windows of the tracer's length: {}% {cost}, {} of {}",
        small_share_pct(t.reference_share()),
        t.reference_hits,
        t.reference_windows
    );
    match &t.attribution {
        Attribution::Tracer => format!("the tracer's ({seen}; p {} that the machine gives as many)", p_small(t.p_more)),
        Attribution::Machine => format!("the machine's ({seen})"),
        Attribution::Undecided { why } => format!("not decided whose ({seen}: {why})"),
    }
}

fn memoryless(p: &SlowCalls, unit: &str) -> String {
    format!(
        "{}% with no period or spacing found (memoryless as far as the search tells), about 1 in {:.0} events ({}), {}",
        small_share_pct(p.share),
        p.one_in,
        signed(p.extra, unit),
        rate_whose(&p.evidence)
    )
}

/// Slow calls that are no path of the tracer's (`verdict`: "not a path" for the machine's, "no
/// path claimed" for those the reference windows cannot tell).
fn machine_calls(p: &SlowCalls, unit: &str, verdict: &str) -> String {
    // Calls cheaper than the fast path (a row whose common path is a slow one: strace's stops)
    // are not "slow".
    let when = match &p.spacing {
        Some(s) => {
            format!("about every {:.0} events, {:.0}% of spacings within 10% of that", s.median, 100.0 * s.near_share)
        }
        None => format!("about 1 in {:.0}", p.one_in),
    };
    format!(
        "{} {} {} ({}%, {when}, {}): {verdict}, {}",
        p.calls,
        if p.extra < 0.0 { "faster" } else { "slow" },
        plural(p.calls, "call", "calls"),
        small_share_pct(p.share),
        signed(p.extra, unit),
        rate_whose(&p.evidence)
    )
}

fn levels(l: &SpeedLevels, unit: &str) -> String {
    let owner = level_owner(&l.attribution);
    match &l.shape {
        LevelShape::Modes { levels } => {
            let each: Vec<String> = levels
                .iter()
                .map(|x| {
                    let st = plural(x.stretches, "stretch", "stretches");
                    let every = x.start_every.map_or(String::new(), |p| {
                        format!(
                            " starting every {p:.0} calls (a call count: the machine cannot count the tracer's calls)"
                        )
                    });
                    format!(
                        "{:.1}% of calls at {} in {} {st}{every}",
                        100.0 * x.share,
                        signed(x.extra, unit),
                        x.stretches
                    )
                })
                .collect();
            let n = if levels.len() == 1 { "two".to_string() } else { (levels.len() + 1).to_string() };
            format!("{n} speed levels in stretches of calls, not single-call paths ({}; {owner})", each.join(", "))
        }
        LevelShape::ComeAndGo { share, extra, busiest_quarter_share } => format!(
            "{:.1}% of calls at {} come and go over the run ({:.0}% of them in its busiest quarter): a phase, not a \
             code path ({owner})",
            100.0 * share,
            signed(*extra, unit),
            100.0 * busiest_quarter_share
        ),
        LevelShape::WindowMeans { window, low, high, high_share, stretches } => format!(
            "two speed levels in stretches of calls, not single-call paths: its {window}-call windows average {} or {} \
             ({:.0}% of them at the higher, in {stretches} stretches; {owner})",
            fmt_val(*low, unit),
            fmt_val(*high, unit),
            100.0 * high_share
        ),
        LevelShape::OffPath { calls, share, stretches } => format!(
            "{calls} slow {} ({}%) on no path, most of them in {stretches} {} of consecutive calls: a slower phase, \
             not a code path ({owner})",
            plural(*calls, "call", "calls"),
            small_share_pct(*share),
            plural(*stretches, "stretch", "stretches")
        ),
    }
}

fn refused(r: &RefusedPeriods) -> String {
    let said: Vec<String> = r
        .lattices
        .iter()
        .take(REFUSED_SAID)
        .map(|l| format!("every {} ({} calls, {})", l.period, l.calls, p_text(l.p_value, l.null_runs)))
        .collect();
    let more = r.lattices.len().saturating_sub(REFUSED_SAID);
    format!(
        "not claimed as periods, as likely among these slow calls at random positions: {}{}",
        said.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    )
}

fn outliers(o: &Outliers) -> String {
    let whose = o.whose.as_ref().map_or(String::new(), |t| format!(", {}", rate_whose(t)));
    format!("{} {} ({}%) on no path{whose}", o.count, plural(o.count, "outlier", "outliers"), small_share_pct(o.share))
}

/// "p99 (the 200 calls above 180 ns): 41% the machine's slow calls, 12% the path every 810, ...".
fn tail_split(t: &TailSplit, unit: &str) -> String {
    let q = if t.quantile >= 0.999 { "p99.9" } else { "p99" };
    let parts: Vec<String> = t.parts.iter().map(|p| format!("{:.0}% {}", 100.0 * p.share, p.what)).collect();
    format!(
        "what sets {q} (the {} {} above {}): {}",
        t.calls,
        plural(t.calls, "call", "calls"),
        fmt_val(t.above_ns, unit),
        parts.join(", ")
    )
}

fn harness_cycle(h: &HarnessCycle) -> String {
    let whose = if h.tracer_path_with_this_period {
        format!("the harness's {} or the tracer's own path of that period (the data cannot tell them apart)", h.cycle)
    } else {
        format!("the harness's {}: a measurement artifact", h.cycle)
    };
    format!(
        "{:.1}% of the {} calls (by their place in the sequence) slow for no path of the tracer fall on {} consecutive residues of every {} {} ({:.1}% if spread evenly; binomial p {}, bounded over the residues and the {} cycles tested): {whose}",
        100.0 * h.share,
        h.slow_calls,
        h.residues,
        h.length,
        h.counted_in,
        100.0 * h.even_share,
        if h.p_value < 1e-12 { "< 1e-12".to_string() } else { format!("= {:.1e}", h.p_value) },
        h.cycles_tested
    )
}
