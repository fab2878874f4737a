#!/usr/bin/env python3
"""Checks of a kernel-lab results directory (scripts/kernel-lab/test.sh). Prints PASS/FAIL/SKIP lines and
'N passed, N failed'; exits 1 when a check failed.

For every kernel tracer: the module loaded, the tracer attached, the tracer saw exactly the events the loop fired
(by the tracer's own output), the samples came back through the ABI as events.csv and a summary row; and the bad
ioctls returned errors with the guest still alive."""
import csv
import json
import os
import re
import sys

# What a healthy kernel log never says: BUG/Oops/WARN, lockups, RCU stalls, hung tasks.
BAD_WORDS = ("BUG:", "Oops", "WARNING:", "general protection", "soft lockup", "hard LOCKUP", "RCU stall",
             "detected stall", "blocked for more than")
FUZZ_MIN_CALLS = 10000
LOOP_ROWS = ["none", "ftrace", "ftrace-local", "ebpf", "perf", "lttng", "systemtap"]
SYSCALL_ROWS = ["ioctl", "ioctl-ftrace", "ioctl-strace", "ioctl-lttng"]
passed = failed = 0


def res(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


def kv(path):
    d = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                d[k] = v
    return d


def to_int(v, default=-1):
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def tracebench_bin():
    """The host's tracebench binary for `tracebench report`: $TRACEBENCH_BIN, else the lab's release build."""
    cands = [os.environ.get("TRACEBENCH_BIN", "")]
    cache = os.environ.get("KERNEL_LAB_CACHE") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                               "../../.cache/kernel-lab")
    for t in (os.environ.get("CARGO_TARGET_DIR"), os.path.join(cache, "build", "cargo-target")):
        if t:
            cands.append(os.path.join(t, "release", "tracebench"))
    return next((c for c in cands if c and os.access(c, os.X_OK)), None)


def check_tracebench_kernel(lab, skips):
    """`tracebench run --kernel --tracer none,ftrace,perf` run by the real CLI in the guest (lab/tracebench-kernel)."""
    if "tracebench-kernel" in skips:
        print(f"SKIP tracebench-kernel: {skips['tracebench-kernel']}")
        return
    tb = os.path.join(lab, "tracebench-kernel")
    log = open(os.path.join(lab, "tracebench-kernel.log")).read() if os.path.exists(
        os.path.join(lab, "tracebench-kernel.log")) else ""
    rc = log.strip().splitlines()[-1] if log.strip() else "no log"
    res(rc == "rc=0", f"tracebench run --kernel in the guest exited 0 ({rc}"
        + ("" if rc == "rc=0" else f"; {' | '.join(log.strip().splitlines()[-4:-1])}") + ")")
    try:
        run = json.load(open(os.path.join(tb, "run.json")))
    except Exception as e:  # noqa: BLE001 - any failure to read is a failed check
        res(False, f"tracebench-kernel: run.json readable ({e})")
        return
    res(run.get("mode") == "kernel", f"tracebench-kernel: run.json mode = {run.get('mode')!r} (want 'kernel')")
    summary = {}
    sp = os.path.join(tb, "summary.csv")
    if os.path.exists(sp):
        with open(sp) as f:
            for r in csv.DictReader(f):
                summary[r["tracer"]] = r
    dirs = {t.get("name"): t.get("dir") for t in run.get("tracers", [])}
    want = 2000
    for row in ("none", "ftrace", "perf"):
        s = summary.get(row)
        res(s is not None and to_int(s["kept"]) == want and s["mean_ns"] != "",
            f"tracebench-kernel: summary.csv row {row} (kept={s['kept'] if s else '-'}, want {want}; "
            f"mean={s['mean_ns'] if s else '-'} ns)")
        ep = os.path.join(tb, dirs.get(row) or row, "events.csv")
        n = 0
        if os.path.exists(ep):
            with open(ep) as f:
                n = sum(1 for e in csv.DictReader(f) if float(e["latency_ns"]) >= 0 and e["tracer"] == row)
        res(n == want, f"tracebench-kernel: {row}/events.csv has {n} samples (want {want})")
    ip = os.path.join(lab, "tracebench-instances.txt")
    left = open(ip).read().split() if os.path.exists(ip) else ["(tracebench-instances.txt missing)"]
    res(not left, "tracebench-kernel: no ftrace instance left in tracefs after the run" +
        (f" (found {left})" if left else ""))
    exe = tracebench_bin()
    if not exe:
        print("SKIP tracebench-kernel report: no host tracebench binary (set TRACEBENCH_BIN)")
        return
    import shutil
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        cp = os.path.join(tmp, "r")
        shutil.copytree(tb, cp)
        p = subprocess.run([exe, "report", cp], capture_output=True, text=True)
        res(p.returncode == 0 and os.path.exists(os.path.join(cp, "report.md")),
            f"tracebench report on the guest's results (exit {p.returncode}"
            + ("" if p.returncode == 0 else f": {p.stderr.strip().splitlines()[-1:]}") + ")")
        res("No timing comparison with the survey" in p.stdout and "Departs from the survey" not in p.stdout,
            "tracebench report compares no emulated timing with the survey")


