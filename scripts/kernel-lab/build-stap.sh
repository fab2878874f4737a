#!/bin/bash
# Compile the lab's SystemTap probe (stap-probe.stp) into a kernel module for the pinned kernel, on the host, with
# the downloaded SystemTap 4.8 (stap -p4); the guest only runs staprun. The last line says what failed, if anything.
set -euo pipefail
. "$(dirname "$0")/config.sh"
ST=$STROOT/usr/share/systemtap
if [ -n "$SYSROOT" ]; then
    # stap -p4 runs the kernel's module build with the host's compiler; this kernel needs its suite's (in $SYSROOT).
    echo "SystemTap 4.8 (bookworm) builds its module with the host's gcc-12 and kbuild; $KVER needs $LAB_KERNEL's gcc-$GCCV and kbuild (glibc 2.38+): not built"
    exit 1
fi
# Cached: rebuild only when the probe, the trace header or this script changed.
KEY=$(cat "$LAB_DIR/stap-probe.stp" "$REPO/kbench-module/kbench_trace.h" "$0" | sha256sum | cut -c1-16)
if [ -f "$BUILD/kbench_stp.ko" ] && [ "$(cat "$BUILD/kbench_stp.key" 2>/dev/null)" = "$KEY-$KVER" ]; then
    echo "SystemTap probe module up to date"; exit 0
fi
RT=$BUILD/stap-runtime
rm -rf "$RT"; cp -r "$ST/runtime" "$RT"
# SystemTap 4.8's runtime looks up task_work_cancel(task, func); kernels with the 6.1.y backport renamed that one
# task_work_cancel_func (task_work_cancel now takes a callback_head) and the runtime fails in stp_task_work.c.
if grep -q 'task_work_cancel_func' "$KROOT/usr/src/linux-headers-$KVER_COMMON/include/linux/task_work.h"; then
    sed -i 's/typeof(&task_work_cancel)/typeof(\&task_work_cancel_func)/; s/kallsyms_lookup_name("task_work_cancel")/kallsyms_lookup_name("task_work_cancel_func")/' \
        "$RT/stp_task_work.c"
    echo "systemtap runtime: using task_work_cancel_func"
fi
# stap finds a module's tracepoints only through a trace header under the kernel headers' include/trace/events/.
# stap looks for tracepoint headers in the kernel source tree at <build>/source and compiles a query module for
# every header there (minutes, for ~150 headers). Point it at a tree that holds only kbench's header: the probe
# needs no other tracepoint.
SRCT=$BUILD/stap-source
rm -rf "$SRCT"; mkdir -p "$SRCT/include/trace/events"
cp -p "$REPO/kbench-module/kbench_trace.h" "$SRCT/include/trace/events/kbench.h"
ln -sfn "$SRCT" "$KHDR/source"
# ... and the query module includes it as <trace/events/kbench.h>, from the headers' include directory.
cp -p "$REPO/kbench-module/kbench_trace.h" "$KROOT/usr/src/linux-headers-$KVER_COMMON/include/trace/events/kbench.h"
OUTD=$BUILD/stap
rm -rf "$OUTD"; mkdir -p "$OUTD"
cd "$OUTD"
# SYSTEMTAP_DIR: stap's cache (tracepoint queries, modules) stays in the lab's cache, not in ~/.systemtap.
export SYSTEMTAP_TAPSET=$ST/tapset SYSTEMTAP_RUNTIME=$RT SYSTEMTAP_DIR=$CACHE/stap-home
# -p4: stop after building the module. STP_NO_OVERLOAD: TCG is slow, and stap would otherwise stop the session for
# "probe overhead exceeded threshold".
# Libraries the host lacks were extracted next to stap (fetch.sh).
export LD_LIBRARY_PATH=$STROOT/usr/lib/x86_64-linux-gnu:$STROOT/lib/x86_64-linux-gnu
if ! "$STROOT/usr/bin/stap" -p4 -r "$KHDR" -m kbench_stp -DSTP_NO_OVERLOAD -DMAXSKIPPED=1000000 \
        "$LAB_DIR/stap-probe.stp" > "$OUTD/stap.log" 2>&1; then
    grep -m 5 -E 'error|semantic' "$OUTD/stap.log" || tail -n 5 "$OUTD/stap.log"
    echo "SystemTap 4.8 cannot build the probe for $KVER (see $OUTD/stap.log)"; exit 1
fi
cp kbench_stp.ko "$BUILD/kbench_stp.ko"
echo "$KEY-$KVER" > "$BUILD/kbench_stp.key"
echo "SystemTap probe module built"
