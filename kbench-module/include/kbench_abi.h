/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kbench_abi.h - the single definition of the kbench-module ioctl ABI.
 *
 * Shared by the module (kbench-module/kbench_*.c), the guest runner of the kernel lab
 * (scripts/kernel-lab/guest/kbench-run.c) and mirrored by harness/src/kernel/, which checks the struct sizes and
 * KBENCH_ABI_VERSION at compile time. Any layout change must bump KBENCH_ABI_VERSION and the Rust mirror.
 *
 * Every struct has fixed-width fields, explicit padding and a size that is a multiple of 8, so that its layout is
 * the same for C and Rust (#[repr(C)]) on x86-64.
 *
 * Flow (survey section 6.2, Algorithm 1):
 *   fd = open("/dev/kbench", O_RDWR)            root only (mode 0600) and perfmon_capable(), else EPERM
 *   ioctl(fd, KBENCH_IOC_INFO, &info)           ABI version, clock, limits
 *   ioctl(fd, KBENCH_IOC_RUN, &cfg)             blocks until every requested CPU has its samples; EBUSY while
 *                                               another run is going on, EINTR when killed, EXDEV when a loop
 *                                               found itself on another CPU (CPU offlined): the run is aborted.
 *                                               kept[i] < iterations when max_discarded was reached first
 *   ioctl(fd, KBENCH_IOC_READ, &rd) ...         copies the samples of one CPU out in chunks
 *   ioctl(fd, KBENCH_IOC_EMPTY)                 the empty system call of the syscall benchmark (survey 7.3)
 */
#ifndef KBENCH_ABI_H
#define KBENCH_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <linux/types.h>
#include <sys/ioctl.h>
#endif

/* 2: KBENCH_SAMPLE_DISCARDED_COUNTER (a client of version 1 would keep those samples). */
#define KBENCH_ABI_VERSION 2u
#define KBENCH_DEVICE "/dev/kbench"

#define KBENCH_MAX_COUNTERS 4u      /* the survey reads 4 hardware counters per run (section 6.2) */
#define KBENCH_MAX_CPUS 64u         /* CPUs in one run (one kthread each) */
#define KBENCH_MAX_RECORDS (1u << 22) /* records (kept + discarded) over all CPUs of one run: 256 MiB */
#define KBENCH_MAX_READ_CHUNK 65536u /* records per KBENCH_IOC_READ */

/* Payload sizes of the module's tracepoints kbench:kbench_event_<size>. 4 bytes is the survey's default. */
#define KBENCH_PAYLOAD_4 4u
#define KBENCH_PAYLOAD_64 64u
#define KBENCH_PAYLOAD_256 256u
#define KBENCH_PAYLOAD_1024 1024u

/* Clocks (kbench_info.clock, kbench_config.clock). */
#define KBENCH_CLOCK_AUTO 0u  /* TSC when it is stable, else ktime */
#define KBENCH_CLOCK_TSC 1u   /* rdtsc_ordered(), converted to ns with tsc_khz */
#define KBENCH_CLOCK_KTIME 2u /* ktime_get_mono_fast_ns() */

/* kbench_sample.flags */
#define KBENCH_SAMPLE_DISCARDED_NMI 1u /* an NMI hit this iteration: discarded (Algorithm 1) */
/* a counter was not active on this CPU's PMU for the whole iteration (descheduled, error state): its delta is not
 * the call's, so the sample is discarded (the harness's reason "counter-not-running") */
#define KBENCH_SAMPLE_DISCARDED_COUNTER 2u
#define KBENCH_SAMPLE_DISCARDED_ALL (KBENCH_SAMPLE_DISCARDED_NMI | KBENCH_SAMPLE_DISCARDED_COUNTER)

/* kbench_info.flags */
#define KBENCH_INFO_TSC_STABLE 1u

struct kbench_info {
	__u32 abi_version;  /* KBENCH_ABI_VERSION of the loaded module */
	__u32 info_size;    /* sizeof(struct kbench_info) in the module */
	__u32 config_size;  /* sizeof(struct kbench_config) */
	__u32 sample_size;  /* sizeof(struct kbench_sample) */
	__u32 read_size;    /* sizeof(struct kbench_read) */
	__u32 max_counters;
	__u32 max_cpus;
	__u32 max_read_chunk;
	__u64 max_records;
	__u32 clock;        /* what KBENCH_CLOCK_AUTO resolves to */
	__u32 flags;        /* KBENCH_INFO_* */
	__u64 tsc_khz;      /* 0 when there is no usable TSC */
	__u32 nr_cpu_ids;
	__u32 reserved0;
	__u64 reserved[4];
};

/* One counter request: a perf_event_attr type/config pair (PERF_TYPE_HARDWARE/PERF_COUNT_HW_*, ...). */
struct kbench_counter {
	__u32 type;
	__u32 status; /* out: 0 = counting, else a positive errno (ENOENT, EOPNOTSUPP...): the counter is unsupported */
	__u64 config;
};

struct kbench_config {
	/* in */
	__u32 abi_version;   /* must be KBENCH_ABI_VERSION */
	__u32 size;          /* must be sizeof(struct kbench_config) */
	__u32 payload_size;  /* one of KBENCH_PAYLOAD_* */
	__u32 clock;         /* KBENCH_CLOCK_*; out: the clock used */
	__u64 iterations;    /* kept samples wanted per CPU (>= 1) */
	__u64 warmup;        /* warm-up iterations per CPU, not recorded (steady state, survey 6.2.4) */
	__u64 max_discarded; /* per CPU; the run of a CPU stops early once exceeded */
	__u32 n_counters;    /* 0..KBENCH_MAX_COUNTERS */
	__u32 n_cpus;        /* 1..KBENCH_MAX_CPUS */
	struct kbench_counter counters[KBENCH_MAX_COUNTERS];
	__u32 cpus[KBENCH_MAX_CPUS]; /* online, distinct CPU numbers */
	/* out, per entry of cpus[] */
	__u64 records[KBENCH_MAX_CPUS];   /* records stored (kept + discarded), readable with KBENCH_IOC_READ */
	__u64 kept[KBENCH_MAX_CPUS];
	__u64 discarded[KBENCH_MAX_CPUS];
	__u64 tsc_khz;       /* out: conversion factor used for latency_ns (0 for ktime) */
	__u64 run_id;        /* out: increases by one per run of this module instance */
};

/* One loop iteration as seen by user space. */
struct kbench_sample {
	__u64 iteration;  /* index in the measured sequence (warm-up excluded; discarded ones keep their index) */
	__u64 ticks;      /* end - start in clock units (TSC ticks or ns) */
	__u64 latency_ns; /* ticks converted to ns */
	__u64 counters[KBENCH_MAX_COUNTERS]; /* end - start per requested counter; 0 for unsupported ones */
	__u32 cpu;
	__u32 flags;      /* KBENCH_SAMPLE_* */
};

struct kbench_read {
	__u32 size;      /* must be sizeof(struct kbench_read) */
	__u32 cpu_index; /* index into kbench_config.cpus of the last run */
	__u64 offset;    /* first record */
	__u64 count;     /* records wanted, 1..KBENCH_MAX_READ_CHUNK */
	__u64 buf;       /* user pointer to count * sizeof(struct kbench_sample) bytes */
	__u64 copied;    /* out: records copied (0 at the end) */
};

#define KBENCH_IOC_MAGIC 0xBE
#define KBENCH_IOC_INFO _IOR(KBENCH_IOC_MAGIC, 1, struct kbench_info)
#define KBENCH_IOC_RUN _IOWR(KBENCH_IOC_MAGIC, 2, struct kbench_config)
#define KBENCH_IOC_READ _IOWR(KBENCH_IOC_MAGIC, 3, struct kbench_read)
#define KBENCH_IOC_EMPTY _IO(KBENCH_IOC_MAGIC, 4)

/* Sizes the Rust mirror checks (harness/src/kernel/). */
#define KBENCH_INFO_SIZE 96
#define KBENCH_CONFIG_SIZE 1920
#define KBENCH_SAMPLE_SIZE 64
#define KBENCH_READ_SIZE 40

#endif /* KBENCH_ABI_H */
