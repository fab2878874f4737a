// SPDX-License-Identifier: MIT
/*
 * kbench-run loop and syscall: the rows of the kernel lab. Each runs the kernel loop (or times the empty ioctl from
 * user space) and writes the row's files of tracebench's output contract (events.csv, discarded.csv) plus meta.txt,
 * each through a temporary file renamed into place.
 */
#include "kbench-run.h"

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

/* ---- the kernel loop ---- */
int cmd_loop(int argc, char **argv)
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

int cmd_syscall(int argc, char **argv)
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
