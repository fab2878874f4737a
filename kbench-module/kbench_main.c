// SPDX-License-Identifier: GPL-2.0
/*
 * kbench: the kernel-side microbenchmark of tracebench (survey Gebai & Dagenais 2018, section 6.2, Algorithm 1).
 *
 * An ioctl on /dev/kbench (root only, 0600) runs a tight loop that calls one of the module's tracepoints
 * (kbench_trace.h) on each requested CPU, one pinned kthread per CPU, started together. Per iteration:
 *
 *   local_irq_save; still on our CPU?; nmi = this CPU's NMI count; counters active here?; read counters;
 *   t0 = clock; tracepoint(payload); t1 = clock; read counters; counters still active?; nmi_changed; local_irq_restore
 *
 * and the sample is kept only when no NMI hit *this* iteration (the survey's code read the count once per run) and
 * every counter was on this CPU's PMU throughout. A loop that finds itself on another CPU (hotplug) aborts the run.
 * Discarded iterations are stored too, flagged, so that user space can write discarded.csv and every sample keeps
 * its iteration index. Results stay in memory owned by the open file and are copied out in chunks
 * (KBENCH_IOC_READ): nothing is overwritten. The ABI is include/kbench_abi.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/version.h>
#include <linux/module.h>
#include <linux/capability.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/perf_event.h>
#include <linux/irqflags.h>
#include <linux/mutex.h>
#include <linux/completion.h>
#include <linux/wait.h>
#include <linux/cpumask.h>
#include <linux/timekeeping.h>
#include <linux/math64.h>
#include <linux/build_bug.h>
#include <asm/tsc.h>
#include <asm/hardirq.h>
#include <asm/cpufeature.h>

#include "include/kbench_abi.h"

#define CREATE_TRACE_POINTS
#include "kbench_trace.h"

/* Warm-up bound: warm-up allocates nothing, this only bounds how long one ioctl can run (it stays killable). */
#define KBENCH_MAX_WARMUP 1000000000ull
/* Iterations between cond_resched()/stop checks. */
#define KBENCH_RESCHED_EVERY 1024

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

/* One run at a time on the whole machine: the runs pin kthreads and share the tracers' buffers. */
static DEFINE_MUTEX(kbench_run_lock);
static atomic64_t kbench_run_ids = ATOMIC64_INIT(0);
/* Payload bytes of the large events, filled once at load time (out of the timed window). */
static u8 kbench_data[KBENCH_PAYLOAD_1024];

/*
 * This CPU's NMI count. Newer x86 kernels keep the interrupt counts in an array (irq_stat.counts[IRQ_COUNT_NMI]),
 * older ones in named fields (irq_stat.__nmi_count); Kbuild tells which from the headers (backports included).
 */
#ifdef KBENCH_NMI_COUNT_ARRAY
#define kbench_nmi_count() this_cpu_read(irq_stat.counts[IRQ_COUNT_NMI])
#else
#define kbench_nmi_count() this_cpu_read(irq_stat.__nmi_count)
#endif

static bool kbench_tsc_stable(void)
{
	/* Prefer the TSC only when it ticks at a constant rate through C-states and the kernel trusts it. */
	return boot_cpu_has(X86_FEATURE_TSC) && boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
	       boot_cpu_has(X86_FEATURE_NONSTOP_TSC) && !check_tsc_unstable() && tsc_khz != 0;
}

static __always_inline u64 kbench_now(const unsigned int clock)
{
	if (clock == KBENCH_CLOCK_TSC)
		return rdtsc_ordered();
	return ktime_get_mono_fast_ns();
}

/*
 * perf_event_read_local() is exported by none of Debian's 6.1, 6.12 and 7.2 (Module.symvers), so read the counter
 * the way it does: update the count from the PMU, then read it. That is only valid for an event that is active on
 * this CPU, with interrupts off: kbench_counters_live() checks it around each iteration.
 */
static __always_inline u64 kbench_counter_read(struct perf_event *ev)
{
	ev->pmu->read(ev);
	return local64_read(&ev->count);
}

/*
 * Whether every counter of the iteration is on the PMU of this CPU right now. A pinned counter can still be
 * descheduled mid-run (put in error state by a competing pinned CPU-wide event, or removed by a hotplug); its
 * pmu->read() then returns a stale count and the delta would be garbage. perf takes an event off a CPU through an
 * IPI, which cannot arrive while interrupts are off, so checking before the first and after the last read (both
 * with interrupts off) covers the whole iteration.
 */
