#!/usr/bin/env python3
"""Turn what the kernel lab's guest left on the 9p share into an ordinary tracebench results directory.

share/rows/<dir>/{events.csv,discarded.csv,meta.txt,check.txt,...}  ->  OUT/<dir>/..., OUT/summary.csv,
OUT/repetitions.csv, OUT/run.json, and OUT/lab/ (guest log, console, bad-ioctl results, skips).
Statistics as in harness/src/stats: sample standard deviation, linearly interpolated percentiles.
"""
import argparse
import csv
import json
import math
import os
import platform
import shutil
import socket
import sys

STATS = ["kept", "discarded", "mean_ns", "std_ns", "p50_ns", "p90_ns", "p99_ns", "min_ns", "max_ns"]
FIXED_EVENT_COLS = {"tracer", "threads", "thread", "cpu", "iteration", "latency_ns", "repetition", "counter_set"}
# Row order of the survey's tables (7.1 and Table 5).
ORDER = ["none", "ftrace", "ftrace-local", "lttng", "ebpf", "perf", "systemtap",
         "ioctl", "ioctl-ftrace", "ioctl-lttng", "ioctl-strace"]


def pct(sorted_x, p):
    if not sorted_x:
        return float("nan")
    r = p / 100.0 * (len(sorted_x) - 1)
    lo = math.floor(r)
    hi = min(lo + 1, len(sorted_x) - 1)
    return sorted_x[lo] + (sorted_x[hi] - sorted_x[lo]) * (r - lo)


def summarize(x):
    n = len(x)
    if n == 0:
        return dict(mean_ns="", std_ns="", p50_ns="", p90_ns="", p99_ns="", min_ns="", max_ns="")
    m = sum(x) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in x) / (n - 1)) if n > 1 else 0.0
    s = sorted(x)
    f = lambda v: f"{v:.3f}"
    return dict(mean_ns=f(m), std_ns=f(sd), p50_ns=f(pct(s, 50)), p90_ns=f(pct(s, 90)), p99_ns=f(pct(s, 99)),
                min_ns=f(s[0]), max_ns=f(s[-1]))


