// Independent check of tracebench's `uprobe` backend: the same uprobe configuration measured
// without tracebench (own probe sites, own tracefs set-up, own timing loop).
//
//   uprobe_bench [--site nop5|push|ret] [--n N] [--warmup W] [--cpu C] [--no-probe]
//
// Set-up as tracebench's uprobe backend (survey section 6.2.3): a tracefs uprobe event
// `p:indep_<pid>/site <exe>:<file offset> payload=%di:u32`, enabled in a private instance
// `instances/indep-uprobe-<pid>` with buffer_size_kb=16, overwrite on, trace_clock global; no
// reader during the run. Timing: lfence;rdtsc / call / rdtscp;lfence around each call, TSC
// calibrated against CLOCK_MONOTONIC_RAW. Prints one line of key=value pairs.
// Cleanup on exit and on SIGINT/SIGTERM.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

__asm__(".pushsection .text.indep_sites,\"ax\",@progbits\n"
	".p2align 6\n.globl indep_site_nop5\n.type indep_site_nop5,@function\n"
	"indep_site_nop5:\n.byte 0x0f,0x1f,0x44,0x00,0x00\nret\n"
	".p2align 6\n.globl indep_site_push\n.type indep_site_push,@function\n"
	"indep_site_push:\npush %rbp\npop %rbp\nret\n"
	".p2align 6\n.globl indep_site_ret\n.type indep_site_ret,@function\n"
	"indep_site_ret:\nret\n"
	".popsection\n");
void indep_site_nop5(uint32_t);
void indep_site_push(uint32_t);
void indep_site_ret(uint32_t);

static const char *T = "/sys/kernel/tracing";
static char group[64], instance[256];
static int defined, created;

static int wr(const char *path, const char *s, int append)
{
	int fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void cleanup(void)
{
	char p[512], s[128];
	if (created) {
		snprintf(p, sizeof p, "%s/tracing_on", instance);
		wr(p, "0", 0);
		rmdir(instance);
		created = 0;
	}
	if (defined) {
		snprintf(p, sizeof p, "%s/uprobe_events", T);
		snprintf(s, sizeof s, "-:%s/site\n", group);
		wr(p, s, 1); // O_APPEND: O_TRUNC would delete every uprobe on the system
		defined = 0;
	}
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void die(const char *what)
{
	fprintf(stderr, "uprobe_bench: %s: %s\n", what, strerror(errno));
	cleanup();
	exit(1);
}

// File offset of addr from /proc/self/maps: addr - start + offset of the mapping holding it.
static unsigned long file_offset(unsigned long addr, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, b, off;
		char perms[8], p[768] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %767s", &a, &b, perms, &off, p) >= 4 && addr >= a &&
		    addr < b) {
			fclose(f);
			snprintf(path, len, "%s", p);
			return addr - a + off;
		}
	}
	if (f)
		fclose(f);
	errno = ENOENT;
	die("site not found in /proc/self/maps");
	return 0;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double tsc_hz(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	uint64_t t0 = __rdtsc();
	usleep(200000);
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	uint64_t t1 = __rdtsc();
	double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	return (t1 - t0) / ns * 1e9;
}

int main(int argc, char **argv)
{
	const char *site = "nop5";
	long n = 20000, warmup = 5000;
	int cpu = 1, probe = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--site") && i + 1 < argc)
			site = argv[++i];
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atol(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = atol(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-probe"))
			probe = 0;
		else {
			fprintf(stderr, "usage: %s [--site nop5|push|ret] [--n N] [--warmup W] [--cpu C] [--no-probe]\n",
				argv[0]);
			return 2;
		}
	}
	void (*fn)(uint32_t) = !strcmp(site, "nop5") ? indep_site_nop5
			       : !strcmp(site, "push") ? indep_site_push
			       : !strcmp(site, "ret")  ? indep_site_ret
						       : NULL;
	if (!fn || n <= 0) {
		fprintf(stderr, "uprobe_bench: bad --site '%s' or --n (expected nop5|push|ret, N > 0)\n", site);
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		die("sched_setaffinity (use --cpu with an online CPU)");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(cleanup);

	if (probe) {
		char exe[768], def[1024], p[512];
		unsigned long off = file_offset((unsigned long)fn, exe, sizeof exe);
		snprintf(group, sizeof group, "indep_%d", getpid());
		snprintf(def, sizeof def, "p:%s/site %s:0x%lx payload=%%di:u32\n", group, exe, off);
		snprintf(p, sizeof p, "%s/uprobe_events", T);
		if (wr(p, def, 1))
			die("defining the uprobe event (tracefs mounted? root?)");
		defined = 1;
		snprintf(instance, sizeof instance, "%s/instances/indep-uprobe-%d", T, getpid());
		if (mkdir(instance, 0755))
			die("mkdir instance");
		created = 1;
		const char *settings[][2] = {{"buffer_size_kb", "16"}, {"options/overwrite", "1"},
					     {"trace_clock", "global"}, {"tracing_on", "1"}};
		for (unsigned i = 0; i < sizeof settings / sizeof settings[0]; i++) {
			snprintf(p, sizeof p, "%s/%s", instance, settings[i][0]);
			if (wr(p, settings[i][1], 0))
				die(settings[i][0]);
		}
		snprintf(p, sizeof p, "%s/events/%s/site/enable", instance, group);
		if (wr(p, "1", 0))
			die("enabling the event");
	}

	double hz = tsc_hz();
	uint64_t *lat = calloc(n, sizeof *lat);
	if (!lat)
		die("calloc");
	memset(lat, 0, n * sizeof *lat);
	unsigned aux;
	for (long i = 0; i < warmup + n; i++) {
		_mm_lfence();
		uint64_t t0 = __rdtsc();
		_mm_lfence();
		fn((uint32_t)i);
		uint64_t t1 = __rdtscp(&aux);
		_mm_lfence();
		if (i >= warmup)
			lat[i - warmup] = t1 - t0;
	}
	long entries = -1, overrun = -1;
	if (probe) {
		char p[512], buf[4096];
		snprintf(p, sizeof p, "%s/per_cpu/cpu%d/stats", instance, cpu);
		FILE *f = fopen(p, "r");
		while (f && fgets(buf, sizeof buf, f)) {
			sscanf(buf, "entries: %ld", &entries);
			sscanf(buf, "overrun: %ld", &overrun);
		}
		if (f)
			fclose(f);
	}
	cleanup();

	double sum = 0;
	for (long i = 0; i < n; i++)
		sum += lat[i];
	qsort(lat, n, sizeof *lat, cmp);
	double k = 1e9 / hz;
	printf("site=%s probe=%d n=%ld cpu=%d tsc_ghz=%.3f mean_ns=%.1f p50_ns=%.1f p90_ns=%.1f p99_ns=%.1f "
	       "min_ns=%.1f entries=%ld overrun=%ld\n",
	       site, probe, n, cpu, hz / 1e9, sum / n * k, lat[n / 2] * k, lat[n * 9 / 10] * k, lat[n * 99 / 100] * k,
	       lat[0] * k, entries, overrun);
	free(lat);
	return 0;
}
