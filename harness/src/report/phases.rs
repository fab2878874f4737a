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
