#!/usr/bin/env bash
# Validates `tracebench gate` on this machine (issue 7) and prints the figures quoted in the README ("Validation on this machine").
#
#   false alarms: GATES gates of spin:200 against spin:200 (same binary)  -> at most 1 "regressed"
#   power:        GATES gates of spin:200 against spin:220 (+10%)         -> at least GATES-1 "regressed"
#   small change: GATES gates of spin:200 against spin:206 (+3%)          -> never "regressed" at 5%
#
# Every gate is interleaved (ABBA), so that a burst of noise hits both sides. Cost: 3 x GATES x 2 x K
# runs of `tracebench run -n N`; with the defaults (GATES=20, K=16, N=2000): 1920 runs, about 5 minutes on an idle machine (0.15 s
# per run), several times that while other builds load the 2 cores (about 1 s per run at load 10).
#
# Usage: scripts/bench-gate.sh            (uses target/release/tracebench; `cargo build --release` first)
# Environment: TRACEBENCH (binary), GATES, K, N, THRESHOLD (5%), CONFIDENCE (99%), OUT (kept results),
# SCENARIOS (default "same plus10 plus3").
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
  trap 'rm -rf "$OUT"' EXIT
fi

side() { echo "$BIN run -q --tracer $1 --label spin -n $N"; }

# scenario NAME BASE CAND -> prints one summary line, leaves $OUT/NAME-g.json
declare -A REG IMP UNCH INC
scenario() {
  local name=$1 base=$2 cand=$3 g rc v
  REG[$name]=0 IMP[$name]=0 UNCH[$name]=0 INC[$name]=0
  for g in $(seq 1 "$GATES"); do
    set +e
    "$BIN" gate --interleave --repeats "$K" --threshold "$THRESHOLD" --confidence "$CONFIDENCE" \
      --baseline-cmd "$(side "$base")" --candidate-cmd "$(side "$cand")" \
      --json "$OUT/$name-$g.json" >"$OUT/$name-$g.txt" 2>"$OUT/$name-$g.err"
    rc=$?
    set -e
    if [ "$rc" -ge 2 ]; then
      echo "bench-gate: gate $name #$g failed (exit $rc): $(tail -n 1 "$OUT/$name-$g.err")" >&2
      exit 2
    fi
    v=$(jq -r '.rows[0].verdict' "$OUT/$name-$g.json")
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
  "threshold $THRESHOLD, confidence $CONFIDENCE ($BIN)"
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
echo "bench-gate: $((nsc * GATES)) gates, $((nsc * GATES * 2 * K)) runs in ${secs} s; results in $OUT$([ -z "${OUT_KEEP:-}" ] && [ "${OUT#/tmp/bench-gate.}" != "$OUT" ] && echo ' (removed on exit; set OUT=DIR to keep)')"
exit $fail
