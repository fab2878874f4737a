#!/usr/bin/env bash
# Idempotent set-up for tracebench: Debian packages, tracefs. Run by `make bench`, `make test`
# and .ci/run. It prints what it did; when not root, it prints what to run instead.
set -euo pipefail
say() { printf 'setup: %s\n' "$*"; }

# Packages the measurement core and its tests need. Backend-specific lists are appended below
# by each backend's section.
PKGS=(python3 util-linux)
# LTTng, ftrace and system-call backends: lttng-tools and liblttng-ust-dev for
# lttng-ust/lttng-tracef (tracers/build.rs builds the provider when liblttng-ust-dev is present),
# babeltrace2 to read LTTng snapshots back, strace, and gcc/make/pkg-config for the C provider and
# the independent check (scripts/indep).
PKGS+=(lttng-tools liblttng-ust-dev babeltrace2 strace gcc make pkg-config)
# eBPF backend build (clang compiles tracers/bpf/site.bpf.c; libbpf-sys builds libbpf against
# libelf and zlib; linux-libc-dev has <linux/bpf.h> and <asm/ptrace.h>), and bpftrace.
PKGS+=(clang libelf-dev zlib1g-dev pkg-config linux-libc-dev bpftrace)
# otf and otf2 backends: the OTF 1 and OTF2 trace writers, VampirTrace's and Score-P's
# formats (the tracers themselves are not in Debian). The backends dlopen the runtime libraries
# these pull in (libopen-trace-format1, libopen-trace-format2-10); no build step needs them.
PKGS+=(libopen-trace-format-dev libopen-trace-format2-dev)
# Example tracer plugins (tracers/examples/examples.mk, built by the plugin tests): C compiler, make.
PKGS+=(gcc libc6-dev make)
# The report test opens report.html in headless Chromium.
PKGS+=(chromium)
# Kernel lab: file(1) and perf (linux-perf) check the guest results; the lab fetches its own
# kernel, qemu and busybox packages into .cache/kernel-lab without installing them.
PKGS+=(file linux-perf)
# arm64 lab (make arm64-lab): the cross linker for the aarch64 build; the lab fetches
# its own arm64 kernel, qemu and guest packages into .cache/arm64-lab without installing them.
PKGS+=(gcc-aarch64-linux-gnu)

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
    # Start no service: lttng-tools' package would start a permanent lttng-sessiond where init
    # scripts are allowed to run. tracebench starts its own daemon for a run and stops it after.
    policy=/usr/sbin/policy-rc.d
    made_policy=0
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
    fi
    rc=0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || rc=$?
    if [ $made_policy -eq 1 ]; then rm -f "$policy"; fi
    if [ $rc -ne 0 ]; then say "apt-get install failed ($rc)"; exit $rc; fi
    say "installed: ${missing[*]}"
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
