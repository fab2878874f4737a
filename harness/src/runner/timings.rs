//! `run --timings` and run.json's `timings`: where a run's wall time goes, phase by
//! phase, so that a user sees the fixed cost around the measured calls.
//!
//! The parent marks the end of each of its phases (`Timings::mark`); each cell reports its own
//! phases in its result (`CellResult::phases`), which are summed over the cells under `cell`.
//! `cell.process` is what the cells cost the parent beyond what they measured themselves: fork,
//! exec, the child's start and exit (its descriptors' teardown included) and the wait.
use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::{json, Value};

/// The parent's phases, in order, with the seconds each took.
pub struct Timings {
    start: Instant,
    last: Instant,
    phases: Vec<(&'static str, f64)>,
    cell: BTreeMap<String, f64>,
}

impl Timings {
    pub fn start() -> Self {
        let now = Instant::now();
        Timings { start: now, last: now, phases: Vec::new(), cell: BTreeMap::new() }
    }

    /// When the run began (`--budget` counts from it).
    pub fn began(&self) -> Instant {
        self.start
    }

    /// Ends phase `name` now: it took the time since the previous mark.
    pub fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.phases.push((name, (now - self.last).as_secs_f64()));
        self.last = now;
    }

    /// Adds the cells' own phases (each cell's `phases`), and `process`: the `cells` phase
    /// less what the cells accounted for.
    pub fn add_cells<'a>(&mut self, cells: impl Iterator<Item = &'a BTreeMap<String, f64>>) {
        for phases in cells {
            for (k, v) in phases {
                *self.cell.entry(k.clone()).or_default() += v;
            }
        }
        let inside: f64 = self.cell.values().sum();
        if let Some(&(_, cells)) = self.phases.iter().find(|(n, _)| *n == "cells") {
            self.cell.insert("process".into(), (cells - inside).max(0.0));
        }
    }

    /// run.json's `timings`: seconds per phase so far, `total` (their sum), and `cell`.
    pub fn json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (n, s) in &self.phases {
            m.insert((*n).into(), json!(s));
        }
        m.insert("total".into(), json!((self.last - self.start).as_secs_f64()));
        m.insert("cell".into(), json!(self.cell));
        Value::Object(m)
    }

    /// The `--timings` table, on stderr: every phase, the cells' inner phases indented.
    pub fn print(&self) {
        let total = (self.last - self.start).as_secs_f64();
        let pct = |s: f64| if total > 0.0 { 100.0 * s / total } else { 0.0 };
        eprintln!("tracebench: timings (wall seconds per phase)");
        eprintln!("  {:<22} {:>9} {:>6}", "phase", "seconds", "share");
        for (n, s) in &self.phases {
            eprintln!("  {:<22} {:>9.4} {:>5.1}%", n, s, pct(*s));
            if *n == "cells" {
                for (k, v) in &self.cell {
                    eprintln!("    {:<20} {:>9.4} {:>5.1}%", k, v, pct(*v));
                }
            }
        }
        eprintln!("  {:<22} {:>9.4}", "total", total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_process_is_the_cells_phase_less_what_the_cells_measured() {
        let mut t = Timings::start();
        t.phases.push(("plan", 0.5));
        t.phases.push(("cells", 1.0));
        let a: BTreeMap<String, f64> = [("timed".to_string(), 0.25), ("warmup".to_string(), 0.125)].into();
        let b: BTreeMap<String, f64> = [("timed".to_string(), 0.25)].into();
        t.add_cells([&a, &b].into_iter());
        let j = t.json();
        assert_eq!(j["plan"], 0.5);
        assert_eq!(j["cell"]["timed"], 0.5);
        assert_eq!(j["cell"]["warmup"], 0.125);
        assert_eq!(j["cell"]["process"], 0.375);
    }
}
