//! Where a code path's instructions go, per function: the survey explains LTTng's
//! paths by their counts (section 7.1); with the stepped profile (`results::profile`) each path
//! is also said by its functions. Used by the report (tables, CSV, flame graphs, report.json) and
//! by the gate (which function grew), so it lives here, below both.
//!
//! Self: the instructions of the function's own code; their sum over a path's functions is the
//! path's count exactly. Inclusive: the instructions while the function was on the stack (itself
//! and what it called), each instruction once per function however deep a recursion.
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::results::profile::Profile;

/// One function on one path: mean instructions per call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionCount {
    pub function: String,
    /// The file its code is in (`liblttng-ust.so.1`, `[vdso]`).
    pub module: String,
    #[serde(rename = "self")]
    pub self_: f64,
    pub inclusive: f64,
}

/// One path (the calls whose exact count is in `instructions..=instructions_max`), per function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathFunctions {
    pub instructions: u64,
    pub instructions_max: u64,
    pub calls: u64,
    /// Most self instructions first (then by name).
    pub functions: Vec<FunctionCount>,
    /// System call -> calls made per call of the path.
    pub syscalls: BTreeMap<String, f64>,
    /// Folded stack -> instructions over all the path's calls (the flame graph's input).
    #[serde(skip)]
    pub folded: BTreeMap<String, u64>,
}

/// The path `lo..=hi` of a profile; None if none of its calls is in the profile.
pub fn of_path(p: &Profile, lo: u64, hi: u64) -> Option<PathFunctions> {
    let mut calls = 0u64;
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    let mut sys: BTreeMap<String, u64> = BTreeMap::new();
    for c in p.counts.iter().filter(|c| (lo..=hi).contains(&c.user_instructions)) {
        calls += c.calls;
        for (k, v) in &c.stacks {
            *folded.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &c.syscalls {
            *sys.entry(k.clone()).or_default() += v;
        }
    }
    if calls == 0 {
        return None;
    }
    let (mut own, mut incl): (BTreeMap<&str, u64>, BTreeMap<&str, u64>) = Default::default();
    for (stack, &n) in &folded {
        let frames: Vec<&str> = stack.split(';').collect();
        *own.entry(frames[frames.len() - 1]).or_default() += n;
        for f in frames.iter().copied().collect::<BTreeSet<_>>() {
            *incl.entry(f).or_default() += n;
        }
    }
    let per = |n: u64| n as f64 / calls as f64;
    let mut functions: Vec<FunctionCount> = incl
        .iter()
        .map(|(f, &i)| FunctionCount {
            function: f.to_string(),
            module: p.modules.get(*f).cloned().unwrap_or_default(),
            self_: per(own.get(f).copied().unwrap_or(0)),
            inclusive: per(i),
        })
        .collect();
    functions.sort_by(|a, b| b.self_.total_cmp(&a.self_).then(a.function.cmp(&b.function)));
    let syscalls = sys.into_iter().map(|(k, v)| (k, per(v))).collect();
    Some(PathFunctions { instructions: lo, instructions_max: hi, calls, functions, syscalls, folded })
}

/// Per function, self instructions per call of `b` minus those of `a`, the largest change first;
/// functions whose count did not move are left out.
pub fn self_difference(a: &PathFunctions, b: &PathFunctions) -> Vec<(String, f64)> {
    let of = |p: &PathFunctions| -> BTreeMap<String, f64> {
        p.functions.iter().map(|f| (f.function.clone(), f.self_)).collect()
    };
    let (x, y) = (of(a), of(b));
    let names: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    let mut d: Vec<(String, f64)> = names
        .into_iter()
        .map(|n| (n.clone(), y.get(n).copied().unwrap_or(0.0) - x.get(n).copied().unwrap_or(0.0)))
        .filter(|(_, v)| v.abs() > 1e-9)
        .collect();
    d.sort_by(|p, q| q.1.abs().total_cmp(&p.1.abs()).then(p.0.cmp(&q.0)));
    d
}

/// "+900.0", "-3", "+1": whole numbers without decimals.
pub fn signed(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{:+}", v.round() as i64)
    } else {
        format!("{v:+.1}")
    }
}

/// "nutrace_write +1, lib_ring_buffer_switch_slow +900" (the first `n`; "and K more").
pub fn difference_text(d: &[(String, f64)], n: usize) -> String {
    let mut s: Vec<String> = d.iter().take(n).map(|(f, v)| format!("{f} {}", signed(*v))).collect();
    if d.len() > n {
        s.push(format!("and {} more", d.len() - n));
    }
    s.join(", ")
}

