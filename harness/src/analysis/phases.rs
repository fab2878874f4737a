//! Speed phases of the machine, not code paths: the VM drifts between speeds over
//! seconds, so a mode whose calls come in long contiguous stretches is a phase. Calls are counted
//! in windows of WINDOW consecutive iterations; a mode that holds the majority of its windows for
//! most of its calls is a phase.
use std::collections::HashMap;

use crate::decisions::phases::{
    CALLS_PER_WINDOW, LEVEL_GAP, LEVEL_MIN_SHARE, LEVEL_SPREADS, MIN_QUARTER_WINDOWS, MIN_WINDOWS, STRETCHED, WINDOW,
    WINDOW_KEPT,
};

#[derive(Default)]
pub(crate) struct WinState {
    pub(crate) win: u64,
    pub(crate) counts: Vec<u32>,
    pub(crate) prev_major: Option<usize>,
}

/// Closes one window of WINDOW calls: its majority mode, if any, gains the window's calls, and a
/// new stretch when the previous window had another majority. Returns that majority.
pub(crate) fn close_window(w: &mut WinState, major_calls: &mut [u64], stretches: &mut [u64]) -> Option<usize> {
    let n: u32 = w.counts.iter().sum();
    let major = w.counts.iter().enumerate().find(|(_, &c)| 2 * c > n && n as u64 >= WINDOW / 2).map(|(k, _)| k);
    if let Some(k) = major {
        major_calls[k] += w.counts[k] as u64;
        if w.prev_major != Some(k) {
            stretches[k] += 1;
        }
    }
    w.prev_major = major;
    w.counts.iter_mut().for_each(|c| *c = 0);
    major
}

/// The share of a mode's calls (iterations per sequence, with each sequence's first and last
/// iteration) that falls in the busiest quarter of windows sized to hold 16 of them on average.
/// A code path is taken as often in every stretch of the run; a slower state of the machine that
/// comes and goes (one repetition out of three, or seconds of a busy neighbour) interleaves with
/// fast calls too finely to hold a majority window, but crowds into a few windows. None when the
/// run holds fewer than 8 windows: too few to tell.
pub(crate) fn busiest_quarter_share(seqs: &[Vec<u64>], ranges: &[(u64, u64)], rows: u64) -> Option<f64> {
    let calls: usize = seqs.iter().map(Vec::len).sum();
    if calls == 0 {
        return None;
    }
    let w = (CALLS_PER_WINDOW * rows).div_ceil(calls as u64).max(1);
    let mut counts: Vec<u64> = Vec::new();
    for (s, &(first, last)) in seqs.iter().zip(ranges) {
        let n = ((last - first + 1) / w) as usize;
        let base = counts.len();
        counts.resize(base + n, 0);
        for &i in s {
            let k = ((i - first) / w) as usize;
            if k < n {
                counts[base + k] += 1;
            }
        }
    }
    let total: u64 = counts.iter().sum();
    if counts.len() < MIN_QUARTER_WINDOWS || total == 0 {
        return None;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    Some(counts[..counts.len() / 4].iter().sum::<u64>() as f64 / total as f64)
}

/// Two speed levels of the machine seen in window means (see [`WindowMeans`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Mean latency of the low and the high windows.
    pub low: f64,
    pub high: f64,
    /// Share of the windows at the high level, and the stretches the levels come in.
    pub high_share: f64,
    pub stretches: u64,
}

/// Per sequence: the open window, its sum and count, and the closed windows' means (NaN where
/// too few calls were kept to tell).
#[derive(Default)]
pub(crate) struct WindowMeans {
    seqs: std::collections::BTreeMap<u64, (u64, f64, u64, Vec<f64>)>,
}

impl WindowMeans {
    /// One call at or below the slow threshold (outliers would make a window look slow).
    pub(crate) fn add(&mut self, seq: u64, iteration: u64, v: f64) {
        let w = iteration / WINDOW;
        let e = self.seqs.entry(seq).or_insert((w, 0.0, 0, Vec::new()));
        while e.0 < w {
            e.3.push(if e.2 as f64 >= WINDOW_KEPT * WINDOW as f64 { e.1 / e.2 as f64 } else { f64::NAN });
            (e.0, e.1, e.2) = (e.0 + 1, 0.0, 0);
        }
        e.1 += v;
        e.2 += 1;
    }

