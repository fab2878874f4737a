#!/usr/bin/env bash
# The single-step rate (issue 38: recording where each instruction goes must not slow the
# stepping by more than 10%): microseconds per step of `run --instructions singlestep`.
#   scripts/step-rate.sh [BIN] [TRACER] [N]
# Runs TRACER stepped with N and 4N calls and divides the difference in wall time by the
# difference in steps (the sum of user_instructions), so the set-up and the unstepped warm-up,
# the same in both runs, cancel. Results go to a mkdtemp directory, removed at the end.
set -euo pipefail
bin=${1:-target/release/tracebench}
tracer=${2:-printf}
n=${3:-100}
[ -x "$bin" ] || { echo "step-rate: $bin is not an executable (build it: cargo build --release)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # calls -> "seconds steps"
  local out=$tmp/n$1 t0 t1
  t0=$(date +%s.%N)
  "$bin" run --instructions singlestep --tracer "$tracer" -n "$1" --out "$out" >/dev/null
  t1=$(date +%s.%N)
  local steps
  steps=$(python3 - "$out" <<'PY'
import csv, glob, sys
print(sum(int(r["user_instructions"]) for f in glob.glob(sys.argv[1] + "/*/events.csv") for r in csv.DictReader(open(f))))
PY
)
  echo "$(echo "$t1 - $t0" | bc) $steps"
}
read -r s1 k1 < <(run "$n")
read -r s2 k2 < <(run $((4 * n)))
python3 - "$s1" "$k1" "$s2" "$k2" "$tracer" <<'PY'
import sys
s1, k1, s2, k2 = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
us = (s2 - s1) / (k2 - k1) * 1e6
print(f"step-rate: {sys.argv[5]}: {k2 - k1} more steps in {s2 - s1:.2f} s more: {us:.2f} us per step, {1e6 / us:.0f} steps per second")
PY
