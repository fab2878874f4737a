#!/bin/sh
# The kernel lab's benchmark script, run inside the guest by /init. It loads kbench.ko, runs the loop once per
# tracer (each row writes events.csv/discarded.csv/meta.txt through kbench-run) and saves, next to each row, what the
# tracer itself recorded (check.txt: tracer_count, last_seq), so that the host can check that the tracer saw exactly
# the events the loop fired. A tracer that is not in the initramfs is listed in /out/skips.txt with the reason; one
# whose set-up fails here is listed in /out/broken.txt, and check.py counts it as a failed check, never a skip.
R=/out/rows
mkdir -p $R
T=/sys/kernel/tracing
N=20000; W=2000; TRACERS="none ftrace ftrace-local ebpf perf lttng systemtap ioctl ioctl-ftrace ioctl-strace ioctl-lttng"
for x in $(cat /proc/cmdline); do
    case $x in
        kbench_n=*) N=${x#*=} ;;
        kbench_w=*) W=${x#*=} ;;
        kbench_strace_n=*) SN=${x#*=} ;;
        kbench_tb_n=*) TBN=${x#*=} ;;
        kbench_fuzz_s=*) FZS=${x#*=} ;;
        kbench_fuzz_n=*) FZN=${x#*=} ;;
        kbench_tracers=*) TRACERS=$(echo ${x#*=} | tr , ' ') ;;
    esac
done
# strace costs ~1 ms a call under TCG: its timed row uses N/10 calls (kbench_strace_n=) to keep the lab short.
SN=${SN:-$((N / 10))}
KVER=$(uname -r)
# Counters: two hardware ones (unsupported under TCG: no PMU, must be reported as such) and one software one.
K="-k 0:0:cycles,0:1:instructions,1:0:cpu-clock"
log() { echo "lab-guest: $*"; }
skip() { echo "$1 $2" >> /out/skips.txt; log "SKIP $1: $2"; }
# A row that should have run here and did not (its set-up failed): a failed check, not a skip.
broken() { echo "$1 $2" >> /out/broken.txt; log "FAIL $1: $2"; }
has() { command -v "$1" >/dev/null 2>&1; }

log "kernel $KVER, $(nproc) CPU(s), N=$N warmup=$W, tracers: $TRACERS"
cat /sys/devices/system/clocksource/clocksource0/current_clocksource > /out/clocksource.txt
if ! insmod /lab/kbench.ko; then
    log "FATAL: insmod kbench.ko failed"; echo "insmod-failed" > /out/done; exit 1
fi
grep -q '^kbench ' /proc/modules && echo loaded > /out/module.txt
stat -c '%a %U' /dev/kbench >> /out/module.txt
kbench-run info > /out/info.txt 2>&1

ftrace_reset() {
    echo 0 > $T/events/enable
    echo 1408 > $T/buffer_size_kb
    echo local > $T/trace_clock
    echo > $T/trace
}

# ftrace on the module's event: 16 KiB per-CPU buffer, overwrite (survey 6.2.3), clock $2.
ftrace_loop() { # row clock
    d=$R/$1
    echo 16 > $T/buffer_size_kb && echo $2 > $T/trace_clock && echo > $T/trace || { broken $1 "tracefs setup failed"; return; }
    echo 1 > $T/events/kbench/kbench_event_4/enable
    echo 1 > $T/tracing_on
    kbench-run loop -t $1 -o $R -n $N -w $W $K
    echo 0 > $T/events/kbench/kbench_event_4/enable
    mkdir -p $d
    { head -n 12 $T/trace; echo ...; tail -n 3 $T/trace; } > $d/ftrace-trace.txt
    cat $T/per_cpu/cpu0/stats > $d/ftrace-stats.txt
    w=$(sed -n 's#.*entries-in-buffer/entries-written: [0-9]*/\([0-9]*\).*#\1#p' $d/ftrace-trace.txt)
    last=$(tail -n 1 $T/trace | sed -n 's/.*seq=\([0-9]*\).*/\1/p')
    printf 'tracer=ftrace\nclock=%s\nmethod=trace file header entries-written\ntracer_count=%s\nlast_seq=%s\n' \
        "$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock)" "$w" "$last" > $d/check.txt
    ftrace_reset
}

perf_loop() {
    has perf || { skip perf "perf is not in the initramfs"; return; }
    d=$R/perf; mkdir -p $d
    rm -f /tmp/perf.data
    perf record -q -e kbench:kbench_event_4 -a -m 1024 -o /tmp/perf.data 2> $d/perf-record.err &
    p=$!
    i=0; while [ ! -s /tmp/perf.data ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i+1)); done
    sleep 1
    kbench-run loop -t perf -o $R -n $N -w $W $K
    kill -INT $p; wait $p
    perf script -i /tmp/perf.data 2> $d/perf-script.err | grep 'kbench_event_4:' > /tmp/perf.txt
    { head -n 3 /tmp/perf.txt; echo ...; tail -n 3 /tmp/perf.txt; } > $d/perf-script.txt
    last=$(tail -n 1 /tmp/perf.txt | sed -n 's/.*seq=\([0-9]*\).*/\1/p')
    printf 'tracer=perf\nmethod=perf script line count\ntracer_count=%s\nlast_seq=%s\n' "$(wc -l < /tmp/perf.txt)" "$last" \
        > $d/check.txt
    perf report -i /tmp/perf.data --stats 2>/dev/null | grep -i -E 'LOST|SAMPLE' > $d/perf-stats.txt
    rm -f /tmp/perf.data /tmp/perf.txt
}

ebpf_loop() {
    d=$R/ebpf
    if kbench-run loop --bpf -t ebpf -o $R -n $N -w $W $K; then
        printf 'tracer=ebpf\nmethod=per-CPU count map (BPF_MAP_LOOKUP_ELEM)\ntracer_count=%s\nlast_seq=%s\n' \
            "$(sed -n 's/^cpu0_bpf_count=//p' $d/meta.txt)" "$(sed -n 's/^cpu0_bpf_last_seq=//p' $d/meta.txt)" > $d/check.txt
    else
        broken ebpf "kbench-run --bpf failed (see guest.log)"
    fi
}


lttng_loop() {
    d=$R/lttng
    [ -d /lib/modules/$KVER/extra/lttng ] || { skip lttng "lttng-modules are not built for $KVER: $(cat /lab/lttng-skip.txt 2>/dev/null)"; return; }
    has lttng || { skip lttng "lttng-tools are not in the initramfs"; return; }
    modprobe lttng-probe-kbench || { broken lttng "modprobe lttng-probe-kbench failed"; return; }
    lttng-sessiond --daemonize >> /out/lttng-sessiond.log 2>&1 || { broken lttng "lttng-sessiond did not start"; return; }
    sleep 1
    # Flight-recorder (snapshot) session: 2 x 8 KiB sub-buffers per CPU, overwrite (survey 6.2.3).
    lttng create kbench --snapshot -o /tmp/lttng-kbench > /dev/null &&
    lttng enable-channel -k ch --subbuf-size 8k --num-subbuf 2 --overwrite > /dev/null &&
    lttng enable-event -k -c ch kbench_event_4 > /dev/null &&
    lttng start > /dev/null || { broken lttng "lttng session setup failed"; lttng destroy -a >/dev/null 2>&1; return; }
    kbench-run loop -t lttng -o $R -n $N -w $W $K
    lttng stop > /dev/null
    lttng snapshot record > /dev/null
    lttng destroy kbench > /dev/null
    mkdir -p $d
    babeltrace2 /tmp/lttng-kbench > /tmp/bt.txt 2> $d/babeltrace2.err
    { head -n 3 /tmp/bt.txt; echo ...; tail -n 3 /tmp/bt.txt; } > $d/babeltrace2.txt
    # The snapshot holds only the newest events (overwrite mode): check that they are the last ones fired, in order
    # and without a gap, rather than their number.
    sed -n 's/.*seq = \([0-9]*\).*/\1/p' /tmp/bt.txt > /tmp/seqs.txt
    first=$(head -n 1 /tmp/seqs.txt); last=$(tail -n 1 /tmp/seqs.txt); cnt=$(wc -l < /tmp/seqs.txt)
    gaps=$(awk 'NR>1 && $1 != prev+1 {g++} {prev=$1} END {print g+0}' /tmp/seqs.txt)
    printf 'tracer=lttng\nmethod=babeltrace2 on the snapshot: last seq and contiguity\nsnapshot_events=%s\nfirst_seq=%s\nlast_seq=%s\ngaps=%s\n' \
        "$cnt" "$first" "$last" "$gaps" > $d/check.txt
    rm -rf /tmp/lttng-kbench /tmp/bt.txt /tmp/seqs.txt
}

stap_loop() {
    d=$R/systemtap
    [ -f /lab/kbench_stp.ko ] || { skip systemtap "the SystemTap probe module was not built: $(cat /lab/stap-skip.txt 2>/dev/null)"; return; }
    has staprun || { skip systemtap "staprun is not in the initramfs"; return; }
    mkdir -p $d
    staprun -o /tmp/stap.out /lab/kbench_stp.ko > $d/staprun.log 2>&1 &
    p=$!
    i=0; while ! grep -q '^kbench_stp ' /proc/modules && [ $i -lt 100 ]; do sleep 0.2; i=$((i+1)); done
    sleep 1
    kbench-run loop -t systemtap -o $R -n $N -w $W $K
    kill -INT $p; wait $p
    cp /tmp/stap.out $d/stap-output.txt 2>/dev/null
    printf 'tracer=systemtap\nmethod=probe count printed by the end probe\ntracer_count=%s\nlast_seq=%s\n' \
        "$(sed -n 's/^count=//p' /tmp/stap.out)" "$(sed -n 's/^last_seq=//p' /tmp/stap.out)" > $d/check.txt
}

# ---- syscall rows: the empty ioctl timed from user space (survey 7.3, Table 5) ----
ioctl_none() { kbench-run syscall -t ioctl -o $R -n $N -w $W; }

ioctl_ftrace() {
    d=$R/ioctl-ftrace
    echo 16 > $T/buffer_size_kb; echo global > $T/trace_clock; echo > $T/trace
    echo 1 > $T/events/syscalls/sys_enter_ioctl/enable
    echo 1 > $T/events/syscalls/sys_exit_ioctl/enable
    kbench-run syscall -t ioctl-ftrace -o $R -n $N -w $W
    echo 0 > $T/events/syscalls/sys_enter_ioctl/enable
    echo 0 > $T/events/syscalls/sys_exit_ioctl/enable
    { head -n 12 $T/trace; echo ...; tail -n 3 $T/trace; } > $d/ftrace-trace.txt
    w=$(sed -n 's#.*entries-in-buffer/entries-written: [0-9]*/\([0-9]*\).*#\1#p' $d/ftrace-trace.txt)
    # entry + exit per ioctl; the runner's own other ioctls (ABI check, stdio) add a few.
    printf 'tracer=ftrace-syscalls\nmethod=entries-written (enter+exit)\ntracer_count=%s\nexpect_min=%s\n' "$w" \
        "$((2 * (N + W)))" > $d/check.txt
    ftrace_reset
}

ioctl_strace() {
    d=$R/ioctl-strace
    has strace || { skip ioctl-strace "strace is not in the initramfs"; return; }
    # Timed row: output to /dev/null with timestamps, as in the survey (7.3).
    strace -t -o /dev/null kbench-run syscall -t ioctl-strace -o $R -n $SN -w $((SN / 10))
    # Check run: a shorter loop (strace costs ~2 ms a call under TCG) with strace writing a file, to count the empty
    # ioctls it saw.
    cn=$((SN / 2 + 1))
    strace -o /tmp/strace.txt -e trace=ioctl kbench-run syscall -t strace-check -o /tmp/sc -n $cn -w 0 > /dev/null
    c=$(grep -c '0xbe, 0x4' /tmp/strace.txt)
    printf 'tracer=strace\nmethod=strace -e trace=ioctl line count (check run of %s calls)\ntracer_count=%s\nexpect=%s\n' \
        "$cn" "$c" "$cn" > $d/check.txt
    rm -rf /tmp/strace.txt /tmp/sc
}

ioctl_lttng() {
    d=$R/ioctl-lttng
    [ -d /lib/modules/$KVER/extra/lttng ] || { skip ioctl-lttng "lttng-modules are not built for $KVER: $(cat /lab/lttng-skip.txt 2>/dev/null)"; return; }
    has lttng || { skip ioctl-lttng "lttng-tools are not in the initramfs"; return; }
    pidof lttng-sessiond > /dev/null || lttng-sessiond --daemonize >> /out/lttng-sessiond.log 2>&1
    lttng create kbench-sys --snapshot -o /tmp/lttng-sys > /dev/null &&
    lttng enable-channel -k ch --subbuf-size 8k --num-subbuf 2 --overwrite > /dev/null &&
    lttng enable-event -k -c ch --syscall ioctl > /dev/null &&
    lttng start > /dev/null || { broken ioctl-lttng "lttng session setup failed"; lttng destroy -a >/dev/null 2>&1; return; }
    kbench-run syscall -t ioctl-lttng -o $R -n $N -w $W
    lttng stop > /dev/null; lttng snapshot record > /dev/null; lttng destroy kbench-sys > /dev/null
    mkdir -p $d
    babeltrace2 /tmp/lttng-sys 2> $d/babeltrace2.err | grep -c 'syscall_entry_ioctl' > /tmp/c.txt
    printf 'tracer=lttng-syscalls\nmethod=babeltrace2 on the snapshot: syscall_entry_ioctl events present\ntracer_count=%s\n' \
        "$(cat /tmp/c.txt)" > $d/check.txt
    rm -rf /tmp/lttng-sys /tmp/c.txt
}

for t in $TRACERS; do
    log "row $t"
    case $t in
        none) kbench-run loop -t none -o $R -n $N -w $W $K ;;
        ftrace) ftrace_loop ftrace global ;;
        ftrace-local) ftrace_loop ftrace-local local ;;
        ebpf) ebpf_loop ;;
        perf) perf_loop ;;
        lttng) lttng_loop ;;
        systemtap) stap_loop ;;
        ioctl) ioctl_none ;;
        ioctl-ftrace) ioctl_ftrace ;;
        ioctl-strace) ioctl_strace ;;
        ioctl-lttng) ioctl_lttng ;;
        *) broken $t "unknown row" ;;
    esac
