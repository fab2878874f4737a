//! Seeded synthetic battery in the sentinels.csv / events.csv `t_ns` format: a tracer stretch
//! locked to a path, machine phases, flat heavy-tailed noise, and strace-like level noise.
use super::*;
use crate::results::SENTINELS_CSV;
use crate::stats::changepoint::tests::Noise;

/// Calls per sequence, sequences (repetitions) per run, and the sentinel spacing.
const CALLS: u64 = 30_000;
const REPS: u32 = 2;
const SENTINEL_EVERY: u64 = 32;
/// Outside the timed call: the loop's own time per iteration.
const LOOP_NS: f64 = 200.0;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Plant {
    /// +150 ns for 300 calls after every 810th (a cold buffer after a sub-buffer switch).
    TracerStretch,
    /// The machine 20 % slower, tracer and sentinels alike, in stretches of thousands of calls.
    MachinePhase,
    /// Nothing: flat, heavy-tailed, on a 10 ns clock.
    Flat,
    /// The tracer's cost jumps +30 % at random times and back (where strace's process runs).
    StraceLevels,
}

const PERIOD: u64 = 810;

/// One sequence's state changes: (from iteration, state), the state true while planted.
fn stretches(g: &mut Noise, mean_len: f64) -> Vec<(u64, bool)> {
    let (mut i, mut on, mut out) = (0u64, false, Vec::new());
    while i < CALLS {
        out.push((i, on));
        i += (mean_len * (0.5 + g.uniform())) as u64;
        on = !on;
    }
    out
}

fn quantised(v: f64) -> f64 {
    (v / 10.0).round() * 10.0
}

/// Heavy-tailed noise around `base`: Gaussian, 2 % of calls an exponential extra, 0.05 % a stall.
fn latency(g: &mut Noise, base: f64, sd: f64) -> f64 {
    let mut v = base + sd * g.gauss();
    if g.uniform() < 0.02 {
        v += -0.3 * base * g.uniform().ln();
    }
    if g.uniform() < 0.0005 {
        v += 20_000.0;
    }
    quantised(v.max(10.0))
}

fn synth(seed: u64, plant: Plant) -> SegmentInput {
    let mut g = Noise::new(seed);
    let (mut calls, mut sentinels, mut residues) = (BTreeMap::new(), Vec::new(), BTreeMap::new());
    for repetition in 0..REPS {
        let key = SeqKey { repetition, thread: 0 };
        let residue = (g.uniform() * PERIOD as f64) as u64;
        residues.insert(key, residue);
        let states = match plant {
            Plant::MachinePhase => stretches(&mut g, 6000.0),
            Plant::StraceLevels => stretches(&mut g, 2500.0),
            _ => vec![(0, false)],
        };
        let (mut t, mut c) = (0.0f64, Vec::with_capacity(CALLS as usize));
        for i in 0..CALLS {
            let on = states[states.partition_point(|s| s.0 <= i) - 1].1;
            let speed = if plant == Plant::MachinePhase && on { 1.2 } else { 1.0 };
            if i % SENTINEL_EVERY == 0 {
                let v = latency(&mut g, 50.0 * speed, 5.0);
                sentinels.push(Sentinel { key, t_ns: t as u64, iteration: i, latency: v });
                t += v + LOOP_NS;
            }
            let phase = (i + PERIOD - residue) % PERIOD;
            let extra = match plant {
                Plant::TracerStretch if (1..=300).contains(&phase) => 150.0,
                Plant::StraceLevels if on => 300.0,
                _ => 0.0,
            };
            let v = latency(&mut g, 1000.0 * speed + extra, 20.0);
            c.push(Call { t_ns: t as u64, iteration: i, latency: v });
            t += v + LOOP_NS;
        }
        calls.insert(key, c);
    }
    SegmentInput {
        tracer: format!("{plant:?}"),
        threads: 1,
        slow_threshold: 3000.0,
        calls: Some(calls),
        sentinels: Some(sentinels),
        paths: vec![LocatedPath { period: PERIOD, residues }],
    }
}

/// What the run as a whole is said to show: the tracer's or the machine's levels (no level
/// said the other's), or nothing claimed.
#[derive(Debug, Default)]
struct Rates {
    runs: usize,
    tracer: usize,
    machine: usize,
    none: usize,
    locked: usize,
}

