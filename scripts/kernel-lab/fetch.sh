#!/bin/bash
# Download (apt-get download, never install) everything the kernel lab needs into the cache directory and extract
# it there with dpkg -x. Nothing is installed on the host, so the host's packages (e.g. qemu-utils 10.0 from
# backports, which a bookworm qemu-system-x86 install would remove) stay as they are.
set -euo pipefail
. "$(dirname "$0")/config.sh"

mkdir -p "$DEBS"
cd "$DEBS"

# Libraries qemu and SystemTap need that this host lacks (the lists in config.sh are what a bookworm machine with
# the project's setup.sh lacks; a barer machine lacks more): follow Depends three levels down, first alternative,
# keep what is not installed. They are extracted next to qemu/stap and found through LD_LIBRARY_PATH.
missing_deps() {
    local level=0 todo=("$@") next seen=" $* " d
    while [ $level -lt 3 ] && [ ${#todo[@]} -gt 0 ]; do
        next=()
        # one apt-cache call per level: it is slow to start
        for d in $(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
                --no-enhances "${todo[@]}" 2>/dev/null | awk '/^ *\|Depends:/{if (!skip) {print $2; skip=1}; next}
                    /^ *Depends:/{ if (!skip) print $2; skip=0; next}'); do
            case $d in \<*) continue ;; esac
            case "$seen" in *" $d "*) continue ;; esac
            seen="$seen$d "
            [ "$(dpkg-query -W -f='${db:Status-Status}' "$d" 2>/dev/null)" = installed ] && continue
            echo "$d"; next+=("$d")
        done
        todo=("${next[@]}"); level=$((level + 1))
    done
}
if [ ! -f "$CACHE/extra-qemu.txt" ]; then
    missing_deps qemu-system-x86 | grep -vxF -f <(printf '%s\n' "${QEMU_PKGS[@]}") | grep -E '^lib' > "$CACHE/extra-qemu.txt" || true
    missing_deps "${STAP_PKGS[@]}" | grep -vxF -f <(printf '%s\n' "${STAP_PKGS[@]}") | grep -E '^lib' > "$CACHE/extra-stap.txt" || true
fi
mapfile -t EXTRA_QEMU < "$CACHE/extra-qemu.txt"
mapfile -t EXTRA_STAP < "$CACHE/extra-stap.txt"
QEMU_PKGS+=("${EXTRA_QEMU[@]}")
STAP_PKGS+=("${EXTRA_STAP[@]}")
[ ${#EXTRA_QEMU[@]} -gt 0 ] && echo "kernel-lab: extra libraries for qemu: ${EXTRA_QEMU[*]}"
[ ${#EXTRA_STAP[@]} -gt 0 ] && echo "kernel-lab: extra libraries for SystemTap: ${EXTRA_STAP[*]}"

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
    [ "$(cat "$stamp" 2>/dev/null)" = "$*" ] && return 0
    rm -rf "$dest"; mkdir -p "$dest"
    for p in "$@"; do dpkg -x "$DEBS/${p}"_*.deb "$dest"; done
    echo "$*" > "$stamp"
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