done
pidof lttng-sessiond > /dev/null && { lttng destroy -a > /dev/null 2>&1; kill $(pidof lttng-sessiond); }

if has kbench-rust-client; then
    log "Rust client (harness/src/kernel/)"
    kbench-rust-client $N $W /out/rust-client || log "kbench-rust-client failed"
else
    skip rust-client "kbench-rust-client is not in the initramfs"
fi

# The real CLI: `tracebench run --kernel` (harness/src/runner/kernel_cell.rs) on the module's tracepoint, with its own
# parent (TSC calibration, disturbance detector) and one measuring child per cell, as on a host that can load modules.
if has tracebench; then
    TBN=${TBN:-2000}
    log "tracebench run --kernel (n=$TBN)"
    # TRACEBENCH_EMULATED=1: run.json host.emulated, so that `tracebench report` compares no timing with the survey.
    TRACEBENCH_EMULATED=1 tracebench run --kernel --tracer none,ftrace,perf -n $TBN --cpu 0 --quiet --out /out/tracebench-kernel \
        > /out/tracebench-kernel.log 2>&1
    echo "rc=$?" >> /out/tracebench-kernel.log
    # tracebench must leave tracefs as found: its ftrace instance removed on exit.
    ls $T/instances > /out/tracebench-instances.txt
    tail -n 5 /out/tracebench-kernel.log
