//! Synthetic results directories in the output contract's layout, for tests and for timing the
//! report (`tracebench report DIR --synthetic 10x100000`). The data are made up and run.json
//! says so (`"synthetic": true`); the report prints a banner for them. Shapes follow the survey:
//! a floor, per-CPU tracers that stay flat, printf that contends, planted periodic slow paths
//! (`spin:100@64:1000` every 64th call counting 1000 warm-up calls, as the spin backend does).
use std::io::Write;
use std::path::Path;

use crate::report::load::dir_name;
use crate::report::model::ReportError;
use crate::results::{columns, write_atomic_io as write_atomic};
use crate::stats;
use crate::stats::rng::XorShift64 as Rng;

/// TSC period here: 2.596 GHz, advancing in 26-tick (~10 ns) steps.
const STEP_NS: f64 = 26.0 / 2.596;
const WARMUP: u64 = 1000;

pub struct Options {
    pub tracers: usize,
    /// Kept rows per tracer, over all thread counts.
    pub rows: usize,
    pub threads: Vec<u32>,
    /// Counter columns (as on a machine with a PMU).
    pub counters: bool,
}

/// (row name, fast ns, slow (period, extra ns), growth per extra thread, instructions, ftrace clock)
struct Model {
    name: &'static str,
    fast: f64,
    slow: Option<(u64, f64)>,
    contention: f64,
    instr: f64,
    clock: Option<&'static str>,
}

fn models() -> Vec<Model> {
    let m = |name, fast, slow, contention, instr, clock| Model { name, fast, slow, contention, instr, clock };
    vec![
        m("none", 25.0, None, 0.0, 12.0, None),
        m("lw", 62.0, None, 0.02, 180.0, None),
        m("printf", 250.0, Some((512, 900.0)), 1.2, 1900.0, None),
        m("spin:100@64:1000", 125.0, Some((64, 900.0)), 0.0, 400.0, None),
        m("lttng-ust", 158.0, Some((256, 700.0)), 0.03, 1228.0, None),
        m("lw-tsc", 45.0, None, 0.02, 150.0, None),
        m("ftrace", 116.0, Some((128, 300.0)), 1.5, 1052.0, Some("global")),
        m("ftrace-local", 110.0, Some((128, 300.0)), 0.05, 1040.0, Some("local")),
        m("spin:300", 325.0, None, 0.0, 900.0, None),
        m("spin:50@85:2000", 75.0, Some((85, 2000.0)), 0.0, 300.0, None),
    ]
}

