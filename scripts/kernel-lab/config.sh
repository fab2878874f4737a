# Shared settings of the kernel lab (sourced by the other scripts).
#
# LAB_KERNEL picks the guest kernel (scripts/kernel-lab/test.sh runs every one of $KERNELS):
#   bookworm (6.1)   bookworm-security's pinned 6.1 (linux-image-amd64 6.1.192-2 -> ABI 6.1.0-56). Built on the host:
#                    the host is bookworm, so its gcc-12 is the compiler Debian built that kernel with.
#   trixie (6.12)    trixie's current linux-image-amd64 (resolved once, kept in .cache/kernel-lab/trixie/kver;
#                    KVER= overrides). Debian built it with gcc-14 and its kbuild tools (modpost, objtool) need
#                    glibc 2.38, neither of which a bookworm host has: its modules are built in a small trixie
#                    sysroot (apt-get download + dpkg -x of gcc-14, make, libc6-dev and their dependencies, used
#                    with chroot), with the kernel headers extracted into it.
#   sid (newest)     the same for unstable's current kernel (7.2 when written) and its gcc (16). Not in the default
#                    matrix: unstable moves under it; KERNELS=bookworm,trixie,sid adds it.
LAB_KERNEL=${LAB_KERNEL:-bookworm}
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$LAB_DIR/../.." && pwd)
CACHE=${KERNEL_LAB_CACHE:-$REPO/.cache/kernel-lab}
QROOT=$CACHE/qemu        # qemu-system-x86 7.2 (bookworm) and the libraries the host lacks
GROOT=$CACHE/guest-pkgs  # busybox-static, kmod
STROOT=$CACHE/stap       # SystemTap 4.8 (bookworm), extracted
DEPMOD=$CACHE/bin/depmod
GUEST_PKGS=(busybox-static kmod)
QEMU_PKGS=(qemu-system-x86 qemu-system-common qemu-system-data seabios ipxe-qemu libcapstone4 libfdt1 libibverbs1
           libpmem1 librdmacm1 libslirp0 libvdeplug2 libndctl6 libdaxctl1 libnl-3-200 libnl-route-3-200)
STAP_PKGS=(systemtap systemtap-runtime systemtap-common)
SRC_PKGS=(lttng-modules-dkms)
case $LAB_KERNEL in
    bookworm|6.1)
        LAB_KERNEL=bookworm
        KVER=${KVER:-6.1.0-56-amd64}
        KCACHE=$CACHE
        DEBS=$CACHE/debs
        KROOT=$CACHE/kernel      # linux-image + headers + kbuild, extracted
        SROOT=$CACHE/src         # lttng-modules source
        BUILD=$CACHE/build
        SYSROOT=
        KBUILD_PKG=linux-kbuild-6.1
        ;;
    trixie|6.12|sid|unstable|newest)
        case $LAB_KERNEL in
            trixie|6.12)
                LAB_KERNEL=trixie; GCCV=14
                SUITE_SOURCES="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security trixie-security main" ;;
            *)
                LAB_KERNEL=sid; GCCV=16
                SUITE_SOURCES="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" ;;
        esac
        KCACHE=$CACHE/$LAB_KERNEL
        KVER=${KVER:-$(cat "$KCACHE/kver" 2>/dev/null || true)}   # empty until fetch.sh resolved it
        DEBS=$KCACHE/debs
        SYSROOT=$KCACHE/root     # the trixie toolchain, the kernel image, headers and kbuild, extracted
        KROOT=$SYSROOT
        SROOT=$KCACHE/src        # the suite's lttng-modules source (trixie: 2.13.18, knows 6.12)
        BUILD=$SYSROOT/lab-build # inside the sysroot, so that the chroot'ed make sees it at /lab-build
        KBUILD_PKG=linux-kbuild-${KVER%-amd64}
        # The private apt of the suite (lists and state under the cache; the host's apt is not touched).
        APTD=$KCACHE/apt
        # What the sysroot needs to build modules (apt adds their dependencies); dwarves: pahole, for the BTF
        # of modules that the trixie kernel (CONFIG_DEBUG_INFO_BTF_MODULES) wants.
        SYSROOT_PKGS=(gcc-$GCCV make libc6-dev libelf1t64 dwarves bash dash coreutils sed grep mawk findutils diffutils kmod)
        ;;
    *)
        echo "kernel-lab: unknown kernel '$LAB_KERNEL' (use bookworm, trixie or sid; or 6.1, 6.12 or newest)" >&2
        exit 2
        ;;
esac
KVER_COMMON=${KVER%-amd64}-common
KERNEL_PKGS=(linux-image-$KVER linux-headers-$KVER linux-headers-$KVER_COMMON $KBUILD_PKG)
# sid splits the image package: the kernel binary, the modules and modules.builtin etc. have packages of their own
# (and the kernel is /usr/lib/modules/$KVER/vmlinuz, not /boot/vmlinuz-$KVER).
[ "$LAB_KERNEL" = sid ] && KERNEL_PKGS+=(linux-binary-$KVER linux-modules-$KVER linux-base-$KVER)
KHDR=$KROOT/usr/src/linux-headers-$KVER

# Paths and make as the kernel build sees them: on the host for bookworm, in the chroot for trixie.
if [ -n "$SYSROOT" ]; then
    rpath() { echo "/${1#"$SYSROOT"/}"; }
    # A private mount namespace with /proc mounted in the sysroot (newer objtool reads /proc/self/limits); the
    # mount goes away with the namespace.
    kmake() {
        unshare --mount --fork --mount-proc="$SYSROOT/proc" \
            chroot "$SYSROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
            make DEB_BUILD_ARCH=amd64 "$@"
    }
else
    rpath() { echo "$1"; }
    kmake() { make "$@"; }
fi
