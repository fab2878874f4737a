#!/usr/bin/env python3
"""scripts/docs_examples.py: its redaction is harness/tests/doc_examples.rs's (the same cases as
that file's `redaction_drops_figures_not_words`), and its refresh puts new lines in the places of
the shown ones, `...` where lines are cut, `? N` for a non-zero exit, and stops on a shown line
the tool no longer prints.
Run: python3 scripts/tests/docs_examples_test.py (exits 1 on the first failure)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import docs_examples as d  # noqa: E402

CASES = [
    ("lw           1   20000         0       44.9", "lw[..]"),
    ("clock Tsc: resolution 10.0 ns, mean 18.2 ns", "clock Tsc: resolution[..], mean[..]"),
    ("slow path every 810 events (+1.30 µs, 0.12%)", "slow path every[..]events ([..],[..]%)"),
    ("printf at 1 thread(s), x1.48, p99 ns", "printf at[..]thread(s),[..], p99 ns"),
    ("spin:200 change +11.9% [+7.5%, +14.9%]", "spin:[..]change[..]% [[..]%,[..]%]"),
    ("tracebench: 0.1.0 (703abe718d89)", "tracebench:[..]([..])"),
]
for raw, want in CASES:
    got = d.redact(raw)
    if got != want:
        sys.exit(f"redact({raw!r}) = {got!r}, want {want!r}")

head = "#  tracer  net ns (range)  p50 ns  p99 ns  paths: every (extra, calls)  tail"
shown = [head, "1  lw                25.1    40.1    50.1  fast path only               84% fast spread",
         "none: single code path (100.0% of calls, median 17.7 ns)[..]"]
new = "\n".join([
    "a warning",
    head.replace("  tail", "          tail"),
    "1  lw                24.0    40.1    50.1  ~390 (+331 ns, 0.28%)                 100% no path",
    "net: ...",
    "none: single code path (100.0% of calls, median 20.2 ns); 1 outlier (0.005%) on no path",
    "the end",
])
out = d.refresh("$ tracebench report demo", 1, new, shown)
want = ["? 1", "...", head.replace("  tail", "          tail"),
        "1  lw                24.0    40.1    50.1  ~390 (+331 ns, 0.28%)                 100% no path",
        "...", "none: single code path (100.0% of calls, median 20.2 ns)[..]", "..."]
if out != want:
    sys.exit(f"refresh gave\n{out}\nwant\n{want}")
try:
    d.refresh("$ tracebench report demo", 0, "something else\n", ["order: decided, lw < printf"])
    sys.exit("refresh must stop on a shown line the tool no longer prints")
except SystemExit as e:
    if "no longer prints" not in str(e):
        raise
print("docs_examples_test: ok")
