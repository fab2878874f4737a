#!/bin/bash
# CI entry point of the kernel lab: run it, then check the results directory.
#   scripts/kernel-lab/test.sh                 run the lab (N=20000) and check it
#   scripts/kernel-lab/test.sh --dir DIR       only check an existing results directory
# Exits non-zero when a required check fails; prints "N passed, N failed" at the end.
set -uo pipefail
LAB_DIR=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --dir ]; then
    DIR=$2
else
    LOG=$(mktemp)
    bash "$LAB_DIR/lab.sh" --n "${KERNEL_LAB_N:-20000}" --warmup "${KERNEL_LAB_WARMUP:-2000}" "$@" | tee "$LOG"
    rc=${PIPESTATUS[0]}
    DIR=$(tail -n 1 "$LOG"); rm -f "$LOG"
    if [ $rc -ne 0 ] || [ ! -d "$DIR" ]; then
        echo "FAIL the kernel lab did not produce a results directory (lab.sh exit $rc)"
        echo "0 passed, 1 failed"
        exit 1
    fi
fi
python3 "$LAB_DIR/check.py" "$DIR"
