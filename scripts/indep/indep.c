/*
 * tb-indep: measures the cost of one tracer call outside tracebench, as an independent check of
 * its LTTng, ftrace and system-call backends. Written separately from the Rust harness on
 * purpose: its own timing loop, its own TSC calibration, its own tracefs set-up; the LTTng
 * provider is linked in directly instead of being dlopen()ed.
 *
 *   tb-indep MODE [N] [CPU]      MODE: none | lttng-ust | lttng-tracef | ftrace | ftrace-raw |
 *                                      syscall
 *
 * Pins itself to CPU (default 0), fires 4 * N warm-up calls (more than enough to wrap a 16 KiB
 * per-CPU buffer), then times N calls, each between `lfence; rdtsc; lfence` and
 * `rdtscp; lfence`, and prints one line:  MODE median_ns p10_ns p90_ns mean_ns N
 * (survey Algorithm 1 without the kernel-only parts). `strace` is `syscall` run under
 * `strace -f -qq -o /dev/null`; the LTTng modes expect a started session with the event
 * enabled (scripts/indep/compare.sh makes one); the ftrace modes make a private instance
 * `tbindep-<pid>` (16 KiB per CPU, overwrite, global clock, or $TB_FTRACE_CLOCK) and remove it.
 *
 * TB_INDEP_WATCH_SWITCHES=1 opens what tracebench's disturbance detector opens for a context
 * switch (a sched:sched_switch perf event on this thread, sampling every switch into an mmap
 * ring), to measure what that watching adds to tracers that switch on every call (strace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#ifdef TB_WITH_LTTNG
void tb_lttng_fire(uint32_t payload);
void tb_lttng_tracef(uint32_t payload);
int tb_lttng_event_enabled(void);
int tb_lttng_tracef_enabled(void);
#endif

static int marker_fd = -1;
static char instance[256];

static inline uint64_t t_start(void)
{
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

static inline uint64_t t_end(void)
{
	unsigned aux;
	uint64_t t = __rdtscp(&aux);
	_mm_lfence();
	return t;
}

static uint64_t mono_raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* TSC ticks per ns, against CLOCK_MONOTONIC_RAW over 200 ms. */
static double tsc_per_ns(void)
{
	uint64_t n0 = mono_raw_ns(), c0 = __rdtsc();
	struct timespec d = { 0, 200 * 1000 * 1000 };
	nanosleep(&d, NULL);
	uint64_t n1 = mono_raw_ns(), c1 = __rdtsc();
	return (double)(c1 - c0) / (double)(n1 - n0);
}

__attribute__((noinline)) static void call_none(uint32_t p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void call_syscall(uint32_t p)
{
	(void)p;
	getppid();
}

__attribute__((noinline)) static void call_marker(uint32_t p)
{
	char buf[10];
	int i = sizeof(buf);
	do {
		buf[--i] = '0' + p % 10;
		p /= 10;
	} while (p);
	if (write(marker_fd, buf + i, sizeof(buf) - i) < 0)
		abort();
}

__attribute__((noinline)) static void call_marker_raw(uint32_t p)
{
	uint32_t rec[2] = { 0x74620001, p };
	if (write(marker_fd, rec, sizeof(rec)) < 0)
		abort();
}

static void put(const char *file, const char *val)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", instance, file);
	int fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, val, strlen(val)) < 0) {
		fprintf(stderr, "tb-indep: write %s to %s: %s\n", val, path, strerror(errno));
		exit(1);
	}
	close(fd);
}

static void ftrace_setup(const char *marker)
{
	const char *clock = getenv("TB_FTRACE_CLOCK");
	snprintf(instance, sizeof(instance), "/sys/kernel/tracing/instances/tbindep-%d", getpid());
	if (mkdir(instance, 0755) < 0) {
		fprintf(stderr, "tb-indep: mkdir %s: %s (is tracefs mounted? are you root?)\n", instance,
			strerror(errno));
		exit(1);
	}
	put("tracing_on", "0");
	put("trace_clock", clock ? clock : "global");
	put("buffer_size_kb", "16");
	put("options/overwrite", "1");
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", instance, marker);
	marker_fd = open(path, O_WRONLY);
	if (marker_fd < 0) {
		perror(path);
		exit(1);
	}
	put("tracing_on", "1");
}

