/* SPDX-License-Identifier: MIT */
/*
 * kbench-run's private header: what its files share (the list of what each file does is at the top of
 * kbench-run.c). Include it first: it sets _GNU_SOURCE before any system header.
 */
#ifndef KBENCH_RUN_H
#define KBENCH_RUN_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#include "kbench_abi.h"

/* kbench-run-common.c (calls no other kbench-run file) */
void die(const char *what) __attribute__((noreturn));
int open_dev(void);
void check_abi(int fd, struct kbench_info *info);
const char *clock_name(unsigned int c);
void good_cfg(struct kbench_config *c);

/* kbench-run-bpf.c */
struct bpf_state {
	int prog, ring, count, perf;
};

void bpf_attach(const char *event, struct bpf_state *st);
void bpf_read(struct bpf_state *st, unsigned int cpu, __u64 *count, long long *last_seq);

/* kbench-run-loop.c */
int cmd_loop(int argc, char **argv);
int cmd_syscall(int argc, char **argv);

/* kbench-run-ioctl.c */
int cmd_bad(void);
int cmd_fuzz(int argc, char **argv);

/* kbench-run-robust.c */
int verify_run(const char *what, __u64 n);
int cmd_busy(void);
int cmd_kill(void);
int cmd_eperm(void);

#endif /* KBENCH_RUN_H */
