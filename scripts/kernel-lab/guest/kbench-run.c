// SPDX-License-Identifier: MIT
/*
 * kbench-run: the kernel lab's guest-side driver of /dev/kbench (kbench-module/include/kbench_abi.h).
 *
 * A small static program (the guest is busybox only) that runs the kernel loop through the ioctl ABI and writes
 * the per-tracer files of tracebench's output contract (events.csv, discarded.csv) plus meta.txt with what the
 * host-side checks need (events fired, kept, clock, counter status, what the BPF map saw). summary.csv and run.json
 * are assembled on the host from these files (scripts/kernel-lab/assemble.py).
 *
 *   kbench-run info
 *   kbench-run loop    -t ROW -o DIR [-n N] [-w W] [-p PAYLOAD] [-C cpu,...] [-k type:config:name,...] [--bpf]
 *   kbench-run syscall -t ROW -o DIR [-n N] [-w W]       the empty ioctl timed from user space (survey 7.3)
 *   kbench-run bad                                         invalid arguments must fail cleanly
 *   kbench-run fuzz SECONDS MIN_CALLS                      random and mutated RUN/READ ioctls
 *   kbench-run busy | kill | eperm | verify NAME           two RUNs at once, SIGKILL mid-run, open without
 *                                                          CAP_PERFMON, a valid run checked sample by sample
 *
 * --bpf loads an eBPF program (raw instructions, no libbpf in the guest) on the loop's tracepoint; it writes
 * {ts, payload} into a per-CPU array ring and counts the events it saw in a per-CPU counter.
 *
 * The files (kbench-run.h is their shared header; calls go main -> sub-commands -> common, never back):
 *   kbench-run.c         this one: info and main, which dispatches to the sub-commands
 *   kbench-run-common.c  what they all share: the device, the ABI check, the clock's name, a valid config
 *   kbench-run-loop.c    loop and syscall: the options, the rows' events.csv, discarded.csv and meta.txt
 *   kbench-run-bpf.c     the eBPF program of --bpf and its maps
 *   kbench-run-ioctl.c   bad (invalid arguments) and fuzz (random and mutated ioctls)
 *   kbench-run-robust.c  busy, kill, eperm and verify
 */
#include "kbench-run.h"

static int cmd_info(void)
{
	struct kbench_info info;
	int fd = open_dev();

	check_abi(fd, &info);
	printf("abi_version=%u\nclock=%s\ntsc_khz=%llu\ntsc_stable=%u\nnr_cpu_ids=%u\nmax_records=%llu\n",
	       info.abi_version, clock_name(info.clock), info.tsc_khz, !!(info.flags & KBENCH_INFO_TSC_STABLE),
	       info.nr_cpu_ids, info.max_records);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "loop"))
		return cmd_loop(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "syscall"))
		return cmd_syscall(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "bad"))
		return cmd_bad();
	if (argc >= 2 && !strcmp(argv[1], "info"))
		return cmd_info();
	if (argc >= 2 && !strcmp(argv[1], "fuzz"))
		return cmd_fuzz(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "busy"))
		return cmd_busy();
	if (argc >= 2 && !strcmp(argv[1], "kill"))
		return cmd_kill();
	if (argc >= 2 && !strcmp(argv[1], "eperm"))
		return cmd_eperm();
	if (argc >= 3 && !strcmp(argv[1], "verify"))
		return verify_run(argv[2], argc > 3 ? strtoull(argv[3], NULL, 0) : 5000);
	fprintf(stderr, "usage: kbench-run info | loop ... | syscall ... | bad | fuzz S N | busy | kill | eperm | verify NAME [N]\n");
	return 2;
}
