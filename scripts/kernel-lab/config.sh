# Shared settings of the kernel lab (sourced by the other scripts).
# The pinned kernel: bookworm-security's current 6.1 (linux-image-amd64 6.1.192-2 -> ABI 6.1.0-56).
KVER=${KVER:-6.1.0-56-amd64}
KVER_COMMON=${KVER%-amd64}-common
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$LAB_DIR/../.." && pwd)
CACHE=${KERNEL_LAB_CACHE:-$REPO/.cache/kernel-lab}
DEBS=$CACHE/debs
KROOT=$CACHE/kernel      # linux-image + headers + kbuild, extracted
QROOT=$CACHE/qemu        # qemu-system-x86 7.2 (bookworm) and the libraries the host lacks
GROOT=$CACHE/guest-pkgs  # busybox-static, kmod
SROOT=$CACHE/src         # lttng-modules source
BUILD=$CACHE/build
KERNEL_PKGS=(linux-image-$KVER linux-headers-$KVER linux-headers-$KVER_COMMON linux-kbuild-6.1)
GUEST_PKGS=(busybox-static kmod)
QEMU_PKGS=(qemu-system-x86 qemu-system-common qemu-system-data seabios ipxe-qemu libcapstone4 libfdt1 libibverbs1
           libpmem1 librdmacm1 libslirp0 libvdeplug2 libndctl6 libdaxctl1 libnl-3-200 libnl-route-3-200)
SRC_PKGS=(lttng-modules-dkms)
STAP_PKGS=(systemtap systemtap-runtime systemtap-common)
STROOT=$CACHE/stap       # SystemTap 4.8 (bookworm), extracted
KHDR=$KROOT/usr/src/linux-headers-$KVER
DEPMOD=$CACHE/bin/depmod
