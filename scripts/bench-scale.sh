#!/usr/bin/env bash
# Does a run scale with -n? For each N in NS, `run -n N` of one tracer on one thread, then its
# report: wall time and peak RSS of each (/usr/bin/time -v: the largest process, the measuring
# cell or the parent), the results directory's size on disk, and the paths the report found with
# their shares, so that the same planted path can be read at every length.
#   NS (default 1000000 10000000; add 100000000 for the full check, several minutes),
#   TRACER (default spin:100@64:1000: 100 ns a call, every 64th 1000 ns, a planted path on 1.56%
#   of calls), BIN (target/release/tracebench), KEEP=1 keeps the runs.
set -euo pipefail
BIN=${BIN:-target/release/tracebench}
NS=${NS:-1000000 10000000}
TRACER=${TRACER:-spin:100@64:1000}
[ -x /usr/bin/time ] || { echo "bench-scale: /usr/bin/time is missing (GNU time: apt-get install time)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "bench-scale: $BIN is missing; build it with: make build" >&2; exit 2; }
tmp=$(mktemp -d); [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
# "wall_s peak_MB" of a /usr/bin/time -v log.
measured() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
              /Maximum resident set size/ { r = $2 / 1024 }
              END { printf "%.1f %.0f", s, r }' "$1"
}
printf '%-10s %9s %9s %9s %8s %10s %10s  %s\n' calls run_s run_MB disk_MB B/call report_s report_MB "paths (share of calls, extra ns) and harness cycles claimed"
for n in $NS; do
  d="$tmp/n$n"
  /usr/bin/time -v -o "$tmp/run-$n.time" "$BIN" run --tracer "$TRACER" -n "$n" --quiet --out "$d" \
    2> >(grep -v '^tracebench: counters .* unavailable' >&2)
  disk=$(du -sb "$d" | cut -f1)
  /usr/bin/time -v -o "$tmp/report-$n.time" "$BIN" report "$d" >/dev/null
  read -r rs rm <<<"$(measured "$tmp/run-$n.time")"
  read -r ps pm <<<"$(measured "$tmp/report-$n.time")"
  paths=$(python3 - "$d/report.json" "$n" <<'PY'
import json, sys
# Shares are of the calls the analysis read (the metric's `calls`): a run longer than the bound
# of stored slow calls is analysed on a sample of its first calls, and the report says so.
out = []
def walk(v, read):
    if isinstance(v, dict):
        read = v.get("calls", read) if "findings" in v else read
        k = v.get("kind")
        if k in ("periodic_path", "memoryless_path", "irregular_path") and "calls" in v:
            share = v.get("share") or v["calls"] / float(read)
            where = f'@{v["period"]}' if v.get("period") else ""
            out.append(f'{k.split("_")[0]}{where} {100 * share:.3f}% +{v.get("extra", 0):.0f}')
        if k == "harness_cycle":
            own = " (the tracer's own period)" if v.get("tracer_path_with_this_period") else ""
            out.append(f'harness cycle: {v["cycle"]} ({v["length"]}){own}')
        for x in v.values():
            walk(x, read)
    elif isinstance(v, list):
        for x in v:
            walk(x, read)
tracers = json.load(open(sys.argv[1]))["tracers"]
walk(tracers, float(sys.argv[2]))
read = min((m.get("calls", 0) for t in tracers for m in t.get("metrics", [])), default=0)
if 0 < read < int(sys.argv[2]):
    out.append(f"read from a sample: the first {read} calls")
print("; ".join(out) or "none")
PY
)
  printf '%-10s %9s %9s %9.1f %8.1f %10s %10s  %s\n' "$n" "$rs" "$rm" "$(echo "$disk / 1048576" | bc -l)" \
    "$(echo "$disk / $n" | bc -l)" "$ps" "$pm" "$paths"
done
