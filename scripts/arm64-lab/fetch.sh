#!/bin/bash
# Download (apt-get download, never install) what the arm64 lab needs into .cache/arm64-lab and extract it there
# with dpkg -x; nothing is installed on the host and the host's dpkg architecture list is left alone.
#   - qemu-system-arm (bookworm, amd64) and the libraries the host lacks, from the host's apt;
#   - the guest's userland (arm64): the Debian kernel linux-image-arm64 points at, busybox-static, glibc,
#     liblttng-ust and lttng-tools with their dependencies, from a private apt state of bookworm arm64
#     (APT::Architecture=arm64, its lists under the cache).
set -euo pipefail
. "$(dirname "$0")/config.sh"
mkdir -p "$CACHE/debs-host" "$DEBS" "$APTD"/{lists/partial,archives/partial,prefs.d}

# ---- qemu (host architecture) ----
cd "$CACHE/debs-host"
need=()
for p in "${QEMU_PKGS[@]}"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] && continue
    ls "${p}"_*.deb >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "arm64-lab: downloading ${need[*]}"
    apt-get download "${need[@]}" > /dev/null 2> "$CACHE/apt-download.err" || {
        cat "$CACHE/apt-download.err" >&2; echo "arm64-lab: apt-get download failed (run 'apt-get update' first?)" >&2; exit 1; }
fi

# ---- the guest (arm64), from bookworm's lists fetched into the cache ----
echo "$SUITE_SOURCES" > "$APTD/sources.list"
: > "$APTD/status"
sapt() { # apt-get/apt-cache on the private arm64 lists only (the host's sources, pins and dpkg state are left out)
    local tool=$1; shift
    "$tool" -o Dir::Etc::SourceList="$APTD/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
        -o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts="$APTD/prefs.d" \
        -o Dir::State::Lists="$APTD/lists" -o Dir::State::status="$APTD/status" -o Dir::Cache="$APTD" \
        -o Dir::Cache::archives="$APTD/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
        -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Update::Post-Invoke-Success::= \
        -o Debug::NoLocking=1 "$@"
}
if ! ls "$APTD"/lists/*_Packages* >/dev/null 2>&1; then
    echo "arm64-lab: apt-get update of bookworm arm64 (lists in $APTD)"
    sapt apt-get update > "$CACHE/apt-update.log" 2>&1 || {
        tail -n 5 "$CACHE/apt-update.log" >&2; echo "arm64-lab: cannot read bookworm arm64 from deb.debian.org" >&2; exit 1; }
fi
if [ ! -s "$CACHE/kver" ]; then
    dep=$(sapt apt-cache show linux-image-arm64 2>/dev/null | awk '/^Depends:/ && !d {
        for (i = 2; i <= NF; i++) if ($i ~ /^linux-image-/) { sub(/^linux-image-/, "", $i); sub(/,$/, "", $i);
            print $i; d = 1; break } }')
    [ -n "$dep" ] || { echo "arm64-lab: linux-image-arm64 names no kernel" >&2; exit 1; }
    echo "$dep" > "$CACHE/kver"
fi
KVER=$(cat "$CACHE/kver")
# The guest's packages with every dependency (resolved against an empty dpkg state, so glibc comes too).
if [ ! -s "$CACHE/guest-pkgs.txt" ]; then
    sapt apt-get install -s --no-install-recommends "${GUEST_PKGS[@]}" 2>/dev/null | awk '/^Inst /{print $2}' \
        > "$CACHE/guest-pkgs.txt"
fi
mapfile -t ROOT_PKGS < "$CACHE/guest-pkgs.txt"
[ ${#ROOT_PKGS[@]} -gt 5 ] || { rm -f "$CACHE/guest-pkgs.txt"; echo "arm64-lab: cannot resolve the guest packages" >&2; exit 1; }
cd "$DEBS"
need=()
for p in linux-image-$KVER "${ROOT_PKGS[@]}"; do ls "${p}"_*.deb >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
    echo "arm64-lab: downloading ${#need[@]} arm64 packages (kernel $KVER)"
    sapt apt-get download "${need[@]}" > /dev/null 2> "$CACHE/apt-download.err" || {
        cat "$CACHE/apt-download.err" >&2; echo "arm64-lab: apt-get download of arm64 packages failed" >&2; exit 1; }
fi

extract() { # extract <dest> <debs dir> <pkg>...
    local dest=$1 from=$2; shift 2
    [ "$(cat "$dest/.extracted" 2>/dev/null)" = "$*" ] && return 0
    rm -rf "$dest"; mkdir -p "$dest"
    for p in "$@"; do
        ls "$from/${p}"_*.deb >/dev/null 2>&1 || continue   # installed on the host: nothing downloaded
        dpkg-deb --fsys-tarfile "$from/${p}"_*.deb | tar -x -C "$dest" --keep-directory-symlink
    done
    echo "$*" > "$dest/.extracted"
}
extract "$QROOT" "$CACHE/debs-host" "${QEMU_PKGS[@]}"
# The guest root: merged /usr as bookworm has it, so /lib/ld-linux-aarch64.so.1 resolves.
if [ "$(cat "$SYSROOT/.extracted" 2>/dev/null)" != "${ROOT_PKGS[*]}" ]; then
    rm -rf "$SYSROOT"; mkdir -p "$SYSROOT/usr"/{bin,sbin,lib}
    for d in bin sbin lib; do ln -s usr/$d "$SYSROOT/$d"; done
    for p in "${ROOT_PKGS[@]}"; do dpkg-deb --fsys-tarfile "$DEBS/${p}"_*.deb | tar -x -C "$SYSROOT" --keep-directory-symlink; done
    echo "${ROOT_PKGS[*]}" > "$SYSROOT/.extracted"
fi
extract "$KROOT" "$DEBS" "linux-image-$KVER"
echo "arm64-lab: packages ready under $CACHE (kernel $KVER)"
