//! Stage 2, probe: what the machine offers the plan, measured once before anything is written.
//! The clock's rate and floor, the host, the counters each set can read here (the cells' and
//! the results' counter columns), the CPU time every later share of the run is taken from, and
//! whether the run's files fit on the disk.
use super::plan::Plan;
use super::timings::Timings;
use super::{calibrate, space};
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
    pub system_since: crate::system::snapshot::Snapshot,
    _keep_alive: Option<crate::disturbance::KeepAlive>,
}

/// The machine, then the counters of the plan's sets, then the disk: a warning where the run's
/// files may not fit (they take a column per counter read).
pub fn probe(plan: &Plan, t: &mut Timings) -> Result<Probe, Error> {
    let machine = Machine::measure(plan, t)?;
    t.mark("host");
    let (avail, columns) = counters::probe_sets(&plan.sets)?;
    let e = space::estimate(plan, plan.cell.iterations, plan.repeats, columns.len(), plan.cell.sentinel_every);
    space::check(&plan.out, e)?;
    t.mark("counters");
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
            system_since: crate::system::snapshot::Snapshot::take(&crate::system::Sys::real()),
            _keep_alive: keep_alive,
        })
    }
}