static __always_inline bool kbench_counters_live(struct kbench_cpu_run *c, unsigned int n, int cpu)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct perf_event *ev = c->events[i];

		if (ev && (READ_ONCE(ev->state) != PERF_EVENT_STATE_ACTIVE || READ_ONCE(ev->oncpu) != cpu))
			return false;
	}
	return true;
}

static __always_inline void kbench_fire(const unsigned int size, u32 seq)
{
	switch (size) {
	case KBENCH_PAYLOAD_4:
		trace_kbench_event_4(seq);
		break;
	case KBENCH_PAYLOAD_64:
		trace_kbench_event_64(seq, kbench_data);
		break;
	case KBENCH_PAYLOAD_256:
		trace_kbench_event_256(seq, kbench_data);
		break;
	default:
		trace_kbench_event_1024(seq, kbench_data);
		break;
	}
}

/* kbench_iter() result: KBENCH_SAMPLE_* discard flags, or this bit when the loop is not on its CPU any more. */
#define KBENCH_ITER_WRONG_CPU 0x80000000u

/*
 * One iteration of Algorithm 1. size and clock are compile-time constants in every instantiation, so the timed
 * window holds only the two clock reads and the tracepoint. Returns 0 for a sample to keep, else the reasons to
 * discard it (an NMI hit the iteration, a counter was not active on this CPU), or KBENCH_ITER_WRONG_CPU.
 */
static __always_inline u32 kbench_iter(struct kbench_cpu_run *c, unsigned int n, const unsigned int size,
				       const unsigned int clock, u32 seq, u64 *ticks, u64 *deltas)
{
	u64 c0[KBENCH_MAX_COUNTERS], c1[KBENCH_MAX_COUNTERS];
	unsigned long flags;
	unsigned int nmi, i;
	u32 why = 0;
	bool live;
	int cpu;
	u64 t0, t1;

	local_irq_save(flags);
	/*
	 * The kthread is bound to c->cpu, but offlining that CPU breaks the binding and migrates it: it would then read
	 * another CPU's counters and NMI count and record the wrong CPU. The caller aborts the run.
	 */
	cpu = smp_processor_id();
	if (unlikely(cpu != c->cpu || !cpu_online(cpu))) {
		local_irq_restore(flags);
		return KBENCH_ITER_WRONG_CPU;
	}
	nmi = kbench_nmi_count();
	live = kbench_counters_live(c, n, cpu);
	for (i = 0; i < n; i++)
		c0[i] = c->events[i] ? kbench_counter_read(c->events[i]) : 0;
	t0 = kbench_now(clock);
	kbench_fire(size, seq);
	t1 = kbench_now(clock);
	for (i = 0; i < n; i++)
		c1[i] = c->events[i] ? kbench_counter_read(c->events[i]) : 0;
	live = live && kbench_counters_live(c, n, cpu);
	/* Read before re-enabling interrupts: an NMI during a later interrupt handler does not concern us. */
	if (nmi != kbench_nmi_count())
		why |= KBENCH_SAMPLE_DISCARDED_NMI;
	local_irq_restore(flags);

	if (!live)
		why |= KBENCH_SAMPLE_DISCARDED_COUNTER;
	*ticks = t1 - t0;
	for (i = 0; i < n; i++)
		deltas[i] = c1[i] - c0[i];
	return why;
}

static noinline int kbench_wrong_cpu(struct kbench_cpu_run *c)
{
	pr_warn_ratelimited("run aborted: the loop for CPU %u found itself on CPU %d (CPU offlined mid-run?)\n", c->cpu,
			    raw_smp_processor_id());
	return -EXDEV;
}

