#!/usr/bin/env bash
# Machine phases injected for real: a CPU hog that comes and goes on the measuring
# core while `tracebench run` measures a tracer, then what the report says of the levels it dates:
# the machine's, the tracer's or undecided. Prints one line per round and the tally.
#   ROUNDS=10 N=200000 TRACER=lw bash scripts/machine-phase.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TB=${TB:-target/release/tracebench}
ROUNDS=${ROUNDS:-10}
N=${N:-200000}
TRACER=${TRACER:-lw}
CPU=${CPU:-1}
ON=${ON:-0.3}
OFF=${OFF:-0.3}
work=$(mktemp -d)
hog=""
cleanup() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM
machine=0 tracer=0 undecided=0 none=0
for r in $(seq 1 "$ROUNDS"); do
  # The hog: busy for $ON s, idle for $OFF s, on the measuring core, for as long as the run lasts.
  taskset -c "$CPU" bash -c "while :; do timeout $ON bash -c 'while :; do :; done'; sleep $OFF; done" &
  hog=$!
  out="$work/r$r"
  "$TB" run --tracer "$TRACER" -n "$N" --cpu "$CPU" --quiet --out "$out" >/dev/null
  kill "$hog"; wait "$hog" 2>/dev/null || true; hog=""
  "$TB" report "$out" >/dev/null
  verdict=$(python3 - "$out/report.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
lv = [l for t in j["tracers"] for m in t["metrics"] if m["metric"] == "latency"
      for f in m["findings"] if f["kind"] == "dated_levels" for l in f["levels"]]
by = [l["attribution"]["by"] for l in lv]
if not by: print("none", 0)
elif all(b == "machine" for b in by): print("machine", len(by))
elif "tracer" in by and "machine" not in by and "undecided" not in by: print("tracer", len(by))
elif "machine" in by and "tracer" not in by: print("machine", len(by))
else: print("undecided", len(by))
PY
)
  set -- $verdict
  echo "round $r: $1 ($2 dated levels)"
  case $1 in machine) machine=$((machine+1));; tracer) tracer=$((tracer+1));; undecided) undecided=$((undecided+1));; *) none=$((none+1));; esac
done
echo "hog ${ON}s on / ${OFF}s off on cpu $CPU, $TRACER, $ROUNDS rounds of $N calls: the machine's $machine, the tracer's $tracer, undecided $undecided, no dated level $none"
