#!/bin/bash
# Build lttng-modules (Debian's lttng-modules-dkms source of the kernel's suite: 2.13.9 for bookworm, 2.13.18 for
# trixie) and kbench's LTTng probe for the lab's kernel (kmake: on the host, or in the suite's sysroot).
# Cached: a second run with the same kernel and sources does nothing. The last line says what failed, if anything.
set -euo pipefail
. "$(dirname "$0")/config.sh"
SRC=$(ls -d "$SROOT"/usr/src/lttng-modules-* | head -n 1)
L=$BUILD/lttng-modules
# The lab needs the tracer core (ring buffers, syscall tracing), the statedump and kbench's probe, not the ~80
# probes for other subsystems: building only what it needs divides the cold build time by several.
# LTTNG_PROBES=all builds them all.
LTTNG_PROBES=${LTTNG_PROBES:-minimal}
STAMP=$L/.built-$KVER-$LTTNG_PROBES
if [ ! -f "$STAMP" ]; then
    rm -rf "$L"; cp -r "$SRC" "$L"
    # Debian's 6.1.192 and 6.12.118 added "bool was_armed" to the hrtimer_start tracepoint; lttng-modules 2.13.9 and
    # 2.13.18 predate it and fail with "conflicting types for 'trace_hrtimer_start'". Patch only when the kernel has
    # the new prototype.
    if grep -q 'enum hrtimer_mode mode, bool was_armed' "$KROOT/usr/src/linux-headers-$KVER_COMMON/include/trace/events/timer.h"; then
        python3 - "$L/include/instrumentation/events/timer.h" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("LTTNG_TRACEPOINT_EVENT_MAP(hrtimer_start,")
old = "TP_PROTO(struct hrtimer *hrtimer, enum hrtimer_mode mode),\n\n\tTP_ARGS(hrtimer, mode),"
if old not in s[i:i + 400]:
    print("lttng-modules: hrtimer_start already has was_armed")  # 2.16 knows it
    sys.exit(0)
j = s.index(old, i)
new = "TP_PROTO(struct hrtimer *hrtimer, enum hrtimer_mode mode, bool was_armed),\n\n\tTP_ARGS(hrtimer, mode, was_armed),"
s = s[:j] + new + s[j + len(old):]
open(p, "w").write(s)
print("lttng-modules: patched hrtimer_start for the was_armed argument")
PY
    fi
    if [ "$LTTNG_PROBES" = minimal ]; then
        python3 - "$L/src/probes/Kbuild" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
head = s[:s.index("# A dependency on internal header")]
# keep the kprobe/uprobe/kretprobe support modules at the end: lttng-tracer links against them (2.13; 2.16 builds
# them into lttng-tracer and has no such block)
k = s.find("ifneq ($(CONFIG_KPROBES),)")
tail = s[k:] if k >= 0 else ""
open(p, "w").write(head + "obj-$(CONFIG_LTTNG) += lttng-probe-statedump.o\n\n" + tail)
print("lttng-modules: building the core, the sched/irq/timer/statedump probes only (LTTNG_PROBES=all for all)")
PY
    fi
    echo "building lttng-modules for $KVER (a few minutes, cached afterwards)"
    kmake -C "$(rpath "$L")" KERNELDIR="$(rpath "$KHDR")" -j"$(nproc)" > "$L/build.log" 2>&1 || {
        grep -m 5 -E 'error' "$L/build.log" || true
        echo "lttng-modules $(basename "$SRC") does not build against $KVER (see $L/build.log)"; exit 1; }
    touch "$STAMP"
fi
P=$BUILD/lttng-probe-kbench
rm -rf "$P"; mkdir -p "$P"
cp "$REPO"/kbench-module/lttng/* "$P"/ 2>/dev/null || true
cp -r "$REPO/kbench-module/lttng/instrumentation" "$P/"
cp "$REPO/kbench-module/kbench_trace.h" "$P/"
kmake -C "$(rpath "$KHDR")" M="$(rpath "$P")" LTTNG_SRC="$(rpath "$L")" modules > "$P/build.log" 2>&1 || {
    grep -m 5 error "$P/build.log" || true; echo "the kbench LTTng probe does not build (see $P/build.log)"; exit 1; }
echo "lttng-modules and lttng-probe-kbench.ko built"
