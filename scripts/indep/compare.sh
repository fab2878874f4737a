#!/usr/bin/env bash
# Independent check of tracebench's LTTng, ftrace and system-call backends: runs tb-indep (a
# separate C program, see indep.c) and `tracebench run` on the same configurations, alternating
# which goes first, for several rounds; prints the median of each side's per-round medians and
# their ratio. Acceptance: tracebench within +-20% of tb-indep.
#
#   scripts/indep/compare.sh [-r ROUNDS] [-n N] [-c CPU (default 1)] [-b TRACEBENCH] [TRACER...]
#
# Default tracers: none syscall lttng-ust lttng-tracef ftrace ftrace-raw strace (those that
# cannot run here are reported and skipped). Needs root (tracefs instances).
set -euo pipefail

ROUNDS=5
N=20000
CPU=1
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TB=${TRACEBENCH:-}
while getopts "r:n:c:b:h" o; do
  case $o in
    r) ROUNDS=$OPTARG ;;
    n) N=$OPTARG ;;
    c) CPU=$OPTARG ;;
    b) TB=$OPTARG ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
TRACERS=("$@")
[ ${#TRACERS[@]} -eq 0 ] && TRACERS=(none syscall lttng-ust lttng-tracef ftrace ftrace-raw strace)

if [ -z "$TB" ]; then
  TB=${CARGO_TARGET_DIR:-$REPO/target}/release/tracebench
fi
[ -x "$TB" ] || { echo "error: $TB not found: build it with cargo build --release -p tracebench (or pass -b)" >&2; exit 1; }
make -s -C "$HERE" tb-indep >/dev/null
INDEP=$HERE/tb-indep

WORK=$(mktemp -d /tmp/tb-compare.XXXXXX)
STARTED_SESSIOND=""
SESSION=""
cleanup() {
  [ -n "$SESSION" ] && lttng destroy "$SESSION" >/dev/null 2>&1 || true
  if [ -n "$STARTED_SESSIOND" ]; then kill "$STARTED_SESSIOND" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

needs_lttng=0
for t in "${TRACERS[@]}"; do case $t in lttng-*) needs_lttng=1 ;; esac; done
if [ $needs_lttng -eq 1 ] && command -v lttng-sessiond >/dev/null; then
  if ! lttng list >/dev/null 2>&1; then
    lttng-sessiond --daemonize --no-kernel
    STARTED_SESSIOND=$(cat /var/run/lttng/lttng-sessiond.pid)
  fi
fi

# The same LTTng session set-up as the backend: snapshot, overwrite, 2 x 8 KiB per CPU, no
# monitor timer.
lttng_session() {
  local event=$1
  SESSION=tbindep-$$
  lttng create "$SESSION" --snapshot --output "$WORK/snap" >/dev/null
  lttng enable-channel -u -s "$SESSION" --overwrite --buffers-uid --subbuf-size 8k --num-subbuf 2 \
    --monitor-timer 0 tbch >/dev/null
  lttng enable-event -u -s "$SESSION" -c tbch "$event" >/dev/null
  lttng start "$SESSION" >/dev/null
}
lttng_session_end() {
  lttng destroy "$SESSION" >/dev/null
  SESSION=""
}

# Median ns of one tb-indep run.
run_indep() {
  local t=$1 out
  case $t in
    lttng-ust) lttng_session tracebench:event; out=$("$INDEP" lttng-ust "$N" "$CPU"); lttng_session_end ;;
    lttng-tracef) lttng_session 'lttng_ust_tracef:*'; out=$("$INDEP" lttng-tracef "$N" "$CPU"); lttng_session_end ;;
    strace) out=$(strace -f -qq -o /dev/null "$INDEP" syscall "$N" "$CPU") ;;
    *) out=$("$INDEP" "$t" "$N" "$CPU") ;;
  esac
  echo "$out" | awk '{print $2}'
}

# Median (p50_ns) of one `tracebench run` cell, read from summary.csv by column name.
run_tb() {
  local t=$1 dir=$WORK/tb-$RANDOM
  "$TB" run --tracer "$t" -n "$N" --cpu "$CPU" -q --out "$dir" >"$WORK/tb.log" 2>&1 || {
    echo "error: tracebench run --tracer $t failed:" >&2; tail -5 "$WORK/tb.log" >&2; return 1; }
  awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="p50_ns") c=i; next} {print $c; exit}' "$dir/summary.csv"
  rm -rf "$dir"
}

median() { sort -g | awk '{a[NR]=$1} END{if(NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }

available() {
  "$TB" list 2>/dev/null | awk -v t="$1" '$1==t' | grep -qv -i "unavailable\|not available"
}

# Two ratios: of the two sides' medians, and the median of per-round ratios (each round's
# tracebench figure over the tb-indep figure measured right next to it). The machine drifts
# between speed modes over seconds (trace_marker: ~750 vs ~1000 ns, LTTng: ~140 vs ~190 ns
# here, in both programs alike), so adjacent pairs compare like with like; the verdict uses the
# paired ratio.
printf "%-14s %12s %12s %8s %8s  %s\n" tracer indep_p50_ns tb_p50_ns ratio paired verdict
fail=0
for t in "${TRACERS[@]}"; do
  if ! available "$t"; then
    printf "%-14s %s\n" "$t" "SKIP: $("$TB" list 2>/dev/null | awk -v t="$t" '$1==t' | cut -c1-100)"
    continue
  fi
  : >"$WORK/indep" ; : >"$WORK/tb"
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then
      run_indep "$t" >>"$WORK/indep"; run_tb "$t" >>"$WORK/tb"
    else
      run_tb "$t" >>"$WORK/tb"; run_indep "$t" >>"$WORK/indep"
    fi
  done
  mi=$(median <"$WORK/indep"); mt=$(median <"$WORK/tb")
  ratio=$(awk -v a="$mt" -v b="$mi" 'BEGIN{printf "%.2f", a/b}')
  paired=$(paste "$WORK/tb" "$WORK/indep" | awk '{printf "%.4f\n", $1/$2}' | median)
  paired=$(awk -v r="$paired" 'BEGIN{printf "%.2f", r}')
  verdict=$(awk -v r="$paired" 'BEGIN{print (r>=0.8 && r<=1.2) ? "ok" : "OUTSIDE +-20%"}')
  if [ "$t" = none ]; then
    # The floor is one or two ~10 ns clock steps: a ratio of such small figures means little.
    verdict="info (floor)"
  fi
  [ "$verdict" = "OUTSIDE +-20%" ] && fail=1
  printf "%-14s %12s %12s %8s %8s  %s   (indep rounds: %s | tb rounds: %s)\n" "$t" "$mi" "$mt" "$ratio" "$paired" "$verdict" \
    "$(paste -sd' ' "$WORK/indep")" "$(paste -sd' ' "$WORK/tb")"
done
exit $fail
