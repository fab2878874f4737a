#!/bin/bash
# The kernel lab: run kbench-module and the kernel tracers in a stock Debian guest kernel under qemu TCG.
#
# This host cannot load modules, so: download the Debian kernel LAB_KERNEL names (config.sh: bookworm's 6.1 or
# trixie's 6.12), its headers, busybox and a bookworm qemu (apt-get download + dpkg -x into .cache/kernel-lab, nothing
# installed), build kbench.ko (and, when they build, lttng-modules and the SystemTap probe) against the extracted
# headers (trixie's in a trixie sysroot, see config.sh), pack an initramfs with busybox, the module,
# the guest runner and the host's tracer tools, boot it with 1 vCPU (with 2 the guest drops the TSC clocksource for
# hpet), and bring the results back over 9p as an ordinary results directory.
#
# A functional test, not an overhead measurement: TCG timing is emulated and there is no PMU.
#   LAB_KERNEL=bookworm|trixie scripts/kernel-lab/lab.sh [--out DIR] [--n N] [--warmup W] [--tracers a,b,...]
# Prints the results directory on its last line. scripts/kernel-lab/test.sh checks it.
set -euo pipefail
. "$(dirname "$0")/config.sh"

N=20000
WARMUP=2000
TRACERS=none,ftrace,ftrace-local,ebpf,perf,lttng,systemtap,ioctl,ioctl-ftrace,ioctl-strace,ioctl-lttng
OUT=
ARGS="$*"
while [ $# -gt 0 ]; do
    case $1 in
        --out) OUT=$2; shift 2 ;;
        --n) N=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --tracers) TRACERS=$2; shift 2 ;;
        *) echo "kernel-lab: unknown option $1 (use --out DIR, --n N, --warmup W, --tracers a,b)" >&2; exit 2 ;;
    esac
done
case $N$WARMUP in *[!0-9]*) echo "kernel-lab: --n and --warmup take whole numbers" >&2; exit 2 ;; esac

T0=$(date +%s)
log() { echo "kernel-lab: [$(( $(date +%s) - T0 ))s] $*"; }
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

bash "$LAB_DIR/fetch.sh"
. "$LAB_DIR/config.sh"   # again: fetch.sh resolved KVER for a suite's current kernel
OUT=${OUT:-$REPO/results/$STAMP-kernel-lab-$KVER}
if [ -e "$OUT" ]; then echo "kernel-lab: $OUT already exists; pick another --out" >&2; exit 2; fi
mkdir -p "$BUILD"
# User-space binaries do not depend on the guest kernel: one cargo target for every kernel of the matrix.
CARGO_TARGET=${CARGO_TARGET_DIR:-$CACHE/build/cargo-target}

# ---- kbench.ko, built in a copy so that the source tree stays clean ----
log "building kbench.ko against $KVER headers"
rm -rf "$BUILD/kbench-module"
cp -r "$REPO/kbench-module" "$BUILD/kbench-module"
kmake -C "$(rpath "$BUILD/kbench-module")" KDIR="$(rpath "$KHDR")" > "$BUILD/kbench-build.log" 2>&1 || {
    cat "$BUILD/kbench-build.log" >&2; echo "kernel-lab: kbench.ko does not build against $KVER" >&2; exit 1; }
# The bar: no compiler warning against any kernel of the matrix.
if grep -q 'warning:' "$BUILD/kbench-build.log"; then
    grep 'warning:' "$BUILD/kbench-build.log" >&2; log "kbench.ko builds against $KVER WITH WARNINGS"
    echo "warnings" > "$BUILD/kbench-build.status"
else
    echo "clean" > "$BUILD/kbench-build.status"
fi

# ---- guest runner ----
# kbench-run.c and its parts (the top of kbench-run.c says what each holds).
gcc -O2 -Wall -static -I "$REPO/kbench-module/include" -o "$BUILD/kbench-run" \
    "$LAB_DIR"/guest/kbench-run{,-common,-loop,-bpf,-ioctl,-robust}.c

# ---- the Rust client (harness/src/kernel/) as a small fixture binary ----
RUST_CLIENT=
if command -v cargo >/dev/null; then
    if (cd "$LAB_DIR/rust-client" && CARGO_TARGET_DIR=$CARGO_TARGET cargo build -q) \
        > "$BUILD/rust-client.log" 2>&1; then
        RUST_CLIENT=$CARGO_TARGET/debug/kbench-rust-client
    else log "SKIP rust-client: it does not build (see $BUILD/rust-client.log)"; fi
