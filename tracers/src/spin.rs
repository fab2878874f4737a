//! `spin:NS`, `spin:NS@P:SLOW` and `spin:NS~N:SLOW`: calibration backends with a known cost.
//!
//! `spin:NS` busy-waits NS ns per call, timed by the TSC. `spin:NS@P:SLOW` makes every P-th call
//! cost SLOW ns instead: a planted slow path, like a tracer that switches sub-buffers every P
//! events (survey section 7.1). `spin:NS~N:SLOW` makes each call cost SLOW ns with probability
//! 1/N, independently: a memoryless path of the tracer's own, which the machine's
//! stalls must not be mistaken for, nor it for them. They validate the harness: `spin:300` must read 300 ns above the
//! floor, and the report must find the period P.
//!
//! `spin:NS+PLAN` (internal: the calibration battery's real runs) adds to call `i` the extra cost
//! the plan file holds at `i` (its argument, the iteration number events.csv records), so a
//! composition of the battery's grammar is planted into a real run and meets the machine's real
//! noise. PLAN is an absolute path to a file the caller made: `TBPLAN1\0`, a little-endian u64
//! count, then that many little-endian f32 extra costs in ns. It is read once, at parse time, and
//! only if it is a regular file of this user's that no one else can write.
use std::cell::Cell;

use crate::clock::rdtsc;
use crate::{Tracer, TracerError};

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
    /// (fast, slow) ticks after compensation, measured on the pinned thread in `thread_init`.
    static TICKS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    /// The clock's step in ticks (see `dither`), measured in `thread_init`.
    static STEP: Cell<u64> = const { Cell::new(1) };
    /// xorshift64 state of the dither.
    static RNG: Cell<u64> = const { Cell::new(0x9e37_79b9_7f4a_7c15) };
}

pub struct Spin {
    name: String,
    ns: f64,
    fast_ticks: u64,
    slow: Option<(u64, f64, u64)>, // (period, slow ns, slow ticks)
    /// The slow path is taken at random, 1 call in `period` on average (`~`), not every period.
    memoryless: bool,
    /// `+PLAN`: the extra ticks of each iteration (signed), indexed by the call's argument.
    plan: Option<(String, Vec<i64>)>,
    /// The compensated fast-path ticks of each thread (for run.json).
    compensated: std::sync::Mutex<Vec<u64>>,
}

impl Spin {
    /// `arg` is what follows `spin:`; `tsc_hz` is the calibrated TSC frequency.
    pub fn parse(spec: &str, arg: &str, tsc_hz: f64) -> Result<Self, TracerError> {
        let bad = |why: &str| TracerError::BadSpec { spec: spec.into(), why: why.into() };
        let num = |s: &str, what: &str| -> Result<f64, TracerError> {
            match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => Ok(v),
                _ => Err(bad(&format!(
                    "{what} must be a number of nanoseconds (0..1e9), got '{s}'; e.g. spin:300 or spin:100@64:1000"
                ))),
            }
        };
        if let Some((f, path)) = arg.split_once('+') {
            let fast = num(f, "NS")?;
            let extra = read_plan(path).map_err(|why| bad(&why))?;
            let ticks = extra.iter().map(|&e| (e as f64 * tsc_hz / 1e9).round() as i64).collect();
            return Ok(Spin {
                name: spec.to_string(),
                ns: fast,
                fast_ticks: (fast * tsc_hz / 1e9).round() as u64,
                slow: None,
                memoryless: false,
                plan: Some((path.to_string(), ticks)),
                compensated: Default::default(),
            });
        }
        let memoryless = arg.contains('~');
        let (fast, slow) = match arg.split_once(if memoryless { '~' } else { '@' }) {
            None => (num(arg, "NS")?, None),
            Some((f, rest)) => {
                let (p, s) = rest.split_once(':').ok_or_else(|| {
                    bad("expected spin:NS@PERIOD:SLOW_NS or spin:NS~ONE_IN:SLOW_NS, e.g. spin:100@64:1000")
                })?;
                let period: u64 =
                    p.trim().parse().ok().filter(|&p| p >= 2).ok_or_else(|| bad("PERIOD must be an integer >= 2"))?;
                let (fast_ns, slow_ns) = (num(f, "NS")?, num(s, "SLOW")?);
                // A slow path no slower than the fast one plants nothing to find.
                if slow_ns <= fast_ns {
                    return Err(bad(&format!(
                        "SLOW ({slow_ns} ns) must be more than NS ({fast_ns} ns), or there is no slow path; e.g. spin:100@64:1000"
                    )));
                }
                (fast_ns, Some((period, slow_ns, (slow_ns * tsc_hz / 1e9).round() as u64)))
            }
        };
        let to_ticks = |ns: f64| (ns * tsc_hz / 1e9).round() as u64;
        let slow = slow.map(|(p, s, _)| (p, s, to_ticks(s)));
        Ok(Spin {
            name: spec.to_string(),
            ns: fast,
            fast_ticks: to_ticks(fast),
            slow,
            memoryless,
            plan: None,
            compensated: Default::default(),
        })
    }
}

