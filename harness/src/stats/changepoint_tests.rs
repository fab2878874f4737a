//! Seeded batteries: one segment on null series, the right place for a planted step.
use super::*;
use crate::stats::bootstrap::SplitMix64;

/// Standard normal draws (Box-Muller) and Student-t(3) draws from one seeded generator.
pub(crate) struct Noise(SplitMix64);

impl Noise {
    pub(crate) fn new(seed: u64) -> Self {
        Noise(SplitMix64(seed))
    }
    pub(crate) fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub(crate) fn gauss(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    /// Student-t with 3 degrees of freedom (infinite kurtosis), scaled to unit variance.
    pub(crate) fn t3(&mut self) -> f64 {
        let chi2: f64 = (0..3).map(|_| self.gauss().powi(2)).sum();
        self.gauss() / (chi2 / 3.0).sqrt() / 3f64.sqrt()
    }
}

fn null_rate(n: usize, heavy: bool) -> f64 {
    let runs = 200;
    let ok = (0..runs)
        .filter(|&r| {
            let mut g = Noise::new(1000 + r as u64 + if heavy { 1 << 32 } else { 0 });
            let x: Vec<f64> = (0..n).map(|_| 100.0 + 2.0 * if heavy { g.t3() } else { g.gauss() }).collect();
            segment(&x, &Options::default()).segments.len() == 1
        })
        .count();
    ok as f64 / runs as f64
}

#[test]
fn null_series_stay_one_segment() {
    for n in [200, 1000] {
        for heavy in [false, true] {
            let rate = null_rate(n, heavy);
            println!(
                "changepoint null: n = {n}, {}: one segment in {:.1} %",
                if heavy { "t(3)" } else { "gauss" },
                100.0 * rate
            );
            assert!(rate >= 0.99, "n = {n}, heavy = {heavy}: {rate}");
        }
    }
}

/// A stretch of 2 sigma over 20 of 200 windows (at 60..140), and a lasting step of 2 sigma.
/// The least-squares location of a 2-sigma change is itself off by 3 or more windows about 4 %
/// of the time on each side (the information limit, not the search), so each boundary is found
/// within +-2 in about 92 % of series and both at once in about 85 %: the assertions hold the
/// stretch to being found (right count) in 95 % and each boundary to 90 %.
#[test]
fn a_two_sigma_step_over_twenty_windows_is_found_in_place() {
    let runs = 200;
    let (mut found, mut placed, mut step_placed) = (0, 0, 0);
    for r in 0..runs {
        let mut g = Noise::new(77 + r);
        let start = 60 + (r as usize % 80);
        let bump: Vec<f64> =
            (0..200).map(|i| 100.0 + g.gauss() + if (start..start + 20).contains(&i) { 2.0 } else { 0.0 }).collect();
        let s = segment(&bump, &Options::default()).segments;
        if s.len() == 3 {
            found += 1;
            placed += (s[1].start.abs_diff(start) <= 2) as u32 + (s[1].end.abs_diff(start + 20) <= 2) as u32;
        }
        let step: Vec<f64> = (0..200).map(|i| 100.0 + g.gauss() + if i >= start { 2.0 } else { 0.0 }).collect();
        let s = segment(&step, &Options::default()).segments;
        step_placed += (s.len() == 2 && s[1].start.abs_diff(start) <= 2) as u32;
    }
    let rate = |k: u32, of: u64| k as f64 / of as f64;
    let (f, p, sp) = (rate(found, runs), rate(placed, 2 * runs), rate(step_placed, runs));
    println!(
        "changepoint power: 2 sigma over 20 of 200 windows found in {:.1} %, each boundary within +-2 in {:.1} %; \
         a lasting 2-sigma step found within +-2 in {:.1} %",
        100.0 * f,
        100.0 * p,
        100.0 * sp
    );
    assert!(f >= 0.95 && p >= 0.90 && sp >= 0.90, "{f} {p} {sp}");
}

#[test]
fn lone_stalls_and_constant_series_make_no_change() {
    let mut x = vec![50.0; 300];
    assert_eq!(segment(&x, &Options::default()).segments.len(), 1);
    x[100] = 5000.0;
    x[200] = 9000.0;
    let mut g = Noise::new(5);
    let y: Vec<f64> = x.iter().map(|v| v + g.gauss()).collect();
    assert_eq!(segment(&y, &Options::default()).segments.len(), 1);
    // A clean step with no noise at all is still a step.
    let z: Vec<f64> = (0..100).map(|i| if i < 40 { 10.0 } else { 12.0 }).collect();
    let s = segment(&z, &Options::default()).segments;
    assert_eq!(s.iter().map(|s| s.start).collect::<Vec<_>>(), vec![0, 40], "{s:?}");
}
