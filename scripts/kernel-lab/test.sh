#!/bin/bash
# CI entry point of the kernel lab (`make kernel-lab`): run the lab on every kernel of the matrix, check each
# results directory, then write the merged view of the kernels side by side.
#   scripts/kernel-lab/test.sh                 every kernel of $KERNELS (default: bookworm,trixie = 6.1 and 6.12)
#   KERNELS=bookworm scripts/kernel-lab/test.sh    one kernel
#   scripts/kernel-lab/test.sh --dir DIR       only check an existing results directory
# Each kernel's results go to results/<UTC>-kernel-lab-<kernel release>/ (its checks in lab/checks.txt); the merged
# view to results/<UTC>-kernel-lab-matrix.md. Exits non-zero when a required check fails on any kernel; prints
# "N passed, N failed" per kernel and over all.
set -uo pipefail
LAB_DIR=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --dir ]; then
    python3 "$LAB_DIR/check.py" "$2"
    exit $?
fi
KERNELS=${KERNELS:-bookworm,trixie}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
REPO=$(cd "$LAB_DIR/../.." && pwd)
DIRS=(); SUMMARY=(); FAILED=0; TP=0; TF=0
for k in ${KERNELS//,/ }; do
    t0=$(date +%s)
    echo "==== kernel-lab: $k ===="
    LOG=$(mktemp)
    LAB_KERNEL=$k bash "$LAB_DIR/lab.sh" --n "${KERNEL_LAB_N:-20000}" --warmup "${KERNEL_LAB_WARMUP:-2000}" "$@" | tee "$LOG"
    rc=${PIPESTATUS[0]}
    DIR=$(tail -n 1 "$LOG"); rm -f "$LOG"
    if [ $rc -ne 0 ] || [ ! -d "$DIR" ]; then
        echo "FAIL the kernel lab did not produce a results directory for $k (lab.sh exit $rc)"
        SUMMARY+=("$k: no results (lab.sh exit $rc), wall $(( $(date +%s) - t0 )) s")
        FAILED=1; TF=$((TF + 1))
        continue
    fi
    python3 "$LAB_DIR/check.py" "$DIR" | tee "$DIR/lab/checks.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || FAILED=1
    wall=$(( $(date +%s) - t0 ))
    echo "$wall" > "$DIR/lab/wall_seconds.txt"
    counts=$(tail -n 1 "$DIR/lab/checks.txt")
    TP=$((TP + $(echo "$counts" | awk '{print $1}'))); TF=$((TF + $(echo "$counts" | awk '{print $3}')))
    SUMMARY+=("$k ($(basename "$DIR")): $counts, wall $wall s")
    DIRS+=("$DIR")
done
if [ ${#DIRS[@]} -gt 0 ]; then
    M=$REPO/results/$STAMP-kernel-lab-matrix.md
    python3 "$LAB_DIR/matrix.py" "${DIRS[@]}" > "$M.tmp" && mv "$M.tmp" "$M" && echo "kernel-lab: merged view in $M"
fi
echo "==== kernel-lab matrix ===="
for s in "${SUMMARY[@]}"; do echo "kernel-lab: $s"; done
echo "$TP passed, $TF failed"
exit $FAILED
