//! Speed phases of the machine, not code paths (issue 12): the VM drifts between speeds over
//! seconds, so a mode whose calls come in long contiguous stretches is a phase. Calls are counted
//! in windows of WINDOW consecutive iterations; a mode that holds the majority of its windows for
//! most of its calls is a phase.

/// Phase windows: a mode holding the majority of WINDOW consecutive iterations in stretches
/// covering most of its calls is a phase of the machine, not a path. A path of share f < 1/2
/// taken independently of its neighbours almost never holds a 64-call window.
pub(super) const WINDOW: u64 = 64;
/// Share of a mode's calls inside its majority windows above which it is a phase.
pub(super) const PHASE_SHARE: f64 = 0.6;

#[derive(Default)]
pub(super) struct WinState {
    pub(super) win: u64,
    pub(super) counts: Vec<u32>,
    pub(super) prev_major: Option<usize>,
}

/// Closes one window of WINDOW calls: its majority mode, if any, gains the window's calls, and a
/// new stretch when the previous window had another majority.
pub(super) fn close_window(w: &mut WinState, major_calls: &mut [u64], stretches: &mut [u64]) {
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
}

/// Calls per window for [`busiest_quarter_share`]: enough that a path taken independently of
/// time puts about a third of its calls in the busiest quarter of the windows (Poisson, 16 +- 4).
const CALLS_PER_WINDOW: u64 = 16;
/// Share of a mode's calls in the busiest quarter of its windows above which it comes and goes
/// with time: a phase of the machine, not a code path.
pub(super) const CLUSTERED_SHARE: f64 = 0.75;

/// The share of a mode's calls (iterations per sequence, with each sequence's first and last
/// iteration) that falls in the busiest quarter of windows sized to hold 16 of them on average.
/// A code path is taken as often in every stretch of the run; a slower state of the machine that
/// comes and goes (one repetition out of three, or seconds of a busy neighbour) interleaves with
/// fast calls too finely to hold a majority window, but crowds into a few windows. None when the
/// run holds fewer than 8 windows: too few to tell.
pub(super) fn busiest_quarter_share(seqs: &[Vec<u64>], ranges: &[(u64, u64)], rows: u64) -> Option<f64> {
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
    if counts.len() < 8 || total == 0 {
        return None;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    Some(counts[..counts.len() / 4].iter().sum::<u64>() as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
