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
 *
 * The module's files (their shared structs are in kbench_priv.h):
 *   kbench_main.c  this one: the device, the ioctl dispatch, INFO and READ, open/release, load/unload
 *   kbench_run.c   KBENCH_IOC_RUN: validation, counters, the kthreads, the results kept per open file
 *   kbench_loop.c  the measurement loop (Algorithm 1), the clock, the tracepoints
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/version.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/capability.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/cpumask.h>
#include <linux/build_bug.h>
#include <asm/tsc.h>

#include "kbench_priv.h"

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
