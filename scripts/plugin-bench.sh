#!/usr/bin/env bash
# What the plugin path costs: the built-in `lw` and `none` against the same tracers built as
# plugins (tracers/examples/lw_plugin.c, none_plugin.c), measured in interleaved repetitions,
# each cell in its own process (`tracebench run --repeats`), compared by medians over the
# repetitions (docs/plugins.md, "What the plugin path costs").
#
#   scripts/plugin-bench.sh            # or: make plugin-bench
#   REPEATS=21 N=20000 scripts/plugin-bench.sh
#
# Prints, per tracer, the median over repetitions of mean_ns and p50_ns, then, per pair, the
# median of the paired per-repetition differences (plugin - built-in). Exits 1 if the `lw` pair's
# median difference of the means is above LIMIT_NS (default 2), so that it can serve as a check.
# Means, not p50s, carry the comparison: single samples are quantized to the clock's resolution
# (about 10 ns on the reference VM), which makes p50 differences 0 or a whole step.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEATS=${REPEATS:-15}
N=${N:-20000}
LIMIT_NS=${LIMIT_NS:-2}
OUT=${OUT:-$(mktemp -d /tmp/tracebench-plugin-bench.XXXXXX)/out}
TB=${TRACEBENCH:-}

if [ -z "$TB" ]; then
  cargo build --quiet --release -p tracebench
  TB="${CARGO_TARGET_DIR:-target}/release/tracebench"
fi
make --no-print-directory -s -f tracers/examples/examples.mk plugins

P=target/plugins
echo "plugin-bench: lw, none and their plugin builds, $REPEATS interleaved repetitions of $N kept calls -> $OUT"
"$TB" run --tracer "lw,plugin:$P/liblw_plugin.so,none,plugin:$P/libnone_plugin.so" \
  --repeats "$REPEATS" -n "$N" -o "$OUT" --quiet 2> >(grep -v '^tracebench: counter ' >&2)

python3 - "$OUT/repetitions.csv" "$LIMIT_NS" <<'PY'
import csv, statistics, sys
path, limit = sys.argv[1], float(sys.argv[2])
by = {}
for r in csv.DictReader(open(path)):
    if r["threads"] == "1":
        by.setdefault(r["tracer"], {})[int(r["repetition"])] = r
med = statistics.median
for t in ("lw", "lw-plugin", "none", "none-plugin"):
    if t not in by:
        sys.exit(f"plugin-bench: no {t} rows in {path}")
    reps = by[t].values()
    print(f"  {t:12s} median of {len(by[t])} repetitions: mean {med(float(r['mean_ns']) for r in reps):7.2f} ns"
          f"   p50 {med(float(r['p50_ns']) for r in reps):7.2f} ns")
result = {}
for base in ("lw", "none"):
    plug = base + "-plugin"
    common = sorted(set(by[base]) & set(by[plug]))
    d = [float(by[plug][k]["mean_ns"]) - float(by[base][k]["mean_ns"]) for k in common]
    d50 = [float(by[plug][k]["p50_ns"]) - float(by[base][k]["p50_ns"]) for k in common]
    result[base] = med(d)
    print(f"  {plug} - {base}: median of {len(d)} paired differences of the means {med(d):+.2f} ns"
          f" (min {min(d):+.2f}, max {max(d):+.2f}); of the p50s {med(d50):+.2f} ns")
if result["lw"] > limit:
    print(f"plugin-bench: FAIL: lw as a plugin costs {result['lw']:.2f} ns more than the built-in, above {limit} ns")
    sys.exit(1)
print(f"plugin-bench: ok: lw as a plugin is within {limit} ns of the built-in")
PY
