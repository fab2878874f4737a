// SPDX-License-Identifier: MIT
/*
 * kbench-run bad and fuzz: invalid ioctl arguments, each with the errno it must give, and random and mutated
 * RUN/READ/INFO ioctls.
 */
#include "kbench-run.h"

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

int cmd_bad(void)
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

/* ---- robustness: random input, concurrency, SIGKILL, capability ---- */
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

static void fuzz_count(struct fuzz_stats *st, int rc, int err)
{
	__sync_fetch_and_add(&st->calls, 1);
	if (rc == 0)
		__sync_fetch_and_add(&st->ok, 1);
	else
		__sync_fetch_and_add(&st->err[err < FUZZ_ERRNOS ? err : 0], 1);
}

/* The counts are read-only to the child while a call runs: a fuzzed pointer (a bit flipped in a
 * READ's buffer address) can name the counts' own page, and the module then rightly writes samples
 * there, which read back as counts of errors no call returned. Read-only, such a write faults
 * (EFAULT, a result like any other). */
static void fuzz_guard(struct fuzz_stats *st, int writable)
{
	if (mprotect(st, sizeof(*st), writable ? PROT_READ | PROT_WRITE : PROT_READ))
		die("mprotect");
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
		__u64 *kind;
		int rc, err;

		fuzz_guard(st, 0);

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
			kind = &st->run_calls;
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
			kind = &st->read_calls;
		} else if (what < 95) { /* INFO into good or bad memory */
			struct kbench_info info;

			rc = ioctl(fd, KBENCH_IOC_INFO, fuzz_ptr(m, &info, sizeof(info)));
			kind = &st->other_calls;
		} else { /* a random command number: the module's magic with other numbers, sizes, directions */
			unsigned long cmd = rnd() % 2 ? _IOC(rnd() % 4, KBENCH_IOC_MAGIC, rnd() % 8, rnd() % 4096)
						  : (unsigned long)(__u32)rnd();

			if (cmd == KBENCH_IOC_RUN || cmd == KBENCH_IOC_READ)
				cmd ^= 1u << 20; /* the real ones are covered above */
			rc = ioctl(fd, cmd, fuzz_ptr(m, m->big, 4096));
			kind = &st->other_calls;
		}
		err = errno;
		fuzz_guard(st, 1);
		__sync_fetch_and_add(kind, 1);
		fuzz_count(st, rc, err);
	}
	close(fd);
}

int cmd_fuzz(int argc, char **argv)
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
