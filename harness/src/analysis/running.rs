//! Bounded streaming state for the report's passes over events.csv: running moments and a
//! reservoir sample, so memory does not grow with the number of rows.
use crate::stats::rng::XorShift64;

/// Running mean and std (Welford), for counters that are too many to keep.
#[derive(Debug, Clone, Default)]
pub struct Running {
    pub n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.mean
        }
    }
    pub fn std(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }
}

/// Uniform sample of fixed size (Algorithm R) with a fixed-seed xorshift, so reports re-made
/// from the same files draw the same points.
#[derive(Debug, Clone)]
pub struct Reservoir<T> {
    pub cap: usize,
    pub seen: u64,
    pub items: Vec<T>,
    rng: XorShift64,
}

impl<T> Reservoir<T> {
    pub fn new(cap: usize) -> Self {
        Reservoir { cap, seen: 0, items: Vec::with_capacity(cap.min(1 << 16)), rng: XorShift64(0x9E3779B97F4A7C15) }
    }
    pub fn add(&mut self, x: T) {
        self.seen += 1;
        if self.items.len() < self.cap {
            self.items.push(x);
            return;
        }
        let j = self.rng.next() % self.seen;
        if (j as usize) < self.cap {
            self.items[j as usize] = x;
        }
    }
}
