//! The generative battery's grammar: cost components drawn at random with random parameters and
//! composed into one run (its sequences and its reference windows), with what each component
//! planted, so every claim of the analysis can be scored against it (generative.rs).
//!
//! A run is one fast-path spread, any of the tracer's paths (periodic with a fixed, jittered or
//! drifting cost, with or without a slower stretch after it; a period that drifts; memoryless;
//! keyed to the call index, the same in every repetition) and any of the machine's doings
//! (speed phases in time, stalls in time, a co-tenant arriving mid-run). The machine's reach the
//! reference windows too; the tracer's never do.
use crate::stats::rng::XorShift64Star as Rng;

/// The spread of the fast path (exactly one per run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spread {
    /// One clock step of jitter.
    Narrow,
    /// A normal spread of `sd` ns.
    Wide { sd: f64 },
    /// A share of the calls cost a further Pareto excess (scale `xm` ns, shape `alpha`): one
    /// mode with a tail, no path.
    HeavyTail { share: f64, xm: f64, alpha: f64 },
    /// A second random mode: a share of the calls cost `extra` more, independently per call.
    SecondMode { share: f64, extra: f64 },
}

/// How a periodic path's cost moves over the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cost {
    Fixed,
    /// +-35 % per call.
    Jittered,
    /// Grows geometrically from the cost to `factor` times it over each sequence.
    Drifting {
        factor: f64,
    },
}

/// One component of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Component {
    Spread(Spread),
    /// A path every `period` calls at one phase per sequence, costing `extra`; with `stretch`,
    /// the `.0` calls after each cost `.1` more (the tracer's aftermath).
    Periodic {
        period: u64,
        phases: Vec<u64>,
        extra: f64,
        cost: Cost,
        stretch: Option<(u64, f64)>,
    },
    /// A path at gaps drawn uniformly in `gap` (a flush whose spacing varies with the data).
    DriftingPeriod {
        gap: (u64, u64),
        extra: f64,
    },
    /// Each call takes the path with probability `chance`.
    Memoryless {
        chance: f64,
        extra: f64,
    },
    /// The path on a fixed set of iterations (a share `share` of them), the same in every
    /// repetition: keyed to the call's index or logged value.
    Keyed {
        share: f64,
        extra: f64,
        at: Vec<u64>,
    },
    /// The machine's speed: stretches of `len` calls at +0 or +`level` ns.
    Phases {
        len: (u64, u64),
        level: f64,
    },
    /// The machine's stalls: +2 us at `per_ns` per ns of window time.
    Stalls {
        per_ns: f64,
    },
    /// A co-tenant arriving at the call `at` of the whole run (counted over the sequences in
    /// order): from then on, every call +`level` ns and stalls at `per_ns`.
    CoTenant {
        at: u64,
        level: f64,
        per_ns: f64,
    },
    /// The machine's timer: a tick every `every_ns` of wall time (within 1 %), +`extra` ns on the
    /// window, the tracer's or a reference window, that holds it. Calls of like length meet it
    /// at a nearly fixed spacing in calls, as a tracer's irregular path recurs. `seed`: its ticks'
    /// own random stream, so that a run without a timer draws as it did before timers.
    Timer {
        every_ns: f64,
        extra: f64,
        seed: u64,
    },
}

