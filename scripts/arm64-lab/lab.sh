#!/bin/bash
# The arm64 lab (`make arm64-lab`): tracebench cross-built for arm64, run in a stock Debian arm64 kernel
# under qemu-system-aarch64 TCG, whose emulated PMUv3 counts instructions exactly under -icount. The same build
# runs the four tracers three times: with the PMU read in user space (--counters instructions,cycles,
# perf_user_access=1), with the PMU read by read() (perf_user_access=0), and single-stepped (--instructions
# singlestep); compare.py checks that each PMU run gives the stepped run's net instructions per call (tracer
# minus none). Timings under TCG are emulated and compared with nothing.
# Each PMU run is --repeats processes per tracer, interleaved, of N calls each: a clock read's longer path (the
# vDSO's carry past a second boundary, at most one tick long) can then hold one repetition, never the mode.
#   scripts/arm64-lab/lab.sh [--out DIR] [--n N] [--repeats R] [--step-n N] [--tracers a,b,...]
# Prints the results directory on its last line; exits non-zero when the guest did not finish or the counts
# disagree.
set -euo pipefail
. "$(dirname "$0")/config.sh"
N=100; REPS=3; SN=100; TRACERS=none,lw,printf,lttng-ust; OUT=
while [ $# -gt 0 ]; do
    case $1 in
        --out) OUT=$2; shift 2 ;;
        --n) N=$2; shift 2 ;;
        --repeats) REPS=$2; shift 2 ;;
        --step-n) SN=$2; shift 2 ;;
        --tracers) TRACERS=$2; shift 2 ;;
        *) echo "arm64-lab: unknown option $1 (use --out DIR, --n N, --repeats R, --step-n N, --tracers a,b)" >&2; exit 2 ;;
    esac
done
case $N$REPS$SN in *[!0-9]*|'') echo "arm64-lab: --n, --repeats and --step-n take whole numbers" >&2; exit 2 ;; esac
T0=$(date +%s)
log() { echo "arm64-lab: [$(( $(date +%s) - T0 ))s] $*"; }
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$REPO/results/$STAMP-arm64-lab}
[ -e "$OUT" ] && { echo "arm64-lab: $OUT already exists; pick another --out" >&2; exit 2; }

bash "$LAB_DIR/fetch.sh"
KVER=$(cat "$CACHE/kver")
log "cross-building tracebench for arm64"
TB=$(bash "$LAB_DIR/build.sh" 2> "$CACHE/build.log" | tail -n 1) || {
    tail -n 30 "$CACHE/build.log" >&2; echo "arm64-lab: the arm64 build failed (see $CACHE/build.log)" >&2; exit 1; }