static __always_inline int kbench_loop(struct kbench_run *r, struct kbench_cpu_run *c, const unsigned int size,
				       const unsigned int clock)
{
	const unsigned int n = r->cfg.n_counters;
	u64 deltas[KBENCH_MAX_COUNTERS];
	u64 w, it = 0, ticks;
	u32 seq = 0;

	/* Warm-up through the very same path: fills the tracer's ring buffer at least once (survey 6.2.4). */
	for (w = 0; w < r->cfg.warmup; w++) {
		if (kbench_iter(c, n, size, clock, seq++, &ticks, deltas) == KBENCH_ITER_WRONG_CPU)
			return kbench_wrong_cpu(c);
		if ((w % KBENCH_RESCHED_EVERY) == KBENCH_RESCHED_EVERY - 1) {
			if (READ_ONCE(r->stop) || kthread_should_stop())
				return -EINTR;
			cond_resched();
		}
	}

	while (c->kept < r->cfg.iterations && c->records < c->capacity) {
		struct kbench_sample *s = &c->samples[c->records];
		u32 why = kbench_iter(c, n, size, clock, seq++, &ticks, deltas);
		unsigned int i;

		if (unlikely(why == KBENCH_ITER_WRONG_CPU))
			return kbench_wrong_cpu(c);
		s->iteration = it++;
		s->ticks = ticks;
		s->cpu = c->cpu;
		s->flags = why;
		for (i = 0; i < n; i++)
			s->counters[i] = deltas[i];
		c->records++;
		if (why)
			c->discarded++;
		else
			c->kept++;
		if ((it % KBENCH_RESCHED_EVERY) == 0) {
			if (READ_ONCE(r->stop) || kthread_should_stop())
				return -EINTR;
			cond_resched();
		}
	}
	return 0;
}

