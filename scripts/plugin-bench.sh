#!/usr/bin/env bash
# What the plugin path costs: the built-in `lw` against the same tracer built as a plugin
# (tracers/examples/lw_plugin.c), measured in interleaved repetitions, each in its own process
# (`tracebench run --repeats`), and compared by medians over the repetitions (docs/plugin.md).
#
#   scripts/plugin-bench.sh            # or: make plugin-bench
#   REPEATS=21 N=20000 scripts/plugin-bench.sh
#
# Prints, per tracer, the median over repetitions of mean_ns and p50_ns, then the median of the
# paired per-repetition differences (plugin - built-in). Exits 1 if that median difference of the
# means is above LIMIT_NS (default 2), so that it can serve as a check.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEATS=${REPEATS:-11}
N=${N:-20000}
LIMIT_NS=${LIMIT_NS:-2}
OUT=${OUT:-$(mktemp -d /tmp/tracebench-plugin-bench.XXXXXX)}
TB=${TRACEBENCH:-}

if [ -z "$TB" ]; then
  cargo build --quiet --release -p tracebench
  TB="${CARGO_TARGET_DIR:-target}/release/tracebench"
fi
make --no-print-directory -s -f tracers/examples/examples.mk plugins

PLUGIN=target/plugins/liblw_plugin.so
echo "plugin-bench: lw vs plugin:$PLUGIN, $REPEATS interleaved repetitions of $N kept calls each -> $OUT"
"$TB" run --tracer "lw,plugin:$PLUGIN" --repeats "$REPEATS" -n "$N" -o "$OUT" --quiet

python3 - "$OUT/repetitions.csv" "$LIMIT_NS" <<'PY'
import csv, statistics, sys
path, limit = sys.argv[1], float(sys.argv[2])
rows = [r for r in csv.DictReader(open(path)) if r["threads"] == "1"]
by = {}
for r in rows:
    by.setdefault(r["tracer"], {})[int(r["repetition"])] = r
if set(by) != {"lw", "lw-plugin"}:
    sys.exit(f"plugin-bench: expected rows lw and lw-plugin in {path}, got {sorted(by)}")
for t in ("lw", "lw-plugin"):
    reps = by[t].values()
    print(f"  {t:10s} median over {len(by[t])} repetitions: mean {statistics.median(float(r['mean_ns']) for r in reps):7.2f} ns"
          f"   p50 {statistics.median(float(r['p50_ns']) for r in reps):7.2f} ns")
common = sorted(set(by["lw"]) & set(by["lw-plugin"]))
d_mean = [float(by["lw-plugin"][k]["mean_ns"]) - float(by["lw"][k]["mean_ns"]) for k in common]
d_p50 = [float(by["lw-plugin"][k]["p50_ns"]) - float(by["lw"][k]["p50_ns"]) for k in common]
m = statistics.median(d_mean)
print(f"  plugin - built-in, median of {len(common)} paired differences: mean {m:+.2f} ns"
      f" (min {min(d_mean):+.2f}, max {max(d_mean):+.2f}), p50 {statistics.median(d_p50):+.2f} ns")
if m > limit:
    print(f"plugin-bench: FAIL: the plugin path costs {m:.2f} ns more than the built-in, above {limit} ns")
    sys.exit(1)
print(f"plugin-bench: ok: within {limit} ns")
PY
