#!/usr/bin/env bash
# Re-reports fixed inputs with one binary, so two binaries' outputs can be compared byte for byte
# (a refactoring of harness/src/report/ must leave report.md, report.json and the tables as they were).
#
#   scripts/report-identity.sh BIN INPUTS OUT
#
# INPUTS holds results directories made once (and kept outside the repository):
#   run/    tracebench run --tracer none,lw,printf,lttng-ust -n 5000 --out INPUTS/run
#   sweep/  tracebench sweep --vary payload-size=4,64 --tracer lw,printf -n 2000 --out INPUTS/sweep
#   step/   tracebench run --tracer none,lw --instructions singlestep -n 200 --out INPUTS/step
#   scale/  tracebench scale --tracer none,lw -n 2000 --threads 1,2 --repeats 2 --out INPUTS/scale
#   gate-a/, gate-b/  tracebench run --tracer none,lw,printf -n 2000 --repeats 6 --out INPUTS/gate-X
# OUT receives a fresh copy of each, reported (a report writes into its results directory), the
# synthetic results, the side-by-side report of two copies of run/, the seeded calibration battery,
# the gate's verdicts on fixed directories (terminal, Markdown, JUnit, JSON), `system show` with
# what it measures live blanked out, and each command's standard output (the elapsed time blanked
# out). The scale's verdicts are the report of scale/ (its scaling table and figures). A `run`'s
# own summary is not here: it is printed by the run that measures, and no command recomputes it
# from a results directory; the report of the same directory prints the same rows.
#
# Then: scripts/report-identity.sh --compare OUT_BEFORE OUT_AFTER, which is diff -r (figures are
# drawn from the same numbers; a difference there is a difference) except that report.json may
# gain `survey_check` (the typed survey check) and must otherwise be the same, byte for byte.
set -euo pipefail
if [ "${1:-}" = "--compare" ]; then
    a=$2; b=$3; rc=0
    diff -r -x report.json "$a" "$b" || rc=1
    while read -r f; do
        python3 - "$a/$f" "$b/$f" <<'PY' || rc=1
import json, sys
a, b = (open(p).read() for p in sys.argv[1:3])
if a == b:
    sys.exit(0)
nb = json.loads(b)
nb.pop("survey_check", None)
# The same bytes once the added field is taken out: serialise both the same way.
if json.dumps(json.loads(a), indent=2) != json.dumps(nb, indent=2) or not b.startswith(a.rstrip().rstrip("}").rstrip()):
    sys.exit(f"{sys.argv[2]}: differs beyond the added survey_check")
PY
    done < <(cd "$a" && find . -name report.json)
    [ $rc = 0 ] && echo "identical (report.json: the same apart from the added survey_check)"
    exit $rc
fi
bin=$(realpath "$1"); inputs=$(realpath "$2"); out=$3
rm -rf "$out"; mkdir -p "$out"; out=$(realpath "$out")
# Relative paths from OUT: the report names its directory, and OUT differs between the two runs.
cd "$out"
blank() { sed -E "s# in [0-9]+\.[0-9]+ s\$# in X s#; s#$out#OUT#g"; }
# The battery's table says how long it took: those columns are blanked, the verdicts kept.
blank_times() {
    sed -E 's/, [0-9]+\.[0-9]+ s;/, X s;/; s/^([A-Za-z]+ +[0-9]+ .*[^ ]) +[0-9]+\.[0-9]+$/\1 X/
        s/^([A-Za-z]+ +[0-9]+ .*[^ ]) +[0-9]+\.[0-9]+(  (<=|>=|-) )/\1 X\2/'
}
for d in run sweep step scale; do
    [ -d "$inputs/$d" ] || continue
    cp -a "$inputs/$d" "$d"
    "$bin" report "$d" 2>&1 | blank > "$d.stdout" || echo "rc=$?" >> "$d.stdout"
done
# --explain: every row's sentences, one row's, and a row the report does not have.
if [ -d run ]; then
    for e in "" lw nosuch; do
        { "$bin" report run --explain $e 2>&1; echo "rc=$?"; } | blank > "run-explain-${e:-all}.stdout" || true
    done
fi
if [ -d "$inputs/run" ]; then
    cp -a "$inputs/run" side-a; cp -a "$inputs/run" side-b
    "$bin" report side-a side-b --out side 2>&1 | blank > side.stdout || true
fi
"$bin" report synth --synthetic 3x2000 2>/dev/null | blank > "synth.stdout" || true
"$bin" report synth-counters --synthetic 2x1000 --synthetic-counters 2>/dev/null | blank > "synth-counters.stdout" || true
"$bin" __calibrate --runs 3 --seed 1 2>&1 | blank_times > "battery.txt"
# Errors keep their words and exit codes: no directory, no summary.csv, a malformed events.csv.
mkdir -p bad-summary bad-events; echo '{}' > bad-summary/run.json
if [ -d "$inputs/run" ]; then cp -a "$inputs/run/." bad-events/; echo "x,y" > bad-events/lw/events.csv; fi
for d in absent bad-summary bad-events; do
    { "$bin" report "$d" > /dev/null 2>&1; echo "rc=$?"; "$bin" report "$d" 2>&1 >/dev/null | blank; } > "error-$d.txt" || true
done
# The gate: one verdict per row, on directories measured once; exit codes kept.
gate() {
    local name=$1; shift
    { "$bin" gate "$@" 2>&1; echo "rc=$?"; } | blank > "gate-$name.txt" || true
}
if [ -d "$inputs/gate-a" ] && [ -d "$inputs/gate-b" ]; then
    gate net --baseline "$inputs/gate-a" --candidate "$inputs/gate-b" --net \
        --markdown gate-net.md --junit gate-net.xml --json gate-net.json
    gate tight --baseline "$inputs/gate-a" --candidate "$inputs/gate-b" --threshold 0.5% --confidence 90% \
        --strict --metric p50_ns --markdown gate-tight.md --json gate-tight.json
    gate paired --baseline "$inputs/gate-a" --candidate "$inputs/gate-b" --paired --markdown gate-paired.md
fi
[ -d "$inputs/scale" ] && gate scale --baseline "$inputs/scale" --candidate "$inputs/scale" --net
[ -d "$inputs/step" ] && gate step --baseline "$inputs/step" --candidate "$inputs/step" --junit gate-step.xml
gate missing --baseline absent --candidate absent
sed -i "s#$inputs#IN#g" gate-*.* 2>/dev/null || true
# `system show` checks the machine now, while other work may run: its checks and their words are
# kept; what it measures live (the numbers, the interrupts taken, whether the CPU was busy during the
# check, so also the verdict and the exit code) is blanked out.
{ "$bin" system show 2>&1; echo "rc=$?"; } | sed -E '
    s/(taken on cpu [0-9]+ during the check:).*/\1 X/
    s/^[A-Z]+ +(cpu +cpu [0-9]+) (idle|busy) .*/X    \1 idle or busy: X/
    s/^[A-Z]+ +((clock +TSC|virtualization +steal|interrupts +taken))/X    \1/
    s/^(verdict:|rc=).*/\1 X/
    s/[0-9]+(\.[0-9]+)?/N/g' > system-show.txt || true
echo "reported into $out"
