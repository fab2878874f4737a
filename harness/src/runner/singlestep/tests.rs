use super::stepper::{Record, Retries};
use super::*;

#[test]
fn records_round_trip_and_sum_kernel_entries() {
    let r = Record { iteration: 7, instructions: 941, syscalls: 2, traps: 1, faults: 1, signal: 0, clock_retries: 1 };
    assert_eq!(Record::parse(&r.line()), Some(r));
    assert_eq!(r.kernel_entries(), 4);
    assert_eq!(Record::parse("1 2 3"), None);
    assert_eq!(Record::parse(stepper::END_DONE), None);
}

#[test]
fn mode_is_the_most_frequent_count_smallest_on_a_tie() {
    assert_eq!(mode_of(&[]), (0, 0.0));
    assert_eq!(mode_of(&[5, 5, 5, 9]), (5, 0.75));
    assert_eq!(mode_of(&[3, 3, 8, 8]), (3, 0.5));
    assert_eq!(mode_of(&[1, 2, 2]), (2, 2.0 / 3.0));
}

#[test]
fn a_vdso_pass_repeated_after_a_clock_read_is_dropped_a_plain_loop_is_not() {
    // Pass 1: a (step 0), rdtsc at b (step 1), c (step 2); then a again with one clock read
    // since: a retry of 3 instructions.
    let mut r = Retries::default();
    assert_eq!(r.visit(0xa, 0, 0), 0);
    assert_eq!(r.visit(0xb, 1, 0), 0);
    assert_eq!(r.visit(0xc, 2, 1), 0);
    assert_eq!(r.visit(0xa, 3, 1), 3);
    // The second pass goes on; a loop without a clock read (ns into seconds) stays counted.
    assert_eq!(r.visit(0xb, 4, 1), 0);
    assert_eq!(r.visit(0xd, 5, 2), 0);
    assert_eq!(r.visit(0xe, 6, 2), 0);
    assert_eq!(r.visit(0xd, 7, 2), 0);
}

// The two markers must differ, or stepper.rs's `match` would take every call start for the end.
// Checked when the tests compile, not by a test that could only pass.
const _: () = assert!(MAGIC_CALL != MAGIC_DONE);
