//! The PMU of this machine as a [`CounterSource`]: per-call counts from two `tracebench run`s
//! (counters, then `--instructions singlestep`) of the same build, and in-process loops and
//! chases measured with user-only counters on a thread pinned to the measuring CPU.
use std::path::{Path, PathBuf};
use std::process::Command;

use perf_event::events::Hardware;
use perf_event::{Builder, Counter};

use super::{Chase, CounterSource, PerCall, Spin};
use crate::counters::table;

pub struct Pmu {
    cpu: usize,
}

impl Pmu {
    pub fn new(cpu: usize) -> Pmu {
        Pmu { cpu }
    }
}

/// A counter of this thread; user space only unless `kernel`.
fn counter(ev: impl perf_event::events::Event, kernel: bool) -> std::io::Result<Counter> {
    let mut b = Builder::new(ev);
    b.observe_self().any_cpu();
    if kernel {
        b.include_kernel();
    }
    b.build()
}

/// A private directory for the two runs (mkdtemp semantics: random name, 0700; no predictable
/// name in the shared temp directory). Kept on disk: the caller removes it.
fn private_dir() -> Result<PathBuf, String> {
    tempfile::Builder::new()
        .prefix("tracebench-selfcheck-")
        .tempdir()
        .map(|t| t.keep())
        .map_err(|e| format!("mkdtemp: {e}"))
}

/// `column` of `tracer`'s row in DIR/summary.csv.
fn summary_value(dir: &Path, tracer: &str, column: &str) -> Result<f64, String> {
    let p = dir.join("summary.csv");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = head.iter().position(|h| *h == column).ok_or(format!("{}: no column {column}", p.display()))?;
    let row = lines.find(|l| l.split(',').next() == Some(tracer)).ok_or(format!("{}: no row {tracer}", p.display()))?;
    row.split(',').nth(col).and_then(|v| v.parse().ok()).ok_or(format!("{}: {tracer} has no {column}", p.display()))
}

fn run_tracebench(args: &[&str]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let o = Command::new(exe).args(args).output().map_err(|e| e.to_string())?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("tracebench {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim()))
    }
}

#[inline(never)]
fn known_loop(n: u64) {
    // Exactly two instructions per iteration (n >= 1).
    // SAFETY: register-only arithmetic and a local branch.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) n => _, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) n => _, options(nomem, nostack));
    }
}

fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// Runs `f` on a thread pinned to `cpu` and returns its result.
fn pinned<T: Send + 'static>(cpu: usize, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    std::thread::spawn(move || {
        crate::system::checks_perf::pin(cpu);
        f()
    })
    .join()
    .map_err(|_| "the measuring thread panicked".to_string())
}

fn cache_bytes(cpu: usize, level: &str, data: bool) -> Option<usize> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let sys = super::super::Sys::real();
    (0..8).find_map(|i| {
        let g = |f: &str| sys.get(&format!("{dir}/index{i}/{f}"));
        let t = g("type")?;
        let ok = g("level")? == level && (!data || t == "Data" || t == "Unified");
        let s = g("size")?;
        let kib: usize = s.trim_end_matches('K').parse().ok()?;
        ok.then_some(kib * 1024)
    })
}

