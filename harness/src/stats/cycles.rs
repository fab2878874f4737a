//! Do marked calls gather on a few residues of a cycle known in advance?
//!
//! The harness has cycles of its own in the calls it measures: a new page of the sample buffer
//! every 64 kept calls, a sentinel window every K-1 tracer calls. If its work between windows
//! reached into the next call, the slow calls would gather on a few residues of such a cycle
//! (e.g. 49% of lttng-ust's slow calls on three residues of 64, where 4.7% is the even
//! share). The cycle's length is known before the data is seen, so this is a test, not a
//! search: the worst window of `width` consecutive residues is held against the chance that calls
//! placed at random among the sequence's positions put as many there, a binomial tail times the
//! `cycle` window positions tried (the union bound; conservative).
use super::binomial::upper_tail;

/// The worst window of one cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Gathering {
    pub cycle: u64,
    /// The window's first residue, and its width in residues.
    pub first: u64,
    pub width: u64,
    /// Marked calls in the window, and in all.
    pub on: u64,
    pub marked: u64,
    /// The window's share of the marked calls, and of all positions (the share under the null).
    pub share: f64,
    pub even: f64,
    /// P(a window holds this many or more | marked calls at random positions), times the windows.
    pub p_value: f64,
}

/// `ranges`: each sequence's positions, first and last (inclusive); `marked`: the marked calls'
/// positions. None without marked calls or with a cycle shorter than the window.
pub fn worst_window(ranges: &[(u64, u64)], marked: &[u64], cycle: u64, width: u64) -> Option<Gathering> {
    if marked.is_empty() || cycle < 2 || width >= cycle {
        return None;
    }
    let count = |v: &mut Vec<u64>, lo: u64, hi: u64| {
        // Positions lo..=hi by residue, without walking them: whole cycles, then the rest.
        let n = hi - lo + 1;
        for x in v.iter_mut() {
            *x += n / cycle;
        }
        for i in 0..n % cycle {
            v[((lo + i) % cycle) as usize] += 1;
        }
    };
    let mut positions = vec![0u64; cycle as usize];
    for &(lo, hi) in ranges.iter().filter(|r| r.1 >= r.0) {
        count(&mut positions, lo, hi);
    }
    let mut hits = vec![0u64; cycle as usize];
    for &m in marked {
        hits[(m % cycle) as usize] += 1;
    }
    let window = |v: &[u64], r: u64| (0..width).map(|i| v[((r + i) % cycle) as usize]).sum::<u64>();
    let first = (0..cycle).max_by_key(|&r| (window(&hits, r), std::cmp::Reverse(r)))?;
    let total: u64 = positions.iter().sum();
    let on = window(&hits, first);
    let marked_n = marked.len() as u64;
    // The null's share for the worst window among all: the largest positional share, so that an
    // uneven tail (sequences not a whole number of cycles) cannot make the test lenient.
    let even = (0..cycle).map(|r| window(&positions, r)).max().unwrap_or(0) as f64 / total.max(1) as f64;
    let p_value = (upper_tail(marked_n, on, even) * cycle as f64).min(1.0);
    Some(Gathering { cycle, first, width, on, marked: marked_n, share: on as f64 / marked_n as f64, even, p_value })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for the batteries (xorshift64*).
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut s = crate::stats::rng::XorShift64Star(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        move || s.next()
    }

    #[test]
    fn counts_positions_and_hits() {
        let g = worst_window(&[(0, 127)], &[64, 128 + 1, 1, 2, 66], 64, 3).unwrap();
        assert_eq!((g.first, g.on, g.marked), (0, 5, 5));
        assert!((g.even - 6.0 / 128.0).abs() < 1e-12);
        assert!(worst_window(&[(0, 10)], &[], 64, 3).is_none());
    }

    /// The null battery: marked calls at random positions. A claim at p < 0.001 must come at
    /// most about once in a thousand runs; the union bound makes it rarer still.
    #[test]
    fn null_battery_claims_at_most_its_rate() {
        let mut next = rng(33);
        let mut claims = 0;
        let runs = 3000;
        for run in 0..runs {
            let n = [20usize, 200, 3000][run % 3];
            let len = 20_000u64;
            let marked: Vec<u64> = (0..n).map(|_| next() % len).collect();
            let g = worst_window(&[(0, len - 1)], &marked, 64, 3).unwrap();
            claims += (g.p_value < 1e-3) as u32;
        }
        assert!(claims <= 3, "{claims} false claims in {runs} null runs");
    }

    /// Planted: a fifth of the slow calls on every 64th call, the rest at random: found. On every
    /// 61st: spread over all residues of 64, not claimed.
    #[test]
    fn finds_a_planted_cycle_and_not_a_prime_one() {
        let mut next = rng(7);
        for (period, want) in [(64u64, true), (61, false)] {
            let mut found = 0;
            for _ in 0..100 {
                let len = 20_000u64;
                let phase = next() % period;
                let mut marked: Vec<u64> = (0..len).filter(|i| i % period == phase && next() % 5 == 0).collect();
                marked.extend((0..200).map(|_| next() % len));
                let g = worst_window(&[(0, len - 1)], &marked, 64, 3).unwrap();
                found += (g.p_value < 1e-3 && g.share >= 2.0 * g.even) as u32;
            }
            if want {
                assert!(found >= 99, "every {period}: found in {found} of 100");
            } else {
                assert!(found <= 1, "every {period}: claimed in {found} of 100");
            }
        }
    }
}
