//! `system tune` and `system reset`: only what can be undone, and undone byte for byte.
//!
//! Each knob is a file and the value tune writes. Before writing a file, tune saves its previous
//! bytes in the state (`state`), then writes; a file already recorded (a second tune before a
//! reset) keeps its first recorded value, so reset always goes back to the machine as found.
//! Reset writes the recorded bytes back in the reverse order (min frequency before turbo) and
//! reads each file again to check it.
use std::io::Write;

use super::checks_cpu::mask_has;
use super::checks_perf::{MAX_RATE, USER_ACCESS};
use super::state::{self, hex, SavedFile, State};
use super::{Sys, SystemError};
use crate::host::parse_cpu_list;

const CPU_DIR: &str = "/sys/devices/system/cpu";

pub struct Plan {
    pub cpus: Vec<usize>,
    pub aslr: bool,
}

/// One file and what tune writes there (computed when its turn comes: min frequency reads the
/// max after turbo is off).
struct Knob {
    path: String,
    what: String,
    value: Box<dyn Fn(&Sys) -> Option<String>>,
}

fn knob(path: String, what: impl Into<String>, value: impl Fn(&Sys) -> Option<String> + 'static) -> Knob {
    Knob { path, what: what.into(), value: Box::new(value) }
}

fn fixed(path: &str, what: &str, v: &'static str) -> Knob {
    knob(path.to_string(), what, move |_| Some(v.to_string()))
}

fn knobs(sys: &Sys, plan: &Plan) -> Vec<Knob> {
    let mut k = vec![
        fixed(&format!("{CPU_DIR}/intel_pstate/no_turbo"), "turbo (intel_pstate) off", "1"),
        fixed(&format!("{CPU_DIR}/cpufreq/boost"), "boost (cpufreq) off", "0"),
    ];
    for &c in &plan.cpus {
        let base = format!("{CPU_DIR}/cpu{c}/cpufreq");
        k.push(fixed(&format!("{base}/scaling_governor"), &format!("cpu {c} governor performance"), "performance"));
        let max = format!("{base}/scaling_max_freq");
        k.push(knob(format!("{base}/scaling_min_freq"), format!("cpu {c} min frequency = max"), move |s| s.get(&max)));
    }
    k.extend(irqs(sys, plan));
    k.push(fixed(MAX_RATE, "perf's max sample rate lowered to 1", "1"));
    k.push(fixed(USER_ACCESS, "perf_user_access 1 (arm64: counters read in user space)", "1"));
    if plan.aslr {
        k.push(fixed("/proc/sys/kernel/randomize_va_space", "ASLR off", "0"));
    }
    k
}

/// Every IRQ aimed at a measuring CPU is moved to the others, and so is the default affinity.
fn irqs(sys: &Sys, plan: &Plan) -> Vec<Knob> {
    let others: Vec<usize> = super::online(sys).into_iter().filter(|c| !plan.cpus.contains(c)).collect();
    if others.is_empty() {
        return Vec::new();
    }
    let list = others.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    let mut k = Vec::new();
    let mut n: Vec<u32> = std::fs::read_dir(sys.path("/proc/irq"))
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    n.sort_unstable();
    for irq in n {
        let p = format!("/proc/irq/{irq}/smp_affinity_list");
        let aimed = sys.get(&p).is_some_and(|l| parse_cpu_list(&l).iter().any(|c| plan.cpus.contains(c)));
        if aimed {
            let l = list.clone();
            k.push(knob(p, format!("IRQ {irq} off cpus {:?}", plan.cpus), move |_| Some(l.clone())));
        }
    }
    let mask: u128 = others.iter().filter(|&&c| c < 128).map(|&c| 1u128 << c).sum();
    let cpus = plan.cpus.clone();
    k.push(knob(
        "/proc/irq/default_smp_affinity".into(),
        format!("default IRQ affinity off cpus {cpus:?}"),
        move |s| {
            let cur = s.get("/proc/irq/default_smp_affinity")?;
            cpus.iter().any(|&c| mask_has(&cur, c) == Some(true)).then(|| format!("{mask:x}"))
        },
    ));
    k
}

