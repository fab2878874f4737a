// SPDX-License-Identifier: GPL-2.0-only
/*
 * LTTng kernel probe module for kbench-module's tracepoints (LTTng's TRACE_EVENT callback, survey section 5.1.3).
 * Built against lttng-modules: make -C <kernel build dir> M=$PWD LTTNG_SRC=<lttng-modules source>
 */
#include <linux/module.h>
#include <lttng/tracer.h>

/* The kernel-side declarations, so that the compiler checks that our LTTng prototypes match the module's. */
#include "kbench_trace.h"

#include <wrapper/tracepoint.h>

/* kbench_trace.h names itself as TRACE_INCLUDE_FILE for the kernel's define_trace.h; LTTng's must find ours. */
#undef TRACE_INCLUDE_FILE
#undef TRACE_INCLUDE_PATH
#define LTTNG_PACKAGE_BUILD
#define CREATE_TRACE_POINTS
#define TRACE_INCLUDE_PATH instrumentation/events

#include <instrumentation/events/kbench.h>

MODULE_LICENSE("GPL and additional rights");
MODULE_DESCRIPTION("LTTng probes for the tracebench kbench-module tracepoints");