else
    skip tracebench-kernel "tracebench is not in the initramfs"
fi

log "bad ioctls"
kbench-run bad > /out/bad.txt 2>&1
echo "rc=$?" >> /out/bad.txt
# Still alive and usable after the bad ioctls?
if kbench-run loop -t alive -o /tmp/alive -n 100 -w 10 > /dev/null 2>&1 && [ -s /tmp/alive/alive/events.csv ]; then
    echo alive > /out/alive.txt
fi

# ---- robustness. After each test: a valid run must still be correct (kbench-run verify), and the kernel
# log is saved (dmesg-after-<test>.txt) for check.py to look for BUG/WARNING/Oops/lockups/stalls. ----
dm() { dmesg > /out/dmesg-after-$1.txt; }
RB=/out/robust.txt
log "fuzz: ${FZS:=15} s, at least ${FZN:=10000} random and mutated ioctls"
kbench-run fuzz $FZS $FZN > /out/fuzz.txt 2>&1
echo "rc=$?" >> /out/fuzz.txt
cat /out/fuzz.txt
dm fuzz
kbench-run verify fuzz >> $RB 2>&1
log "two RUNs at once"
kbench-run busy >> $RB 2>&1; dm busy
log "SIGKILL mid-run"
kbench-run kill >> $RB 2>&1; dm kill
log "open without CAP_PERFMON"
kbench-run eperm >> $RB 2>&1; dm eperm
log "rmmod while /dev/kbench is open"
exec 3<>/dev/kbench
if rmmod kbench 2> /tmp/rmmod.err; then
    echo "FAIL rmmod-open: rmmod succeeded while /dev/kbench was open" >> $RB
elif grep -q '^kbench ' /proc/modules; then
    echo "PASS rmmod-open: rmmod refused while /dev/kbench was open ($(head -n 1 /tmp/rmmod.err)), module still loaded" >> $RB
else
    echo "FAIL rmmod-open: rmmod failed but the module is gone" >> $RB
fi
exec 3<&-
kbench-run verify rmmod-open >> $RB 2>&1; dm rmmod-open
cat $RB

rmmod kbench && echo unloaded >> /out/module.txt
dmesg > /out/dmesg.txt
echo ok > /out/done
log "done"