else log "SKIP rust-client: cargo is not installed"; fi

# ---- the real tracebench binary, for `tracebench run --kernel` in the guest (no ebpf feature: fewer shared libs) ----
TRACEBENCH=
if [ "${KERNEL_LAB_TRACEBENCH:-1}" = 0 ]; then log "SKIP tracebench-kernel: KERNEL_LAB_TRACEBENCH=0"
elif command -v cargo >/dev/null; then
    log "building tracebench (release, no ebpf feature) for the guest"
    if (cd "$REPO" && CARGO_TARGET_DIR=$CARGO_TARGET cargo build -q --release -p tracebench) \
        > "$BUILD/tracebench-build.log" 2>&1; then
        TRACEBENCH=$CARGO_TARGET/release/tracebench
    else log "SKIP tracebench-kernel: tracebench does not build (see $BUILD/tracebench-build.log)"; fi
else log "SKIP tracebench-kernel: cargo is not installed"; fi

# ---- optional tracers (each says why when it cannot be built, and the lab goes on) ----
LTTNG_OK=0; STAP_OK=0
rm -f "$BUILD/lttng-skip.txt" "$BUILD/stap-skip.txt"
if [ -x "$LAB_DIR/build-lttng.sh" ]; then
    if bash "$LAB_DIR/build-lttng.sh" > "$BUILD/lttng-build.log" 2>&1; then LTTNG_OK=1; log "lttng-modules ready";
    else log "SKIP lttng: lttng-modules do not build for $KVER: $(tail -n 1 "$BUILD/lttng-build.log")"
         tail -n 1 "$BUILD/lttng-build.log" > "$BUILD/lttng-skip.txt"; fi
fi
if [ -x "$LAB_DIR/build-stap.sh" ]; then
    if bash "$LAB_DIR/build-stap.sh" > "$BUILD/stap-build.log" 2>&1; then STAP_OK=1; log "SystemTap probe ready";
    else log "SKIP systemtap: $(tail -n 1 "$BUILD/stap-build.log")"; tail -n 1 "$BUILD/stap-build.log" > "$BUILD/stap-skip.txt"; fi
fi

# ---- initramfs ----
log "building the initramfs"
IR=$BUILD/initramfs
rm -rf "$IR"; mkdir -p "$IR"/{bin,sbin,lib,lib64,usr/bin,usr/lib,etc,lab,root,tmp}
cp "$GROOT/bin/busybox" "$IR/bin/busybox"
cp "$LAB_DIR/guest/init" "$IR/init"; chmod +x "$IR/init"
cp "$LAB_DIR/guest/guest.sh" "$IR/lab/guest.sh"
cp "$BUILD/kbench-module/kbench.ko" "$IR/lab/kbench.ko"
cp "$BUILD/kbench-run" "$IR/bin/kbench-run"
# Why a tracer could not be built, for the guest's skip line (and so for check.py and the merged view).
for f in lttng-skip.txt stap-skip.txt; do [ -f "$BUILD/$f" ] && cp "$BUILD/$f" "$IR/lab/$f"; done
mkdir -p "$IR/var"; ln -s ../run "$IR/var/run"   # lttng-sessiond creates /var/run/lttng
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$IR/etc/passwd"
printf 'root:x:0:\ntracing:x:999:\n' > "$IR/etc/group"

# A host binary and the shared libraries it needs (same Debian release as the guest's userland needs).
add_bin() { # add_bin SRC [DEST]
    local src=$1 dest=${2:-$1}
    mkdir -p "$IR$(dirname "$dest")"
    cp -L "$src" "$IR$dest"
    ldd "$src" 2>/dev/null | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | while read -r lib; do
        [ -e "$IR$lib" ] && continue
        mkdir -p "$IR$(dirname "$lib")"; cp -L "$lib" "$IR$lib"
    done
}
# Kernel modules the guest needs from the Debian image, with their dependencies from modules.dep. Trixie's are
# xz-compressed: they go in decompressed (busybox's modprobe need not know xz), and depmod below indexes them.
MODS=$KROOT/lib/modules/$KVER
add_mod() { # add_mod NAME
    local line f
    if grep -qE "(^|/)$1\.ko\$" "$MODS/modules.builtin" 2>/dev/null; then return 0; fi
    line=$(grep -E "(^|/)$1\.ko(\.xz)?:" "$MODS/modules.dep" | head -n 1) || { log "no module $1"; return 0; }
    for f in $(echo "$line" | tr -d ':'); do
        mkdir -p "$IR/lib/modules/$KVER/$(dirname "$f")"
        case $f in
            *.xz) xz -dc "$MODS/$f" > "$IR/lib/modules/$KVER/${f%.xz}" ;;
            *) cp "$MODS/$f" "$IR/lib/modules/$KVER/$f" ;;
        esac
    done
}
for m in virtio_pci 9pnet_virtio 9p; do add_mod $m; done
cp "$MODS"/modules.{order,builtin,builtin.modinfo} "$IR/lib/modules/$KVER/" 2>/dev/null || true