/// Which CPUs tune keeps quiet, and where the moved IRQs go: a run that measures on more CPUs
/// than were tuned (`scale`, `run --threads N`) puts its extra threads where the IRQs now land.
pub fn quiet_line(online: &[usize], cpus: &[usize]) -> String {
    let list = |v: &[usize]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    let others: Vec<usize> = online.iter().copied().filter(|c| !cpus.contains(c)).collect();
    let n = cpus.len();
    if others.is_empty() {
        return format!(
            "quiet: cpus {} (every online CPU measures: no CPU is left to take the IRQs, so they stay)",
            list(cpus)
        );
    }
    let order = cpus.first().map(|&f| crate::host::measuring_order(online, f)).unwrap_or_default();
    let next = order.iter().find(|c| !cpus.contains(c));
    let more = match next {
        Some(c) if order.starts_with(cpus) => format!(
            "; a run with more than {n} thread(s) (scale) also measures on cpu {c}, which takes them: tune \
             with --threads N for the run's N"
        ),
        _ => String::new(),
    };
    format!(
        "quiet: cpus {} (the CPUs `run --threads {n}` measures on); IRQs go to cpus {}{more}",
        list(cpus),
        list(&others)
    )
}

fn write(sys: &Sys, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
    // No create: a knob that is not there is never made (in a fake root either).
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(sys.path(rel))?;
    f.write_all(bytes)
}

/// Applies the plan. `go_on(n)` is asked after the n-th change (tests stop there, as a kill
/// would); the state on disk is then already complete for what changed.
pub fn tune(sys: &Sys, plan: &Plan, go_on: &mut dyn FnMut(usize) -> bool) -> Result<(), SystemError> {
    let mut st = state::load(sys)?.unwrap_or_default();
    println!("{}", quiet_line(&super::online(sys), &plan.cpus));
    let mut changed = 0;
    for k in knobs(sys, plan) {
        let Ok(before) = std::fs::read(sys.path(&k.path)) else {
            let why = if sys.exists(&k.path) { "cannot be read" } else { "absent on this machine" };
            println!("absent  {} ({}): {why}, left alone", k.path, k.what);
            continue;
        };
        let Some(value) = (k.value)(sys) else {
            println!("kept    {} ({}): already right", k.path, k.what);
            continue;
        };
        let old = String::from_utf8_lossy(&before).trim().to_string();
        if old == value {
            println!("kept    {} ({}): already {value}", k.path, k.what);
            continue;
        }
        let fresh = !st.entries.iter().any(|e| e.path == k.path);
        if fresh {
            st.entries.push(SavedFile { path: k.path.clone(), what: k.what.clone(), before_hex: hex(&before) });
            state::save(sys, &st)?;
        }
        match write(sys, &k.path, format!("{value}\n").as_bytes()) {
            Ok(()) => println!("set     {} ({}): {old} -> {value}", k.path, k.what),
            Err(e) => {
                let why = match e.raw_os_error() {
                    Some(libc::EPERM) | Some(libc::EIO) if k.path.starts_with("/proc/irq/") => {
                        " (the kernel manages this IRQ's affinity, e.g. a per-queue IRQ)".to_string()
                    }
                    _ => String::new(),
                };
                println!("failed  {} ({}): {e}{why}; left at {old}", k.path, k.what);
                if fresh {
                    st.entries.pop();
                    state::save(sys, &st)?;
                }
                continue;
            }
        }
        changed += 1;
        if !go_on(changed) {
            return Ok(());
        }
    }
    if st.entries.is_empty() {
        state::remove(sys);
        println!("nothing changed, so nothing to reset");
    } else {
        println!(
            "state: {} ({} previous values; `tracebench system reset` puts them back)",
            state::path(sys).display(),
            st.entries.len()
        );
    }
    Ok(())
}

/// Restores every recorded file, last changed first, and checks it reads back as recorded.
/// The state is removed only when every file was restored.
pub fn reset(sys: &Sys) -> Result<bool, SystemError> {
    let st: State = state::load(sys)?.ok_or_else(|| SystemError::NoState(state::path(sys).display().to_string()))?;
    let mut failed = Vec::new();
    for e in st.entries.iter().rev() {
        let before = e.before();
        let shown = String::from_utf8_lossy(&before).trim().to_string();
        let res = write(sys, &e.path, &before).and_then(|_| std::fs::read(sys.path(&e.path)));
        match res {
            Ok(now) if now == before => println!("restored {} ({}): {shown}", e.path, e.what),
            Ok(now) => {
                println!("differs  {}: wrote {shown}, reads {}", e.path, String::from_utf8_lossy(&now).trim());
                failed.push(e.clone());
            }
            Err(err) => {
                println!("failed   {}: {err}; it should be {shown}", e.path);
                failed.push(e.clone());
            }
        }
    }
    if failed.is_empty() {
        state::remove(sys);
        println!("reset: {} values restored; state removed", st.entries.len());
        Ok(true)
    } else {
        failed.reverse();
        state::save(sys, &State { entries: failed.clone() })?;
        println!("reset: {} values not restored, kept in {}", failed.len(), state::path(sys).display());
        Ok(false)
    }
}
