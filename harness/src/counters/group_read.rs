//! Counters read with one `read()` of the whole group (the fallback when rdpmc is not allowed,
//! and the only way to read software and tracepoint counters).
//!
//! The group leader is perf-event2's dummy event with `read_format = GROUP | ID |
//! TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING` (perf-event2 adds ID to every GROUP read), so the
//! kernel's answer (perf_read_group, kernel/events/core.c) is
//!
//! ```text
//! u64 nr;  u64 time_enabled;  u64 time_running;  { u64 value; u64 id; } [nr]
//! ```
//! with the leader first, then the members, then a trailing dummy sibling. The trailer is there
//! because on this machine's kernel (Linux 6.18, measured with `--counters page-faults,task-clock`)
//! a group read did not refresh the *last* sibling: task-clock read 0 on every call as the last
//! member and correct values anywhere else; a dummy last sibling costs nothing and makes every
//! real member be read fresh. The buffer must hold all of it, or the kernel answers ENOSPC. A pinned
//! group that could not be scheduled is in the error state and read() returns 0 bytes. Neither is
//! a zero: [`parse`] says the reading failed, and the sample is discarded.
//!
//! The read() happens outside the clock window (before the start read and after the end read),
//! so the counter delta includes the tail of one system call and the head of the next; the `none`
//! row carries the same and cancels it.
use super::{Reading, MAX};

/// Words in the largest answer: nr, enabled, running, then (value, id) for the leader, up to MAX
/// members and the trailing dummy.
pub const WORDS: usize = 3 + 2 * (2 + MAX);

/// One group read's layout for `members` counters behind the dummy leader.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub members: usize,
    /// The kernel ids of the members, in order (`PERF_EVENT_IOC_ID`), to check the answer's
    /// order.
    pub ids: [u64; MAX],
}

impl Layout {
    /// Events in the group: the leader, the members, the trailer.
    pub fn events(&self) -> usize {
        self.members + 2
    }
    pub fn bytes(&self) -> usize {
        (3 + 2 * self.events()) * 8
    }
}

/// Parses `n` bytes of a group read into `r`. `r.ok` is false on a short or failed read, a
/// member count or id that does not match, so a failed read is never taken as zeros.
#[inline(always)]
pub fn parse(layout: &Layout, buf: &[u64; WORDS], n: isize, r: &mut Reading) {
    let want = layout.bytes();
    let mut ok = n == want as isize && buf[0] == layout.events() as u64;
    r.enabled = buf[1];
    r.running = buf[2];
    for k in 0..layout.members {
        let at = 3 + 2 * (1 + k);
        r.values[k] = buf[at];
        ok &= buf[at + 1] == layout.ids[k];
    }
    r.ok = ok;
}

/// Deltas of two group readings; a mask of the counters that did not count the whole call. The
/// group is scheduled as one, so either all are good or all are bad: bad when a reading failed
/// or when time_running did not advance with time_enabled (the group was off the PMU for part of
/// the call: multiplexed, or pinned and in error).
#[inline(always)]
pub fn delta(members: usize, c0: &Reading, c1: &Reading, out: &mut [u64; MAX]) -> u8 {
    let ran_whole_time = c1.enabled.wrapping_sub(c0.enabled) == c1.running.wrapping_sub(c0.running);
    let all = ((1u16 << members) - 1) as u8;
    if !(c0.ok && c1.ok && ran_whole_time) {
        return all;
    }
    for k in 0..members {
        out[k] = c1.values[k].wrapping_sub(c0.values[k]);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(layout: &Layout, enabled: u64, running: u64, values: &[u64]) -> [u64; WORDS] {
        let mut b = [0u64; WORDS];
        b[0] = layout.events() as u64;
        b[1] = enabled;
        b[2] = running;
        b[3] = 0; // leader value
        b[4] = 99; // leader id
        for (k, v) in values.iter().enumerate() {
            b[3 + 2 * (1 + k)] = *v;
            b[3 + 2 * (1 + k) + 1] = layout.ids[k];
        }
        b
    }

    #[test]
    fn reads_the_values_not_the_ids() {
        let l = Layout { members: 2, ids: [11, 12, 0, 0] };
        assert_eq!(l.bytes(), 11 * 8);
        let (mut c0, mut c1, mut d) = (Reading::default(), Reading::default(), [0; MAX]);
        parse(&l, &answer(&l, 1000, 1000, &[5, 50]), l.bytes() as isize, &mut c0);
        parse(&l, &answer(&l, 2500, 2500, &[9, 1050]), l.bytes() as isize, &mut c1);
        assert!(c0.ok && c1.ok);
        assert_eq!(delta(2, &c0, &c1, &mut d), 0);
        assert_eq!(&d[..2], &[4, 1000]);
    }

    #[test]
    fn a_failed_short_or_empty_read_is_not_zero() {
        let l = Layout { members: 1, ids: [11, 0, 0, 0] };
        let mut r = Reading::default();
        parse(&l, &answer(&l, 1, 1, &[0]), -1, &mut r);
        assert!(!r.ok, "read() failed (ENOSPC)");
        parse(&l, &answer(&l, 1, 1, &[0]), 0, &mut r);
        assert!(!r.ok, "pinned group in error state: 0 bytes");
        parse(&l, &answer(&l, 1, 1, &[0]), 24, &mut r);
        assert!(!r.ok, "short read");
        let mut wrong = answer(&l, 1, 1, &[0]);
        wrong[6] = 12;
        parse(&l, &wrong, l.bytes() as isize, &mut r);
        assert!(!r.ok, "id mismatch");
    }

    #[test]
    fn multiplexed_out_during_the_call_is_bad() {
        let l = Layout { members: 3, ids: [1, 2, 3, 0] };
        let (mut c0, mut c1, mut d) = (Reading::default(), Reading::default(), [0; MAX]);
        parse(&l, &answer(&l, 1000, 1000, &[1, 1, 1]), l.bytes() as isize, &mut c0);
        parse(&l, &answer(&l, 3000, 2000, &[1, 1, 1]), l.bytes() as isize, &mut c1);
        assert_eq!(delta(3, &c0, &c1, &mut d), 0b111);
    }
}