static void ftrace_teardown(void)
{
	if (!instance[0])
		return;
	close(marker_fd);
	put("tracing_on", "0");
	if (rmdir(instance) < 0)
		fprintf(stderr, "tb-indep: rmdir %s: %s\n", instance, strerror(errno));
}

/* A period-1 sampling perf event on sched:sched_switch for this thread, into a ring, as
 * tracebench's detector does. Never read: the ring is mapped read-only, so the kernel overwrites. */
static void watch_tracepoint(const char *idfile)
{
	FILE *f = fopen(idfile, "r");
	unsigned long long id;
	if (!f || fscanf(f, "%llu", &id) != 1) {
		fprintf(stderr, "tb-indep: cannot read %s\n", idfile);
		exit(1);
	}
	fclose(f);
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IDENTIFIER;
	a.wakeup_events = 1000000;
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		exit(1);
	}
	if (mmap(NULL, 17 * 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) {
		perror("mmap perf ring");
		exit(1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tb-indep none|lttng-ust|lttng-tracef|ftrace|ftrace-raw|syscall [N] [CPU]\n");
		return 2;
	}
	const char *mode = argv[1];
	long n = argc > 2 ? atol(argv[2]) : 20000;
	int cpu = argc > 3 ? atoi(argv[3]) : 0;
	if (n <= 0) {
		fprintf(stderr, "tb-indep: N must be positive\n");
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("sched_setaffinity");
		return 1;
	}

	void (*call)(uint32_t) = NULL;
	if (!strcmp(mode, "none"))
		call = call_none;
	else if (!strcmp(mode, "syscall"))
		call = call_syscall;
	else if (!strcmp(mode, "ftrace")) {
		ftrace_setup("trace_marker");
		call = call_marker;
	} else if (!strcmp(mode, "ftrace-raw")) {
		ftrace_setup("trace_marker_raw");
		call = call_marker_raw;
	}
#ifdef TB_WITH_LTTNG
	else if (!strcmp(mode, "lttng-ust") || !strcmp(mode, "lttng-tracef")) {
		int tp = !strcmp(mode, "lttng-ust");
		/* The sessiond pushes the enabled event when this process registers. */
		for (int i = 0; i < 1000 && !(tp ? tb_lttng_event_enabled() : tb_lttng_tracef_enabled()); i++)
			usleep(5000);
		if (!(tp ? tb_lttng_event_enabled() : tb_lttng_tracef_enabled())) {
			fprintf(stderr, "tb-indep: %s is not enabled (start a session first)\n", mode);
			return 1;
		}
		call = tp ? tb_lttng_fire : tb_lttng_tracef;
	}
#endif
	if (!call) {
		fprintf(stderr, "tb-indep: unknown or unbuilt mode '%s'\n", mode);
		return 2;
	}

	if (getenv("TB_INDEP_WATCH_SWITCHES"))
		watch_tracepoint("/sys/kernel/tracing/events/sched/sched_switch/id");
	/* TB_INDEP_WATCH_IRQS=K: K more per-thread sampling events (irq_vectors:local_timer_entry),
	 * as tracebench's detector opens a dozen: each context switch then also switches them. */
	for (int k = getenv("TB_INDEP_WATCH_IRQS") ? atoi(getenv("TB_INDEP_WATCH_IRQS")) : 0; k > 0; k--)
		watch_tracepoint("/sys/kernel/tracing/events/irq_vectors/local_timer_entry/id");
	double per_ns = tsc_per_ns();
	uint64_t *d = malloc(n * sizeof(*d));
	if (!d)
		return 1;
	memset(d, 0, n * sizeof(*d));
	for (long i = 0; i < 4 * n; i++)
		call((uint32_t)i);
	for (long i = 0; i < n; i++) {
		uint64_t a = t_start();
		call((uint32_t)i);
		uint64_t b = t_end();
		d[i] = b - a;
	}
	ftrace_teardown();
	double mean = 0;
	for (long i = 0; i < n; i++)
		mean += d[i];
	mean /= n;
	qsort(d, n, sizeof(*d), cmp_u64);
	printf("%s %.1f %.1f %.1f %.1f %ld\n", mode, d[n / 2] / per_ns, d[n / 10] / per_ns, d[n * 9 / 10] / per_ns,
	       mean / per_ns, n);
	free(d);
	return 0;
}
