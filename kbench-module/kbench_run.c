// SPDX-License-Identifier: GPL-2.0
/*
 * KBENCH_IOC_RUN: validate the caller's config, create the counters (pinned, one set per CPU), start one kthread per
 * CPU together (kbench_loop.c), wait for them killably, copy the counts back, and keep the samples in the open file
 * until its next run or close (read with KBENCH_IOC_READ, kbench_main.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/perf_event.h>
#include <linux/mutex.h>
#include <linux/completion.h>
#include <linux/wait.h>
#include <linux/cpumask.h>
#include <linux/bitmap.h>
#include <asm/tsc.h>

#include "kbench_priv.h"

/* One run at a time on the whole machine: the runs pin kthreads and share the tracers' buffers. */
static DEFINE_MUTEX(kbench_run_lock);
static atomic64_t kbench_run_ids = ATOMIC64_INIT(0);

void kbench_run_free(struct kbench_run *r)
{
	unsigned int i, j;

	if (!r)
		return;
	for (i = 0; i < r->cfg.n_cpus; i++) {
		for (j = 0; j < KBENCH_MAX_COUNTERS; j++)
			if (r->cpu[i].events[j])
				perf_event_release_kernel(r->cpu[i].events[j]);
		kvfree(r->cpu[i].samples);
	}
	kfree(r);
}

static int kbench_validate(struct kbench_config *cfg)
{
	DECLARE_BITMAP(seen, KBENCH_MAX_CPUS * 64) = { 0 };
	unsigned int i;
	u64 capacity;

	if (cfg->abi_version != KBENCH_ABI_VERSION || cfg->size != sizeof(*cfg))
		return -EINVAL;
	switch (cfg->payload_size) {
	case KBENCH_PAYLOAD_4:
	case KBENCH_PAYLOAD_64:
	case KBENCH_PAYLOAD_256:
	case KBENCH_PAYLOAD_1024:
		break;
	default:
		return -EINVAL;
	}
	if (cfg->clock == KBENCH_CLOCK_TSC && !kbench_tsc_stable())
		return -EINVAL;
	if (cfg->clock > KBENCH_CLOCK_KTIME)
		return -EINVAL;
	if (cfg->iterations < 1 || cfg->iterations > KBENCH_MAX_RECORDS || cfg->max_discarded > KBENCH_MAX_RECORDS ||
	    cfg->warmup > KBENCH_MAX_WARMUP)
		return -EINVAL;
	if (cfg->n_counters > KBENCH_MAX_COUNTERS || cfg->n_cpus < 1 || cfg->n_cpus > KBENCH_MAX_CPUS)
		return -EINVAL;
	capacity = cfg->iterations + cfg->max_discarded;
	if (capacity * cfg->n_cpus > KBENCH_MAX_RECORDS)
		return -EINVAL;
	for (i = 0; i < cfg->n_counters; i++) {
		switch (cfg->counters[i].type) {
		case PERF_TYPE_HARDWARE:
		case PERF_TYPE_SOFTWARE:
		case PERF_TYPE_HW_CACHE:
		case PERF_TYPE_RAW:
			break;
		default:
			return -EINVAL;
		}
	}
	for (i = 0; i < cfg->n_cpus; i++) {
		unsigned int cpu = cfg->cpus[i];

		if (cpu >= nr_cpu_ids || cpu >= KBENCH_MAX_CPUS * 64 || !cpu_online(cpu) || test_bit(cpu, seen))
			return -EINVAL;
		__set_bit(cpu, seen);
	}
	return 0;
}

static struct perf_event *kbench_counter_create(const struct kbench_counter *req, unsigned int cpu, u32 *status)
{
	struct perf_event_attr attr = {
		.type = req->type,
		.size = sizeof(attr),
		.config = req->config,
		.pinned = 1, /* always on the PMU, or in error state: never multiplexed */
		.exclude_hv = 1,
	};
	struct perf_event *ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);

	if (IS_ERR(ev)) {
		/* e.g. ENOENT for cycles without a PMU: reported as unsupported, never as zeros. */
		if (!*status)
			*status = (u32)-PTR_ERR(ev);
		return NULL;
	}
	if (READ_ONCE(ev->state) != PERF_EVENT_STATE_ACTIVE) {
		if (!*status)
			*status = EBUSY;
		perf_event_release_kernel(ev);
		return NULL;
	}
	return ev;
}

