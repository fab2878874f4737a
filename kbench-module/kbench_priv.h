/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench's private header: the structs and functions that kbench_main.c, kbench_run.c and kbench_loop.c share
 * (the list of what each file does is at the top of kbench_main.c). Not part of the ABI, which is
 * include/kbench_abi.h.
 */
#ifndef _KBENCH_PRIV_H
#define _KBENCH_PRIV_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/wait.h>

#include "include/kbench_abi.h"

struct perf_event;
struct task_struct;

/* Warm-up bound: warm-up allocates nothing, this only bounds how long one ioctl can run (it stays killable). */
#define KBENCH_MAX_WARMUP 1000000000ull

struct kbench_run;

struct kbench_cpu_run {
	struct kbench_run *run;
	struct task_struct *task;
	unsigned int cpu;
	int ret;
	struct perf_event *events[KBENCH_MAX_COUNTERS]; /* NULL for an unsupported counter */
	struct kbench_sample *samples;
	u64 capacity; /* iterations + max_discarded */
	u64 records, kept, discarded;
	struct completion done;
};

struct kbench_run {
	struct kbench_config cfg; /* validated copy */
	unsigned int clock;
	u32 tsc_khz;
	atomic_t ready;
	wait_queue_head_t ready_wq;
	struct completion start;
	bool stop;
	struct kbench_cpu_run cpu[];
};

/* Per open file: the samples of its last run, until the next run or close. */
struct kbench_file {
	struct mutex lock;
	struct kbench_run *last;
};

/* kbench_loop.c */
/* Payload bytes of the large events, filled once at load time (out of the timed window). */
extern u8 kbench_data[KBENCH_PAYLOAD_1024];
bool kbench_tsc_stable(void);
int kbench_thread(void *data);

/* kbench_run.c */
void kbench_run_free(struct kbench_run *r);
long kbench_ioctl_run(struct kbench_file *f, void __user *uarg);

#endif /* _KBENCH_PRIV_H */
