#!/usr/bin/env bash
# Idempotent set-up for tracebench: Debian packages, tracefs. Run by `make bench`, `make test`
# and .ci/run. It prints what it did; when not root, it prints what to run instead.
set -euo pipefail
say() { printf 'setup: %s\n' "$*"; }

# Packages the measurement core and its tests need. Backend-specific lists are appended below
# by each backend's section.
PKGS=(python3 util-linux)
# Example tracer plugins (tracers/examples/examples.mk, built by the plugin tests): C compiler, make.
PKGS+=(gcc libc6-dev make)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    say "missing packages: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}"
  else
    say "installing: ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
else
  say "packages present: ${PKGS[*]}"
fi

# tracefs: the disturbance detector reads tracepoint ids from it, and the tracers use it.
if [ -d /sys/kernel/tracing/events ]; then
  say "tracefs mounted at /sys/kernel/tracing"
elif [ "$(id -u)" -ne 0 ]; then
  say "tracefs not mounted; run: sudo mount -t tracefs nodev /sys/kernel/tracing"
else
  mount -t tracefs nodev /sys/kernel/tracing && say "mounted tracefs at /sys/kernel/tracing"
fi

# perf_event_paranoid: per-thread kernel-side sampling needs <= 1 (or root).
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
  say "perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid); run: sudo sysctl kernel.perf_event_paranoid=1"
fi
