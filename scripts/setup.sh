#!/usr/bin/env bash
# Prepares a Debian/Ubuntu machine for tracebench's real tracer backends. Idempotent: installs
# only missing packages, mounts tracefs only if it is not mounted, starts nothing that stays
# running (tracebench starts lttng-sessiond itself for a run and stops it afterwards).
# Prints what it did. Not root: prints the commands to run instead.
set -euo pipefail

# Package -> why tracebench wants it.
PACKAGES=(
  "lttng-tools:lttng-ust/lttng-tracef backends (lttng, lttng-sessiond)"
  "liblttng-ust-dev:lttng-ust/lttng-tracef backends (tracepoint provider, built by tracers/build.rs)"
  "babeltrace2:reading LTTng snapshots back (tests, buffer-wrap check)"
  "strace:strace backend"
  "pkg-config:build scripts find liblttng-ust and libelf"
  "clang:eBPF backend (BPF programs)"
  "libelf-dev:eBPF backend (libbpf)"
  "zlib1g-dev:eBPF backend (libbpf)"
  "linux-libc-dev:uprobe/perf/eBPF backends (kernel UAPI headers)"
  "bpftrace:eBPF backend cross-check"
  "make:independent check program (scripts/indep)"
  "gcc:C shims and the independent check program"
)

need=()
for entry in "${PACKAGES[@]}"; do
  pkg=${entry%%:*}
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [ "$status" = "install ok installed" ]; then
    echo "ok: $pkg already installed"
  else
    echo "missing: $pkg (${entry#*:})"
    need+=("$pkg")
  fi
done

root=0
[ "$(id -u)" -eq 0 ] && root=1

if [ ${#need[@]} -gt 0 ]; then
  if [ $root -eq 1 ]; then
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # policy-rc.d may refuse to start lttng-sessiond's service; that is fine: tracebench
    # starts its own daemon when it needs one.
    apt-get install -y -qq --no-install-recommends "${need[@]}"
    echo "installed: ${need[*]}"
  else
    echo "not root: run  sudo apt-get update && sudo apt-get install -y ${need[*]}"
  fi
fi

# tracefs: the ftrace backends make private instances under it.
if [ -d /sys/kernel/tracing/instances ]; then
  echo "ok: tracefs mounted at /sys/kernel/tracing"
elif [ $root -eq 1 ]; then
  mount -t tracefs nodev /sys/kernel/tracing
  echo "mounted: tracefs at /sys/kernel/tracing"
else
  echo "not root: run  sudo mount -t tracefs nodev /sys/kernel/tracing"
fi

# Apt may have started an lttng-sessiond service on systems where policy allows it. tracebench
# uses a running daemon if there is one and never stops a daemon it did not start.
if pgrep -x lttng-sessiond >/dev/null 2>&1; then
  echo "note: an lttng-sessiond is running; tracebench will use it and leave it running"
fi
echo "setup done"
