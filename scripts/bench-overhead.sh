#!/usr/bin/env bash
# `make bench-overhead`: the fixed cost of a measuring process.
#
# For none, lw, printf and lttng-ust: the wall time of `tracebench run -n N` (one process, one
# cell), against the wall time per repetition of `tracebench run -n N --repeats K` (one parent,
# K cells): their ratio is what a separate run costs beyond a repetition. The two are
# interleaved round by round (single, repeats, single, repeats, ...) so that a neighbour's load
# falls on both alike; medians over ROUNDS rounds. Then the median seconds per phase of the
# single runs (run.json's `timings`), and the interleaved gate's pairs per second on lttng-ust
# (both sides the same command, K pairs).
#
# Before each timed run the script waits until no `tracebench-rel` process lives: a run hands
# the release of the detector's tracepoints to that background process (harness/src/
# disturbance/sources.rs, `KeepAlive`), which takes about 0.5 s after the run; a run started
# meanwhile waits for the kernel's event mutex in its first perf_event_open calls. Runs in a
# tight loop pay some of that; the `detector_hold` phase shows it.
#
# Environment: BIN (default target/release/tracebench), N (5000), K (5: --repeats), ROUNDS (5),
# GATE_K (8: gate pairs), TRACERS (default "none lw printf lttng-ust", those available).
set -euo pipefail

BIN=${BIN:-target/release/tracebench}
N=${N:-5000}
K=${K:-5}
ROUNDS=${ROUNDS:-5}
GATE_K=${GATE_K:-8}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "bench-overhead: $BIN is not built (make build)" >&2; exit 2; }

# A private work directory (mkdtemp: random name, 0700), removed on any exit.
WORK=$(mktemp -d -t tracebench-overhead-XXXXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

available() { "$BIN" list 2>/dev/null | awk -v t="$1" '$1 == t && $2 == "available"' | grep -q .; }
TRACERS=${TRACERS:-"none lw printf lttng-ust"}
picked=()
for t in $TRACERS; do
    if available "$t"; then picked+=("$t"); else echo "bench-overhead: $t is not available here; skipped" >&2; fi
done

# Waits (up to 5 s) until no releaser of an earlier run is alive (zombies do not count: PID 1
# reaps late).
settle() {
    local i p state
    for i in $(seq 100); do
        local live=0
        for p in $(pgrep -x tracebench-rel 2>/dev/null || true); do
            state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null || echo Z)
            [ "$state" = Z ] || live=1
        done
        [ $live = 0 ] && return 0
        sleep 0.05
    done
}

now() { date +%s.%N; }
# wall DIR CMD...: runs CMD, prints its wall seconds; fails the script if CMD fails.
wall() {
    local t0 t1
    t0=$(now)
    "$@" >"$WORK/last.log" 2>&1 || { echo "bench-overhead: failed: $* ($(tail -1 "$WORK/last.log"))" >&2; exit 1; }
    t1=$(now)
    echo "$t1 - $t0" | bc -l
}

# Other processes that hold perf events (another run's detector or held tracepoints): while one
# holds the detector's tracepoints, closing ours costs no grace period, so a run without the
# background release looks as cheap as one with it. Said, so that two tables can be compared.
holders() {
    local p n out=""
    for p in /proc/[0-9]*; do
        n=$(find "$p/fd" -maxdepth 1 -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l)
        [ "$n" -gt 0 ] && out="$out $(basename "$p")($(cat "$p/comm" 2>/dev/null), $n)"
    done
    echo "${out:- none}"
}
echo "bench-overhead: $BIN, -n $N, --repeats $K, $ROUNDS rounds; load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs" >&2
echo "bench-overhead: processes holding perf events before:$(holders)" >&2
: >"$WORK/walls.tsv"
for r in $(seq "$ROUNDS"); do
    for t in "${picked[@]}"; do
        settle
        s=$(wall "$BIN" run --tracer "$t" -n "$N" --quiet --out "$WORK/s-$t-$r")
        settle
        m=$(wall "$BIN" run --tracer "$t" -n "$N" --repeats "$K" --quiet --out "$WORK/m-$t-$r")
        printf '%s\t%s\t%s\t%s\n' "$t" "$r" "$s" "$m" >>"$WORK/walls.tsv"
    done
done

gate_line="gate: skipped (lttng-ust not available)"
if printf '%s\n' "${picked[@]}" | grep -qx lttng-ust; then
    settle
    cmd="tracebench run -q --tracer lttng-ust --label ust -n $N"
    g=$(PATH="$(dirname "$BIN"):$PATH" wall "$BIN" gate --interleave --repeats "$GATE_K" --baseline-cmd "$cmd" --candidate-cmd "$cmd")
    gate_line=$(echo "$GATE_K $g" | awk '{printf "gate --interleave on lttng-ust: %d pairs in %.2f s = %.2f pairs/s (%.3f s a pair)", $1, $2, $1/$2, $2/$1}')
fi

python3 - "$WORK" "$K" <<'EOF'
import glob, json, os, statistics, sys
work, k = sys.argv[1], int(sys.argv[2])
rows = [l.split("\t") for l in open(os.path.join(work, "walls.tsv")).read().splitlines()]
tracers = list(dict.fromkeys(r[0] for r in rows))
print(f"{'tracer':<10} {'run -n (s)':>11} {'--repeats ' + str(k) + ' (s)':>16} {'per rep (s)':>12} {'run / rep':>10}")
for t in tracers:
    s = statistics.median(float(r[2]) for r in rows if r[0] == t)
    m = statistics.median(float(r[3]) for r in rows if r[0] == t)
    print(f"{t:<10} {s:>11.3f} {m:>16.3f} {m / k:>12.3f} {s / (m / k):>9.2f}x")
phases = {}
for t in tracers:
    for f in glob.glob(os.path.join(work, f"s-{t}-*", "run.json")):
        tim = json.load(open(f)).get("timings") or {}
        for name, v in tim.items():
            if name == "cell":
                for c, x in v.items():
                    phases.setdefault((t, "cell." + c), []).append(x)
            else:
                phases.setdefault((t, name), []).append(v)
# The run's order (run.json's keys are sorted); any other name after them.
order = ["plan", "reap_leftovers", "detector_hold", "calibrate", "host", "counters", "prepare", "guards", "cells",
         "cell.tracer_setup", "cell.thread_setup", "cell.warmup", "cell.timed", "cell.threads", "cell.after_run",
         "cell.tracer_teardown", "cell.write_rows", "cell.process", "guards_release", "merge", "system_checks", "total"]
names = [n for n in order if any(k == n for (_, k) in phases)]
names += [n for n in dict.fromkeys(k for (_, k) in phases) if n not in names]
if not names:
    print("(no run.json timings: this tracebench predates --timings)")
else:
    print()
    print("median seconds per phase of `run -n` (run.json timings; cell.*: inside the measuring process)")
    print(f"{'phase':<22}" + "".join(f"{t:>11}" for t in tracers))
    for n in names:
        print(f"{n:<22}" + "".join(
            f"{statistics.median(phases[(t, n)]):>11.4f}" if (t, n) in phases else f"{'-':>11}" for t in tracers))
EOF
echo
echo "$gate_line"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); processes holding perf events after:$(holders)"
