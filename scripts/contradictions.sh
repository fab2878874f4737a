#!/usr/bin/env bash
# Fresh LTTng-UST runs at two sub-buffer sizes, each reported and read back for sentences that its
# own table, findings or other sentences contradict (`tracebench __contradictions`, the rules in
# harness/src/report/contradictions/). Prints each contradiction, then per size: runs, runs with
# any, and the count per rule. Exits 1 when any run had one.
#
#   scripts/contradictions.sh [RUNS] [CALLS]      (defaults: 20 runs per size, -n 40000)
#   BIN=path/to/tracebench SIZES="8k 64k" KEEP=dir scripts/contradictions.sh
set -euo pipefail
RUNS=${1:-20}
CALLS=${2:-40000}
BIN=${BIN:-target/release/tracebench}
SIZES=${SIZES:-8k 64k}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

if ! "$BIN" list | grep -Eq '^lttng-ust +available'; then
    echo "SKIP contradictions.sh: lttng-ust is not available here ($("$BIN" list | grep -E '^lttng-ust' || true))"
    exit 0
fi

status=0
summary=()
for size in $SIZES; do
    with=0
    declare -A by_rule=()
    for k in $(seq 1 "$RUNS"); do
        d="$work/$size-$k"
        rm -rf "$d"
        "$BIN" run --tracer lttng-ust --subbuf-size "$size" -n "$CALLS" --quiet --out "$d" 2>/dev/null
        "$BIN" report "$d" >/dev/null
        if ! out=$("$BIN" __contradictions "$d"); then
            with=$((with + 1))
            status=1
        fi
        while IFS= read -r line; do
            case "$line" in
                *" contradiction(s)") ;;
                *) echo "$line"
                   rule=${line#"$d: "}; rule=${rule%%[ :]*}
                   by_rule[$rule]=$(( ${by_rule[$rule]:-0} + 1 )) ;;
            esac
        done <<<"$out"
    done
    rules=""
    total=0
    for r in "${!by_rule[@]}"; do
        rules+=" $r=${by_rule[$r]}"
        total=$((total + by_rule[$r]))
    done
    summary+=("subbuf $size: $RUNS runs of -n $CALLS, $with with a contradiction, $total contradiction(s)${rules:+:$rules}")
    unset by_rule
done
printf '%s\n' "${summary[@]}"
exit $status
