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
 *   kbench-run fuzz SECONDS MIN_CALLS                      random and mutated RUN/READ ioctls (issue 17)
 *   kbench-run busy | kill | eperm | verify NAME           two RUNs at once, SIGKILL mid-run, open without
 *                                                          CAP_PERFMON, a valid run checked sample by sample
 *
 * --bpf loads an eBPF program (raw instructions, no libbpf in the guest) on the loop's tracepoint; it writes
 * {ts, payload} into a per-CPU array ring and counts the events it saw in a per-CPU counter.
 */
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

static void die(const char *what)
{
	fprintf(stderr, "kbench-run: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int open_dev(void)
{
	int fd = open(KBENCH_DEVICE, O_RDWR);

	if (fd < 0)
		die("open " KBENCH_DEVICE " (is kbench.ko loaded? are you root?)");
	return fd;
}

static void check_abi(int fd, struct kbench_info *info)
{
	memset(info, 0, sizeof(*info));
	if (ioctl(fd, KBENCH_IOC_INFO, info))
		die("KBENCH_IOC_INFO");
	if (info->abi_version != KBENCH_ABI_VERSION || info->config_size != sizeof(struct kbench_config) ||
	    info->sample_size != sizeof(struct kbench_sample) || info->read_size != sizeof(struct kbench_read)) {
		fprintf(stderr, "kbench-run: ABI mismatch: module v%u (config %u, sample %u), runner v%u: rebuild one\n",
			info->abi_version, info->config_size, info->sample_size, KBENCH_ABI_VERSION);
		exit(1);
	}
}

static const char *clock_name(unsigned int c)
{
	return c == KBENCH_CLOCK_TSC ? "tsc" : c == KBENCH_CLOCK_KTIME ? "ktime_mono_fast" : "auto";
}

/* ---- options ---- */
struct opts {
	const char *row, *out;
	__u64 n, warmup;
	unsigned int payload;
	unsigned int cpus[KBENCH_MAX_CPUS], n_cpus;
	struct kbench_counter counters[KBENCH_MAX_COUNTERS];
	char counter_names[KBENCH_MAX_COUNTERS][32];
	unsigned int n_counters;
	int bpf;
};

static void parse(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->n = 20000;
	o->warmup = 2000;
	o->payload = 4;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--bpf")) {
			o->bpf = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "kbench-run: %s needs a value\n", a);
			exit(2);
		}
		i++;
		if (!strcmp(a, "-t"))
			o->row = v;
		else if (!strcmp(a, "-o"))
			o->out = v;
		else if (!strcmp(a, "-n"))
			o->n = strtoull(v, NULL, 0);
		else if (!strcmp(a, "-w"))
			o->warmup = strtoull(v, NULL, 0);
		else if (!strcmp(a, "-p"))
			o->payload = strtoul(v, NULL, 0);
		else if (!strcmp(a, "-C")) {
			char *s = strdup(v), *tok, *save;

			for (tok = strtok_r(s, ",", &save); tok && o->n_cpus < KBENCH_MAX_CPUS; tok = strtok_r(NULL, ",", &save))
				o->cpus[o->n_cpus++] = strtoul(tok, NULL, 0);
		} else if (!strcmp(a, "-k")) {
			char *s = strdup(v), *tok, *save;

			for (tok = strtok_r(s, ",", &save); tok && o->n_counters < KBENCH_MAX_COUNTERS;
			     tok = strtok_r(NULL, ",", &save)) {
				unsigned int t;
				unsigned long long c;
				char name[32];

				if (sscanf(tok, "%u:%llu:%31s", &t, &c, name) != 3) {
					fprintf(stderr, "kbench-run: counter '%s' is not type:config:name\n", tok);
					exit(2);
				}
				o->counters[o->n_counters].type = t;
				o->counters[o->n_counters].config = c;
				strcpy(o->counter_names[o->n_counters], name);
				o->n_counters++;
			}
		} else {
			fprintf(stderr, "kbench-run: unknown option %s\n", a);
			exit(2);
		}
	}
	if (!o->n_cpus)
		o->cpus[o->n_cpus++] = 0;
	if (!o->row || !o->out) {
		fprintf(stderr, "kbench-run: -t ROW and -o DIR are required\n");
		exit(2);
	}
}

/* Row name -> directory name, as in the output contract. */
static void row_dir(const char *out, const char *row, char *buf, size_t len)
{
	char d[256];
	size_t i;

	snprintf(d, sizeof(d), "%s", row);
	for (i = 0; d[i]; i++)
		if (!((d[i] >= 'a' && d[i] <= 'z') || (d[i] >= 'A' && d[i] <= 'Z') || (d[i] >= '0' && d[i] <= '9') ||
		      d[i] == '.' || d[i] == '_' || d[i] == '-'))
			d[i] = '_';
	snprintf(buf, len, "%s/%s", out, d);
	mkdir(out, 0755);
	mkdir(buf, 0755);
}

static FILE *open_tmp(const char *dir, const char *name, char *tmp, char *final)
{
	FILE *f;

	sprintf(final, "%s/%s", dir, name);
	sprintf(tmp, "%s/.%s.tmp", dir, name);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	return f;
}