#define KBENCH_LOOP(size, clk)                                                                  \
	static noinline int kbench_loop_##size##_##clk(struct kbench_run *r, struct kbench_cpu_run *c) \
	{                                                                                       \
		return kbench_loop(r, c, size, KBENCH_CLOCK_##clk);                             \
	}
KBENCH_LOOP(4, TSC)
KBENCH_LOOP(64, TSC)
KBENCH_LOOP(256, TSC)
KBENCH_LOOP(1024, TSC)
KBENCH_LOOP(4, KTIME)
KBENCH_LOOP(64, KTIME)
KBENCH_LOOP(256, KTIME)
KBENCH_LOOP(1024, KTIME)

static int kbench_dispatch(struct kbench_run *r, struct kbench_cpu_run *c)
{
	bool tsc = r->clock == KBENCH_CLOCK_TSC;

	switch (r->cfg.payload_size) {
	case KBENCH_PAYLOAD_4:
		return tsc ? kbench_loop_4_TSC(r, c) : kbench_loop_4_KTIME(r, c);
	case KBENCH_PAYLOAD_64:
		return tsc ? kbench_loop_64_TSC(r, c) : kbench_loop_64_KTIME(r, c);
	case KBENCH_PAYLOAD_256:
		return tsc ? kbench_loop_256_TSC(r, c) : kbench_loop_256_KTIME(r, c);
	default:
		return tsc ? kbench_loop_1024_TSC(r, c) : kbench_loop_1024_KTIME(r, c);
	}
}

static int kbench_thread(void *data)
{
	struct kbench_cpu_run *c = data;
	struct kbench_run *r = c->run;
	u64 i;

	atomic_inc(&r->ready);
	wake_up(&r->ready_wq);
	/* Sleep, not spin: with PREEMPT_VOLUNTARY a spinning kthread would starve the ioctl caller on its CPU. */
	wait_for_completion(&r->start);
	if (!READ_ONCE(r->stop))
		c->ret = kbench_dispatch(r, c);
	/* Conversion to ns outside the loop, so that it never sits near the timed window. */
	for (i = 0; i < c->records; i++) {
		struct kbench_sample *s = &c->samples[i];

		s->latency_ns = r->clock == KBENCH_CLOCK_TSC ? mul_u64_u32_div(s->ticks, 1000000, r->tsc_khz) : s->ticks;
	}
	complete(&c->done);
	return 0;
}

static void kbench_run_free(struct kbench_run *r)
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

static long kbench_ioctl_run(struct kbench_file *f, void __user *uarg)
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

static long kbench_ioctl_read(struct kbench_file *f, void __user *uarg)
{
	struct kbench_read rd;
	struct kbench_cpu_run *c;
	u64 count;
	long ret = 0;

	if (copy_from_user(&rd, uarg, sizeof(rd)))
		return -EFAULT;
	if (rd.size != sizeof(rd) || rd.count < 1 || rd.count > KBENCH_MAX_READ_CHUNK || !rd.buf)
		return -EINVAL;
	/* A kernel address or a range that wraps is an invalid argument, not a fault. */
	if (!access_ok(u64_to_user_ptr(rd.buf), rd.count * sizeof(struct kbench_sample)))
		return -EINVAL;
	mutex_lock(&f->lock);
	if (!f->last) {
		ret = -ENODATA;
		goto out;
	}
	if (rd.cpu_index >= f->last->cfg.n_cpus) {
		ret = -EINVAL;
		goto out;
	}
	c = &f->last->cpu[rd.cpu_index];
	if (rd.offset > c->records) {
		ret = -EINVAL;
		goto out;
	}
	count = min(rd.count, c->records - rd.offset);
	if (count && copy_to_user(u64_to_user_ptr(rd.buf), &c->samples[rd.offset], count * sizeof(*c->samples))) {
		ret = -EFAULT;
		goto out;
	}
	rd.copied = count;
	if (copy_to_user(uarg, &rd, sizeof(rd)))
		ret = -EFAULT;
out:
	mutex_unlock(&f->lock);
	return ret;
}

static long kbench_ioctl_info(void __user *uarg)
{
	struct kbench_info info = {
		.abi_version = KBENCH_ABI_VERSION,
		.info_size = sizeof(struct kbench_info),
		.config_size = sizeof(struct kbench_config),
		.sample_size = sizeof(struct kbench_sample),
		.read_size = sizeof(struct kbench_read),
		.max_counters = KBENCH_MAX_COUNTERS,
		.max_cpus = KBENCH_MAX_CPUS,
		.max_read_chunk = KBENCH_MAX_READ_CHUNK,
		.max_records = KBENCH_MAX_RECORDS,
		.nr_cpu_ids = nr_cpu_ids,
	};

	if (kbench_tsc_stable()) {
		info.clock = KBENCH_CLOCK_TSC;
		info.flags |= KBENCH_INFO_TSC_STABLE;
		info.tsc_khz = tsc_khz;
	} else {
		info.clock = KBENCH_CLOCK_KTIME;
	}
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long kbench_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	/* The empty system call of the syscall benchmark (survey 6.2.1 and Table 5): return at once. */
	if (cmd == KBENCH_IOC_EMPTY)
		return 0;
	switch (cmd) {
	case KBENCH_IOC_INFO:
		return kbench_ioctl_info((void __user *)arg);
	case KBENCH_IOC_RUN:
		return kbench_ioctl_run(file->private_data, (void __user *)arg);
	case KBENCH_IOC_READ:
		return kbench_ioctl_read(file->private_data, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

/*
 * The node is 0600, but that is not enough: kernel counters bypass perf_event_paranoid and raw events take any
 * config, so opening the device needs the capability perf itself asks for CPU-wide counters.
 */
static bool kbench_capable(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 8, 0)
	return perfmon_capable();
#else
	return capable(CAP_SYS_ADMIN);
#endif
}

static int kbench_open(struct inode *inode, struct file *file)
{
	struct kbench_file *f;

	if (!kbench_capable())
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int kbench_release(struct inode *inode, struct file *file)
{
	struct kbench_file *f = file->private_data;

	kbench_run_free(f->last);
	kfree(f);
	return 0;
}

static const struct file_operations kbench_fops = {
	.owner = THIS_MODULE,
	.open = kbench_open,
	.release = kbench_release,
	.unlocked_ioctl = kbench_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	/* Removed in 6.12, where a NULL llseek plus nonseekable_open() gives the same -ESPIPE. */
	.llseek = no_llseek,
#endif
};

static struct miscdevice kbench_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kbench",
	.fops = &kbench_fops,
	.mode = 0600, /* root only: the loop runs with interrupts masked */
};

static int __init kbench_init(void)
{
	unsigned int i;

	/* The layout the Rust mirror (harness/src/kernel/) checks. */
	BUILD_BUG_ON(sizeof(struct kbench_info) != KBENCH_INFO_SIZE);
	BUILD_BUG_ON(sizeof(struct kbench_config) != KBENCH_CONFIG_SIZE);
	BUILD_BUG_ON(sizeof(struct kbench_sample) != KBENCH_SAMPLE_SIZE);
	BUILD_BUG_ON(sizeof(struct kbench_read) != KBENCH_READ_SIZE);

	for (i = 0; i < sizeof(kbench_data); i++)
		kbench_data[i] = (u8)i;
	return misc_register(&kbench_dev);
}

static void __exit kbench_exit(void)
{
	misc_deregister(&kbench_dev);
}

module_init(kbench_init);
module_exit(kbench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tracebench kernel tracepoint microbenchmark (Gebai & Dagenais 2018, Algorithm 1)");
MODULE_VERSION("1");
