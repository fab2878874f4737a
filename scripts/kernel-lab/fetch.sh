#!/bin/bash
# Download (apt-get download, never install) everything the kernel lab needs into the cache directory and extract
# it there with dpkg -x. Nothing is installed on the host, so the host's packages (e.g. qemu-utils 10.0 from
# backports, which a bookworm qemu-system-x86 install would remove) stay as they are.
set -euo pipefail
. "$(dirname "$0")/config.sh"

mkdir -p "$CACHE/debs"
cd "$CACHE/debs"

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

# ---- the shared part, always bookworm's, from the host's apt: qemu, the guest's busybox and kmod, SystemTap ----
need=()
mkdir -p "$CACHE/debs"; cd "$CACHE/debs"
shared=("${GUEST_PKGS[@]}" "${QEMU_PKGS[@]}" "${STAP_PKGS[@]}")
[ "$LAB_KERNEL" = bookworm ] && shared+=("${KERNEL_PKGS[@]}" "${SRC_PKGS[@]}")
for p in "${shared[@]}"; do
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

extract() { # extract <dest> <debs dir> <pkg>...
    local dest=$1 from=$2; shift 2
    local stamp="$dest/.extracted"
    [ "$(cat "$stamp" 2>/dev/null)" = "$*" ] && return 0
    rm -rf "$dest"; mkdir -p "$dest"
    for p in "$@"; do dpkg -x "$from/${p}"_*.deb "$dest"; done
    echo "$*" > "$stamp"
}
extract "$QROOT" "$CACHE/debs" "${QEMU_PKGS[@]}"
extract "$GROOT" "$CACHE/debs" "${GUEST_PKGS[@]}"
extract "$STROOT" "$CACHE/debs" "${STAP_PKGS[@]}"
# kmod picks the tool by argv[0]; the package's depmod link is absolute (/bin/kmod), so make our own.
mkdir -p "$CACHE/bin"; ln -sf "$GROOT/bin/kmod" "$DEPMOD"

if [ "$LAB_KERNEL" = bookworm ]; then
    extract "$KROOT" "$DEBS" "${KERNEL_PKGS[@]}"
    extract "$SROOT" "$DEBS" "${SRC_PKGS[@]}"
    # The -amd64 headers' Makefile includes the -common one by an absolute /usr/src path: point it at the extracted tree.
    sed -i "s|^include /usr/src/|include $KROOT/usr/src/|" "$KHDR/Makefile"