static void close_rename(FILE *f, const char *tmp, const char *final)
{
	if (fclose(f) || rename(tmp, final))
		die(final);
}

/* ---- eBPF ---- */
#define RING 1024 /* entries of the per-CPU ring, a power of two */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int map_create(unsigned int type, unsigned int vsize, unsigned int entries)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = vsize;
	a.max_entries = entries;
	return sys_bpf(BPF_MAP_CREATE, &a);
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

static int read_int_file(const char *path, long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Offset of the "seq" field in the tracepoint's record, from its format file. */
static int seq_offset(const char *event)
{
	char path[256], line[512];
	FILE *f;
	int off = -1;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/kbench/%s/format", event);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " seq;");

		if (p && (p = strstr(p, "offset:")))
			off = atoi(p + 7);
	}
	fclose(f);
	return off;
}

static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int a = 0, b = 0, n;

	if (!f)
		return 1;
	n = fscanf(f, "%d-%d", &a, &b);
	fclose(f);
	return n == 2 ? b + 1 : a + 1;
}

struct bpf_state {
	int prog, ring, count, perf;
};

static void bpf_attach(const char *event, struct bpf_state *st)
{
	char path[256], log[65536];
	struct perf_event_attr pa;
	union bpf_attr a;
	long id;
	int off = seq_offset(event), i = 0;
	struct bpf_insn p[32];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/kbench/%s/id", event);
	if (off < 0 || read_int_file(path, &id))
		die("tracepoint format/id (is tracefs mounted at /sys/kernel/tracing?)");
	st->count = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 8, 1);
	st->ring = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 16, RING);
	if (st->count < 0 || st->ring < 0)
		die("BPF_MAP_CREATE");

	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);          /* r6 = ctx */
	p[i++] = INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0);           /* key0 = 0 */
	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[i++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4);         /* r2 = &key0 */
	p[i++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, st->count);
	p[i++] = INSN(0, 0, 0, 0, 0);
	p[i++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	p[i++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 18, 0);           /* if !r0 goto out (ld_imm64 takes 2 slots) */
	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0);          /* r7 = &count */
	p[i++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 8, 7, 0, 0);           /* r8 = count */
	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 8, 0, 0);
	p[i++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1);
	p[i++] = INSN(BPF_STX | BPF_MEM | BPF_DW, 7, 1, 0, 0);           /* count++ (per CPU, irqs off) */
	p[i++] = INSN(BPF_ALU64 | BPF_AND | BPF_K, 8, 0, 0, RING - 1);   /* slot */
	p[i++] = INSN(BPF_STX | BPF_MEM | BPF_W, 10, 8, -8, 0);
	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[i++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8);
	p[i++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, st->ring);
	p[i++] = INSN(0, 0, 0, 0, 0);
	p[i++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	p[i++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 5, 0);            /* if !r0 goto out */
	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0);          /* r7 = &ring[slot] */
	p[i++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns);
	p[i++] = INSN(BPF_STX | BPF_MEM | BPF_DW, 7, 0, 0, 0);           /* ts */
	p[i++] = INSN(BPF_LDX | BPF_MEM | BPF_W, 1, 6, off, 0);          /* payload seq from the record */
	p[i++] = INSN(BPF_STX | BPF_MEM | BPF_W, 7, 1, 8, 0);
	p[i++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);          /* out: r0 = 0 (no perf sample) */
	p[i++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uintptr_t)p;
	a.insn_cnt = i;
	a.license = (uintptr_t) "GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = 0;
	st->prog = sys_bpf(BPF_PROG_LOAD, &a);
	if (st->prog < 0) {
		fprintf(stderr, "kbench-run: BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
		exit(1);
	}
	/* One perf event is enough: the program sits in the tracepoint's prog array and runs on every CPU. A second
	 * per-CPU event with the same program gets EEXIST on PERF_EVENT_IOC_SET_BPF. */
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = id;
	pa.sample_period = 1;
	pa.sample_type = PERF_SAMPLE_RAW;
	pa.disabled = 1;
	st->perf = syscall(__NR_perf_event_open, &pa, -1, 0, -1, 0);
	if (st->perf < 0)
		die("perf_event_open(tracepoint)");
	if (ioctl(st->perf, PERF_EVENT_IOC_SET_BPF, st->prog))
		die("PERF_EVENT_IOC_SET_BPF");
	if (ioctl(st->perf, PERF_EVENT_IOC_ENABLE, 0))
		die("PERF_EVENT_IOC_ENABLE");
}

/* Events the program counted on each CPU; last seq it stored on the CPU. */
static void bpf_read(struct bpf_state *st, unsigned int cpu, __u64 *count, long long *last_seq)
{
	int np = possible_cpus();
	__u64 *v = calloc(np, 8);
	__u64 *r = calloc(np, 16);
	union bpf_attr a;
	uint32_t key = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = st->count;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)v;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
		die("BPF_MAP_LOOKUP_ELEM count");
	*count = v[cpu];
	*last_seq = -1;
	if (*count) {
		key = (uint32_t)((*count - 1) & (RING - 1));
		a.map_fd = st->ring;
		a.value = (uintptr_t)r;
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a))
			die("BPF_MAP_LOOKUP_ELEM ring");
		*last_seq = (uint32_t)r[cpu * 2 + 1];
	}
	free(v);
	free(r);
}

