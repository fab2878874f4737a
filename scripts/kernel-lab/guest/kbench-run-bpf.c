// SPDX-License-Identifier: MIT
/*
 * kbench-run loop --bpf: an eBPF program (raw instructions, no libbpf in the guest) on the loop's tracepoint; it
 * writes {ts, payload} into a per-CPU array ring and counts the events it saw in a per-CPU counter.
 */
#include "kbench-run.h"

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

void bpf_attach(const char *event, struct bpf_state *st)
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
void bpf_read(struct bpf_state *st, unsigned int cpu, __u64 *count, long long *last_seq)
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

