#!/usr/bin/env bash
# Do sentinel windows move a tracer's measured cost? (docs/method.md, "Sentinel windows".) With
# FLAG=--reference-every EVERY=2, the same for the reference windows ("Reference windows").
# Runs `tracebench run` with --sentinel-every 32 and with --sentinel-every 0, alternating (the
# order flips every round, so a drift of the machine hits both alike), ROUNDS rounds each, and
# prints per tracer the median over rounds of each setting's mean (summary.csv mean_ns, and
# p50_ns beside it), their ratio, and the median of the per-round ratios. A ratio of 1 means
# the sentinels cost the tracer nothing; figures only, no threshold (timings on a shared machine
# are noisy).
#   TRACERS (default none,lw,printf,lttng-ust; lttng-ust is left out when `tracebench list`
#   says it cannot run here), ROUNDS (default 12, at least 4), N (kept calls per cell, 20000),
#   EVERY (the sentinel period tried, 32), BIN (target/release/tracebench).
set -euo pipefail
BIN=${BIN:-target/release/tracebench}
ROUNDS=${ROUNDS:-12}
N=${N:-20000}
FLAG=${FLAG:---sentinel-every}
case "$FLAG" in
  --sentinel-every) EVERY=${EVERY:-32} ;;
  --reference-every) EVERY=${EVERY:-2} ;;
  *) echo "sentinel-cost: FLAG must be --sentinel-every or --reference-every (got $FLAG)" >&2; exit 2 ;;
esac
if [ "$ROUNDS" -lt 4 ]; then echo "sentinel-cost: ROUNDS must be at least 4 (got $ROUNDS)" >&2; exit 2; fi
. "$(dirname "$0")/lib/tracers.sh"
[ -n "${TRACERS:-}" ] || TRACERS=$(default_tracers sentinel-cost "$BIN")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  order="on off"; [ $((r % 2)) -eq 0 ] && order="off on"
  for s in $order; do
    k=$EVERY; [ "$s" = off ] && k=0
    # (The line that says which counters this machine lacks is said once, not every run.)
    "$BIN" run --tracer "$TRACERS" -n "$N" "$FLAG" "$k" --quiet --out "$tmp/$s-$r" \
      2> >(grep -v '^tracebench: counters .* unavailable' >&2)
  done
done
python3 - "$tmp" "$ROUNDS" "$TRACERS" "$EVERY" "$N" "$FLAG" <<'PY'
import csv, statistics, sys
d, rounds, tracers, every, n, flag = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4], sys.argv[5], sys.argv[6]
def per_round(setting, tracer, name):
    out = []
    for r in range(1, rounds + 1):
        rows = {x["tracer"]: x for x in csv.DictReader(open(f"{d}/{setting}-{r}/summary.csv"))}
        out.append(float(rows[tracer][name]))
    return out
what = "sentinel" if flag == "--sentinel-every" else "reference-window"
print(f"{what} cost: {rounds} interleaved rounds of `run -n {n}`, {flag} {every} (on) vs 0 (off);")
print("medians over rounds of each round's mean_ns and p50_ns, their ratio, and the median of the")
print("per-round ratios of means (on and off of one round ran back to back)")
print(f"{'tracer':<12} {'mean on':>9} {'mean off':>9} {'on/off':>7}   {'p50 on':>8} {'p50 off':>8} {'on/off':>7}   {'paired':>7}")
for t in tracers:
    on, off = per_round("on", t, "mean_ns"), per_round("off", t, "mean_ns")
    mon, moff = statistics.median(on), statistics.median(off)
    pon, poff = statistics.median(per_round("on", t, "p50_ns")), statistics.median(per_round("off", t, "p50_ns"))
    paired = statistics.median(a / b for a, b in zip(on, off))
    print(f"{t:<12} {mon:>9.2f} {moff:>9.2f} {mon / moff:>7.3f}   {pon:>8.2f} {poff:>8.2f} {pon / poff:>7.3f}   {paired:>7.3f}")
PY