# ---- initramfs: busybox, tracebench (+ its LTTng provider), lttng-tools, and the arm64 libraries they load ----
log "building the initramfs"
mkdir -p "$BUILD"
IR=$BUILD/initramfs
rm -rf "$IR"; mkdir -p "$IR"/usr/{bin,sbin,lib/aarch64-linux-gnu} "$IR"/{etc,root,tmp,proc,sys,dev,run,var}
for d in bin sbin lib; do ln -s usr/$d "$IR/$d"; done
ln -s ../run "$IR/var/run"   # lttng-sessiond keeps its state under /var/run/lttng
cp "$SYSROOT/usr/bin/busybox" "$IR/usr/bin/busybox"
cp "$LAB_DIR/guest/init" "$IR/init"; chmod +x "$IR/init"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$IR/etc/passwd"
printf 'root:x:0:\ntracing:x:999:\n' > "$IR/etc/group"
cp "$TB" "$IR/usr/bin/tracebench"
aarch64-linux-gnu-strip "$IR/usr/bin/tracebench"
L=$SYSROOT/usr/lib/aarch64-linux-gnu
ELFS=("$IR/usr/bin/tracebench")
if [ -f "$(dirname "$TB")/libtb_lttng.so" ]; then
    cp "$(dirname "$TB")/libtb_lttng.so" "$IR/usr/bin/"; ELFS+=("$IR/usr/bin/libtb_lttng.so")
    cp "$SYSROOT"/usr/bin/{lttng,lttng-sessiond} "$IR/usr/bin/"
    mkdir -p "$IR/usr/lib/aarch64-linux-gnu/lttng/libexec"
    cp "$L/lttng/libexec/lttng-consumerd" "$IR/usr/lib/aarch64-linux-gnu/lttng/libexec/"
    ELFS+=("$IR/usr/bin/lttng" "$IR/usr/bin/lttng-sessiond" "$IR/usr/lib/aarch64-linux-gnu/lttng/libexec/lttng-consumerd")
    # liblttng-ust loads its parts with dlopen (tracepoint, fd and fork helpers): all of them.
    cp -a "$L"/liblttng-ust*.so.* "$IR/usr/lib/aarch64-linux-gnu/"
    ELFS+=("$IR"/usr/lib/aarch64-linux-gnu/liblttng-ust*.so.*)
    mkdir -p "$IR/usr/share/xml/lttng"; cp "$SYSROOT/usr/share/xml/lttng/session.xsd" "$IR/usr/share/xml/lttng/"
    if [ -x "$SYSROOT/usr/bin/babeltrace2" ]; then
        cp "$SYSROOT/usr/bin/babeltrace2" "$IR/usr/bin/"; ELFS+=("$IR/usr/bin/babeltrace2")
        mkdir -p "$IR/usr/lib/aarch64-linux-gnu/babeltrace2/plugins"
        cp "$L"/babeltrace2/plugins/*.so "$IR/usr/lib/aarch64-linux-gnu/babeltrace2/plugins/"
        ELFS+=("$IR"/usr/lib/aarch64-linux-gnu/babeltrace2/plugins/*.so)
    fi
else
    log "SKIP lttng-ust: no libtb_lttng.so in the arm64 build (see $CACHE/build.log)"
fi
# The dynamic loader, then every NEEDED library, transitively, from the sysroot.
cp -L "$L/ld-linux-aarch64.so.1" "$IR/usr/lib/aarch64-linux-gnu/"
ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 "$IR/usr/lib/ld-linux-aarch64.so.1"
todo=("${ELFS[@]}")
while [ ${#todo[@]} -gt 0 ]; do
    next=()
    for e in "${todo[@]}"; do
        for lib in $(readelf -d "$e" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            [ -e "$IR/usr/lib/aarch64-linux-gnu/$lib" ] && continue
            [ -e "$L/$lib" ] || { log "library $lib of $(basename "$e") not in the sysroot"; continue; }
            cp -L "$L/$lib" "$IR/usr/lib/aarch64-linux-gnu/$lib"; next+=("$IR/usr/lib/aarch64-linux-gnu/$lib")
        done
    done
    todo=("${next[@]}")
done
python3 "$REPO/scripts/kernel-lab/mkcpio.py" "$IR" "$BUILD/init.cpio"
log "initramfs: $(du -m "$BUILD/init.cpio" | cut -f1) MiB"

# ---- boot: the lab's command line; 1 vCPU, exact instruction counts (-icount shift=0) ----
QEMU=$QROOT/usr/bin/qemu-system-aarch64
[ -x "$QEMU" ] || QEMU=$(command -v qemu-system-aarch64)
export LD_LIBRARY_PATH=$QROOT/usr/lib/x86_64-linux-gnu:$QROOT/lib/x86_64-linux-gnu
QVER=$("$QEMU" --version | head -n 1)
log "booting $KVER under qemu-system-aarch64 TCG (-icount shift=0), N=$N x $REPS repetitions, stepped N=$SN, tracers $TRACERS"
TQ=$(date +%s)
set +e
timeout "${ARM64_LAB_TIMEOUT:-900}" "$QEMU" -M virt -cpu max,pauth=off -icount shift=0 -m 512 -nographic -no-reboot \
    -net none -L "$QROOT/usr/share/qemu" -kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$BUILD/init.cpio" \
    -append "console=ttyAMA0 panic=-1 loglevel=3 lab_n=$N lab_reps=$REPS lab_sn=$SN lab_tracers=$TRACERS" \
    > "$BUILD/console.log" 2>&1 < /dev/null
QRC=$?
set -e
unset LD_LIBRARY_PATH
QWALL=$(( $(date +%s) - TQ ))
log "guest exited (qemu rc=$QRC, $QWALL s)"

# ---- results: the base64 tar.gz between the markers ----
mkdir -p "$OUT"
cp "$BUILD/console.log" "$OUT/console.log"
if ! sed -n '/^LAB-RESULTS-BEGIN/,/^LAB-RESULTS-END/p' "$BUILD/console.log" | sed '1d;$d' | tr -d '\r' \
        | base64 -d 2>/dev/null | tar -xz -C "$OUT" 2>/dev/null; then
    tail -n 30 "$BUILD/console.log" >&2
    echo "arm64-lab: the guest sent no results (see $OUT/console.log)" >&2
    exit 1
fi
mv "$OUT"/res/* "$OUT"/ && rmdir "$OUT/res"
{
    echo "command: $0 --n $N --repeats $REPS --step-n $SN --tracers $TRACERS"
    echo "kernel: $KVER (Debian bookworm arm64), qemu: $QVER, guest wall: $QWALL s"
    echo "qemu: -M virt -cpu max,pauth=off -icount shift=0 -m 512 (TCG: timings are emulated, compared with nothing)"
} > "$OUT/lab.txt"
log "comparing PMU and single-step counts"
set +e
python3 "$LAB_DIR/compare.py" "$OUT" | tee "$OUT/compare.txt"
CRC=${PIPESTATUS[0]}
set -e
WALL=$(( $(date +%s) - T0 ))
echo "wall: $WALL s" >> "$OUT/lab.txt"
log "results in $OUT (wall $WALL s)"
echo "$OUT"
exit $CRC
