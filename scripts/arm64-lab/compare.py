#!/usr/bin/env python3
"""Compare the PMU's and the single-stepper's instructions per call of one arm64-lab results directory.

DIR/pmu/<tracer>/events.csv has an `instructions` column (the emulated PMUv3's count over the timed window, exact under
qemu -icount); DIR/step/<tracer>/events.csv has `user_instructions` (PTRACE_SINGLESTEP's count of the call). The windows
differ by what surrounds the call (the PMU window holds the clock and counter reads, and counts the kernel too),
which `none` carries as well, so the comparison is of net instructions: a tracer's most frequent count minus
none's, on each side. The most frequent count is the fast path (a tracer's occasional slow path, such as a buffer
switch or printf's flush, is a different count, and the PMU's includes what the kernel executes for it).

lw and lttng-ust read CLOCK_MONOTONIC through the vDSO inside the call. Its nanosecond normalisation
(__iter_div_u64_rem) loops once more while the time since the last timekeeping update has carried past a second
boundary, which lasts at most one tick: a call there executes a few more instructions (nine on the lab's Debian 6.1
kernel). The 100 calls of one process take 0.08 ms of guest time with user-space reads and 1.2 ms with read(), so a
process that starts in that window has every call on the longer path. The lab therefore runs each PMU measurement
as several repetitions, each a process of its own, interleaved with the other tracers' (about 70 ms of guest time a
process), so that a tracer's repetitions lie far more than a tick apart; the most frequent count is taken over all
repetitions, and one repetition on the longer path cannot become the mode. Each repetition's count is printed
beside it.

DIR/pmu-read, when present, is the same PMU run with the read() fallback (perf_user_access=0), compared the same way.
Checked: none, lw and lttng-ust (when both runs have them) must agree within 2 instructions; printf is printed
and not checked: it formats a timestamp, whose digits change its count from run to run.
Usage: compare.py DIR    (exit 1 when a checked tracer disagrees or is missing from one run)
"""
import csv
import glob
import json
import os
import sys
from collections import Counter

CHECKED = ("none", "lw", "lttng-ust")
TOLERANCE = 2
# How each PMU run must have read its counters: in user space (mrs under the seqlock), or with read().
WANT = {"pmu": "rdpmc", "pmu-read": "read()"}


def counts(run, column):
    """Per tracer, {iteration: [(repetition, the column's value), ...]} of every kept call (RUN/<tracer>/events.csv);
    an iteration appears once per repetition."""
    by = {}
    paths = sorted(glob.glob(os.path.join(run, "*", "events.csv")))
    if not paths:
        raise OSError(f"no */events.csv under {run}")
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                v = row.get(column, "")
                if v not in ("", None):
                    rep = int(row.get("repetition") or 0)
                    by.setdefault(row["tracer"], {}).setdefault(int(row["iteration"]), []).append((rep, int(float(v))))
    return by


def common(a, b):
    """The (repetition, value) pairs of the iterations both runs kept: a call's path can depend on its payload
    (printf formats the iteration number, whose digits change its cost), so both sides are taken over the same
    payloads."""
    its = sorted(set(a) & set(b))
    return [x for i in its for x in a[i]], [x for i in its for x in b[i]]


def values(pairs):
    return [v for _, v in pairs]


def by_repetition(pairs):
    """The most frequent count of each repetition, in order: "180/180/189"."""
    reps = {}
    for r, v in pairs:
        reps.setdefault(r, []).append(v)
    return "/".join(str(mode(reps[r])[0]) for r in sorted(reps))


def mode(xs):
    c = Counter(xs)
    top = max(c.values())
    value = min(v for v, n in c.items() if n == top)
    return value, top / len(xs)


def method(run):
    """How the run read its counters (run.json's counters.read: rdpmc or read())."""
    try:
        with open(os.path.join(run, "run.json")) as f:
            return json.load(f).get("counters", {}).get("read", "?")
    except (OSError, ValueError):
        return "?"


def compare(d, run, step):
    """Prints one PMU run against the stepped run; returns (failed, checked tracers)."""
    try:
        pmu = counts(os.path.join(d, run), "instructions")
    except (OSError, KeyError) as e:
        print(f"FAIL cannot read {run}'s events.csv under {d}: {e}")
        return 1, []
    if "none" not in pmu:
        print(f"FAIL `none` is missing from {run}: no floor to take net counts from")
        return 1, []
    p0, s0 = (mode(values(x))[0] for x in common(pmu["none"], step["none"]))
    how, want = method(os.path.join(d, run)), WANT[run]
    print(f"{run} (counters read with {how}) against the single-stepped run:")
    failed = 0
    if how != want:
        print(f"FAIL {run} should have read its counters with {want}, not {how}")
        failed = 1
    print("net instructions per call (tracer minus none; most frequent count of each run, over the iterations both kept)")
    print(f"{'tracer':<11} {'calls':>5} {'PMU mode':>9} {'share':>6} {'stepped':>8} {'share':>6} "
          f"{'net PMU':>8} {'net step':>8} {'diff':>5}  verdict  (PMU mode per repetition)")
    tracers = list(dict.fromkeys(list(pmu) + list(step)))
    for t in tracers:
        if t not in pmu or t not in step:
            miss = "PMU" if t not in pmu else "single-step"
            verdict = "FAIL" if t in CHECKED else "not checked"
            failed += t in CHECKED
            print(f"{t:<11} missing from the {miss} run: {verdict}")
            continue
        pv, sv = common(pmu[t], step[t])
        if not pv:
            failed += t in CHECKED
            print(f"{t:<11} no iteration kept by both runs: {'FAIL' if t in CHECKED else 'not checked'}")
            continue
        (pm, ps), (sm, ss) = mode(values(pv)), mode(values(sv))
        np_, ns = pm - p0, sm - s0
        diff = np_ - ns
        if t in CHECKED:
            ok = abs(diff) <= TOLERANCE
            verdict = "agree" if ok else f"FAIL (more than {TOLERANCE} apart)"
            failed += not ok
        else:
            verdict = "agree (not checked)" if abs(diff) <= TOLERANCE else "differ (not checked)"
        print(f"{t:<11} {len(pv):>5} {pm:>9} {ps:>6.0%} {sm:>8} {ss:>6.0%} {np_:>8} {ns:>8} {diff:>+5}  {verdict}"
              f"  ({by_repetition(pv)})")
    print(f"none's own window: PMU {p0} instructions (clock and counter reads, loop, call), stepped {s0} (the call)")
    return failed, [t for t in CHECKED if t in tracers]


def main():
    d = sys.argv[1]
    try:
        step = counts(os.path.join(d, "step"), "user_instructions")
    except (OSError, KeyError) as e:
        print(f"FAIL cannot read the single-stepped run's events.csv under {d}: {e}")
        return 1
    if "none" not in step:
        print("FAIL `none` is missing from the single-stepped run: no floor to take net counts from")
        return 1
    # pmu: counters read in user space (perf_user_access=1); pmu-read: the read() fallback (perf_user_access=0).
    failed, checked = 0, 0
    for run in ("pmu", "pmu-read"):
        if run == "pmu-read" and not os.path.isdir(os.path.join(d, run)):
            continue
        f, c = compare(d, run, step)
        failed += f
        checked += len(c)
        print()
    print("timings under TCG are emulated: not compared with anything")
    print(f"{'FAIL' if failed else 'PASS'}: {checked - failed} of {checked} checked comparisons "
          f"({', '.join(CHECKED)} per PMU run) agree within {TOLERANCE}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
