#!/usr/bin/env bash
# Independent check of tracebench's uprobe and ebpf rows: interleaves the standalone C program
# (uprobe_bench.c: its own nop5/push/ret sites, its own tracefs uprobe + private instance, its own
# timing loop) with `tracebench run --tracer none,uprobe,ebpf`, round by round, and prints the
# per-round medians and the ratios tracebench / independent.
#
#   scripts/indep/uprobe/compare.sh            # ROUNDS=5 N=5000 SITES="nop5" CPU=<last online>
#   ROUNDS=3 SITES="nop5 push ret" scripts/indep/uprobe/compare.sh
#
# TRACEBENCH=path/to/tracebench (default: target/release/tracebench; build it with the ebpf
# feature, e.g. `make`, or the ebpf row is reported as unavailable). Needs root, tracefs, gcc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
ROUNDS=${ROUNDS:-5}
N=${N:-5000}
SITES=${SITES:-nop5}
CPU=${CPU:-$(($(nproc) - 1))}
TB=${TRACEBENCH:-$root/target/release/tracebench}
[ -x "$TB" ] || { echo "compare.sh: no tracebench at $TB: build it (make) or set TRACEBENCH=" >&2; exit 2; }
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
work=$(mktemp -d /tmp/indep-uprobe.XXXXXX)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -o "$work/uprobe_bench" "$here/uprobe_bench.c"
tracers=none,uprobe
"$TB" list | grep -qE '^ebpf +available' && tracers=$tracers,ebpf

results="$work/results.txt"
for site in $SITES; do
  for r in $(seq 1 "$ROUNDS"); do
    # Alternate the order each round so that drift hits both sides alike.
    run_indep() {
      echo "indep $site $r $("$work/uprobe_bench" --site "$site" --n "$N" --cpu "$CPU" --no-probe)" >>"$results"
      echo "indep $site $r $("$work/uprobe_bench" --site "$site" --n "$N" --cpu "$CPU")" >>"$results"
    }
    run_tb() {
      "$TB" run -q -t "$tracers" -n "$N" --cpu "$CPU" --probe-site "$site" -o "$work/tb-$site-$r" >/dev/null
      echo "tb $site $r $work/tb-$site-$r/summary.csv" >>"$results"
    }
    if [ $((r % 2)) -eq 1 ]; then run_indep; run_tb; else run_tb; run_indep; fi
  done
done

python3 - "$results" "$TB" <<'PY'
import csv, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
data = {}  # (site, source) -> list of per-round p50 / mean
def add(site, src, p50, mean):
    data.setdefault((site, src), []).append((p50, mean))
for r in rows:
    kind, site = r[0], r[1]
    if kind == "indep":
        kv = dict(x.split("=", 1) for x in r[3:])
        src = "indep-uprobe" if kv["probe"] == "1" else "indep-none"
        add(site, src, float(kv["p50_ns"]), float(kv["mean_ns"]))
    else:
        with open(r[3]) as f:
            for row in csv.DictReader(f):
                if row["threads"] == "1":
                    add(site, "tb-" + row["tracer"], float(row["p50_ns"]), float(row["mean_ns"]))
med = lambda xs: statistics.median(xs)
print(f"tracebench: {sys.argv[2]}")
print(f"{'site':5} {'source':14} {'rounds':>6} {'median p50 ns':>14} {'median mean ns':>15}   per-round p50")
for (site, src), v in sorted(data.items()):
    print(f"{site:5} {src:14} {len(v):6} {med([p for p, _ in v]):14.1f} {med([m for _, m in v]):15.1f}   "
          + " ".join(f"{p:.0f}" for p, _ in v))
print()
for site in sorted({s for s, _ in data}):
    get = lambda src, i=0: med([x[i] for x in data[(site, src)]]) if (site, src) in data else None
    iu, inone = get("indep-uprobe"), get("indep-none")
    for tb in ("tb-uprobe", "tb-ebpf"):
        t, tnone = get(tb), get("tb-none")
        if t is None or iu is None:
            continue
        raw = t / iu
        net = (t - tnone) / (iu - inone)
        print(f"{site}: {tb}/indep-uprobe  p50 ratio {raw:.2f}  (floor-subtracted {net:.2f})")
PY