def read(path):
    return open(path).read() if os.path.exists(path) else ""


def check_robustness(lab):
    """Robustness: the build had no warning; the fuzz made its calls; two RUNs at once, SIGKILL mid-run, open without
    CAP_PERFMON and rmmod while open behaved; a valid run after each was correct; dmesg stayed clean after each."""
    status = read(os.path.join(lab, "kbench-build.status")).strip()
    res(status == "clean", f"kbench.ko built without compiler warnings ({status or 'no build status'}; "
        "lab/kbench-build.log)")
    fz = read(os.path.join(lab, "fuzz.txt"))
    m = re.search(r"^fuzz_calls=(\d+)", fz, re.M)
    calls = int(m.group(1)) if m else 0
    figures = [ln for ln in fz.splitlines() if ln.startswith("fuzz: calls=") or ln.startswith("fuzz: results:")]
    res("rc=0" in fz and calls >= FUZZ_MIN_CALLS,
        f"fuzz: {calls} random and mutated ioctls (want >= {FUZZ_MIN_CALLS}): {' | '.join(figures) or 'no output'}")
    # Bad input gets EINVAL/EFAULT/ENOTTY, a READ before any run ENODATA, a huge legal run maybe ENOMEM. Anything
    # else (EBUSY: a run lock left held; EIO, ...) means the module misbehaved.
    m = re.search(r"^fuzz: results: (.*)$", fz, re.M)
    seen_errnos = {kv.split("=")[0] for kv in m.group(1).split()} - {"ok"} if m else set()
    odd = sorted(seen_errnos - {"EINVAL", "EFAULT", "ENOTTY", "ENODATA", "ENOMEM"})
    res(m is not None and not odd, "fuzz: only EINVAL, EFAULT, ENOTTY, ENODATA or ENOMEM as errors" +
        (f" (also {', '.join(odd)})" if odd else ""))
    rb = read(os.path.join(lab, "robust.txt"))
    seen = set()
    for ln in rb.splitlines():
        if ln.startswith(("PASS ", "FAIL ")):
            res(ln.startswith("PASS "), ln[5:])
            seen.add(ln[5:].split(":")[0])
    for t in ("fuzz", "busy", "kill", "eperm", "rmmod-open"):
        if t not in seen:
            res(False, f"{t}: no result in lab/robust.txt")
    for t in ("fuzz", "busy", "kill", "eperm", "rmmod-open"):
        dm = read(os.path.join(lab, f"dmesg-after-{t}.txt"))
        bad = [w for w in BAD_WORDS if w in dm]
        res(dm != "" and not bad, f"dmesg after {t}: no BUG/Oops/WARNING/lockup/stall" +
            (f" (found {bad})" if bad else "" if dm else " (not saved)"))