/// System calls per call of `b` over `a`: "4 system calls: futex 2, write 2" (None: the same).
pub fn syscall_difference(a: &PathFunctions, b: &PathFunctions) -> Option<String> {
    let names: BTreeSet<&String> = a.syscalls.keys().chain(b.syscalls.keys()).collect();
    let d: Vec<(String, f64)> = names
        .into_iter()
        .map(|n| (n.clone(), b.syscalls.get(n).copied().unwrap_or(0.0) - a.syscalls.get(n).copied().unwrap_or(0.0)))
        .filter(|(_, v)| v.abs() > 1e-9)
        .collect();
    if d.is_empty() {
        return None;
    }
    let total: f64 = d.iter().map(|x| x.1).sum();
    let list: Vec<String> = d.iter().map(|(n, v)| format!("{n} {}", signed(*v).trim_start_matches('+'))).collect();
    let n = signed(total).trim_start_matches('+').to_string();
    Some(format!("{n} system call{}: {}", if n == "1" { "" } else { "s" }, list.join(", ")))
}

/// report.json's `function_profile` finding: one path of one tracer, per function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionProfile {
    pub instructions: u64,
    pub instructions_max: u64,
    pub calls: u64,
    /// Every function of the path, most self instructions first (means per call).
    pub functions: Vec<FunctionCount>,
    /// System call -> calls made per call of the path.
    pub syscalls: BTreeMap<String, f64>,
    /// Against the tracer's main path (None for the main path itself).
    pub versus_main: Option<PathDifference>,
    /// The path's folded stacks and flame graph, relative to the results directory.
    pub folded: String,
    pub flame_graph: String,
}

/// What a path adds to the main path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathDifference {
    /// Instructions per call more than the main path (mean).
    pub instructions: f64,
    /// (function, self instructions per call more), the largest change first.
    pub functions: Vec<(String, f64)>,
    /// "4 system calls: futex 2, write 2" (None: the same system calls).
    pub syscalls: Option<String>,
}

impl PathFunctions {
    /// Mean instructions per call (the sum of the self counts).
    pub fn mean(&self) -> f64 {
        self.functions.iter().map(|f| f.self_).sum()
    }

    /// What `self` adds to `main`.
    pub fn versus(&self, main: &PathFunctions) -> PathDifference {
        PathDifference {
            instructions: self.mean() - main.mean(),
            functions: self_difference(main, self),
            syscalls: syscall_difference(main, self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::profile::CountProfile;

    fn count(n: u64, calls: u64, stacks: &[(&str, u64)], sys: &[(&str, u64)]) -> CountProfile {
        CountProfile {
            user_instructions: n,
            calls,
            stacks: stacks.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            syscalls: sys.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn self_counts_sum_to_the_path_and_inclusive_counts_each_frame_once() {
        // 2 calls of 10: main 2, f 3 (+ g 5 under f, and f again under g: recursion).
        let p = Profile {
            counts: vec![
                count(10, 2, &[("main", 4), ("main;f", 6), ("main;f;g", 8), ("main;f;g;f", 2)], &[]),
                count(
                    13,
                    1,
                    &[("main", 2), ("main;f", 3), ("main;f;g", 5), ("main;f;g;f", 1), ("main;h", 2)],
                    &[("write", 1), ("futex", 2)],
                ),
            ],
            modules: [("f".to_string(), "libf.so".to_string())].into(),
        };
        let fast = of_path(&p, 10, 10).unwrap();
        assert_eq!(fast.calls, 2);
        let get = |p: &PathFunctions, f: &str| p.functions.iter().find(|x| x.function == f).cloned().unwrap();
        assert_eq!(fast.functions.iter().map(|f| f.self_).sum::<f64>(), 10.0);
        assert_eq!((get(&fast, "f").self_, get(&fast, "f").inclusive), (4.0, 8.0));
        assert_eq!((get(&fast, "main").self_, get(&fast, "main").inclusive), (2.0, 10.0));
        assert_eq!((fast.functions[0].function.as_str(), fast.functions[0].module.as_str()), ("f", "libf.so"));
        let slow = of_path(&p, 13, 13).unwrap();
        let d = self_difference(&fast, &slow);
        assert_eq!(difference_text(&d, 1), "h +2, and 1 more");
        assert_eq!(difference_text(&d, 5), "h +2, g +1");
        assert_eq!(syscall_difference(&fast, &slow).unwrap(), "3 system calls: futex 2, write 1");
        assert_eq!(syscall_difference(&fast, &fast), None);
        assert!(of_path(&p, 11, 12).is_none());
        assert_eq!(signed(-3.0), "-3");
        assert_eq!(signed(0.5), "+0.5");
    }
}
