#!/usr/bin/env bash
# Times `tracebench report` on synthetic results: TRACERS tracers x ROWS kept calls each (default
# 10 x 100000, with counter columns so every figure is drawn), release build. The synthetic data
# are written by the hidden `report --synthetic` option; the timed run re-reads them from disk.
set -euo pipefail
cd "$(dirname "$0")/.."
TRACERS=${TRACERS:-10}
ROWS=${ROWS:-100000}
cargo build --release -q -p tracebench
bin="${CARGO_TARGET_DIR:-target}/release/tracebench"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" report "$dir/r" --synthetic "${TRACERS}x${ROWS}" --synthetic-counters >/dev/null
echo "input: $(du -sh "$dir/r" | cut -f1) of CSV, ${TRACERS} tracers x ${ROWS} rows"
for i in 1 2 3; do
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "run $i: wall %e s, max RSS %M KiB" "$bin" report "$dir/r" >/dev/null
  else
    s=$(date +%s.%N); "$bin" report "$dir/r" >/dev/null; e=$(date +%s.%N)
    echo "run $i: wall $(echo "$e - $s" | bc) s (install 'time' for max RSS)"
  fi
done