def main():
    d = sys.argv[1]
    wanted = sys.argv[2].split(",") if len(sys.argv) > 2 else LOOP_ROWS + SYSCALL_ROWS
    lab = os.path.join(d, "lab")
    skips = {}
    if os.path.exists(os.path.join(lab, "skips.txt")):
        for line in open(os.path.join(lab, "skips.txt")):
            k, _, why = line.strip().partition(" ")
            skips[k] = why
    # Rows whose set-up failed in the guest (guest.sh `broken`): failures, not skips.
    broken = {}
    if os.path.exists(os.path.join(lab, "broken.txt")):
        for line in open(os.path.join(lab, "broken.txt")):
            k, _, why = line.strip().partition(" ")
            broken[k] = why
    done = open(os.path.join(lab, "done")).read().strip() if os.path.exists(os.path.join(lab, "done")) else ""
    res(done == "ok", f"guest ran to the end (lab/done = {done or 'missing'})")
    mod = open(os.path.join(lab, "module.txt")).read().split() if os.path.exists(os.path.join(lab, "module.txt")) else []
    res("loaded" in mod, "kbench.ko loaded in the guest")
    res("600" in mod and "root" in mod, f"/dev/kbench is root-only 0600 ({' '.join(mod[1:3])})")
    res("unloaded" in mod, "kbench.ko unloaded at the end (rmmod)")

    summary = {}
    sp = os.path.join(d, "summary.csv")
    if os.path.exists(sp):
        with open(sp) as f:
            for r in csv.DictReader(f):
                summary[r["tracer"]] = r
    try:
        run = json.load(open(os.path.join(d, "run.json")))
        names = {t["name"] for t in run["tracers"]}
        res(names == set(summary), "run.json lists the rows of summary.csv")
    except Exception as e:  # noqa: BLE001 - any failure to read is a failed check
        run = {}
        res(False, f"run.json readable ({e})")

    if len(sys.argv) <= 2 and run.get("requested_rows"):
        wanted = run["requested_rows"]
    for row in wanted:
        rd = os.path.join(d, row)
        if row in broken:
            res(False, f"{row}: {broken[row]}")
            continue
        if row in skips:
            print(f"SKIP {row}: {skips[row]}")
            continue
        if not os.path.isdir(rd):
            res(False, f"{row}: no results (neither a row directory nor a skip reason)")
            continue
        meta = kv(os.path.join(rd, "meta.txt"))
        check = kv(os.path.join(rd, "check.txt"))
        n, w, fired = to_int(meta.get("iterations")), to_int(meta.get("warmup")), to_int(meta.get("fired"))
        with open(os.path.join(rd, "events.csv")) as f:
            ev = list(csv.DictReader(f))
        kept = sum(to_int(meta.get(f"cpu{i}_kept"), 0) for i in range(64)) if meta.get("kind") == "loop" else len(ev)
        res(len(ev) == kept == n and all(float(e["latency_ns"]) >= 0 for e in ev),
            f"{row}: {len(ev)} samples came back through the ABI into events.csv (want {n})")
        s = summary.get(row)
        res(s is not None and to_int(s["kept"]) == len(ev) and s["mean_ns"] != "",
            f"{row}: summary.csv row (kept={s['kept'] if s else '-'}, mean={s['mean_ns'] if s else '-'} ns)")
        if meta.get("kind") == "loop":
            disc = sum(to_int(meta.get(f"cpu{i}_discarded"), 0) for i in range(64))
            res(fired == w + n + disc, f"{row}: loop fired {fired} = warm-up {w} + kept {n} + discarded {disc}")
            # Counters: unsupported ones are reported, never written as zeros.
            cols = [c for c in (ev[0].keys() if ev else []) if c not in
                    ("tracer", "threads", "thread", "cpu", "iteration", "latency_ns", "repetition", "counter_set")]
            status = {k[len("counter_"):]: v for k, v in meta.items() if k.startswith("counter_")}
            res(all((c in cols) == (v == "ok") for c, v in status.items()),
                f"{row}: counter columns match counter status ({', '.join(f'{c}: {v}' for c, v in status.items())})")
        t = check.get("tracer_count")
        if row in ("none", "ioctl"):
            continue
        if not check:
            res(False, f"{row}: the tracer left no output to check (check.txt missing)")
        elif row in ("ftrace", "ftrace-local", "ebpf", "perf", "systemtap"):
            res(to_int(t) == fired, f"{row}: the tracer saw {t} events, the loop fired {fired} ({check.get('method')})")
            res(to_int(check.get("last_seq")) == fired - 1,
                f"{row}: last payload the tracer recorded is seq {check.get('last_seq')} (want {fired - 1})")
        elif row == "lttng":
            res(to_int(check.get("last_seq")) == fired - 1 and to_int(check.get("gaps")) == 0
                and to_int(check.get("snapshot_events")) > 0,
                f"lttng: snapshot holds {check.get('snapshot_events')} events, seq {check.get('first_seq')}.."
                f"{check.get('last_seq')} without gaps={check.get('gaps')} (want last {fired - 1}, no gap)")
        elif row == "ioctl-ftrace":
            res(to_int(t) >= to_int(check.get("expect_min")),
                f"ioctl-ftrace: {t} syscall entries+exits written (want >= {check.get('expect_min')})")
        elif row == "ioctl-strace":
            res(to_int(t) == to_int(check.get("expect")),
                f"ioctl-strace: strace saw {t} empty ioctls (want {check.get('expect')})")
        elif row == "ioctl-lttng":
            res(to_int(t) > 0, f"ioctl-lttng: {t} syscall_entry_ioctl events in the snapshot")

    rc_dir = os.path.join(lab, "rust-client")
    if "rust-client" in skips:
        print(f"SKIP rust-client: {skips['rust-client']}")
    else:
        m = kv(os.path.join(rc_dir, "meta.txt"))
        rows = 0
        if os.path.exists(os.path.join(rc_dir, "events.csv")):
            with open(os.path.join(rc_dir, "events.csv")) as f:
                rows = sum(1 for _ in csv.DictReader(f))
        n = to_int(m.get("iterations"))
        res(rows == n == to_int(m.get("kept")) and to_int(m.get("fired")) >= n + to_int(m.get("warmup"))
            and m.get("empty_ioctl") == "ok",
            f"Rust client (harness/src/kernel/) drove the module: {rows} samples in events.csv (want {n}), "
            f"fired {m.get('fired')}, empty ioctl {m.get('empty_ioctl')}")

    check_tracebench_kernel(lab, skips)

    bad = open(os.path.join(lab, "bad.txt")).read() if os.path.exists(os.path.join(lab, "bad.txt")) else ""
    res("rc=0" in bad and ", 0 failed" in bad, "bad ioctls (oversized counts, bad pointers, offline CPU) "
        "return errors: " + (bad.strip().splitlines()[-2] if bad.strip() else "no output"))
    res(os.path.exists(os.path.join(lab, "alive.txt")), "guest alive and module usable after the bad ioctls")
    check_robustness(lab)
    dm = open(os.path.join(lab, "dmesg.txt")).read() if os.path.exists(os.path.join(lab, "dmesg.txt")) else ""
    bad_words = [w for w in BAD_WORDS if w in dm]
    res(dm != "" and not bad_words, "no kernel BUG/Oops/WARNING/lockup/stall in the guest's dmesg" +
        (f" (found {bad_words})" if bad_words else "" if dm else " (dmesg.txt missing)"))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
