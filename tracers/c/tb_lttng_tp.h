/*
 * LTTng-UST tracepoint provider for tracebench: one event, `tracebench:event`, whose payload is
 * one 4-byte integer (survey section 6.2.1: "The payload of the event is four bytes").
 *
 * This header is included twice by tb_lttng.c, once normally and once with
 * LTTNG_UST_TRACEPOINT_CREATE_PROBES defined, as LTTng-UST's provider scheme requires.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tracebench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tb_lttng_tp.h"

#if !defined(TB_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TB_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	tracebench,
	event,
	LTTNG_UST_TP_ARGS(uint32_t, payload),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, payload, payload)
	)
)

/*
 * `tracebench:blob`: the event of `--payload-size N` (N != 4), whose payload is N bytes copied
 * from the caller's buffer into a variable-length field (a CTF sequence of chars, printed as
 * text by babeltrace2). Its cost against N is the survey's Figure 9 in userspace (section 7.3).
 */
LTTNG_UST_TRACEPOINT_EVENT(
	tracebench,
	blob,
	LTTNG_UST_TP_ARGS(const char *, data, uint32_t, len),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_sequence_text(char, data, data, uint32_t, len)
	)
)

#endif /* TB_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