impl Component {
    /// The component's name in the battery's table.
    pub fn label(&self) -> &'static str {
        match self {
            Component::Spread(Spread::Narrow) => "spread: narrow",
            Component::Spread(Spread::Wide { .. }) => "spread: wide",
            Component::Spread(Spread::HeavyTail { .. }) => "spread: heavy tail",
            Component::Spread(Spread::SecondMode { .. }) => "spread: second random mode",
            Component::Periodic { stretch: Some(_), .. } => "periodic + stretch after",
            Component::Periodic { cost: Cost::Fixed, .. } => "periodic, fixed cost",
            Component::Periodic { cost: Cost::Jittered, .. } => "periodic, jittered cost",
            Component::Periodic { cost: Cost::Drifting { .. }, .. } => "periodic, drifting cost",
            Component::DriftingPeriod { .. } => "drifting period",
            Component::Memoryless { .. } => "memoryless",
            Component::Keyed { .. } => "keyed to the call",
            Component::Phases { .. } => "machine: speed phases",
            Component::Stalls { .. } => "machine: stalls",
            Component::CoTenant { .. } => "machine: co-tenant",
            Component::Timer { .. } => "machine: timer",
        }
    }

    /// The range of extra cost (ns over the fast path) of the tracer's path this component
    /// plants; None for the fast path's spread and the machine's.
    pub fn cost_range(&self) -> Option<(f64, f64)> {
        match *self {
            Component::Spread(Spread::SecondMode { extra, .. }) => Some((extra, extra)),
            Component::Periodic { extra, cost, .. } => Some(match cost {
                Cost::Fixed => (0.95 * extra, 1.05 * extra),
                Cost::Jittered => (0.65 * extra, 1.35 * extra),
                Cost::Drifting { factor } => (extra, extra * factor),
            }),
            Component::DriftingPeriod { extra, .. } => Some((0.9 * extra, 1.1 * extra)),
            Component::Memoryless { extra, .. } | Component::Keyed { extra, .. } => Some((0.95 * extra, 1.05 * extra)),
            _ => None,
        }
    }

    /// The calls of the run (`calls` over `reps` sequences) that this component's path is
    /// expected to take: what a search has to go on. None for the spreads without a path and the
    /// machine's doings.
    pub fn expected_calls(&self, calls: u64, reps: usize) -> Option<f64> {
        let n = calls as f64;
        match self {
            Component::Spread(Spread::SecondMode { share, .. }) => Some(share * n),
            Component::Periodic { period, .. } => Some(n / *period as f64),
            Component::DriftingPeriod { gap, .. } => Some(n / (0.5 * (gap.0 + gap.1) as f64)),
            Component::Memoryless { chance, .. } => Some(chance * n),
            Component::Keyed { at, .. } => Some((at.len() * reps) as f64),
            _ => None,
        }
    }
}

/// One composed run: its sequences, reference windows and components.
pub struct Run {
    pub seqs: Vec<Vec<f64>>,
    pub reference: Vec<f64>,
    pub components: Vec<Component>,
    /// The fast path's cost (ns).
    pub base: f64,
}

struct Gen {
    rng: Rng,
}

impl Gen {
    fn unit(&mut self) -> f64 {
        (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.rng.below(hi - lo + 1)
    }
    /// Log-uniform in lo..hi.
    fn log(&mut self, lo: f64, hi: f64) -> f64 {
        lo * (hi / lo).powf(self.unit())
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.unit()).sum::<f64>() - 6.0
    }
}

/// The machine's interrupts, in every run and in its reference windows alike: 0.1 % of calls.
const IRQ_RATE: f64 = 0.001;