else
    # ---- a suite other than the host's: its own apt state under the cache, and a sysroot to build in ----
    mkdir -p "$APTD"/{lists/partial,archives/partial,prefs.d} "$DEBS"
    echo "$SUITE_SOURCES" > "$APTD/sources.list"
    : > "$APTD/status"
    sapt() { # apt-get/apt-cache on the suite's lists only (the host's sources, pins and dpkg state are left out)
        local tool=$1; shift
        "$tool" -o Dir::Etc::SourceList="$APTD/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
            -o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts="$APTD/prefs.d" \
            -o Dir::State::Lists="$APTD/lists" -o Dir::State::status="$APTD/status" -o Dir::Cache="$APTD" \
            -o Dir::Cache::archives="$APTD/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
            -o APT::Architecture=amd64 -o APT::Update::Post-Invoke-Success::= -o Debug::NoLocking=1 "$@"
    }
    if ! ls "$APTD"/lists/*_Packages* >/dev/null 2>&1; then
        echo "kernel-lab: apt-get update of the $LAB_KERNEL suite (its lists go to $APTD)"
        sapt apt-get update > "$KCACHE/apt-update.log" 2>&1 || {
            tail -n 5 "$KCACHE/apt-update.log" >&2
            echo "kernel-lab: cannot read the $LAB_KERNEL suite from deb.debian.org (see $KCACHE/apt-update.log)" >&2; exit 1; }
    fi
    if [ -z "$KVER" ]; then
        # The kernel linux-image-amd64 points at, pinned from then on for this cache.
        # (sid's Depends starts with linux-base-amd64: take the linux-image- one wherever it is.)
        # awk reads to the end: an early exit would SIGPIPE apt-cache and, with pipefail, stop the script.
        dep=$(sapt apt-cache show linux-image-amd64 2>/dev/null | awk '/^Depends:/ && !d {
            for (i = 2; i <= NF; i++) if ($i ~ /^linux-image-/) { sub(/^linux-image-/, "", $i); sub(/,$/, "", $i);
                print $i; d = 1; break } }')
        [ -n "$dep" ] || { echo "kernel-lab: linux-image-amd64 of $LAB_KERNEL names no kernel" >&2; exit 1; }
        echo "$dep" > "$KCACHE/kver"
        echo "kernel-lab: $LAB_KERNEL kernel: $dep"
        . "$LAB_DIR/config.sh"
    fi
    [ -f "$KCACHE/sysroot-pkgs.txt" ] || sapt apt-get install -s --no-install-recommends "${SYSROOT_PKGS[@]}" 2>/dev/null \
        | awk '/^Inst /{print $2}' > "$KCACHE/sysroot-pkgs.txt"
    mapfile -t ROOT_PKGS < "$KCACHE/sysroot-pkgs.txt"
    [ ${#ROOT_PKGS[@]} -gt 10 ] || { echo "kernel-lab: could not resolve the $LAB_KERNEL sysroot packages" >&2; rm -f "$KCACHE/sysroot-pkgs.txt"; exit 1; }
    cd "$DEBS"
    need=()
    for p in "${KERNEL_PKGS[@]}" "${SRC_PKGS[@]}" "${ROOT_PKGS[@]}"; do
        ls "${p}"_*.deb >/dev/null 2>&1 || need+=("$p")
    done
    if [ ${#need[@]} -gt 0 ]; then
        echo "kernel-lab: downloading ${#need[@]} packages from $LAB_KERNEL"
        sapt apt-get download "${need[@]}" > /dev/null 2> "$KCACHE/apt-download.err" || {
            cat "$KCACHE/apt-download.err" >&2; echo "kernel-lab: apt-get download from $LAB_KERNEL failed" >&2; exit 1; }
    fi
    extract "$SROOT" "$DEBS" "${SRC_PKGS[@]}"
    if [ "$(cat "$SYSROOT/.extracted" 2>/dev/null)" != "${ROOT_PKGS[*]} ${KERNEL_PKGS[*]}" ]; then
        echo "kernel-lab: extracting the $LAB_KERNEL sysroot"
        rm -rf "$SYSROOT"; mkdir -p "$SYSROOT/usr"/{bin,sbin,lib,lib64}
        # merged /usr, as a trixie system has it
        for d in bin sbin lib lib64; do ln -s usr/$d "$SYSROOT/$d"; done
        for p in "${ROOT_PKGS[@]}" "${KERNEL_PKGS[@]}"; do dpkg-deb --fsys-tarfile "$DEBS/${p}"_*.deb |
            tar -x -C "$SYSROOT" --keep-directory-symlink; done
        # What maintainer scripts would have made: /bin/sh, the unversioned compiler name, /dev/null.
        ln -sf dash "$SYSROOT/usr/bin/sh"; ln -sf mawk "$SYSROOT/usr/bin/awk"
        ln -sf gcc-$GCCV "$SYSROOT/usr/bin/gcc"; ln -sf x86_64-linux-gnu-gcc-$GCCV "$SYSROOT/usr/bin/cc"
        mkdir -p "$SYSROOT"/{dev,tmp,proc}; chmod 1777 "$SYSROOT/tmp"
        mknod -m 666 "$SYSROOT/dev/null" c 1 3; mknod -m 666 "$SYSROOT/dev/zero" c 1 5
        mknod -m 444 "$SYSROOT/dev/urandom" c 1 9
        echo "${ROOT_PKGS[*]} ${KERNEL_PKGS[*]}" > "$SYSROOT/.extracted"
    fi
    chroot "$SYSROOT" /usr/bin/x86_64-linux-gnu-gcc-$GCCV --version > /dev/null || {
        echo "kernel-lab: the $LAB_KERNEL sysroot's gcc-$GCCV does not run in chroot (are we root?)" >&2; exit 1; }
fi
# The image package ships no modules.dep (depmod runs at install time): make it with the downloaded kmod.
[ -f "$KROOT/lib/modules/$KVER/modules.dep" ] || "$DEPMOD" -b "$KROOT" "$KVER"
echo "kernel-lab: packages ready under $KCACHE ($LAB_KERNEL, $KVER)"