impl CounterSource for Pmu {
    fn pmu(&mut self) -> Result<(), String> {
        counter(Hardware::INSTRUCTIONS, false).map(|_| ()).map_err(|e| match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => {
                format!("this user may not open perf events ({e}); run as root or sysctl kernel.perf_event_paranoid=1")
            }
            _ => format!(
                "no PMU here: the instructions event does not open ({e}); a VM without a virtual PMU has no hardware events"
            ),
        })
    }

    fn per_call(&mut self) -> Result<(Vec<PerCall>, String), String> {
        let dir = private_dir()?;
        let (pmu, step) = (dir.join("pmu"), dir.join("step"));
        let cpu = self.cpu.to_string();
        let res = (|| {
            let common = ["run", "--tracer", "none,lw", "--cpu", &cpu, "--quiet"];
            run_tracebench(
                &[&common[..], &["--counters", "instructions", "-n", "5000", "--out", &pmu.to_string_lossy()]].concat(),
            )?;
            run_tracebench(
                &[&common[..], &["--instructions", "singlestep", "-n", "300", "--out", &step.to_string_lossy()]]
                    .concat(),
            )?;
            let run: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(pmu.join("run.json")).map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
            let method = run["counters"]["read"].as_str().unwrap_or("?").to_string();
            let mut calls = Vec::new();
            for t in ["none", "lw"] {
                calls.push(PerCall {
                    tracer: t.into(),
                    pmu: summary_value(&pmu, t, "instructions_mean")?,
                    stepped: summary_value(&step, t, "user_instructions_mean")?,
                });
            }
            Ok((calls, method))
        })();
        let _ = std::fs::remove_dir_all(&dir);
        res
    }

    fn spin(&mut self, iterations: u64) -> Result<Spin, String> {
        pinned(self.cpu, move || {
            let mut i = counter(Hardware::INSTRUCTIONS, false).map_err(|e| e.to_string())?;
            let mut c = counter(Hardware::CPU_CYCLES, true).map_err(|e| e.to_string())?;
            known_loop(iterations); // warm
                                    // Five tries; the quickest is the one least disturbed (no preemption, fewest interrupts).
            let mut best: Option<Spin> = None;
            for _ in 0..5 {
                let (_, _) = (i.reset(), c.reset());
                let (_, _) = (i.enable(), c.enable());
                let t0 = tsc();
                known_loop(iterations);
                let t1 = tsc();
                let (_, _) = (c.disable(), i.disable());
                let s = Spin {
                    iterations,
                    instructions: i.read().map_err(|e| e.to_string())? as f64,
                    cycles: c.read().map_err(|e| e.to_string())? as f64,
                    tsc_ticks: t1.wrapping_sub(t0) as f64,
                };
                if best.is_none_or(|b| s.tsc_ticks < b.tsc_ticks) {
                    best = Some(s);
                }
            }
            best.ok_or_else(|| "no try".to_string())
        })?
    }

    fn chase(&mut self, bytes: usize) -> Result<Chase, String> {
        pinned(self.cpu, move || chase_on_this_thread(bytes))?
    }

    fn caches(&self) -> (Option<usize>, Option<usize>) {
        let llc = ["3", "2"].iter().find_map(|l| cache_bytes(self.cpu, l, false));
        (llc, cache_bytes(self.cpu, "1", true))
    }

    fn nominal_ratio(&self) -> (f64, String) {
        let sys = super::super::Sys::real();
        let cpufreq = sys
            .get(&format!("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_cur_freq", self.cpu))
            .and_then(|k| k.parse::<f64>().ok())
            .map(|khz| (khz * 1e3, format!("cpufreq's scaling_cur_freq {khz:.0} kHz")));
        // /proc/cpuinfo's "cpu MHz" of the measuring CPU (its nominal rate in most VMs).
        let cpuinfo = || {
            let info = sys.read("/proc/cpuinfo").ok()?;
            let block = info.split("\n\n").find(|b| {
                b.lines().any(|l| {
                    l.starts_with("processor") && l.split(':').nth(1).map(str::trim) == Some(&self.cpu.to_string())
                })
            })?;
            let mhz: f64 = block.lines().find(|l| l.starts_with("cpu MHz"))?.split(':').nth(1)?.trim().parse().ok()?;
            Some((mhz * 1e6, format!("/proc/cpuinfo's cpu MHz {mhz:.0}")))
        };
        match cpufreq.or_else(cpuinfo) {
            Some((hz, from)) => (hz / crate::clock::calibrate_tsc(), format!("{from} over the TSC's rate")),
            None => (1.0, "assumed: no frequency visible, so the core is taken to run at the TSC's rate".into()),
        }
    }
}

const LINE: usize = 64;

/// One pass of a random cyclic chase (Sattolo's shuffle: a single cycle through every line), so
/// no prefetcher can guess the next load; a first pass warms what fits.
fn chase_on_this_thread(bytes: usize) -> Result<Chase, String> {
    let n = (bytes / LINE).max(2);
    let mut next: Vec<usize> = (0..n).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        next.swap(i, (x % i as u64) as usize);
    }
    // Node i lives at line i: the buffer holds one index per line.
    let mut buf = vec![0usize; n * LINE / std::mem::size_of::<usize>()];
    let stride = LINE / std::mem::size_of::<usize>();
    for (i, &j) in next.iter().enumerate() {
        buf[i * stride] = j * stride;
    }
    let walk = |buf: &[usize]| {
        let mut p = 0;
        for _ in 0..n {
            p = buf[p];
        }
        std::hint::black_box(p)
    };
    walk(&buf);
    let open = |name: &str| table::lookup(name).and_then(|d| counter(d, false).ok()).map(|c| (name.to_string(), c));
    let mut llc = open("LLC-load-misses").or_else(|| open("cache-misses"));
    let mut l1 = open("L1-dcache-load-misses");
    for c in llc.iter_mut().chain(l1.iter_mut()) {
        let _ = c.1.enable();
    }
    walk(&buf);
    let read =
        |c: &mut Option<(String, Counter)>| c.as_mut().and_then(|(n, c)| Some((n.clone(), c.read().ok()? as f64)));
    Ok(Chase { bytes, loads: n as f64, llc: read(&mut llc), l1_misses: read(&mut l1).map(|x| x.1) })
}