/// Writes a synthetic results directory at `dir` (created; must not hold results already).
pub fn write(dir: &Path, o: &Options) -> Result<(), ReportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Read(crate::results::read::ReadError::Io { path: path.clone(), source })
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    if dir.join("summary.csv").exists() {
        return Err(ReportError::Usage(format!(
            "{} already holds results; --synthetic writes into an empty or new directory",
            dir.display()
        )));
    }
    let all = models();
    let counters = ["instructions", "cycles", "L1-dcache-load-misses", "branch-misses"];
    let cnames: Vec<&str> = if o.counters { counters.to_vec() } else { vec![] };
    let tsum: u32 = o.threads.iter().sum::<u32>().max(1);
    let per_thread = (o.rows / tsum as usize).max(1);
    // The columns of a run's files before the ones a synthetic run has no value for (the median of
    // block means, blocked calls, the windows' times).
    let mut summary = [&columns::SUMMARY_KEY[..], &columns::SUMMARY_STATS].concat().join(",");
    let mut reps = [&columns::SUMMARY_KEY[..], &[columns::REPETITION], &columns::SUMMARY_STATS].concat().join(",");
    for c in &cnames {
        summary.push_str(&format!(",{c}{}", columns::COUNTER_MEAN_SUFFIX));
        reps.push_str(&format!(",{c}{}", columns::COUNTER_MEAN_SUFFIX));
    }
    summary.push('\n');
    reps.push('\n');
    let mut tracers_json = Vec::new();
    for t in 0..o.tracers {
        let m = &all[t % all.len()];
        let name = if t < all.len() { m.name.to_string() } else { format!("{}#{}", m.name, t / all.len() + 1) };
        let d = dir_name(&name);
        let tdir = dir.join(&d);
        std::fs::create_dir_all(&tdir).map_err(io(&tdir))?;
        let mut config = serde_json::json!({"synthetic_fast_ns": m.fast});
        if let Some((p, s)) = m.slow {
            config["slow_every"] = p.into();
            config["slow_ns"] = s.into();
        }
        if let Some(c) = m.clock {
            config["clock"] = c.into();
        }
        tracers_json.push(
            serde_json::json!({"name": name, "spec": m.name, "dir": d, "version": "synthetic", "config": config}),
        );
        let mut ev = Vec::with_capacity(per_thread * tsum as usize * 48);
        let mut disc = Vec::new();
        write!(ev, "{}", columns::EVENTS_HEAD.join(",")).unwrap();
        for c in &cnames {
            write!(ev, ",{c}").unwrap();
        }
        writeln!(ev, ",{}", columns::EVENTS_TAIL[..2].join(",")).unwrap();
        writeln!(disc, "{}", columns::DISCARDS.join(",")).unwrap();
        let mut rng = Rng(0x2545F4914F6CDD1D ^ (t as u64 + 1).wrapping_mul(0x9E3779B97F4A7C15));
        for &threads in &o.threads {
            let mut lat_all = Vec::with_capacity(per_thread * threads as usize);
            let mut csum = vec![0f64; cnames.len()];
            let mut discarded = 0u64;
            let slowdown = 1.0 + m.contention * (threads as f64 - 1.0);
            for th in 0..threads {
                let mut kept = 0usize;
                let mut it = 0u64;
                while kept < per_thread {
                    let call = WARMUP + it + 1; // the spin backend counts warm-up calls too
                    let is_slow = m.slow.map(|(p, _)| call.is_multiple_of(p)).unwrap_or(false);
                    let mut lat = m.fast * slowdown + rng.exp(4.0);
                    if is_slow {
                        lat += m.slow.unwrap().1;
                    }
                    let noise = rng.unit();
                    if noise < 0.0005 {
                        // An interrupt inside the timed window: the harness discards it.
                        let l = (lat + 2000.0 + rng.exp(5000.0)) / STEP_NS;
                        writeln!(disc, "{name},{threads},{th},{th},{it},{:.2},irq,0", l.round() * STEP_NS).unwrap();
                        discarded += 1;
                        it += 1;
                        continue;
                    }
                    if noise > 0.9997 {
                        lat += 1500.0 + rng.exp(3000.0); // undetected noise, kept
                    }
                    let lat = (lat / STEP_NS).round() * STEP_NS;
                    write!(ev, "{name},{threads},{th},{th},{it},{lat:.2}").unwrap();
                    if o.counters {
                        let ins = m.instr + if is_slow { 0.6 * m.instr } else { 0.0 } + (rng.next() % 3) as f64;
                        let cyc = (lat * 2.596 + rng.exp(5.0)).round();
                        let l1 = if rng.unit() < 0.05 { (1 + rng.next() % 4) as f64 } else { 0.0 };
                        let bm = if is_slow { 1.0 } else { 0.0 };
                        for (k, v) in [ins, cyc, l1, bm].iter().enumerate() {
                            csum[k] += v;
                            write!(ev, ",{v}").unwrap();
                        }
                    }
                    writeln!(ev, ",0,0").unwrap();
                    lat_all.push(lat);
                    kept += 1;
                    it += 1;
                }
            }
            let s = stats::summarize(&mut lat_all);
            let row = format!(
                "{name},{threads},{},{discarded},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}",
                s.n, s.mean, s.std, s.p50, s.p90, s.p99, s.min, s.max
            );
            let means: String = csum.iter().map(|c| format!(",{:.2}", c / s.n as f64)).collect();
            summary.push_str(&format!("{row}{means}\n"));
            let rrow = row.replacen(&format!("{name},{threads},"), &format!("{name},{threads},0,"), 1);
            reps.push_str(&format!("{rrow}{means}\n"));
        }
        write_atomic(tdir.join("events.csv"), &ev).map_err(io(&tdir.join("events.csv")))?;
        write_atomic(tdir.join("discarded.csv"), &disc).map_err(io(&tdir.join("discarded.csv")))?;
    }
    write_atomic(dir.join("summary.csv"), summary.as_bytes()).map_err(io(&dir.join("summary.csv")))?;
    write_atomic(dir.join("repetitions.csv"), reps.as_bytes()).map_err(io(&dir.join("repetitions.csv")))?;
    let run = serde_json::json!({
        "synthetic": true,
        "host": {"hostname": "synthetic", "cpu_model": "synthetic", "online_cpus": [0, 1]},
        "clock": {"source": "tsc", "tsc_hz": 2.596e9},
        "counters": cnames,
        "warmup": {"calls": WARMUP},
        "tracers": tracers_json,
        "command_line": format!("tracebench report DIR --synthetic {}x{}", o.tracers, o.rows),
    });
    write_atomic(dir.join("run.json"), serde_json::to_string_pretty(&run).unwrap().as_bytes())
        .map_err(io(&dir.join("run.json")))?;
    Ok(())
}