/// The magic first bytes of a plan file.
pub const PLAN_MAGIC: &[u8; 8] = b"TBPLAN1\0";

/// The extra costs (ns) of a plan file; the error says what is wrong with it.
fn read_plan(path: &str) -> Result<Vec<f32>, String> {
    use std::io::Read as _;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    if !path.starts_with('/') {
        return Err(format!("the plan '{path}' must be an absolute path"));
    }
    // No link followed, and the file must be this user's own and writable by no one else: the
    // costs it holds are planted as the tracer's.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("cannot open the plan '{path}': {e}"))?;
    let m = f.metadata().map_err(|e| format!("cannot stat the plan '{path}': {e}"))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !m.is_file() || m.uid() != me || m.mode() & 0o022 != 0 {
        return Err(format!("the plan '{path}' must be a regular file of this user's that no one else can write"));
    }
    let mut b = Vec::new();
    f.read_to_end(&mut b).map_err(|e| format!("cannot read the plan '{path}': {e}"))?;
    let n = match (b.get(..8), b.get(8..16)) {
        (Some(m), Some(n)) if m == PLAN_MAGIC => u64::from_le_bytes(n.try_into().unwrap_or_default()) as usize,
        _ => return Err(format!("the plan '{path}' does not start with {PLAN_MAGIC:?} and a count")),
    };
    if n == 0 || b.len() != 16 + 4 * n {
        return Err(format!("the plan '{path}' holds {} bytes, not 16 + 4 x {n}", b.len()));
    }
    Ok(b[16..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The step of the TSC as this thread sees it, in ticks: the median of the non-zero differences
/// of back-to-back reads. On this VM the TSC advances in ~10 ns steps (24 ticks); on bare metal
/// it is the cost of one read (the loop cannot poll the clock faster than that either).
fn clock_step() -> u64 {
    let mut d: Vec<u64> = Vec::with_capacity(512);
    let mut last = rdtsc();
    for _ in 0..100_000 {
        let t = rdtsc();
        if t != last {
            d.push(t.wrapping_sub(last));
            last = t;
            if d.len() == d.capacity() {
                break;
            }
        }
    }
    d.sort_unstable();
    d.get(d.len() / 2).copied().unwrap_or(1).clamp(1, 1000)
}

/// The next number of this thread's xorshift64 (the dither's, and the memoryless path's draw).
#[inline(always)]
fn next_random() -> u64 {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.set(x);
        x
    })
}

/// A uniform random number of ticks in [0, step).
///
/// Why: the loop ends at the first clock value at least `ticks` past its start, so with a clock
/// that moves in steps of `s` ticks a spin lasts a whole number of steps minus the start's phase:
/// its mean cost is a staircase of the target, flat for 10 ns and then jumping by 10 ns. Two
/// targets 6 ns apart then cost the same or 10 ns apart, and the per-process compensation below
/// (whose value moves by a few ticks from one process to the next) flipped spin:220 between two
/// stairs from one repetition to the next, which the regression gate saw as 4% noise. Adding a
/// uniform offset in [0, s) makes the mean exactly linear in the target: with T = a*s + f,
/// P(one more step) = f/s, so E[steps]*s = T + s, a constant excess that `compensate` removes.
#[inline(always)]
fn dither() -> u64 {
    let x = next_random();
    let step = STEP.with(|s| s.get());
    // Multiply-high instead of `%`: a division costs tens of cycles.
    ((x >> 32) * step) >> 32
}

/// `lfence; rdtsc` (arm64: `isb; mrs CNTVCT_EL0`), as the harness reads its clock around every call.
#[inline(always)]
fn fenced_rdtsc() -> u64 {
    crate::clock::fenced_rdtsc()
}

/// The spin's own overhead (its first TSC read, the dither's mean of half a step, the loop's
/// exit) would make `spin:300` cost more than 300 ns above the empty call. We measure it the way
/// the harness will measure the spin, on the pinned measuring thread: single calls between two
/// fenced clock reads, minus empty windows timed the same way (what the `none` row costs), each
/// started at a random phase of the clock step so that the quantised single readings average
/// to the true cost. The excess is the lower quartile of 32 block means (disturbed blocks do not
/// move it), and the target is shortened by it, so that the *mean* cost above `none` is what was asked.
///
/// Why not time batches of back-to-back calls: each call then starts just after the step that
/// ended the previous one, a phase the harness's loop never has, and the excess so measured was
/// 5% of spin:300 short. Why not the median of few batches at thread start: the first
/// milliseconds of a freshly pinned thread sometimes run slow as a whole, and one process in ten
/// took an excess of 40 ns instead of 20, so that its spin:200 ran 16 ns short: 7% noise from
/// process to process that the regression gate could not tell from a change.
fn compensate(target: u64) -> u64 {
    if target == 0 {
        return 0;
    }
    const BLOCKS: usize = 32;
    const CALLS: usize = 128;
    let mut excess: Vec<f64> = (0..BLOCKS)
        .map(|_| {
            let (mut spin, mut empty) = (0u64, 0u64);
            for _ in 0..CALLS {
                // A random phase against the clock's steps before each window.
                spin_raw(dither() + dither());
                let t0 = fenced_rdtsc();
                spin_ticks(core::hint::black_box(target));
                let t1 = fenced_rdtsc();
                spin_raw(dither() + dither());
                let e0 = fenced_rdtsc();
                core::hint::black_box(());
                let e1 = fenced_rdtsc();
                spin += t1.wrapping_sub(t0);
                empty += e1.wrapping_sub(e0);
            }
            (spin as f64 - empty as f64) / CALLS as f64 - target as f64
        })
        .collect();
    excess.sort_by(|a, b| a.total_cmp(b));
    // The lower quartile: a disturbance that the calibration cannot see (an interrupt, the host
    // taking the vCPU) lengthens a block, so the upper blocks are the suspect ones; the lowest
    // can be an empty window that was disturbed, which reads as a negative excess.
    let e = excess[BLOCKS / 4].max(0.0).round() as u64;
    // Bounded: the spin's own overhead is about 60 ticks here; a larger "excess" means most of
    // the calibration was disturbed, and must not shorten the spin by more than half. (A
    // bound of a quarter left spin:50 16 ns long.)
    target.saturating_sub(e.min(target / 2))
}

/// Busy-waits `ticks` without dither: only to randomise the phase in `compensate`.
#[inline(never)]
fn spin_raw(ticks: u64) {
    let start = rdtsc();
    while rdtsc().wrapping_sub(start) < ticks {}
}

#[inline(never)]
fn spin_ticks(ticks: u64) {
    let start = rdtsc();
    let ticks = ticks + dither();
    // No `pause` (spin_loop) in the loop: on recent Intel cores it takes ~140 cycles, so the
    // loop would overshoot its target by tens of ns and the calibration backend would not have
    // the cost it claims.
    while rdtsc().wrapping_sub(start) < ticks {}
}

impl Tracer for Spin {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").into()
    }
    fn config(&self) -> serde_json::Value {
        if let Some((path, ticks)) = &self.plan {
            return serde_json::json!({"spin_ns": self.ns, "spin_ticks": self.fast_ticks, "plan": path,
                "plan_calls": ticks.len()});
        }
        match self.slow {
            None => serde_json::json!({"spin_ns": self.ns, "spin_ticks": self.fast_ticks}),
            Some((p, s, t)) if self.memoryless => serde_json::json!({"spin_ns": self.ns, "spin_ticks": self.fast_ticks,
                "slow_one_in": p, "slow_ns": s, "slow_ticks": t}),
            Some((p, s, t)) => serde_json::json!({"spin_ns": self.ns, "spin_ticks": self.fast_ticks,
                "slow_every": p, "slow_ns": s, "slow_ticks": t}),
        }
    }
    fn thread_init(&self, _cpu: usize) -> Result<(), TracerError> {
        STEP.with(|s| s.set(clock_step()));
        let fast = compensate(self.fast_ticks);
        let slow = self.slow.map(|(_, _, t)| compensate(t)).unwrap_or(0);
        TICKS.with(|t| t.set((fast, slow)));
        let mut c = self.compensated.lock().unwrap_or_else(|e| e.into_inner());
        c.push(fast);
        Ok(())
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        let (fast, slow_ticks) = TICKS.with(|t| t.get());
        if let Some((_, plan)) = &self.plan {
            let extra = plan[payload as usize % plan.len()];
            spin_ticks(fast.saturating_add_signed(extra));
            return;
        }
        let ticks = match self.slow {
            None => fast,
            // 1 in `period` at random: the dither's generator, multiply-high into [0, period).
            Some((period, _, _)) if self.memoryless => {
                let x = next_random();
                if ((x >> 32) * period) >> 32 == 0 {
                    slow_ticks
                } else {
                    fast
                }
            }
            Some((period, _, _)) => CALLS.with(|c| {
                let n = c.get() + 1;
                c.set(n);
                if n % period == 0 {
                    slow_ticks
                } else {
                    fast
                }
            }),
        };
        spin_ticks(ticks);
    }
    fn after_run(&self) -> serde_json::Value {
        let c = self.compensated.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::json!({ "compensated_fast_ticks_per_thread": *c })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn plan_bytes(extra: &[f32]) -> Vec<u8> {
        let mut b = PLAN_MAGIC.to_vec();
        b.extend_from_slice(&(extra.len() as u64).to_le_bytes());
        extra.iter().for_each(|e| b.extend_from_slice(&e.to_le_bytes()));
        b
    }

    /// A plan is read only from this user's own regular file that no one else can write, never
    /// through a link, and only whole; the spin then adds its cost to the argument's iteration.
    #[test]
    fn a_plan_is_read_only_from_a_private_whole_file() {
        let d = tempfile::tempdir().unwrap();
        let good = d.path().join("good.bin");
        std::fs::write(&good, plan_bytes(&[0.0, 500.0, -5.0])).unwrap();
        std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o600)).unwrap();
        let spec = format!("spin:100+{}", good.display());
        let s = Spin::parse(&spec, &spec[5..], 1e9).unwrap();
        assert_eq!(s.plan.as_ref().unwrap().1, vec![0, 500, -5]);
        assert_eq!(s.config()["plan_calls"], 3);

        let why = |arg: &str| match Spin::parse("spin", arg, 1e9) {
            Err(TracerError::BadSpec { why, .. }) => why,
            _ => panic!("{arg} was accepted"),
        };
        let open = d.path().join("open.bin");
        std::fs::write(&open, plan_bytes(&[1.0])).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o622)).unwrap();
        assert!(why(&format!("100+{}", open.display())).contains("no one else can write"));
        let link = d.path().join("link.bin");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        assert!(why(&format!("100+{}", link.display())).contains("cannot open"));
        let short = d.path().join("short.bin");
        std::fs::write(&short, &plan_bytes(&[1.0, 2.0])[..20]).unwrap();
        std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(why(&format!("100+{}", short.display())).contains("bytes, not 16 + 4 x"));
        assert!(why("100+relative.bin").contains("must be an absolute path"));
        let bad = d.path().join("bad.bin");
        std::fs::write(&bad, b"TBPLAN0\0").unwrap();
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(why(&format!("100+{}", bad.display())).contains("does not start with"));
    }
}
