#!/usr/bin/env bash
# Validates `tracebench gate` on this machine and prints the figures quoted in docs/ci-gate.md ("Validation on this machine").
#
#   false alarms: GATES gates of spin:200 against spin:200 (same binary)  -> at most 1 "regressed"
#   power:        GATES gates of spin:200 against spin:220 (+10%)         -> at least GATES-1 "regressed"
#   small change: GATES gates of spin:200 against spin:206 (+3%)          -> never "regressed" at 5%
#
# Every gate is interleaved (ABBA), so that a burst of noise hits both sides. Cost: 3 x GATES x 2 x K
# runs of `tracebench run -n N`; with the defaults (GATES=20, K=16, N=2000): 1920 runs, about 5 minutes on an idle
# 2-core machine (0.16 s per run), several times that while other work loads the cores.
#
# Usage: scripts/bench-gate.sh            (uses target/release/tracebench; `cargo build --release` first)
# Environment: TRACEBENCH (binary), GATES, K, N, THRESHOLD (5%), CONFIDENCE (99%), OUT (kept results),
# SCENARIOS (default "same plus10 plus3"), MAX_REPEATS (passed as --max-repeats: a sequential gate),
# BURSTS=1 (noise: a background job busy-loops on 1 or all cores for 0.2-2 s at a time, with 0.2-2 s
# pauses, for the whole benchmark; the bursty load of a shared CI machine, made on purpose).
set -euo pipefail

BIN=${TRACEBENCH:-target/release/tracebench}
GATES=${GATES:-20}
K=${K:-16}
N=${N:-2000}
THRESHOLD=${THRESHOLD:-5%}
CONFIDENCE=${CONFIDENCE:-99%}
if [ ! -x "$BIN" ]; then
  echo "bench-gate: $BIN not found; run 'cargo build --release -p tracebench' or set TRACEBENCH" >&2
  exit 2
fi
command -v jq >/dev/null || { echo "bench-gate: needs jq (apt-get install jq)" >&2; exit 2; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
else
  OUT=$(mktemp -d /tmp/bench-gate.XXXXXX)
  OUT_TMP=$OUT
fi

side() { echo "$BIN run -q --tracer $1 --label spin -n $N"; }

# BURSTS=1: random bursts of CPU load on 1 or all cores (stopped on exit).
BURST_PID=
if [ "${BURSTS:-0}" = 1 ]; then
  ncpu=$(nproc)
  (
    trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
    while :; do
      d=$(awk -v r=$RANDOM 'BEGIN { printf "%.1f", 0.2 + 1.8 * r / 32767 }')
      n=$((RANDOM % 2 == 0 ? 1 : ncpu))
      for _ in $(seq 1 "$n"); do timeout "$d" sh -c 'while :; do :; done' & done
      wait
      sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.1f", 0.2 + 1.8 * r / 32767 }')"
    done
  ) &
  BURST_PID=$!
fi
cleanup() {
  [ -n "$BURST_PID" ] && kill "$BURST_PID" 2>/dev/null && wait "$BURST_PID" 2>/dev/null
  [ -n "${OUT_TMP:-}" ] && rm -rf "$OUT_TMP"
  return 0
}
trap cleanup EXIT

# scenario NAME BASE CAND -> prints one summary line, leaves $OUT/NAME-g.json
declare -A REG IMP UNCH INC
RUNS=0
scenario() {
  local name=$1 base=$2 cand=$3 g rc v
  REG[$name]=0 IMP[$name]=0 UNCH[$name]=0 INC[$name]=0
  for g in $(seq 1 "$GATES"); do
    set +e
    "$BIN" gate --interleave --repeats "$K" ${MAX_REPEATS:+--max-repeats "$MAX_REPEATS"} --threshold "$THRESHOLD" --confidence "$CONFIDENCE" \
      --baseline-cmd "$(side "$base")" --candidate-cmd "$(side "$cand")" \
      --json "$OUT/$name-$g.json" >"$OUT/$name-$g.txt" 2>"$OUT/$name-$g.err"
    rc=$?
    set -e
    if [ "$rc" -ge 2 ]; then
      echo "bench-gate: gate $name #$g failed (exit $rc): $(tail -n 1 "$OUT/$name-$g.err")" >&2
      exit 2
    fi
    v=$(jq -r '.rows[0].verdict' "$OUT/$name-$g.json")
    RUNS=$((RUNS + 2 * $(jq -r '.rows[0].n_baseline' "$OUT/$name-$g.json")))
    case $v in
      regressed) REG[$name]=$((REG[$name] + 1)) ;;
      improved) IMP[$name]=$((IMP[$name] + 1)) ;;
      unchanged) UNCH[$name]=$((UNCH[$name] + 1)) ;;
      *) INC[$name]=$((INC[$name] + 1)) ;;
    esac
    printf '  %-6s #%-2d %-12s %s\n' "$name" "$g" "$v" \
      "$(jq -r '.rows[0] | "base \(.baseline*10|round/10) ns, cand \(.candidate*10|round/10) ns, change \(.change*1000|round/10)% [\(.ci[0]*1000|round/10)%, \(.ci[1]*1000|round/10)%]"' "$OUT/$name-$g.json")"
  done
}

start=$(date +%s)
echo "bench-gate: $GATES interleaved gates per scenario, K=$K repetitions per side, N=$N iterations," \
  "threshold $THRESHOLD, confidence $CONFIDENCE${MAX_REPEATS:+, sequential up to $MAX_REPEATS}$([ "${BURSTS:-0}" = 1 ] && echo ', with load bursts') ($BIN)"
SCENARIOS=${SCENARIOS:-same plus10 plus3}
for sc in $SCENARIOS; do
  case $sc in
    same) scenario same spin:200 spin:200 ;;
    plus10) scenario plus10 spin:200 spin:220 ;;
    plus3) scenario plus3 spin:200 spin:206 ;;
    *) echo "bench-gate: unknown scenario '$sc' (same, plus10, plus3)" >&2; exit 2 ;;
  esac
done
secs=$(($(date +%s) - start))

echo
printf '%-28s %9s %9s %9s %12s   %s\n' scenario regressed improved unchanged inconclusive criterion
fail=0
row() {
  local name=$1 label=$2 crit=$3 ok=$4
  [ -n "${REG[$name]+x}" ] || return 0
  printf '%-28s %9d %9d %9d %12d   %s: %s\n' "$label" "${REG[$name]}" "${IMP[$name]}" "${UNCH[$name]}" "${INC[$name]}" \
    "$crit" "$([ "$ok" = 1 ] && echo met || echo MISSED)"
  [ "$ok" = 1 ] || fail=1
}
row same "spin:200 vs spin:200" "false alarms <= 1" "$([ "${REG[same]:-0}" -le 1 ] && echo 1 || echo 0)"
row plus10 "spin:200 vs spin:220 (+10%)" "regressed >= $((GATES - 1))" \
  "$([ "${REG[plus10]:-0}" -ge $((GATES - 1)) ] && echo 1 || echo 0)"
row plus3 "spin:200 vs spin:206 (+3%)" "regressed = 0" "$([ "${REG[plus3]:-0}" -eq 0 ] && echo 1 || echo 0)"
nsc=$(echo $SCENARIOS | wc -w)
echo "bench-gate: $((nsc * GATES)) gates, $RUNS runs in ${secs} s; results in $OUT$([ -z "${OUT_KEEP:-}" ] && [ "${OUT#/tmp/bench-gate.}" != "$OUT" ] && echo ' (removed on exit; set OUT=DIR to keep)')"
exit $fail