    /// The two levels, when the window means form two groups far apart (the gap at least 10 % of
    /// the low level, and four times either group's spread), each holding a tenth of the windows
    /// or more, in stretches (at most half the level changes that a random order would give). A
    /// speed phase too small to form its own latency mode (40 to 50 ns against 90 to 100 ns: the
    /// 15 ns kernel floor that hides the TSC's comb merges them) is found here.
    pub(crate) fn levels(&self) -> Option<Levels> {
        let seqs: Vec<&Vec<f64>> = self.seqs.values().map(|e| &e.3).collect();
        let mut v: Vec<f64> = seqs.iter().flat_map(|s| s.iter()).copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n < MIN_WINDOWS {
            return None;
        }
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let sd = |s: &[f64], m: f64| (s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / s.len() as f64).sqrt();
        // The split that leaves the least spread within the two groups (Otsu), by prefix sums.
        let (mut s1, mut s2) = (vec![0.0; n + 1], vec![0.0; n + 1]);
        for (i, x) in v.iter().enumerate() {
            s1[i + 1] = s1[i] + x;
            s2[i + 1] = s2[i] + x * x;
        }
        // Sum of squared deviations of v[i..j] from its mean.
        let ss = |i: usize, j: usize| s2[j] - s2[i] - (s1[j] - s1[i]).powi(2) / (j - i) as f64;
        let edge = (n / LEVEL_MIN_SHARE).max(2);
        let best = (edge..=n - edge).map(|k| (k, ss(0, k) + ss(k, n))).min_by(|x, y| x.1.total_cmp(&y.1))?;
        let (a, b) = v.split_at(best.0);
        let (low, high) = (mean(a), mean(b));
        let gap = high - low;
        if gap < LEVEL_GAP * low || gap < LEVEL_SPREADS * sd(a, low).max(sd(b, high)) {
            return None;
        }
        let cut = 0.5 * (low + high);
        let p = b.len() as f64 / n as f64;
        let mut stretches = 0u64;
        for s in seqs {
            let mut prev = None;
            for &x in s.iter().filter(|x| x.is_finite()) {
                let hi = x > cut;
                if prev != Some(hi) {
                    stretches += 1;
                }
                prev = Some(hi);
            }
        }
        let random = 1.0 + 2.0 * n as f64 * p * (1.0 - p);
        (stretches >= 2 && stretches as f64 <= STRETCHED * random).then_some(Levels {
            low,
            high,
            high_share: p,
            stretches,
        })
    }
}

/// The windows at the higher of two speed levels, per sequence: a call there is judged against
/// that level's fast path, not the run's (the fast path's own spread rides on the slower level,
/// and its upper tail there is the level's, not outliers on no path). Where the paths are
/// searched on levelled calls, this is the map that levels them (`taken_off`).
#[derive(Debug, Clone, PartialEq)]
pub struct SlowerLevel {
    /// The higher level's mean over the lower's (ns).
    pub shift: f64,
    high: HashMap<u64, Vec<bool>>,
    /// The two levels this was read from.
    pub(crate) levels: Levels,
}

impl SlowerLevel {
    pub(crate) fn of(means: &WindowMeans, l: &Levels) -> Self {
        let cut = 0.5 * (l.low + l.high);
        let high = means.seqs.iter().map(|(s, e)| (*s, e.3.iter().map(|&x| x > cut).collect())).collect();
        SlowerLevel { shift: l.high - l.low, high, levels: l.clone() }
    }
    /// Whether iteration `it` of sequence `seq` lies in a window at the higher level.
    pub(crate) fn holds(&self, seq: u64, it: u64) -> bool {
        self.high.get(&seq).and_then(|w| w.get((it / WINDOW) as usize)).copied().unwrap_or(false)
    }
    /// How much of a call's cost `v` (at iteration `it` of sequence `seq`) is its level's: the
    /// step in a window at the higher level, nothing in one at the lower. A level changes
    /// anywhere within a window, so in a window beside a change (or one that holds the change)
    /// each call is taken at the level it stands nearer to: above the lower level by more than
    /// half the step, at the higher. Taken by whole windows, the calls of the other level there
    /// would stand a step above or below the fast path, as slow calls on no path or a faster mode.
    pub(crate) fn taken_off(&self, seq: u64, it: u64, v: f64) -> f64 {
        let Some(w) = self.high.get(&seq) else { return 0.0 };
        let k = (it / WINDOW) as usize;
        let here = w.get(k).copied().unwrap_or(false);
        let differs = |j: Option<usize>| j.and_then(|j| w.get(j)).is_some_and(|&x| x != here);
        let high = if differs(k.checked_sub(1)) || differs(Some(k + 1)) {
            v > self.levels.low + 0.5 * self.shift
        } else {
            here
        };
        if high {
            self.shift
        } else {
            0.0
        }
    }
}

/// A call's latency `v` as the levelled search reads it: its level taken off where `level` is
/// given (`SlowerLevel::taken_off`), as measured otherwise. Passes 2 and 3 and the levelled
/// histogram all read calls through this one function, so they agree call by call.
pub(crate) fn levelled(level: Option<&SlowerLevel>, seq: u64, it: u64, v: f64) -> f64 {
    v - level.map_or(0.0, |l| l.taken_off(seq, it, v))
}