def read_kv(path):
    d = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                d[k] = v
    return d


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--warmup", type=int, required=True)
    ap.add_argument("--cmdline", default="")
    ap.add_argument("--tracers", default="")
    ap.add_argument("--console", default="")
    a = ap.parse_args()

    rows_dir = os.path.join(a.share, "rows")
    rows = sorted(os.listdir(rows_dir)) if os.path.isdir(rows_dir) else []
    rows = [r for r in rows if os.path.exists(os.path.join(rows_dir, r, "events.csv"))]
    rows.sort(key=lambda r: (ORDER.index(r) if r in ORDER else len(ORDER), r))
    os.makedirs(a.out)

    # Counter columns: the union, in first-seen order, of the counters every row could read.
    counters = []
    per_row = {}
    for r in rows:
        with open(os.path.join(rows_dir, r, "events.csv")) as f:
            rd = csv.DictReader(f)
            cols = [c for c in rd.fieldnames if c not in FIXED_EVENT_COLS]
            lat, ctr = [], {c: [] for c in cols}
            threads = "1"
            for row in rd:
                lat.append(float(row["latency_ns"]))
                threads = row["threads"]
                for c in cols:
                    ctr[c].append(float(row[c]))
        disc = 0
        dp = os.path.join(rows_dir, r, "discarded.csv")
        if os.path.exists(dp):
            with open(dp) as f:
                disc = sum(1 for _ in csv.DictReader(f))
        for c in cols:
            if c not in counters:
                counters.append(c)
        per_row[r] = (threads, lat, ctr, disc)
        shutil.copytree(os.path.join(rows_dir, r), os.path.join(a.out, r))

    head = ["tracer", "threads"] + STATS
    lines = [",".join(head + [f"{c}_mean" for c in counters])]
    rep_lines = [",".join(["tracer", "threads", "repetition"] + STATS + [f"{c}_mean" for c in counters])]
    for r in rows:
        threads, lat, ctr, disc = per_row[r]
        s = summarize(lat)
        vals = [str(len(lat)), str(disc)] + [s[k] for k in STATS[2:]]
        cm = [f"{sum(ctr[c]) / len(ctr[c]):.3f}" if c in ctr and ctr[c] else "" for c in counters]
        lines.append(",".join([r, threads] + vals + cm))
        rep_lines.append(",".join([r, threads, "0"] + vals + cm))
    write_atomic(os.path.join(a.out, "summary.csv"), "\n".join(lines) + "\n")
    write_atomic(os.path.join(a.out, "repetitions.csv"), "\n".join(rep_lines) + "\n")

    lab = os.path.join(a.out, "lab")
    os.makedirs(lab)
    for name in (["guest.log", "bad.txt", "module.txt", "info.txt", "skips.txt", "broken.txt", "dmesg.txt", "clocksource.txt",
                 "alive.txt", "done", "lttng-sessiond.log", "tracebench-kernel.log",
                 "tracebench-instances.txt", "fuzz.txt", "robust.txt", "kbench-build.log", "kbench-build.status"]
                 + sorted(f for f in os.listdir(a.share) if f.startswith("dmesg-after-"))):
        p = os.path.join(a.share, name)
        if os.path.exists(p):
            shutil.copy(p, os.path.join(lab, name))
    for sub in ["rust-client", "tracebench-kernel"]:
        if os.path.isdir(os.path.join(a.share, sub)):
            shutil.copytree(os.path.join(a.share, sub), os.path.join(lab, sub))
    if a.console and os.path.exists(a.console):
        shutil.copy(a.console, os.path.join(lab, "console.log"))

    info = read_kv(os.path.join(a.share, "info.txt"))
    tracers = []
    clock = None
    counter_status = {}
    for r in rows:
        meta = read_kv(os.path.join(rows_dir, r, "meta.txt"))
        check = read_kv(os.path.join(rows_dir, r, "check.txt"))
        clock = clock or (meta.get("clock") if meta.get("kind") == "loop" else None)
        for k, v in meta.items():
            if k.startswith("counter_"):
                counter_status[k[len("counter_"):]] = v
        config = {"kind": meta.get("kind"), "event": meta.get("event"), "payload_bytes": meta.get("payload"),
                  "loop_clock": meta.get("clock"), "fired": meta.get("fired"), "tracer_check": check}
        if check.get("clock"):
            config["clock"] = check["clock"]  # ftrace's trace_clock; `tracebench report` labels rows with it
        tracers.append({"name": r, "spec": r, "dir": r, "version": f"kernel {a.kver}", "config": config})
    skips = {}
    sp = os.path.join(a.share, "skips.txt")
    if os.path.exists(sp):
        for line in open(sp):
            k, _, why = line.strip().partition(" ")
            skips[k] = why
    run = {
        "tool": "tracebench kernel lab (scripts/kernel-lab)",
        "mode": "kernel",
        "purpose": "functional test under qemu TCG: timings are emulated, not overhead figures",
        "host": {"hostname": socket.gethostname(), "kernel": platform.release(), "machine": platform.machine(),
                 "guest_kernel": a.kver, "guest": "qemu TCG, 1 vCPU", "emulated": True},
        "clock": {"source": clock or info.get("clock"),
                  "tsc_hz": int(info["tsc_khz"]) * 1000 if info.get("tsc_khz", "0") not in ("", "0") else None,
                  "guest_clocksource": open(os.path.join(a.share, "clocksource.txt")).read().strip()
                  if os.path.exists(os.path.join(a.share, "clocksource.txt")) else None},
        "counters": [{"name": k, "status": v} for k, v in counter_status.items()],
        "iterations": a.n,
        "warmup": {"iterations": a.warmup, "criterion": "fixed count, fills the tracer buffers (survey 6.2.4)"},
        "repetitions": 1,
        "tracers": tracers,
        "requested_rows": [t for t in a.tracers.split(",") if t],
        "skipped": skips,
        "command_line": a.cmdline,
    }
    write_atomic(os.path.join(a.out, "run.json"), json.dumps(run, indent=2) + "\n")


if __name__ == "__main__":
    main()