/* ---- the kernel loop ---- */
static int cmd_loop(int argc, char **argv)
{
	struct kbench_info info;
	struct kbench_config cfg;
	struct bpf_state bst = { -1, -1, -1, -1 };
	struct opts o;
	char dir[512], tmp[600], fin[600], event[64];
	FILE *ev, *dc, *meta;
	struct kbench_sample *buf;
	unsigned int i, j;
	int fd;

	parse(argc, argv, &o);
	fd = open_dev();
	check_abi(fd, &info);
	snprintf(event, sizeof(event), "kbench_event_%u", o.payload);
	if (o.bpf)
		bpf_attach(event, &bst);

	memset(&cfg, 0, sizeof(cfg));
	cfg.abi_version = KBENCH_ABI_VERSION;
	cfg.size = sizeof(cfg);
	cfg.payload_size = o.payload;
	cfg.clock = KBENCH_CLOCK_AUTO;
	cfg.iterations = o.n;
	cfg.warmup = o.warmup;
	cfg.max_discarded = o.n / 10 + 100;
	cfg.n_counters = o.n_counters;
	memcpy(cfg.counters, o.counters, sizeof(cfg.counters));
	cfg.n_cpus = o.n_cpus;
	memcpy(cfg.cpus, o.cpus, sizeof(cfg.cpus));
	if (ioctl(fd, KBENCH_IOC_RUN, &cfg))
		die("KBENCH_IOC_RUN");

	row_dir(o.out, o.row, dir, sizeof(dir));
	ev = open_tmp(dir, "events.csv", tmp, fin);
	fprintf(ev, "tracer,threads,thread,cpu,iteration,latency_ns");
	for (j = 0; j < o.n_counters; j++)
		if (!cfg.counters[j].status)
			fprintf(ev, ",%s", o.counter_names[j]);
	fprintf(ev, ",repetition,counter_set\n");
	{
		char t2[600], f2[600];

		dc = open_tmp(dir, "discarded.csv", t2, f2);
		fprintf(dc, "tracer,threads,thread,cpu,iteration,latency_ns,reason,repetition\n");
		buf = calloc(KBENCH_MAX_READ_CHUNK, sizeof(*buf));
		for (i = 0; i < cfg.n_cpus; i++) {
			struct kbench_read rd = { .size = sizeof(rd), .cpu_index = i, .offset = 0 };

			for (;;) {
				__u64 k;

				rd.count = KBENCH_MAX_READ_CHUNK;
				rd.buf = (uintptr_t)buf;
				if (ioctl(fd, KBENCH_IOC_READ, &rd))
					die("KBENCH_IOC_READ");
				if (!rd.copied)
					break;
				for (k = 0; k < rd.copied; k++) {
					struct kbench_sample *s = &buf[k];

					if (s->flags) {
						/* reason names as in tracers/src/reason.rs */
						const char *why = (s->flags & KBENCH_SAMPLE_DISCARDED_ALL) ==
									  KBENCH_SAMPLE_DISCARDED_ALL
									  ? "nmi+counter-not-running"
								  : s->flags & KBENCH_SAMPLE_DISCARDED_NMI ? "nmi"
								  : s->flags & KBENCH_SAMPLE_DISCARDED_COUNTER
									  ? "counter-not-running"
									  : "unknown";

						fprintf(dc, "%s,%u,%u,%u,%llu,%llu,%s,0\n", o.row, cfg.n_cpus, i, s->cpu,
							s->iteration, s->latency_ns, why);
						continue;
					}
					fprintf(ev, "%s,%u,%u,%u,%llu,%llu", o.row, cfg.n_cpus, i, s->cpu,
						s->iteration, s->latency_ns);
					for (j = 0; j < o.n_counters; j++)
						if (!cfg.counters[j].status)
							fprintf(ev, ",%llu", s->counters[j]);
					fprintf(ev, ",0,0\n");
				}
				rd.offset += rd.copied;
			}
		}
		close_rename(dc, t2, f2);
	}
	close_rename(ev, tmp, fin);

	meta = open_tmp(dir, "meta.txt", tmp, fin);
	fprintf(meta, "row=%s\nkind=loop\nevent=kbench:%s\npayload=%u\nclock=%s\ntsc_khz=%llu\n", o.row, event,
		o.payload, clock_name(cfg.clock), cfg.tsc_khz);
	fprintf(meta, "iterations=%llu\nwarmup=%llu\nthreads=%u\nrun_id=%llu\n", o.n, o.warmup,
		cfg.n_cpus, cfg.run_id);
	{
		__u64 fired = 0;

		for (i = 0; i < cfg.n_cpus; i++) {
			fprintf(meta, "cpu%u=%u\ncpu%u_kept=%llu\ncpu%u_discarded=%llu\n", i, cfg.cpus[i], i,
				cfg.kept[i], i, cfg.discarded[i]);
			/* The tracepoint fired once per warm-up iteration and once per record (kept or discarded). */
			fired += o.warmup + cfg.records[i];
			if (o.bpf) {
				__u64 c;
				long long last;

				bpf_read(&bst, cfg.cpus[i], &c, &last);
				fprintf(meta, "cpu%u_bpf_count=%llu\ncpu%u_bpf_last_seq=%lld\n", i, c, i, last);
			}
		}
		fprintf(meta, "fired=%llu\n", fired);
		printf("kbench-run: %s: fired=%llu clock=%s\n", o.row, fired, clock_name(cfg.clock));
	}
	for (j = 0; j < o.n_counters; j++)
		fprintf(meta, "counter_%s=%s\n", o.counter_names[j],
			cfg.counters[j].status ? strerror(cfg.counters[j].status) : "ok");
	close_rename(meta, tmp, fin);
	if (o.bpf) {
		/* Detach: closing the perf event removes the program from the tracepoint. */
		ioctl(bst.perf, PERF_EVENT_IOC_DISABLE, 0);
		close(bst.perf);
		close(bst.prog);
		close(bst.ring);
		close(bst.count);
	}
	close(fd);
	return 0;
}

