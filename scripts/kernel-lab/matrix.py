#!/usr/bin/env python3
"""The kernel lab's merged view: several kernel-lab results directories (one per guest kernel) side by side.

    scripts/kernel-lab/matrix.py DIR... > matrix.md

Per row (tracer): on each kernel, the kept samples, whether its functional checks passed (lab/checks.txt, written
by test.sh), and its mean under TCG relative to the same kernel's `none` row. Under TCG the timings are emulated and
there is no PMU (no instruction counts), so the only cost figure worth comparing between kernels is that ratio: it
says how much the tracer's path grew or shrank relative to the bare tracepoint on the same emulator, not what it
costs on hardware. Then per kernel: the check counts, the fuzz figures and the wall time."""
import csv
import json
import os
import re
import sys


def read(path):
    return open(path).read() if os.path.exists(path) else ""


def load(d):
    run = json.loads(read(os.path.join(d, "run.json")) or "{}")
    summary = {}
    if os.path.exists(os.path.join(d, "summary.csv")):
        with open(os.path.join(d, "summary.csv")) as f:
            summary = {r["tracer"]: r for r in csv.DictReader(f)}
    checks = read(os.path.join(d, "lab", "checks.txt")).splitlines()
    per_row = {}
    for ln in checks:
        m = re.match(r"(PASS|FAIL) ([a-z0-9-]+): ", ln)
        if m:
            p, f = per_row.get(m.group(2), (0, 0))
            per_row[m.group(2)] = (p + (m.group(1) == "PASS"), f + (m.group(1) == "FAIL"))
    skips = run.get("skipped", {})
    fz = read(os.path.join(d, "lab", "fuzz.txt"))
    return {
        "dir": os.path.basename(d.rstrip("/")),
        "kernel": run.get("host", {}).get("guest_kernel", "?"),
        "summary": summary,
        "per_row": per_row,
        "skips": skips,
        "total": checks[-1] if checks else "no checks",
        "fuzz": " / ".join(ln[len("fuzz: "):] for ln in fz.splitlines()
                           if ln.startswith("fuzz: calls=") or ln.startswith("fuzz: results:")) or "no fuzz",
        "wall": read(os.path.join(d, "lab", "wall_seconds.txt")).strip() or "?",
        "order": [t.get("name") for t in run.get("tracers", [])] + list(skips),
    }


def main():
    ks = [load(d) for d in sys.argv[1:]]
    rows = []
    for k in ks:
        for r in k["order"]:
            if r not in rows:
                rows.append(r)
    print("# Kernel lab: kernels side by side\n")
    print("Functional test under qemu TCG: timings are emulated and there is no PMU, so no cost here is a hardware "
          "figure. `x none` is the row's mean over the same kernel's bare tracepoint (`none`) or empty ioctl "
          "(`ioctl`); checks are the row's functional checks (lab/checks.txt).\n")
    print("| row | " + " | ".join(f"{k['kernel']}: kept | checks | x none" for k in ks) + " |")
    print("|---|" + "---|---|---|" * len(ks))
    for r in rows:
        cells = []
        for k in ks:
            s = k["summary"].get(r)
            if r in k["skips"] and not s:
                cells += ["skipped", k["skips"][r].replace("|", "/"), ""]
                continue
            if not s:
                cells += ["-", "-", "-"]
                continue
            base = k["summary"].get("ioctl" if r.startswith("ioctl") else "none")
            ratio = ""
            try:
                ratio = f"{float(s['mean_ns']) / float(base['mean_ns']):.2f}" if base else ""
            except (ValueError, ZeroDivisionError):
                pass
            p, f = k["per_row"].get(r, (0, 0))
            cells += [s["kept"], f"{p} passed, {f} failed" if p + f else "none", ratio]
        print(f"| {r} | " + " | ".join(cells) + " |")
    print("\n| kernel | results | checks | fuzz | wall (s) |\n|---|---|---|---|---|")
    for k in ks:
        print(f"| {k['kernel']} | {k['dir']} | {k['total']} | {k['fuzz']} | {k['wall']} |")


if __name__ == "__main__":
    main()
