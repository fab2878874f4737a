//! Histogram bins of clock ticks, 16 per octave (6 % wide), exact below 16: how the timed loop
//! counts its reference windows without a store stream (runner/reference.rs), and how the
//! calibration battery bins its synthetic ones the same way.
/// Bins per octave of ticks, and bins in all (64 octaves).
const SUB: u64 = 16;
pub const BINS: usize = 64 * SUB as usize;

/// The histogram bin of `ticks`: exact below 16, then 16 per octave (6 % wide).
#[inline(always)]
pub fn bin(ticks: u64) -> usize {
    if ticks < SUB {
        return ticks as usize;
    }
    let o = 63 - ticks.leading_zeros() as u64;
    (((o - 3) * SUB) + ((ticks >> (o - 4)) & (SUB - 1))) as usize
}

/// The lowest tick count of bin `b` (the highest is `lo(b + 1) - 1`).
pub fn lo(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let o = b / SUB + 3;
    (SUB + b % SUB) << (o - 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_monotone_and_hold_their_bounds() {
        let mut last = 0;
        for t in 0..200_000u64 {
            let b = bin(t);
            assert!(b >= last, "bin({t}) = {b} < {last}");
            assert!(lo(b) <= t && t < lo(b + 1), "ticks {t} outside bin {b}: {}..{}", lo(b), lo(b + 1));
            last = b;
        }
        assert!(bin(u64::MAX) < BINS);
    }
}