/* ---- the empty ioctl, timed from user space (survey 6.2.1, Table 5) ---- */
static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmd_syscall(int argc, char **argv)
{
	struct kbench_info info;
	struct opts o;
	char dir[512], tmp[600], fin[600];
	__u64 *lat, i;
	FILE *ev, *meta;
	int fd;

	parse(argc, argv, &o);
	fd = open_dev();
	check_abi(fd, &info);
	lat = calloc(o.n, sizeof(*lat));
	if (!lat)
		die("calloc");
	memset(lat, 0, o.n * sizeof(*lat)); /* touched before the loop */
	for (i = 0; i < o.warmup; i++)
		ioctl(fd, KBENCH_IOC_EMPTY);
	for (i = 0; i < o.n; i++) {
		__u64 t0 = now_ns();

		ioctl(fd, KBENCH_IOC_EMPTY);
		lat[i] = now_ns() - t0;
	}
	row_dir(o.out, o.row, dir, sizeof(dir));
	ev = open_tmp(dir, "events.csv", tmp, fin);
	fprintf(ev, "tracer,threads,thread,cpu,iteration,latency_ns,repetition,counter_set\n");
	for (i = 0; i < o.n; i++)
		fprintf(ev, "%s,1,0,%d,%llu,%llu" ",0,0\n", o.row, sched_getcpu(), i, lat[i]);
	close_rename(ev, tmp, fin);
	ev = open_tmp(dir, "discarded.csv", tmp, fin);
	fprintf(ev, "tracer,threads,thread,cpu,iteration,latency_ns,reason,repetition\n");
	close_rename(ev, tmp, fin);
	meta = open_tmp(dir, "meta.txt", tmp, fin);
	fprintf(meta, "row=%s\nkind=syscall\nevent=ioctl(KBENCH_IOC_EMPTY)\nclock=clock_monotonic\n", o.row);
	fprintf(meta, "iterations=%llu\nwarmup=%llu\nthreads=1\nfired=%llu\npid=%d\n", o.n,
		o.warmup, o.n + o.warmup, getpid());
	close_rename(meta, tmp, fin);
	printf("kbench-run: %s: fired=%llu\n", o.row, o.n + o.warmup);
	close(fd);
	return 0;
}

/* ---- invalid arguments: every one must fail with the expected errno and leave the module usable ---- */
static int bad_failed, bad_passed;

static void expect(const char *what, int rc, int want)
{
	int ok = rc == -1 && errno == want;

	printf("%s bad-ioctl: %s: rc=%d errno=%s (want %s)\n", ok ? "PASS" : "FAIL", what, rc, rc ? strerror(errno) : "0",
	       strerror(want));
	if (ok)
		bad_passed++;
	else
		bad_failed++;
}

static void good_cfg(struct kbench_config *c)
{
	memset(c, 0, sizeof(*c));
	c->abi_version = KBENCH_ABI_VERSION;
	c->size = sizeof(*c);
	c->payload_size = 4;
	c->iterations = 100;
	c->warmup = 10;
	c->max_discarded = 10;
	c->n_cpus = 1;
	c->cpus[0] = 0;
}

