# Shared settings of the arm64 lab (sourced by the other scripts).
LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$LAB_DIR/../.." && pwd)
CACHE=${ARM64_LAB_CACHE:-$REPO/.cache/arm64-lab}
QROOT=$CACHE/qemu          # qemu-system-arm 7.2 (bookworm, amd64) and the libraries the host lacks
SYSROOT=$CACHE/root        # the guest's arm64 userland, extracted (also the sysroot of the lttng-ust provider)
KROOT=$CACHE/kernel        # linux-image-*-arm64, extracted
DEBS=$CACHE/debs           # arm64 .debs
APTD=$CACHE/apt            # private apt state of bookworm arm64
BUILD=$CACHE/build
SUITE_SOURCES="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main"
QEMU_PKGS=(qemu-system-arm qemu-system-common qemu-system-data libcapstone4 libfdt1 libibverbs1 libpmem1 librdmacm1
           libslirp0 libvdeplug2 libndctl6 libdaxctl1 libnl-3-200 libnl-route-3-200 liburing2 libgfapi0 libglusterfs0
           libgfrpc0 libgfxdr0 libiscsi7 librados2 librbd1 libaio1 libbpf1 libjack-jackd2-0 libsndio7.0 libspice-server1
           libusbredirparser1 libvirglrenderer1 libgbm1 libepoxy0 libpulse0 libsdl2-2.0-0 libgtk-3-0 libvte-2.91-0
           libnfs13 libssh-4 libusb-1.0-0 libbrlapi0.8 libcacard0 libpng16-16 libjpeg62-turbo libxkbcommon0 libu2f-udev)
# What the guest runs: busybox, lttng-tools (lttng, lttng-sessiond, consumerd) and liblttng-ust (plus -dev: the
# headers and the .so link the cross build of the provider, libtb_lttng.so, needs); apt adds glibc and the rest.
GUEST_PKGS=(busybox-static lttng-tools liblttng-ust1 liblttng-ust-dev babeltrace2)
