#!/bin/bash
# Cross-builds tracebench for arm64 (release, no eBPF), with the lttng-ust backend's provider (libtb_lttng.so)
# compiled by aarch64-linux-gnu-gcc against the arm64 liblttng-ust of the lab's sysroot (scripts/arm64-lab/fetch.sh).
# Prints the binary's path on its last line; libtb_lttng.so goes next to it (where the backend looks first).
set -euo pipefail
. "$(dirname "$0")/config.sh"
command -v aarch64-linux-gnu-gcc >/dev/null || {
    echo "arm64-lab: aarch64-linux-gnu-gcc missing (apt-get install gcc-aarch64-linux-gnu)" >&2; exit 1; }
if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    echo "arm64-lab: adding the Rust target aarch64-unknown-linux-gnu (rustup target add)" >&2
    rustup target add aarch64-unknown-linux-gnu >&2 || {
        echo "arm64-lab: rustup target add aarch64-unknown-linux-gnu failed: no arm64 standard library to build with" >&2
        exit 1; }
fi
# Only LTTng's and liburcu's headers and libraries: the sysroot's glibc must not shadow the cross compiler's.
L=$SYSROOT/usr/lib/aarch64-linux-gnu
X=$BUILD/xlttng
rm -rf "$X"; mkdir -p "$X/include" "$X/lib"
for d in "$SYSROOT"/usr/include "$SYSROOT"/usr/include/aarch64-linux-gnu; do
    for h in "$d"/lttng "$d"/urcu "$d"/urcu*.h "$d"/urcu; do [ -e "$h" ] && cp -r "$h" "$X/include/"; done
done
[ -f "$X/include/lttng/tracepoint.h" ] || { echo "arm64-lab: no lttng/tracepoint.h in $SYSROOT" >&2; exit 1; }
for f in "$L"/liblttng-ust.so "$L"/liblttng-ust-common.so "$L"/liburcu*.so; do [ -e "$f" ] && ln -s "$f" "$X/lib/"; done
export PKG_CONFIG_LIBDIR=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$SYSROOT PKG_CONFIG_ALLOW_CROSS=1
export CFLAGS_aarch64_unknown_linux_gnu="-I$X/include -L$X/lib -Wl,-rpath-link,$L"
cd "$REPO"
nice -n 5 cargo build --release --target aarch64-unknown-linux-gnu -p tracebench >&2
OUTD=$REPO/target/aarch64-unknown-linux-gnu/release
SO=$(ls -t "$OUTD"/build/tracebench-tracers-*/out/libtb_lttng.so 2>/dev/null | head -n 1 || true)
if [ -n "$SO" ]; then cp "$SO" "$OUTD/libtb_lttng.so"; else rm -f "$OUTD/libtb_lttng.so"; fi
echo "$OUTD/tracebench"
