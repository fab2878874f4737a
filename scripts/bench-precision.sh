#!/usr/bin/env bash
# The measurement core's precision figures (docs/validation.md, "Precision"): the floor, the error of the
# spin:300 calibration backend, and the wall time of the default run. Ratios and differences
# within one run; several interleaved rounds, medians quoted (noise here comes in bursts).
set -euo pipefail
BIN=${BIN:-target/release/tracebench}
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
floors=(); means=(); stds=(); errs=(); walls=()
for r in $(seq 1 "$ROUNDS"); do
  "$BIN" run --tracer none,spin:300 -n 5000 --quiet --out "$tmp/p$r"
  read -r fm fmean fstd err < <(python3 - "$tmp/p$r" <<'PY'
import csv, json, sys
d = sys.argv[1]
rows = {r["tracer"]: r for r in csv.DictReader(open(d + "/summary.csv"))}
n, s = rows["none"], rows["spin:300"]
err = (float(s["mean_ns"]) - float(n["mean_ns"]) - 300) / 300 * 100
print(n["p50_ns"], n["mean_ns"], n["std_ns"], f"{err:.2f}")
PY
)
  floors+=("$fm"); means+=("$fmean"); stds+=("$fstd"); errs+=("$err")
  s=$(date +%s%N)
  "$BIN" run --tracer none,lw,printf --counter-sets 2 -n 5000 --quiet --out "$tmp/d$r"
  e=$(date +%s%N); ms=$(( (e - s) / 1000000 )); walls+=("$((ms / 1000)).$(printf %03d $((ms % 1000)))")
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "precision over $ROUNDS interleaved rounds (medians of the per-round figures):"
echo "  floor (none): median $(med "${floors[@]}") ns, mean $(med "${means[@]}") ns, std $(med "${stds[@]}") ns   (target: mean <= 25 ns)"
echo "  spin:300 error (mean above none vs 300 ns): $(med "${errs[@]}") %   (per round: ${errs[*]}; target: |error| <= 3%)"
echo "  wall time of 'run --tracer none,lw,printf --counter-sets 2 -n 5000': $(med "${walls[@]}") s   (target: < 15 s)"