/// Windows of one metric seen two ways: by mode, and off the fast path against on it.
pub(crate) struct Windows {
    wins: HashMap<u64, WinState>,
    pub major_calls: Vec<u64>,
    pub stretches: Vec<u64>,
    /// Per sequence, each window's majority mode (NO_MAJORITY where none): one byte per WINDOW
    /// calls.
    majors: HashMap<u64, Vec<u8>>,
}

/// A window without a majority mode, in [`Windows::majors`].
const NO_MAJORITY: u8 = u8::MAX;

impl Windows {
    pub fn new(n: usize) -> Self {
        Windows { wins: HashMap::new(), major_calls: vec![0; n], stretches: vec![0; n], majors: HashMap::new() }
    }

    /// Whether the window of iteration `it` of sequence `seq`, or either window beside it, has
    /// its majority in a mode that `is_phase` holds. A speed phase is a state in time: a call
    /// whose cost falls in the phase's mode while the machine runs at its usual speed (a path's
    /// call, costlier by about the phase's step) is not the phase's. The windows beside count
    /// too: a window that a stretch's edge cuts holds a few of its calls without their majority.
    pub(crate) fn near_majority(&self, seq: u64, it: u64, is_phase: impl Fn(usize) -> bool) -> bool {
        let Some(w) = self.majors.get(&seq) else { return false };
        let k = (it / WINDOW) as usize;
        (k.saturating_sub(1)..=k + 1).any(|j| w.get(j).is_some_and(|&m| m != NO_MAJORITY && is_phase(m as usize)))
    }

    fn record(majors: &mut HashMap<u64, Vec<u8>>, seq: u64, win: u64, major: Option<usize>) {
        let w = majors.entry(seq).or_default();
        let at = win as usize;
        if w.len() <= at {
            w.resize(at + 1, NO_MAJORITY);
        }
        w[at] = major.map_or(NO_MAJORITY, |k| k.min(NO_MAJORITY as usize - 1) as u8);
    }
    pub fn add(&mut self, seq: u64, iteration: u64, k: Option<usize>) {
        let n = self.major_calls.len();
        let w = self.wins.entry(seq).or_insert_with(|| WinState {
            win: iteration / WINDOW,
            counts: vec![0; n],
            prev_major: None,
        });
        if iteration / WINDOW != w.win {
            let major = close_window(w, &mut self.major_calls, &mut self.stretches);
            Self::record(&mut self.majors, seq, w.win, major);
            w.win = iteration / WINDOW;
        }
        if let Some(k) = k {
            w.counts[k] += 1;
        }
    }
    pub fn close(&mut self) {
        for (&seq, w) in self.wins.iter_mut() {
            let major = close_window(w, &mut self.major_calls, &mut self.stretches);
            Self::record(&mut self.majors, seq, w.win, major);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decisions::phases::CLUSTERED_SHARE;

    #[test]
    fn a_path_spread_over_time_is_not_clustered_and_one_in_a_third_of_the_run_is() {
        let ranges = [(0, 29_999), (0, 29_999), (0, 29_999)];
        // Every 17th call in all three repetitions.
        let even: Vec<Vec<u64>> = (0..3).map(|_| (0..30_000).step_by(17).collect()).collect();
        let s = busiest_quarter_share(&even, &ranges, 90_000).unwrap();
        assert!(s < 0.35, "{s}");
        // As many calls, all in the first repetition, interleaved with fast calls.
        let one = vec![(0..30_000).step_by(6).collect(), vec![], vec![]];
        let s = busiest_quarter_share(&one, &ranges, 90_000).unwrap();
        assert!(s >= CLUSTERED_SHARE, "{s}");
        // Too few calls to tell.
        assert_eq!(busiest_quarter_share(&[vec![5, 900, 2000]], &[(0, 4999)], 5000), None);
    }
    #[test]
    fn two_speed_levels_in_stretches_and_none_in_noise() {
        let mut x = crate::stats::rng::XorShift64(0x9E3779B97F4A7C15);
        let mut rnd = move || x.next();
        // 40/50 ns against 90/100 ns, in stretches of 300 to 900 calls.
        let (mut w, mut slow, mut left) = (WindowMeans::default(), false, 500u64);
        for i in 0..5000u64 {
            if left == 0 {
                slow = !slow;
                left = 300 + rnd() % 600;
            }
            left -= 1;
            w.add(0, i, if slow { 90.0 } else { 40.0 } + 10.0 * (rnd() % 2) as f64);
        }
        let l = w.levels().expect("two levels");
        assert!((l.low - 45.0).abs() < 3.0 && (l.high - 95.0).abs() < 3.0, "{l:?}");
        assert!((3..=20).contains(&l.stretches), "{l:?}");
        // One speed, with a +130 ns path every 51 calls and a clock step of jitter: no levels.
        let mut w = WindowMeans::default();
        for i in 0..5000u64 {
            w.add(0, i, 1262.0 + 10.0 * (rnd() % 2) as f64 + if i % 51 == 7 { 130.0 } else { 0.0 });
        }
        assert_eq!(w.levels(), None);
    }
}
