/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's static tracepoints (TRACE_EVENT, survey section 4.2): one per payload size. Every payload starts with
 * the u32 sequence number of the call (the loop's iteration counter, warm-up included), so that a tracer's own
 * output can be checked against the number of calls the loop fired. The total payload is exactly 4, 64, 256 or 1024
 * bytes; 4 bytes is the survey's default (section 6.2.1).
 *
 * SystemTap only sees a module's tracepoint when this header is under the kernel headers' include/trace/events/
 * (the kernel lab copies it there as include/trace/events/kbench.h).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kbench

#if !defined(_KBENCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KBENCH_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(kbench_event_4,
	TP_PROTO(u32 seq),
	TP_ARGS(seq),
	TP_STRUCT__entry(
		__field(u32, seq)
	),
	TP_fast_assign(
		__entry->seq = seq;
	),
	TP_printk("seq=%u", __entry->seq)
);

/* Larger payloads: the sequence number, then (size - 4) bytes copied from a buffer the module filled once. The
 * array lengths are literal numbers because user-space format parsers (libtraceevent, babeltrace) need them so. */
TRACE_EVENT(kbench_event_64,
	TP_PROTO(u32 seq, const u8 *data),
	TP_ARGS(seq, data),
	TP_STRUCT__entry(
		__field(u32, seq)
		__array(u8, data, 60)
	),
	TP_fast_assign(
		__entry->seq = seq;
		memcpy(__entry->data, data, 60);
	),
	TP_printk("seq=%u len=64", __entry->seq)
);

TRACE_EVENT(kbench_event_256,
	TP_PROTO(u32 seq, const u8 *data),
	TP_ARGS(seq, data),
	TP_STRUCT__entry(
		__field(u32, seq)
		__array(u8, data, 252)
	),
	TP_fast_assign(
		__entry->seq = seq;
		memcpy(__entry->data, data, 252);
	),
	TP_printk("seq=%u len=256", __entry->seq)
);

TRACE_EVENT(kbench_event_1024,
	TP_PROTO(u32 seq, const u8 *data),
	TP_ARGS(seq, data),
	TP_STRUCT__entry(
		__field(u32, seq)
		__array(u8, data, 1020)
	),
	TP_fast_assign(
		__entry->seq = seq;
		memcpy(__entry->data, data, 1020);
	),
	TP_printk("seq=%u len=1024", __entry->seq)
);


#endif /* _KBENCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kbench_trace
#include <trace/define_trace.h>
