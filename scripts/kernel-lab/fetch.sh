#!/bin/bash
# Download (apt-get download, never install) everything the kernel lab needs into the cache directory and extract
# it there with dpkg -x. Nothing is installed on the host, so the host's packages (e.g. qemu-utils 10.0 from
# backports, which a bookworm qemu-system-x86 install would remove) stay as they are.
set -euo pipefail
. "$(dirname "$0")/config.sh"

mkdir -p "$DEBS"
cd "$DEBS"

need=()
for p in "${KERNEL_PKGS[@]}" "${GUEST_PKGS[@]}" "${QEMU_PKGS[@]}" "${SRC_PKGS[@]}" "${STAP_PKGS[@]}"; do
    ls "${p}"_*.deb >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "kernel-lab: downloading ${need[*]}"
    if ! apt-get download "${need[@]}" >/dev/null 2>"$CACHE/apt-download.err"; then
        echo "kernel-lab: apt-get download failed (run 'apt-get update' first?):" >&2
        cat "$CACHE/apt-download.err" >&2
        exit 1
    fi
fi

extract() { # extract <dest> <pkg>...
    local dest=$1; shift
    local stamp="$dest/.extracted"
    [ -f "$stamp" ] && return 0
    rm -rf "$dest"; mkdir -p "$dest"
    for p in "$@"; do dpkg -x "$DEBS/${p}"_*.deb "$dest"; done
    touch "$stamp"
}
extract "$KROOT" "${KERNEL_PKGS[@]}"
extract "$QROOT" "${QEMU_PKGS[@]}"
extract "$GROOT" "${GUEST_PKGS[@]}"
extract "$SROOT" "${SRC_PKGS[@]}"
extract "$STROOT" "${STAP_PKGS[@]}"

# The -amd64 headers' Makefile includes the -common one by an absolute /usr/src path: point it at the extracted tree.
sed -i "s|^include /usr/src/|include $KROOT/usr/src/|" "$KHDR/Makefile"
# The image package ships no modules.dep (depmod runs at install time): make it with the downloaded kmod.
# kmod picks the tool by argv[0]; the package's depmod link is absolute (/bin/kmod), so make our own.
mkdir -p "$CACHE/bin"; ln -sf "$GROOT/bin/kmod" "$DEPMOD"
[ -f "$KROOT/lib/modules/$KVER/modules.dep" ] || "$DEPMOD" -b "$KROOT" "$KVER"
echo "kernel-lab: packages ready under $CACHE"