/// Composes one run at random from `seed`, of at most `max_calls` calls (2,000 at least; long
/// runs are rarer: the length is log-distributed with its weight near the short end).
pub fn compose(seed: u64, max_calls: u64) -> Run {
    let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1) };
    let reps = [1usize, 2, 3, 3, 5][g.rng.below(5) as usize];
    let total = (2000.0 * (max_calls.max(2000) as f64 / 2000.0).powf(g.unit().powi(6))) as u64;
    let n = (total / reps as u64).max(400);
    let base = 10.0 * (8.0 + g.rng.below(30) as f64);
    let spread = match g.rng.below(4) {
        0 => Spread::Narrow,
        1 => Spread::Wide { sd: base * (0.03 + 0.07 * g.unit()) },
        2 => Spread::HeavyTail { share: 0.02 + 0.13 * g.unit(), xm: g.log(10.0, 60.0), alpha: 1.2 + 1.3 * g.unit() },
        _ => Spread::SecondMode { share: 0.05 + 0.35 * g.unit(), extra: g.log(40.0, 400.0) },
    };
    let mut c = vec![Component::Spread(spread)];
    let tracer_paths = [0usize, 0, 1, 1, 1, 2, 2, 3][g.rng.below(8) as usize];
    for _ in 0..tracer_paths {
        let extra = g.log(60.0, 5000.0);
        c.push(match g.rng.below(4) {
            0 | 1 => {
                // At least three calls of the path in the run.
                let period = g.log(8.0, (n as f64 / 3.0).min(20000.0)).round().max(4.0) as u64;
                // A buffer that starts empty in every repetition takes its path on the same
                // iterations in each; one kept across them, at its own phase in each.
                let same = g.chance(0.5);
                let first = g.rng.below(period);
                let phases = (0..reps).map(|_| if same { first } else { g.rng.below(period) }).collect();
                let cost = match g.rng.below(3) {
                    0 => Cost::Fixed,
                    1 => Cost::Jittered,
                    _ => Cost::Drifting { factor: g.log(3.0, 40.0) },
                };
                let stretch = (period >= 20 && g.chance(0.25))
                    .then(|| ((period as f64 * (0.1 + 0.4 * g.unit())) as u64, g.log(30.0, 200.0)));
                Component::Periodic { period, phases, extra, cost, stretch }
            }
            2 => {
                let mean = g.log(8.0, (n as f64 / 4.0).min(5000.0));
                let d = 0.03 + 0.1 * g.unit();
                let gap = (((mean * (1.0 - d)).round() as u64).max(2), (mean * (1.0 + d)).round() as u64 + 1);
                Component::DriftingPeriod { gap, extra }
            }
            _ if reps > 1 && g.chance(0.5) => {
                let share = g.log(0.002, 0.02);
                let mut at: Vec<u64> = (0..n).filter(|_| g.chance(share)).collect();
                at.dedup();
                Component::Keyed { share, extra, at }
            }
            _ => Component::Memoryless { chance: g.log(1e-4, 0.01), extra },
        });
    }
    if g.chance(0.3) {
        c.push(Component::Phases { len: (300, 3000), level: base * (0.1 + 0.4 * g.unit()) });
    }
    if g.chance(0.3) {
        c.push(Component::Stalls { per_ns: g.log(0.0005, 0.005) / 150.0 });
    }
    if g.chance(0.2) {
        let at = (n * reps as u64) as f64 * (0.2 + 0.6 * g.unit());
        c.push(Component::CoTenant { at: at as u64, level: base * (0.1 + 0.3 * g.unit()), per_ns: 0.01 / 150.0 });
    }
    // Drawn from a stream of its own: the compositions without a timer stay as they were. The
    // ticks of a kernel (HZ 250 to 1000) and of a hypervisor's timers come 0.1 to 4 ms apart:
    // further than the call-count jitter of a 1 % tick lets an exact period in calls hold.
    let mut t = Gen { rng: Rng(seed.wrapping_mul(0xA24B_AED4_963E_E407) | 1) };
    if t.chance(0.25) {
        c.push(Component::Timer {
            every_ns: t.log(100_000.0, 4_000_000.0),
            extra: t.log(300.0, 3000.0),
            seed: t.rng.next(),
        });
    }
    let (seqs, reference) = realise(&mut g, &c, base, reps, n);
    Run { seqs, reference, components: c, base }
}

/// The sequences and reference windows of the components.
fn realise(g: &mut Gen, c: &[Component], base: f64, reps: usize, n: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut seqs = Vec::with_capacity(reps);
    let mut reference = Vec::with_capacity(reps * n as usize);
    let timer = c.iter().find_map(|x| match *x {
        Component::Timer { every_ns, extra, seed } => Some((every_ns, extra, seed)),
        _ => None,
    });
    let mut ticks =
        timer.map(|(every, extra, seed)| Ticks { every, extra, g: Gen { rng: Rng(seed | 1) }, clock: 0.0, next: 0.0 });
    for r in 0..reps {
        // The machine's state in time, shared by the calls and the reference windows.
        let (mut left, mut level) = (0u64, 0.0);
        if let Some(k) = ticks.as_mut() {
            k.next = k.clock + k.every * k.g.unit();
        }
        let mut next_gap = first_calls(g, c);
        let mut v = Vec::with_capacity(n as usize);
        for i in 0..n {
            let t = r as u64 * n + i;
            let mut machine = 0.0;
            let mut stall_rate = 0.0;
            for x in c {
                match *x {
                    Component::Phases { len, level: l } => {
                        if left == 0 {
                            level = if g.chance(0.5) { l } else { 0.0 };
                            left = g.range(len.0, len.1);
                        }
                        left -= 1;
                        machine += level;
                    }
                    Component::Stalls { per_ns } => stall_rate += per_ns,
                    Component::CoTenant { at, level, per_ns } if t >= at => {
                        machine += level;
                        stall_rate += per_ns;
                    }
                    _ => {}
                }
            }
            let noise = |g: &mut Gen, ns: f64| {
                let mut e = 0.0;
                if g.chance(IRQ_RATE) {
                    e += 200.0 * 15f64.powf(g.unit());
                }
                if stall_rate > 0.0 && g.chance(1.0 - (-stall_rate * ns).exp()) {
                    e += 2000.0 * (0.9 + 0.2 * g.unit());
                }
                e
            };
            let jitter = 10.0 * (g.rng.next() & 1) as f64;
            // A stall meets a window by its length in time: the machine's level lengthens it.
            let mut rf = base + jitter + machine + noise(g, base + machine);
            if let Some(k) = ticks.as_mut() {
                rf += k.window(rf);
                // The harness's own time between the windows, about a fast call's length.
                k.clock += base;
            }
            reference.push(rf);
            let mut x = base + jitter + machine;
            for (k, comp) in c.iter().enumerate() {
                x += tracer_cost(g, comp, r, i, n, &mut next_gap[k]);
            }
            x += noise(g, x);
            if let Some(k) = ticks.as_mut() {
                x += k.window(x);
                k.clock += base;
            }
            v.push(x);
        }
        seqs.push(v);
    }
    (seqs, reference)
}

