#!/usr/bin/env bash
# The single-step rate (recording where each instruction goes must not slow the
# stepping by more than 10%): microseconds per step of `run --instructions singlestep`.
#   scripts/step-rate.sh [BIN] [TRACER] [N]
# Runs TRACER stepped with N and 4N calls and divides the difference in wall time by the
# difference in steps (the sum of user_instructions), so the set-up and the unstepped warm-up,
# the same in both runs, cancel. The same with CPU time (user + system of the run and all its
# processes: the stepper's ptrace calls and the stepped thread), which other work on a shared
# machine disturbs less than wall time. Results go to a mkdtemp directory, removed at the end.
set -euo pipefail
bin=${1:-target/release/tracebench}
tracer=${2:-printf}
n=${3:-100}
[ -x "$bin" ] || { echo "step-rate: $bin is not an executable (build it: cargo build --release)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # calls -> "wall_seconds cpu_seconds steps"
  local out=$tmp/n$1 times
  times=$( { TIMEFORMAT='%R %U %S'; time "$bin" run --instructions singlestep --tracer "$tracer" -n "$1" --out "$out" >/dev/null; } 2>&1 )
  local steps
  steps=$(python3 - "$out" <<'PY'
import csv, glob, sys
print(sum(int(r["user_instructions"]) for f in glob.glob(sys.argv[1] + "/*/events.csv") for r in csv.DictReader(open(f))))
PY
)
  read -r wall user sys <<<"$(echo "$times" | tail -1)"
  echo "$wall $(echo "$user + $sys" | bc) $steps"
}
read -r w1 c1 k1 < <(run "$n")
read -r w2 c2 k2 < <(run $((4 * n)))
python3 - "$w1" "$c1" "$k1" "$w2" "$c2" "$k2" "$tracer" <<'PY'
import sys
w1, c1, k1, w2, c2, k2 = map(float, sys.argv[1:7])
us, cpu = (w2 - w1) / (k2 - k1) * 1e6, (c2 - c1) / (k2 - k1) * 1e6
print(f"step-rate: {sys.argv[7]}: {k2 - k1:.0f} more steps in {w2 - w1:.2f} s more: {us:.2f} us per step "
      f"({1e6 / us:.0f} steps per second); CPU {cpu:.2f} us per step")
PY
