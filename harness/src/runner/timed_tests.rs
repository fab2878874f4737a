//! The timed loop on a fake clock: where sentinel windows fall, what they store, and that they
//! leave the tracer's iteration numbers alone.
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::*;
use crate::counters::NoCounters;

/// A clock that counts: each start read moves it by 1, each fake call by its cost.
struct FakeClock<'a>(&'a AtomicU64);

impl Clock for FakeClock<'_> {
    fn start(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
    fn end(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A call that costs `cost` ticks, logs (is it the sentinel, its argument), and on the calls
/// numbered in `disturb` (its own count, from 0) moves the detector's head.
struct Fake<'a> {
    now: &'a AtomicU64,
    cost: u64,
    sentinel: bool,
    log: &'a Mutex<Vec<(bool, u32)>>,
    calls: AtomicUsize,
    disturb: Vec<usize>,
    head: usize,
}

impl Tracer for Fake<'_> {
    fn name(&self) -> &str {
        "fake"
    }
    fn version(&self) -> String {
        "0".into()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn fire(&self, arg: u32) {
        self.now.fetch_add(self.cost, Ordering::SeqCst);
        self.log.lock().unwrap().push((self.sentinel, arg));
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.disturb.contains(&n) {
            // SAFETY: the head of a `disabled` detector's anonymous mapping (`head_ptr_for_test`).
            unsafe { *(self.head as *mut u64) += 8 };
        }
    }
}

const TRACER_COST: u64 = 100;
const SENTINEL_COST: u64 = 7;

struct Ran {
    out: Outcome,
    buf: Buffers,
    log: Vec<(bool, u32)>,
}

/// `want` kept calls with a sentinel every `every` windows; the sentinel's calls numbered in
/// `disturb_sentinel` and the tracer's in `disturb_tracer` are disturbed.
fn run_fake(want: usize, every: u64, disturb_tracer: Vec<usize>, disturb_sentinel: Vec<usize>) -> Ran {
    let now = AtomicU64::new(1000);
    let log = Mutex::new(Vec::new());
    let mut det = Detector::disabled("test").unwrap();
    let head = det.head_ptr_for_test() as usize;
    let fake = |cost, sentinel, disturb| Fake {
        now: &now,
        cost,
        sentinel,
        log: &log,
        calls: AtomicUsize::new(0),
        disturb,
        head,
    };
    let (tracer, none) = (fake(TRACER_COST, false, disturb_tracer), fake(SENTINEL_COST, true, disturb_sentinel));
    let mut buf = Buffers::new(want, want, sentinel_rows(want, every));
    let clock = FakeClock(&now);
    let s = Sentinel { tracer: &none, every, reference: &none, reference_every: 0 };
    let out = run(&clock, &NoCounters, &tracer, s, &mut det, &mut buf, want, 0, 10 * want as u64, true, 0);
    let log = log.into_inner().unwrap();
    Ran { out, buf, log }
}

#[test]
fn a_sentinel_comes_every_k_windows_and_does_not_shift_the_iterations() {
    let r = run_fake(40, 4, vec![], vec![]);
    assert_eq!((r.out.kept, r.out.attempts), (40, 40));
    // Windows 3, 7, 11, ... (every 4th) are the sentinel's; the others the tracer's.
    for (w, (sentinel, _)) in r.log.iter().enumerate() {
        assert_eq!(*sentinel, w % 4 == 3, "window {w}");
    }
    // The tracer's calls are numbered 0..40 in its own count, with no gap for the sentinels.
    let tracer_args: Vec<u32> = r.log.iter().filter(|(s, _)| !s).map(|(_, a)| *a).collect();
    assert_eq!(tracer_args, (0..40).collect::<Vec<u32>>());
    let iterations: Vec<u64> = r.buf.samples.iter().map(|s| s.iteration).collect();
    assert_eq!(iterations, (0..40).collect::<Vec<u64>>());
    // 40 tracer windows hold 13 sentinels, each stored with the iteration it precedes: 3, 6, ...
    let its: Vec<u64> = r.buf.sentinels.iter().map(|s| s.iteration).collect();
    assert_eq!(its, (1..=13).map(|j| 3 * j).collect::<Vec<u64>>());
    assert!(r.buf.sentinels.iter().all(|s| s.ticks == 1 + SENTINEL_COST));
    assert!(r.buf.samples.iter().all(|s| s.ticks == 1 + TRACER_COST));
    // Its t0 lies between the t0s of the calls around it, one tracer window after the previous.
    for s in &r.buf.sentinels {
        let before = &r.buf.samples[s.iteration as usize - 1];
        let after = &r.buf.samples[s.iteration as usize];
        assert_eq!(s.t0, before.t0 + before.ticks, "{s:?}");
        assert_eq!(after.t0, s.t0 + s.ticks, "{s:?}");
    }
    assert_eq!(r.buf.first_t0, Some(r.buf.samples[0].t0));
    assert_eq!((r.buf.sentinels_dropped, r.buf.sentinels_unstored), (0, 0));
}

#[test]
fn no_sentinel_when_k_is_zero() {
    let r = run_fake(40, 0, vec![], vec![]);
    assert!(r.buf.sentinels.is_empty() && r.buf.sentinels.capacity() == 0);
    assert!(r.log.iter().all(|(s, _)| !s));
    assert_eq!(r.log.len(), 40);
    let t0s: Vec<u64> = r.buf.samples.iter().map(|s| s.t0).collect();
    assert_eq!(t0s, (0..40).map(|i| 1000 + i * (1 + TRACER_COST)).collect::<Vec<u64>>());
}

#[test]
fn a_disturbed_sentinel_is_dropped_and_counted_and_a_disturbed_call_keeps_its_number() {
    // The sentinel's 2nd call (window 7, before iteration 6) and the tracer's call 4 are disturbed.
    let r = run_fake(30, 4, vec![4], vec![1]);
    assert_eq!(r.buf.sentinels_dropped, 1);
    assert_eq!(r.buf.discarded, 1);
    let its: Vec<u64> = r.buf.sentinels.iter().map(|s| s.iteration).collect();
    assert!(!its.contains(&6) && its.contains(&3) && its.contains(&9), "{its:?}");
    // 31 tracer windows (30 kept + 1 discarded) hold 10 sentinel windows, one dropped.
    assert_eq!(r.out.attempts, 31);
    assert_eq!(its.len(), 9);
    let iterations: Vec<u64> = r.buf.samples.iter().map(|s| s.iteration).collect();
    assert_eq!(iterations, (0..31).filter(|&i| i != 4).collect::<Vec<u64>>());
}

#[test]
fn a_full_sentinel_buffer_counts_what_it_cannot_store() {
    // K = 2: tracer and sentinel alternate, 39 sentinels between 40 calls; all fit the rows
    // `sentinel_rows` sets aside.
    let r = run_fake(40, 2, vec![], vec![]);
    assert_eq!((r.buf.sentinels.len(), r.buf.sentinels_unstored), (39, 0));
    // Room for 3: the other 6 are counted, not written, and the loop goes on.
    let now = AtomicU64::new(0);
    let log = Mutex::new(Vec::new());
    let f =
        |s| Fake { now: &now, cost: 1, sentinel: s, log: &log, calls: AtomicUsize::new(0), disturb: vec![], head: 0 };
    let (t, n) = (f(false), f(true));
    let mut det = Detector::disabled("test").unwrap();
    let mut buf = Buffers::new(10, 0, 3);
    let o = run(
        &FakeClock(&now),
        &NoCounters,
        &t,
        Sentinel { tracer: &n, every: 2, reference: &n, reference_every: 0 },
        &mut det,
        &mut buf,
        10,
        0,
        100,
        false,
        0,
    );
    assert_eq!(o.kept, 10);
    assert_eq!((buf.sentinels.len(), buf.sentinels_unstored), (3, 6));
}
