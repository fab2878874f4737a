// SPDX-License-Identifier: MIT
/*
 * kbench-run busy, kill, eperm and verify: robustness tests of the module. After each one a valid run
 * must still be correct, checked sample by sample (verify_run).
 */
#include "kbench-run.h"

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A valid run of N iterations, checked sample by sample; prints one PASS/FAIL line. Returns 0 when correct. */
int verify_run(const char *what, __u64 n)
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
int cmd_busy(void)
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
int cmd_kill(void)
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
int cmd_eperm(void)
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
