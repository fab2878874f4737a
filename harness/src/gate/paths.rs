//! Every code path of a stepped run, not only the main one. A stepped run's `user_instructions`
//! in repetitions.csv is the main path's count, exact on every run of a build; a change that
//! only touches a rarer path (a plugin's buffer wrap, LTTng's sub-buffer switch) leaves it alone.
//! So where both sides kept their events.csv, the gate also compares how often each exact count
//! occurs.
//!
//! A path is an exact count. Its share of the calls is not exact: a rare path can come from the
//! machine (a tick landing in the call) and shows up a few times in one run and not in the next
//! of the same build. So each count's share is compared with a two-proportion z test, at a level
//! split over the counts tested (Bonferroni), and only the counts whose share moved are the
//! change. A path must occur about 11 times in a side to be seen moving against zero at all.
use std::collections::BTreeMap;
use std::path::Path;

use crate::results::read::{read_run_json, tracers_of};
use crate::results::stepped::for_each_stepped;

// ALPHA: the chance, over all the counts of one row, of calling a share moved when it did not;
// the claim level of every finding.
use crate::decisions::claims::ALPHA;

/// How often each exact count occurred in one side's kept calls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Paths {
    pub calls: u64,
    /// count -> calls at that count.
    pub at: BTreeMap<u64, u64>,
}

impl Paths {
    pub fn from_counts(counts: impl IntoIterator<Item = u64>) -> Paths {
        let mut p = Paths::default();
        for c in counts {
            *p.at.entry(c).or_default() += 1;
            p.calls += 1;
        }
        p
    }
    fn share(&self, count: u64) -> f64 {
        self.at.get(&count).copied().unwrap_or(0) as f64 / self.calls.max(1) as f64
    }
}

/// The paths of `tracer` in results directory `dir`, from its events.csv (every repetition);
/// None where the directory has no run.json naming the tracer or no stepped events.csv.
pub fn read(dir: &Path, tracer: &str) -> Option<Paths> {
    let run = read_run_json(dir).ok()?;
    let t = tracers_of(&run).into_iter().find(|t| t.name == tracer)?;
    let mut counts = Vec::new();
    for_each_stepped(&dir.join(&t.dir).join(crate::results::EVENTS_CSV), |_, u, _| counts.push(u)).ok()?;
    (!counts.is_empty()).then(|| Paths::from_counts(counts))
}

/// One count whose share moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub count: u64,
    pub base_share: f64,
    pub cand_share: f64,
}

/// The counts whose share moved between the sides, and the instructions per call that adds (or,
/// negative, removes) on average.
pub fn moved(base: &Paths, cand: &Paths) -> (Vec<Moved>, f64) {
    let counts: Vec<u64> =
        base.at.keys().chain(cand.at.keys()).copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let z_crit = crate::stats::compare::normal_quantile(1.0 - ALPHA / (2.0 * counts.len().max(1) as f64));
    let (n1, n2) = (base.calls as f64, cand.calls as f64);
    let mut out = Vec::new();
    for c in counts {
        let (p1, p2) = (base.share(c), cand.share(c));
        let p = (p1 * n1 + p2 * n2) / (n1 + n2);
        let se = (p * (1.0 - p) * (1.0 / n1 + 1.0 / n2)).sqrt();
        if se > 0.0 && ((p2 - p1) / se).abs() > z_crit {
            out.push(Moved { count: c, base_share: p1, cand_share: p2 });
        }
    }
    let per_call = out.iter().map(|m| m.count as f64 * (m.cand_share - m.base_share)).sum();
    (out, per_call)
}

/// "other paths moved: 150 instructions 0% -> 0.024% of calls, 120 instructions 0.024% -> 0%
/// (+0.007 instructions per call on average)".
pub fn said(m: &[Moved], per_call: f64) -> String {
    let pct = |s: f64| {
        let p = 100.0 * s;
        if p == 0.0 {
            "0%".to_string()
        } else if p >= 1.0 {
            format!("{p:.1}%")
        } else {
            format!("{p:.3}%")
        }
    };
    let each: Vec<String> = m
        .iter()
        .map(|x| format!("{} instructions {} -> {} of calls", x.count, pct(x.base_share), pct(x.cand_share)))
        .collect();
    format!("paths whose share moved: {} ({per_call:+.3} instructions per call on average)", each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(main: u64, n: u64, wrap: Option<(u64, u64)>) -> Paths {
        let mut v = Vec::new();
        for i in 0..n {
            match wrap {
                Some((count, every)) if i % every == every - 1 => v.push(count),
                _ => v.push(main),
            }
        }
        Paths::from_counts(v)
    }

    /// A wrap path every 4096 calls that grew from 120 to 150 instructions, the main path the
    /// same: both counts moved, and on average the call costs more.
    #[test]
    fn a_change_on_the_wrap_path_alone_is_seen() {
        let b = side(34, 200_000, Some((120, 4096)));
        let c = side(34, 200_000, Some((150, 4096)));
        let (m, per_call) = moved(&b, &c);
        assert_eq!(m.iter().map(|x| x.count).collect::<Vec<_>>(), [120, 150]);
        assert!((per_call - 30.0 * 48.0 / 200_000.0).abs() < 1e-9, "{per_call}");
        assert!(said(&m, per_call).contains("150 instructions 0% -> 0.024% of calls"), "{}", said(&m, per_call));
    }

    /// The same build twice, with a few calls on rare counts that come and go between runs (a
    /// tick in the call): no share moved, over a seeded battery of such pairs.
    #[test]
    fn rare_paths_of_the_machine_do_not_move() {
        let mut g = crate::stats::rng::SplitMix64(3);
        let mut fired = 0;
        for _ in 0..500 {
            let mut draw = |n: u64| {
                Paths::from_counts((0..n).map(|_| match g.next_u64() % 1000 {
                    0..=4 => 126,
                    5 => 2389 + g.next_u64() % 3,
                    _ => 121,
                }))
            };
            let (b, c) = (draw(3000), draw(3000));
            fired += usize::from(!moved(&b, &c).0.is_empty());
        }
        assert!(fired <= 2, "moved in {fired} of 500 same-build pairs");
    }
}
