/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * LTTng description of kbench-module's tracepoints (kbench_trace.h): the same names, prototypes and payloads, so
 * that LTTng records exactly what ftrace records. Used by lttng-probe-kbench.c.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kbench

#if !defined(LTTNG_TRACE_KBENCH_H) || defined(TRACE_HEADER_MULTI_READ)
#define LTTNG_TRACE_KBENCH_H

#include <lttng/tracepoint-event.h>

LTTNG_TRACEPOINT_EVENT(kbench_event_4,
	TP_PROTO(u32 seq),
	TP_ARGS(seq),
	TP_FIELDS(
		ctf_integer(u32, seq, seq)
	)
)

LTTNG_TRACEPOINT_EVENT(kbench_event_64,
	TP_PROTO(u32 seq, const u8 *data),
	TP_ARGS(seq, data),
	TP_FIELDS(
		ctf_integer(u32, seq, seq)
		ctf_array(u8, data, data, 60)
	)
)

LTTNG_TRACEPOINT_EVENT(kbench_event_256,
	TP_PROTO(u32 seq, const u8 *data),
	TP_ARGS(seq, data),
	TP_FIELDS(
		ctf_integer(u32, seq, seq)
		ctf_array(u8, data, data, 252)
	)
)

LTTNG_TRACEPOINT_EVENT(kbench_event_1024,
	TP_PROTO(u32 seq, const u8 *data),
	TP_ARGS(seq, data),
	TP_FIELDS(
		ctf_integer(u32, seq, seq)
		ctf_array(u8, data, data, 1020)
	)
)

#endif /* LTTNG_TRACE_KBENCH_H */

/* This part must be outside protection */
#include <lttng/define_trace.h>