long kbench_ioctl_run(struct kbench_file *f, void __user *uarg)
{
	struct kbench_config *cfg;
	struct kbench_run *r = NULL;
	unsigned int i, j, n;
	int ret;

	cfg = kmalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	if (copy_from_user(cfg, uarg, sizeof(*cfg))) {
		ret = -EFAULT;
		goto out_cfg;
	}
	ret = kbench_validate(cfg);
	if (ret)
		goto out_cfg;
	n = cfg->n_cpus;

	if (!mutex_trylock(&kbench_run_lock)) {
		ret = -EBUSY;
		goto out_cfg;
	}

	r = kzalloc(struct_size(r, cpu, n), GFP_KERNEL);
	if (!r) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	r->cfg = *cfg;
	for (i = 0; i < KBENCH_MAX_COUNTERS; i++)
		r->cfg.counters[i].status = 0;
	r->clock = cfg->clock == KBENCH_CLOCK_AUTO ? (kbench_tsc_stable() ? KBENCH_CLOCK_TSC : KBENCH_CLOCK_KTIME)
						   : cfg->clock;
	r->tsc_khz = r->clock == KBENCH_CLOCK_TSC ? tsc_khz : 0;
	atomic_set(&r->ready, 0);
	init_waitqueue_head(&r->ready_wq);
	init_completion(&r->start);

	for (i = 0; i < n; i++) {
		struct kbench_cpu_run *c = &r->cpu[i];

		c->run = r;
		c->cpu = cfg->cpus[i];
		init_completion(&c->done);
		c->capacity = cfg->iterations + cfg->max_discarded;
		/* kvcalloc zeroes, so every page is touched before the loop (no page fault in the window). */
		c->samples = kvcalloc(c->capacity, sizeof(*c->samples), GFP_KERNEL | __GFP_NOWARN);
		if (!c->samples) {
			ret = -ENOMEM;
			goto out_free;
		}
		for (j = 0; j < cfg->n_counters; j++)
			c->events[j] = kbench_counter_create(&cfg->counters[j], c->cpu, &r->cfg.counters[j].status);
	}
	/* A counter unsupported on one CPU is unsupported for the run: drop it everywhere. */
	for (j = 0; j < cfg->n_counters; j++) {
		if (!r->cfg.counters[j].status)
			continue;
		for (i = 0; i < n; i++) {
			if (r->cpu[i].events[j]) {
				perf_event_release_kernel(r->cpu[i].events[j]);
				r->cpu[i].events[j] = NULL;
			}
		}
	}

	for (i = 0; i < n; i++) {
		struct kbench_cpu_run *c = &r->cpu[i];
		struct task_struct *t = kthread_create_on_cpu(kbench_thread, c, c->cpu, "kbench/%u");

		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			WRITE_ONCE(r->stop, true);
			complete_all(&r->start);
			goto out_threads;
		}
		get_task_struct(t);
		c->task = t;
		wake_up_process(t);
	}
	/* Start all CPUs together once every kthread is waiting. */
	wait_event(r->ready_wq, atomic_read(&r->ready) == n);
	complete_all(&r->start);

	ret = 0;
	for (i = 0; i < n; i++) {
		if (wait_for_completion_killable(&r->cpu[i].done)) {
			WRITE_ONCE(r->stop, true);
			ret = -EINTR;
			break;
		}
	}
out_threads:
	for (i = 0; i < n; i++) {
		struct kbench_cpu_run *c = &r->cpu[i];

		if (!c->task)
			continue;
		kthread_stop(c->task); /* waits for the exit; the task reference keeps it valid */
		put_task_struct(c->task);
		c->task = NULL;
		if (!ret && c->ret)
			ret = c->ret;
	}
	if (ret)
		goto out_free;

	for (i = 0; i < n; i++) {
		cfg->records[i] = r->cpu[i].records;
		cfg->kept[i] = r->cpu[i].kept;
		cfg->discarded[i] = r->cpu[i].discarded;
	}
	for (j = 0; j < KBENCH_MAX_COUNTERS; j++)
		cfg->counters[j].status = r->cfg.counters[j].status;
	cfg->clock = r->clock;
	cfg->tsc_khz = r->tsc_khz;
	cfg->run_id = atomic64_inc_return(&kbench_run_ids);
	if (copy_to_user(uarg, cfg, sizeof(*cfg))) {
		ret = -EFAULT;
		goto out_free;
	}
	/* The counters are no longer needed; the samples stay until the next run or close. */
	for (i = 0; i < n; i++) {
		for (j = 0; j < KBENCH_MAX_COUNTERS; j++) {
			if (r->cpu[i].events[j]) {
				perf_event_release_kernel(r->cpu[i].events[j]);
				r->cpu[i].events[j] = NULL;
			}
		}
	}
	mutex_lock(&f->lock);
	kbench_run_free(f->last);
	f->last = r;
	mutex_unlock(&f->lock);
	r = NULL;
out_free:
	kbench_run_free(r);
out_unlock:
	mutex_unlock(&kbench_run_lock);
out_cfg:
	kfree(cfg);
	return ret;
}
