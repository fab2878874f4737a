#!/usr/bin/env bash
# Does the harness move what it measures? (docs/method.md, "The harness's footprint".)
# For none, lw, printf, lttng-ust (when `tracebench list` says it can run here) and the store-heavy
# example plugin (16 cache lines per call), ROUNDS interleaved rounds of:
#   run -n N                      for N in NS (default 5000 20000 1000000)
#   run -n N/5 --repeats 5        the same calls split into five repetitions
# then prints, per tracer and size, the medians over rounds of p50, p99 and p99.9 for both, their
# ratio, and the share of slow calls (above 1.5x the median) on the worst three consecutive
# residues of each harness cycle (scripts/footprint.py). Figures only, no threshold: the 2-vCPU
# VM's noise is larger than some of the effects (read the ratios, not single runs).
#   ROUNDS (default 3), NS, BIN (target/release/tracebench), PLUGIN (the stores plugin's path).
#   TRACERS (default: the five above),
#   REPORT_BIN (the binary that reports, default BIN: to check an older build's runs), REPORT_MAX.
set -euo pipefail
BIN=${BIN:-target/release/tracebench}
ROUNDS=${ROUNDS:-3}
NS=${NS:-5000 20000 1000000}
PLUGIN=${PLUGIN:-target/plugins/libstores_plugin.so}
if [ "$ROUNDS" -lt 1 ]; then echo "footprint: ROUNDS must be at least 1 (got $ROUNDS)" >&2; exit 2; fi
[ -f "$PLUGIN" ] || { echo "footprint: $PLUGIN is missing; build it with: make plugins" >&2; exit 2; }
. "$(dirname "$0")/lib/tracers.sh"
[ -n "${TRACERS:-}" ] || TRACERS=$(default_tracers footprint "$BIN"),plugin:$PLUGIN
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  for n in $NS; do
    order="one split"; [ $((r % 2)) -eq 0 ] && order="split one"
    for s in $order; do
      if [ "$s" = one ]; then args=(-n "$n"); else args=(-n $((n / 5)) --repeats 5); fi
      "$BIN" run --tracer "$TRACERS" "${args[@]}" --quiet --out "$tmp/$s-$n-$r" \
        2> >(grep -v '^tracebench: counters .* unavailable' >&2)
    done
  done
done
python3 "$(dirname "$0")/footprint.py" --table "$tmp" "$ROUNDS" $NS
# The report's own check (report.json's harness_cycle findings): it leaves out the slow calls the
# tracer's paths explain (printf's flush every ~13 calls sits on five residues of 64) and holds
# the rest against chance. Reported for the runs of up to REPORT_MAX calls (the report of a
# million calls per row takes a while on two cores).
echo
echo "the report's footprint check (harness_cycle findings in report.json; 'none' = no cycle claimed):"
for r in $(seq 1 "$ROUNDS"); do
  for n in $NS; do
    [ "$n" -le "${REPORT_MAX:-100000}" ] || continue
    for s in one split; do
      "${REPORT_BIN:-$BIN}" report "$tmp/$s-$n-$r" >/dev/null 2>&1 || { echo "  $s -n $n round $r: report failed"; continue; }
      python3 - "$tmp/$s-$n-$r/report.json" "$s" "$n" "$r" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
said = []
for t in j["tracers"]:
    for m in t["metrics"]:
        for f in m["findings"]:
            if f["kind"] == "harness_cycle":
                said.append(f"{t['label']}: {100 * f['share']:.1f}% of {f['slow_calls']} on every {f['length']} {f['counted_in']}")
print(f"  {sys.argv[2]:<5} -n {sys.argv[3]:>7} round {sys.argv[4]}: " + ("; ".join(said) if said else "none"))
PY
    done
  done
done
