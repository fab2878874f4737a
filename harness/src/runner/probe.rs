//! Stage 2, probe: what the machine offers the plan, measured once before anything is written.
//! The clock's rate and floor, the host, the counters each set can read here (the cells' and
//! the results' counter columns), and the CPU time every later share of the run is taken from.
use super::calibrate;
use super::plan::Plan;
use super::timings::Timings;
use crate::clock::ClockInfo;
use crate::counters::{self, Availability};
use crate::error::Error;
use crate::host::{self, CpuTimes, Host};
use crate::results;

/// What every run of one invocation shares: the machine as probed, and its counters.
pub struct Probe {
    pub machine: Machine,
    /// `avail[set]`: the counters of each set that can be read here.
    pub avail: Vec<Availability>,
    /// The union of `avail`, in first-seen order: the counter columns of every results file.
    pub columns: Vec<String>,
}

/// The run's id, the clock and its floor, the host, and where its CPU shares start.
pub struct Machine {
    pub run_id: String,
    pub clock: ClockInfo,
    pub floor: calibrate::Floor,
    pub host: Host,
    pub cpu_before: CpuTimes,
    /// Where run.json's `system` checks (steal, load, interrupts) start their window.
    pub system_since: crate::system::checks_virt::Snapshot,
    _keep_alive: Option<crate::disturbance::KeepAlive>,
}

/// The machine, then the counters of the plan's sets.
pub fn probe(plan: &Plan, t: &mut Timings) -> Result<Probe, Error> {
    let machine = Machine::measure(plan, t)?;
    t.mark("host");
    let (avail, columns) = probe_counters(&plan.sets)?;
    Ok(Probe { machine, avail, columns })
}

impl Machine {
    pub fn measure(plan: &Plan, t: &mut Timings) -> Result<Self, Error> {
        // Held until the run ends: the clock thread and every cell then open and close their
        // disturbance detectors in milliseconds instead of 0.5 s each (see `KeepAlive`).
        let keep_alive = (!plan.cell.kernel).then(crate::disturbance::KeepAlive::hold);
        t.mark("detector_hold");
        let (clock, floor) = calibrate::measure_clock(plan.cell.clock, plan.cpus[0])?;
        t.mark("calibrate");
        Ok(Machine {
            run_id: format!("{}-{}", results::utc_stamp(), std::process::id()),
            clock,
            floor,
            host: host::describe(),
            cpu_before: CpuTimes::now(),
            system_since: crate::system::checks_virt::Snapshot::take(&crate::system::Sys::real()),
            _keep_alive: keep_alive,
        })
    }
}

/// Counters: probed once, reported once; unsupported ones are left out, never zero-filled.
/// Returns each set's and the union's.
pub fn probe_counters(sets: &[Vec<String>]) -> Result<(Vec<Availability>, Vec<String>), Error> {
    let mut avail = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let a = counters::probe(set)?;
        // One line per reason: a VM without a PMU refuses every hardware event the same way.
        let mut by_why: Vec<(&str, Vec<&str>)> = Vec::new();
        for (n, why) in &a.unsupported {
            match by_why.iter_mut().find(|(w, _)| *w == why.as_str()) {
                Some((_, names)) => names.push(n),
                None => by_why.push((why, vec![n])),
            }
        }
        for (why, names) in by_why {
            let (what, col) =
                if names.len() == 1 { ("counter", "its column is") } else { ("counters", "their columns are") };
            eprintln!("tracebench: {what} {} (set {}) unavailable: {why}; {col} left out", names.join(", "), i + 1);
        }
        avail.push(a);
    }
    let columns = counter_columns(&avail);
    Ok((avail, columns))
}

/// The union of the available counters of every set, in first-seen order: the counter columns
/// of events.csv and summary.csv.
fn counter_columns(avail: &[Availability]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for a in avail {
        for c in &a.available {
            if !all.contains(c) {
                all.push(c.clone());
            }
        }
    }
    all
}