static int cmd_bad(void)
{
	struct kbench_info info;
	struct kbench_config c;
	struct kbench_read rd;
	struct kbench_sample s[4];
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int fd = open_dev(), rc;
	void *unmapped;

	check_abi(fd, &info);
	memset(&rd, 0, sizeof(rd));
	rd.size = sizeof(rd);
	rd.count = 1;
	rd.buf = (uintptr_t)s;
	expect("read before any run", ioctl(fd, KBENCH_IOC_READ, &rd), ENODATA);

	good_cfg(&c);
	c.iterations = (__u64)KBENCH_MAX_RECORDS + 1;
	expect("oversized iteration count", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.iterations = ~0ull;
	expect("iteration count 2^64-1", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.iterations = KBENCH_MAX_RECORDS / 2;
	c.max_discarded = KBENCH_MAX_RECORDS;
	expect("records over the limit", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.iterations = 0;
	expect("zero iterations", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.cpus[0] = (unsigned int)ncpu; /* the guest has ncpu CPUs: this one does not exist */
	expect("offline/nonexistent CPU", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.cpus[0] = 100000;
	expect("CPU 100000", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.n_cpus = 2;
	c.cpus[1] = 0;
	expect("duplicate CPU", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.n_cpus = KBENCH_MAX_CPUS + 1;
	expect("too many CPUs", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.n_cpus = 0;
	expect("no CPU", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.payload_size = 5;
	expect("payload size 5", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.abi_version = 99;
	expect("wrong ABI version", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.size = 8;
	expect("wrong struct size", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.n_counters = 5;
	expect("5 counters", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.n_counters = 1;
	c.counters[0].type = 77;
	expect("unknown counter type", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	good_cfg(&c);
	c.clock = 9;
	expect("unknown clock", ioctl(fd, KBENCH_IOC_RUN, &c), EINVAL);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	expect("RUN with an unreadable pointer", ioctl(fd, KBENCH_IOC_RUN, unmapped), EFAULT);
	expect("RUN with a NULL pointer", ioctl(fd, KBENCH_IOC_RUN, NULL), EFAULT);
	expect("unknown ioctl", ioctl(fd, _IO(KBENCH_IOC_MAGIC, 99)), ENOTTY);

	/* a good run, then bad reads of its results */
	good_cfg(&c);
	rc = ioctl(fd, KBENCH_IOC_RUN, &c);
	printf("%s bad-ioctl: a valid run after the bad ones: rc=%d kept=%llu\n",
	       rc == 0 && c.kept[0] == 100 ? "PASS" : "FAIL", rc, c.kept[0]);
	if (rc == 0 && c.kept[0] == 100)
		bad_passed++;
	else
		bad_failed++;
	rd.size = sizeof(rd);
	rd.cpu_index = 0;
	rd.offset = 0;
	rd.count = KBENCH_MAX_READ_CHUNK + 1;
	rd.buf = (uintptr_t)s;
	expect("read chunk over the limit", ioctl(fd, KBENCH_IOC_READ, &rd), EINVAL);
	rd.count = 4;
	rd.cpu_index = 1;
	expect("read of CPU index 1 of a 1-CPU run", ioctl(fd, KBENCH_IOC_READ, &rd), EINVAL);
	rd.cpu_index = 0;
	rd.offset = 1000000;
	expect("read offset past the end", ioctl(fd, KBENCH_IOC_READ, &rd), EINVAL);
	rd.offset = 0;
	rd.buf = 0xffffffff81000000ull; /* a kernel address */
	expect("read into a kernel address", ioctl(fd, KBENCH_IOC_READ, &rd), EINVAL);
	rd.buf = 0;
	expect("read into NULL", ioctl(fd, KBENCH_IOC_READ, &rd), EINVAL);
	rd.buf = (uintptr_t)unmapped;
	expect("read into an unmapped page", ioctl(fd, KBENCH_IOC_READ, &rd), EFAULT);
	rd.buf = (uintptr_t)s;
	rd.size = 3;
	expect("read with a wrong struct size", ioctl(fd, KBENCH_IOC_READ, &rd), EINVAL);
	rd.size = sizeof(rd);
	rc = ioctl(fd, KBENCH_IOC_READ, &rd);
	printf("%s bad-ioctl: a valid read after the bad ones: rc=%d copied=%llu\n",
	       rc == 0 && rd.copied == 4 ? "PASS" : "FAIL", rc, rd.copied);
	if (rc == 0 && rd.copied == 4)
		bad_passed++;
	else
		bad_failed++;
	close(fd);
	printf("bad-ioctl: %d passed, %d failed\n", bad_passed, bad_failed);
	return bad_failed ? 1 : 0;
}

/* ---- robustness (issue 17): random input, concurrency, SIGKILL, capability ---- */
static __u64 rnd_state = 0x9e3779b97f4a7c15ull;

static __u64 rnd(void)
{
	/* xorshift64*: reproducible from the seed printed at the start */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

/* Values that sit on the module's limits, or far past them. */
static __u64 interesting(void)
{
	static const __u64 v[] = { 0, 1, 2, 3, 7, 63, 64, 65, 100, 1000, 4096, 65535, 65536, 65537,
				   KBENCH_MAX_RECORDS - 1, KBENCH_MAX_RECORDS, KBENCH_MAX_RECORDS + 1,
				   (1ull << 31) - 1, 1ull << 31, 1ull << 32, (1ull << 32) - 1, 1ull << 63,
				   ~0ull, ~0ull - 1, 1000000000ull, 1000000001ull };

	if (rnd() % 4 == 0)
		return rnd();
	return v[rnd() % (sizeof(v) / sizeof(v[0]))];
}

#define FUZZ_ERRNOS 140
struct fuzz_stats {
	__u64 calls, ok, run_calls, read_calls, other_calls, children, timeouts;
	__u64 err[FUZZ_ERRNOS];
};

struct fuzz_mem {
	struct kbench_sample *big;        /* KBENCH_MAX_READ_CHUNK samples */
	unsigned char *ro;                /* a read-only page holding a valid config */
	unsigned char *unmapped;          /* an address with nothing mapped */
	unsigned char *edge;              /* a page followed by a PROT_NONE page: structs cut short */
	long page;
};

static void fuzz_good_cfg(struct kbench_config *c)
{
	memset(c, 0, sizeof(*c));
	c->abi_version = KBENCH_ABI_VERSION;
	c->size = sizeof(*c);
	c->payload_size = 4;
	c->iterations = 1 + rnd() % 200;
	c->warmup = rnd() % 100;
	c->max_discarded = 10;
	c->n_cpus = 1;
	c->cpus[0] = 0;
	if (rnd() % 2) {
		c->n_counters = 1 + rnd() % 2;
		c->counters[0].type = 1; /* software cpu-clock */
		c->counters[1].type = rnd() % 2 ? 0 : 4; /* hardware cycles (none under TCG) or raw */
		c->counters[1].config = rnd() % 3;
	}
}

/* A pointer for the ioctl argument or a buffer: mostly good, else one of the bad kinds. */
static void *fuzz_ptr(struct fuzz_mem *m, void *good, size_t len)
{
	switch (rnd() % 10) {
	case 0:
		return NULL;
	case 1:
		return m->unmapped + rnd() % 4096;
	case 2:
		return m->ro; /* copy_from_user works, copy_to_user faults */
	case 3: /* the struct runs into the PROT_NONE page */
		return m->edge + m->page - 1 - rnd() % (len < (size_t)m->page ? len : (size_t)m->page - 1);
	case 4: {
		static const __u64 k[] = { 0xffffffff81000000ull, 0xffff888000000000ull, ~0ull - 7, 0x10,
					   0x00007ffffffff000ull, 0x0000800000000000ull };
		return (void *)(uintptr_t)k[rnd() % (sizeof(k) / sizeof(k[0]))];
	}
	default:
		return good;
	}
}

static void fuzz_count(struct fuzz_stats *st, int rc)
{
	__sync_fetch_and_add(&st->calls, 1);
	if (rc == 0)
		__sync_fetch_and_add(&st->ok, 1);
	else
		__sync_fetch_and_add(&st->err[errno < FUZZ_ERRNOS ? errno : 0], 1);
}

static void fuzz_child(struct fuzz_stats *st, struct fuzz_mem *m, __u64 seed, int calls)
{
	struct kbench_config cfg;
	struct kbench_read rd;
	int fd = open_dev(), i;

	rnd_state = seed | 1;
	for (i = 0; i < calls; i++) {
		unsigned int what = rnd() % 100;
		unsigned int j, n;
		int rc;

		if (what < 50) { /* RUN */
			fuzz_good_cfg(&cfg);
			n = rnd() % 4;
			if (rnd() % 5 == 0) { /* all random */
				for (j = 0; j < sizeof(cfg); j += 8) {
					__u64 r = rnd();

					memcpy((char *)&cfg + j, &r, sizeof(cfg) - j < 8 ? sizeof(cfg) - j : 8);
				}
				if (rnd() % 2) { /* ... with a valid header, so that validation looks further */
					cfg.abi_version = KBENCH_ABI_VERSION;
					cfg.size = sizeof(cfg);
				}
			}
			for (j = 0; j < n; j++) { /* mutations of single fields */
				switch (rnd() % 12) {
				case 0: cfg.abi_version = (__u32)interesting(); break;
				case 1: cfg.size = (__u32)interesting(); break;
				case 2: cfg.payload_size = (__u32)interesting(); break;
				case 3: cfg.clock = (__u32)interesting(); break;
				case 4: cfg.iterations = interesting(); break;
				case 5: cfg.warmup = interesting(); break;
				case 6: cfg.max_discarded = interesting(); break;
				case 7: cfg.n_counters = (__u32)interesting(); break;
				case 8: cfg.n_cpus = (__u32)interesting(); break;
				case 9: cfg.cpus[rnd() % KBENCH_MAX_CPUS] = (__u32)interesting(); break;
				case 10: cfg.counters[rnd() % KBENCH_MAX_COUNTERS].type = (__u32)interesting(); break;
				default: ((unsigned char *)&cfg)[rnd() % sizeof(cfg)] ^= 1u << (rnd() % 8); break;
				}
			}
			rc = ioctl(fd, KBENCH_IOC_RUN, fuzz_ptr(m, &cfg, sizeof(cfg)));
			__sync_fetch_and_add(&st->run_calls, 1);
		} else if (what < 90) { /* READ */
			memset(&rd, 0, sizeof(rd));
			rd.size = sizeof(rd);
			rd.cpu_index = rnd() % 8 ? 0 : (__u32)interesting();
			rd.offset = rnd() % 2 ? rnd() % 300 : interesting();
			rd.count = rnd() % 2 ? 1 + rnd() % KBENCH_MAX_READ_CHUNK : interesting();
			rd.buf = (uintptr_t)fuzz_ptr(m, m->big, rd.count * sizeof(struct kbench_sample));
			if (rnd() % 8 == 0)
				rd.size = (__u32)interesting();
			if (rnd() % 8 == 0)
				((unsigned char *)&rd)[rnd() % sizeof(rd)] ^= 1u << (rnd() % 8);
			rc = ioctl(fd, KBENCH_IOC_READ, fuzz_ptr(m, &rd, sizeof(rd)));
			__sync_fetch_and_add(&st->read_calls, 1);
		} else if (what < 95) { /* INFO into good or bad memory */
			struct kbench_info info;

			rc = ioctl(fd, KBENCH_IOC_INFO, fuzz_ptr(m, &info, sizeof(info)));
			__sync_fetch_and_add(&st->other_calls, 1);
		} else { /* a random command number: the module's magic with other numbers, sizes, directions */
			unsigned long cmd = rnd() % 2 ? _IOC(rnd() % 4, KBENCH_IOC_MAGIC, rnd() % 8, rnd() % 4096)
						  : (unsigned long)(__u32)rnd();

			if (cmd == KBENCH_IOC_RUN || cmd == KBENCH_IOC_READ)
				cmd ^= 1u << 20; /* the real ones are covered above */
			rc = ioctl(fd, cmd, fuzz_ptr(m, m->big, 4096));
			__sync_fetch_and_add(&st->other_calls, 1);
		}
		fuzz_count(st, rc);
	}
	close(fd);
}

static int cmd_fuzz(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 10;
	__u64 min_calls = argc > 3 ? strtoull(argv[3], NULL, 0) : 10000, seed;
	struct fuzz_stats *st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct fuzz_mem m;
	struct kbench_config good;
	struct timespec t0, t;
	double el = 0;
	int e;

	if (st == MAP_FAILED)
		die("mmap");
	memset(st, 0, sizeof(*st));
	m.page = sysconf(_SC_PAGESIZE);
	m.big = calloc(KBENCH_MAX_READ_CHUNK, sizeof(struct kbench_sample));
	m.ro = mmap(NULL, m.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rnd_state = seed = (__u64)time(NULL) ^ ((__u64)getpid() << 32);
	fuzz_good_cfg(&good);
	memcpy(m.ro, &good, sizeof(good));
	mprotect(m.ro, m.page, PROT_READ);
	m.unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(m.unmapped, 4096);
	m.edge = mmap(NULL, 2 * m.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(m.edge + m.page, m.page, PROT_NONE);
	if (!m.big || m.ro == MAP_FAILED || m.edge == MAP_FAILED)
		die("fuzz memory");
	printf("fuzz: seed=%llu, %.0f s and at least %llu calls\n", (unsigned long long)seed, secs,
	       (unsigned long long)min_calls);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Children of 500 calls each, killed by SIGALRM after 3 s: a mutated config can ask for a legal but long run
	 * (up to 2^22 iterations, 10^9 warm-up), and killing it exercises the killable wait as well. */
	while ((st->calls < min_calls || el < secs) && el < 6 * secs + 60) {
		__u64 cs = rnd();
		pid_t p = fork();
		int status;

		if (p < 0)
			die("fork");
		if (p == 0) {
			alarm(3);
			fuzz_child(st, &m, cs, 500);
			_exit(0);
		}
		waitpid(p, &status, 0);
		st->children++;
		if (WIFSIGNALED(status))
			st->timeouts++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	printf("fuzz: calls=%llu (RUN %llu, READ %llu, other %llu) in %.1f s, %llu children, %llu killed by the 3 s "
	       "alarm\n", st->calls, st->run_calls, st->read_calls, st->other_calls, el, st->children, st->timeouts);
	printf("fuzz: results: ok=%llu", st->ok);
	for (e = 0; e < FUZZ_ERRNOS; e++)
		if (st->err[e])
			printf(" %s=%llu", e ? strerrorname_np(e) ? strerrorname_np(e) : "?" : "errno>=140", st->err[e]);
	printf("\n");
	printf("fuzz_calls=%llu\nfuzz_seconds=%.1f\n", st->calls, el);
	return st->calls >= min_calls ? 0 : 1;
}

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A valid run of N iterations, checked sample by sample; prints one PASS/FAIL line. Returns 0 when correct. */
static int verify_run(const char *what, __u64 n)
{
	struct kbench_config c;
	struct kbench_read rd;
	struct kbench_sample *buf = calloc(n + 100, sizeof(*buf));
	__u64 i, kept = 0, bad = 0;
	int fd = open_dev(), rc;

	good_cfg(&c);
	c.iterations = n;
	c.warmup = 100;
	c.max_discarded = 100;
	rc = ioctl(fd, KBENCH_IOC_RUN, &c);
	if (rc) {
		printf("FAIL %s: a valid RUN after it: %s\n", what, strerror(errno));
		return 1;
	}
	memset(&rd, 0, sizeof(rd));
	rd.size = sizeof(rd);
	rd.count = c.records[0];
	rd.buf = (uintptr_t)buf;
	if (ioctl(fd, KBENCH_IOC_READ, &rd) || rd.copied != c.records[0]) {
		printf("FAIL %s: READ after a valid RUN: %s, copied %llu of %llu\n", what, strerror(errno), rd.copied,
		       c.records[0]);
		return 1;
	}
	for (i = 0; i < rd.copied; i++) {
		if (buf[i].iteration != i || buf[i].cpu != 0 || (buf[i].flags & ~KBENCH_SAMPLE_DISCARDED_ALL))
			bad++;
		if (!buf[i].flags)
			kept++;
	}
	rc = !(c.kept[0] == n && kept == n && c.records[0] == c.kept[0] + c.discarded[0] && !bad);
	printf("%s %s: a valid run after it kept %llu of %llu, records %llu = kept + discarded %llu, %llu bad samples\n",
	       rc ? "FAIL" : "PASS", what, c.kept[0], n, c.records[0], c.discarded[0], bad);
	free(buf);
	close(fd);
	return rc;
}

static int kbench_threads(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char p[300], comm[64] = "";
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "kbench/", 7))
			n++;
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Two processes call RUN at once: while one runs, the other must get EBUSY (one run at a time), and the first
 * must still complete correctly. */
static int cmd_busy(void)
{
	int pfd[2], status, busy = 0, other = 0, ok_mine = 0, fd = open_dev();
	struct kbench_config c;
	pid_t p;
	char b;

	if (pipe(pfd))
		die("pipe");
	p = fork();
	if (p == 0) {
		int cfd = open_dev();

		good_cfg(&c);
		c.iterations = 20000;
		c.warmup = 1000000; /* seconds under TCG */
		c.max_discarded = 1000;
		close(pfd[0]);
		if (write(pfd[1], "x", 1) != 1)
			_exit(3);
		/* The parent may win the race for the first few ms (then its run comes first: serialized): retry. */
		while (ioctl(cfd, KBENCH_IOC_RUN, &c))
			if (errno != EBUSY)
				_exit(1);
		_exit(c.kept[0] == 20000 ? 0 : 4);
	}
	close(pfd[1]);
	if (read(pfd[0], &b, 1) != 1)
		die("busy: child");
	/* Try until the child's run is over: every try while it runs must say EBUSY. */
	while (waitpid(p, &status, WNOHANG) == 0) {
		good_cfg(&c);
		c.iterations = 10;
		c.warmup = 0;
		if (ioctl(fd, KBENCH_IOC_RUN, &c) == 0)
			ok_mine++;
		else if (errno == EBUSY)
			busy++;
		else
			other++;
		usleep(10000);
	}
	close(fd);
	printf("%s busy: second RUN while the first ran: %d x EBUSY, %d x succeeded (serialized before it), %d x other "
	       "errors; the first run exited %d (0: completed, kept all)\n",
	       busy > 0 && other == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "PASS" : "FAIL", busy, ok_mine,
	       other, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return (!(busy > 0 && other == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)) | verify_run("busy", 2000);
}

/* SIGKILL in the middle of a run: the process must die promptly, the kthreads must go, and the next run must work. */
static int cmd_kill(void)
{
	struct kbench_config c;
	int status, alive, left, rc;
	double t0, dt;
	pid_t p = fork();

	if (p == 0) {
		int fd = open_dev();

		good_cfg(&c);
		c.warmup = 1000000000ull; /* KBENCH_MAX_WARMUP: hours under TCG, the kill ends it */
		ioctl(fd, KBENCH_IOC_RUN, &c);
		_exit(0);
	}
	sleep(2);
	alive = waitpid(p, &status, WNOHANG) == 0;
	left = kbench_threads();
	t0 = mono_s();
	kill(p, SIGKILL);
	waitpid(p, &status, 0);
	dt = mono_s() - t0;
	usleep(200000);
	rc = !(alive && left == 1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && dt < 10 && kbench_threads() == 0);
	printf("%s kill: SIGKILL mid-run (run going: %s, %d kbench kthread(s)): the process died in %.2f s by signal %d, "
	       "%d kbench kthread(s) left\n",
	       rc ? "FAIL" : "PASS", alive ? "yes" : "no", left, dt, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
	       kbench_threads());
	return rc | verify_run("kill", 2000);
}

/* open() needs CAP_PERFMON even when the node's mode lets the caller in. */
static int cmd_eperm(void)
{
	int status, rc;
	pid_t p;

	if (chmod(KBENCH_DEVICE, 0666))
		die("chmod");
	p = fork();
	if (p == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		fd = open(KBENCH_DEVICE, O_RDWR);
		_exit(fd >= 0 ? 0 : errno == EPERM ? 1 : 2);
	}
	waitpid(p, &status, 0);
	chmod(KBENCH_DEVICE, 0600);
	rc = !(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	printf("%s eperm: open by uid 65534 without CAP_PERFMON (node made 0666 for the test): %s\n", rc ? "FAIL" : "PASS",
	       !WIFEXITED(status) ? "crashed" : WEXITSTATUS(status) == 0 ? "opened (wrong)" :
	       WEXITSTATUS(status) == 1 ? "EPERM" : WEXITSTATUS(status) == 3 ? "setuid failed" : "another errno");
	return rc;
}

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