[ -n "$RUST_CLIENT" ] && add_bin "$RUST_CLIENT" /usr/bin/kbench-rust-client
# Stripped: the release profile keeps debuginfo (~28 MiB), the guest needs none of it.
[ -n "$TRACEBENCH" ] && { add_bin "$TRACEBENCH" /usr/bin/tracebench; strip "$IR/usr/bin/tracebench" 2>/dev/null || true; }
if command -v strace >/dev/null; then add_bin "$(command -v strace)" /usr/bin/strace; fi
# perf: older bookworm linux-perf installs perf_6.1 behind a wrapper, newer ones the binary as /usr/bin/perf.
PERF=
for p in /usr/bin/perf_6.1 /usr/bin/perf; do
    if [ -x $p ] && file -L $p 2>/dev/null | grep -q ELF; then PERF=$p; break; fi
done
if [ -n "$PERF" ]; then add_bin $PERF /usr/bin/perf; else log "SKIP perf: no perf binary for 6.1 on the host (apt-get install linux-perf)"; fi
if [ $LTTNG_OK = 1 ]; then
    . "$LAB_DIR/lttng-initramfs.sh"
fi
if [ $STAP_OK = 1 ]; then
    . "$LAB_DIR/stap-initramfs.sh"
fi
"$DEPMOD" -b "$IR" "$KVER" 2>> "$BUILD/depmod.log" || log "depmod warnings: see $BUILD/depmod.log"
python3 "$LAB_DIR/mkcpio.py" "$IR" "$BUILD/initramfs.cpio"
log "initramfs: $(du -m "$BUILD/initramfs.cpio" | cut -f1) MiB"

# ---- boot ----
SHARE=$BUILD/share
rm -rf "$SHARE"; mkdir -p "$SHARE"
QEMU=$QROOT/usr/bin/qemu-system-x86_64
KIMAGE=$KROOT/boot/vmlinuz-$KVER
[ -f "$KIMAGE" ] || KIMAGE=$KROOT/usr/lib/modules/$KVER/vmlinuz   # sid's packaging
export LD_LIBRARY_PATH=$QROOT/usr/lib/x86_64-linux-gnu:$QROOT/lib/x86_64-linux-gnu
log "booting $KVER under qemu TCG (1 vCPU), N=$N warm-up=$WARMUP"
set +e
timeout 1200 "$QEMU" -accel tcg -cpu max -smp 1 -m 2048 -nographic -no-reboot -net none \
    -L "$QROOT/usr/share/qemu" -L "$QROOT/usr/share/seabios" \
    -kernel "$KIMAGE" -initrd "$BUILD/initramfs.cpio" \
    -append "console=ttyS0 panic=-1 loglevel=4 kbench_n=$N kbench_w=$WARMUP kbench_tracers=$TRACERS" \
    -virtfs local,path="$SHARE",mount_tag=out,security_model=none,id=out \
    > "$BUILD/console.log" 2>&1 < /dev/null
QRC=$?
set -e
unset LD_LIBRARY_PATH
log "guest exited (qemu rc=$QRC)"
if [ "$(cat "$SHARE/done" 2>/dev/null)" != ok ]; then
    tail -n 40 "$BUILD/console.log" >&2
    echo "kernel-lab: the guest did not finish (see $BUILD/console.log)" >&2
fi

# ---- results directory ----
cp "$BUILD/kbench-build.log" "$BUILD/kbench-build.status" "$SHARE/" 2>/dev/null || true
python3 "$LAB_DIR/assemble.py" --share "$SHARE" --out "$OUT" --kver "$KVER" --n "$N" --warmup "$WARMUP" \
    --cmdline "$0 $ARGS" --tracers "$TRACERS" --console "$BUILD/console.log"
log "results in $OUT (wall $(( $(date +%s) - T0 )) s)"
echo "$OUT"