/// The machine timer's state: wall time and the next tick (ns).
struct Ticks {
    every: f64,
    extra: f64,
    g: Gen,
    clock: f64,
    next: f64,
}

impl Ticks {
    /// A window of `len` ns from now: the extra cost of the ticks it holds (the window grows by
    /// each), the clock moved past it.
    fn window(&mut self, len: f64) -> f64 {
        let mut added = 0.0;
        while self.next < self.clock + len + added {
            added += self.extra;
            self.next += self.every * (0.99 + 0.02 * self.g.unit());
        }
        self.clock += len + added;
        added
    }
}

/// Per component, the call its path first falls on in a sequence: a drifting period's first gap is
/// drawn; the other components keep no such state (0).
fn first_calls(g: &mut Gen, c: &[Component]) -> Vec<u64> {
    c.iter()
        .map(|x| match x {
            Component::DriftingPeriod { gap, .. } => g.range(0, gap.1),
            _ => 0,
        })
        .collect()
}

/// The extra cost component `c` adds to call `i` of sequence `r` (of `n` calls).
fn tracer_cost(g: &mut Gen, c: &Component, r: usize, i: u64, n: u64, next: &mut u64) -> f64 {
    match *c {
        Component::Spread(Spread::Narrow) => 0.0,
        Component::Spread(Spread::Wide { sd }) => (sd * g.normal()).max(-3.0 * sd),
        Component::Spread(Spread::HeavyTail { share, xm, alpha }) => {
            if g.chance(share) {
                xm * ((1.0 - g.unit()).powf(-1.0 / alpha) - 1.0)
            } else {
                0.0
            }
        }
        Component::Spread(Spread::SecondMode { share, extra }) => {
            if g.chance(share) {
                extra
            } else {
                0.0
            }
        }
        Component::Periodic { period, ref phases, extra, cost, stretch } => {
            let since = (i + period - phases[r]) % period;
            if since == 0 {
                match cost {
                    Cost::Fixed => extra * (0.95 + 0.1 * g.unit()),
                    Cost::Jittered => extra * (0.65 + 0.7 * g.unit()),
                    Cost::Drifting { factor } => extra * factor.powf(i as f64 / n as f64),
                }
            } else {
                stretch.filter(|s| since <= s.0).map_or(0.0, |s| s.1)
            }
        }
        Component::DriftingPeriod { gap, extra } => {
            if i == *next {
                *next = i + g.range(gap.0, gap.1);
                extra * (0.9 + 0.2 * g.unit())
            } else {
                0.0
            }
        }
        Component::Memoryless { chance, extra } => {
            if g.chance(chance) {
                extra * (0.95 + 0.1 * g.unit())
            } else {
                0.0
            }
        }
        Component::Keyed { extra, ref at, .. } => {
            if at.binary_search(&i).is_ok() {
                extra * (0.95 + 0.1 * g.unit())
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}

/// The tracer's extra cost (ns) of each of `len` calls of one sequence of `n` calls, from the
/// components `c` alone, without the machine's doings or noise: what a real run plants through
/// the `spin` tracer's plan (planted.rs), the machine adding its own.
pub fn tracer_schedule(seed: u64, c: &[Component], n: u64, len: u64) -> Vec<f32> {
    let mut g = Gen { rng: Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1) };
    let mut next = first_calls(&mut g, c);
    (0..len)
        .map(|i| c.iter().enumerate().map(|(k, x)| tracer_cost(&mut g, x, 0, i, n, &mut next[k])).sum::<f64>() as f32)
        .collect()
}