fn battery(plant: Plant, runs: u64) -> Rates {
    let mut r = Rates::default();
    for s in 0..runs {
        let rep = segments(&synth(0xD47E_0000 + 1000 * plant as u64 + s, plant));
        let t = rep.tally();
        r.runs += 1;
        r.tracer += (t.tracer > 0 && t.machine == 0) as usize;
        r.machine += (t.machine > 0 && t.tracer == 0) as usize;
        r.none += (t.tracer + t.machine + t.undecided == 0) as usize;
        let ok_lock = |l: &SideLevel| l.lock.is_some_and(|k| k.lag_calls <= 20 && k.length_calls.abs_diff(300) <= 30);
        if let Outcome::Dated { sequences } = &rep.outcome {
            r.locked += sequences.iter().all(|q| q.levels.iter().any(ok_lock)) as usize;
        }
    }
    let pct = |k: usize| 100.0 * k as f64 / r.runs as f64;
    println!(
        "segments battery {plant:?}: {} runs: said the tracer's {:.1} %, the machine's {:.1} %, no level {:.1} %, \
         locked to the 810 path (lag <= 20, 300 +- 30 calls) {:.1} %",
        r.runs,
        pct(r.tracer),
        pct(r.machine),
        pct(r.none),
        pct(r.locked)
    );
    r
}

fn rate(k: usize, r: &Rates) -> f64 {
    k as f64 / r.runs as f64
}

#[test]
fn a_tracer_stretch_is_the_tracers_and_locked_to_its_path() {
    let r = battery(Plant::TracerStretch, 100);
    assert!(rate(r.tracer, &r) >= 0.95 && rate(r.locked, &r) >= 0.95, "{r:?}");
}

#[test]
fn machine_phases_are_the_machines() {
    let r = battery(Plant::MachinePhase, 100);
    assert!(rate(r.machine, &r) >= 0.90, "{r:?}");
}

#[test]
fn flat_noise_claims_no_level() {
    let r = battery(Plant::Flat, 200);
    assert!(rate(r.none, &r) >= 0.99, "{r:?}");
}

#[test]
fn strace_like_levels_are_not_the_machines() {
    let r = battery(Plant::StraceLevels, 100);
    assert!(rate(r.machine, &r) <= 0.01 && rate(r.tracer, &r) >= 0.90, "{r:?}");
}

#[test]
fn old_data_cannot_tell() {
    let mut input = synth(1, Plant::Flat);
    input.sentinels = None;
    let rep = segments(&input);
    assert_eq!(rep.outcome, Outcome::Untold { reason: UNTOLD.into() });
    assert_eq!(rep.tally(), LevelsByCause::default());
}

#[test]
fn sentinels_and_dated_calls_are_read_by_column_name_and_old_data_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let row = dir.path().join("lw");
    std::fs::create_dir(&row).unwrap();
    std::fs::write(
        row.join("events.csv"),
        "tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\nlw,1,0,0,0,90,0,\n",
    )
    .unwrap();
    assert_eq!(load_calls(dir.path(), "lw", 1).unwrap(), None);
    assert_eq!(load_sentinels(dir.path(), "lw", 1).unwrap(), None);
    std::fs::write(
        row.join("events.csv"),
        "tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set,t_ns\n\
         lw,1,0,0,0,90,0,,100\nlw,2,1,0,0,95,0,,120\nlw,1,0,0,1,91,1,,400\n",
    )
    .unwrap();
    std::fs::write(
        row.join(SENTINELS_CSV),
        "tracer,threads,thread,cpu,iteration,t_ns,latency_ns,repetition\nlw,1,0,0,0,50,40,1\nlw,2,0,0,0,50,40,0\n",
    )
    .unwrap();
    let calls = load_calls(dir.path(), "lw", 1).unwrap().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[&SeqKey { repetition: 1, thread: 0 }], vec![Call { t_ns: 400, iteration: 1, latency: 91.0 }]);
    let s = load_sentinels(dir.path(), "lw", 1).unwrap().unwrap();
    let want = Sentinel { key: SeqKey { repetition: 1, thread: 0 }, t_ns: 50, iteration: 0, latency: 40.0 };
    assert_eq!(s, vec![want]);
    // A sentinels.csv without its columns is bad input, said by column.
    std::fs::write(row.join(SENTINELS_CSV), "tracer,threads\nlw,1\n").unwrap();
    let e = load_sentinels(dir.path(), "lw", 1).unwrap_err().to_string();
    assert!(e.contains("column 'thread' is missing"), "{e}");
    // A kernel cell's events.csv has the column, empty: a run without times, not bad input.
    std::fs::write(
        row.join(crate::results::EVENTS_CSV),
        "tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set,t_ns\nlw,1,0,0,0,90,0,0,\n",
    )
    .unwrap();
    assert_eq!(load_calls(dir.path(), "lw", 1).unwrap(), None);
}
