// SPDX-License-Identifier: GPL-2.0
/*
 * kbench's measurement loop: survey Gebai & Dagenais 2018, section 6.2, Algorithm 1 (the whole design is described
 * at the top of kbench_main.c). One pinned kthread per requested CPU (kbench_thread) runs warm-up, then the timed
 * iterations, and converts the ticks to ns afterwards. The tracepoints are defined here (CREATE_TRACE_POINTS), the
 * only file that fires them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/perf_event.h>
#include <linux/irqflags.h>
#include <linux/completion.h>
#include <linux/wait.h>
#include <linux/cpumask.h>
#include <linux/timekeeping.h>
#include <linux/math64.h>
#include <asm/tsc.h>
#include <asm/hardirq.h>
#include <asm/cpufeature.h>

#include "kbench_priv.h"

#define CREATE_TRACE_POINTS
#include "kbench_trace.h"

/* Iterations between cond_resched()/stop checks. */
#define KBENCH_RESCHED_EVERY 1024

/* Payload bytes of the large events, filled once at load time (out of the timed window). */
u8 kbench_data[KBENCH_PAYLOAD_1024];

/*
 * This CPU's NMI count. Newer x86 kernels keep the interrupt counts in an array (irq_stat.counts[IRQ_COUNT_NMI]),
 * older ones in named fields (irq_stat.__nmi_count); Kbuild tells which from the headers (backports included).
 */
#ifdef KBENCH_NMI_COUNT_ARRAY
#define kbench_nmi_count() this_cpu_read(irq_stat.counts[IRQ_COUNT_NMI])
#else
#define kbench_nmi_count() this_cpu_read(irq_stat.__nmi_count)
#endif

bool kbench_tsc_stable(void)
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

int kbench_thread(void *data)
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
