// SPDX-License-Identifier: MIT
/*
 * kbench-run's common helpers, called by kbench-run.c and every sub-command file and calling none of them, so
 * that no two files call each other in a loop: the device, the ABI check, the clock's name, a valid config.
 */
#include "kbench-run.h"

void die(const char *what)
{
	fprintf(stderr, "kbench-run: %s: %s\n", what, strerror(errno));
	exit(1);
}

int open_dev(void)
{
	int fd = open(KBENCH_DEVICE, O_RDWR);

	if (fd < 0)
		die("open " KBENCH_DEVICE " (is kbench.ko loaded? are you root?)");
	return fd;
}

void check_abi(int fd, struct kbench_info *info)
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

const char *clock_name(unsigned int c)
{
	return c == KBENCH_CLOCK_TSC ? "tsc" : c == KBENCH_CLOCK_KTIME ? "ktime_mono_fast" : "auto";
}

void good_cfg(struct kbench_config *c)
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
