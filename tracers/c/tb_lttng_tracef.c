/*
 * `lttng-tracef`: lttng_ust_tracef() formats its arguments printf-style into an
 * `lttng_ust_tracef:event` (survey section 5.2.3). Kept in its own compilation unit, without
 * LTTNG_UST_TRACEPOINT_DEFINE: the lttng_ust_tracef tracepoint is defined by liblttng-ust
 * itself, and defining it here too would reference a provider this object does not contain.
 */
#include <stdint.h>
#include <lttng/tracef.h>

__attribute__((noinline, visibility("default")))
void tb_lttng_tracef(uint32_t payload)
{
	lttng_ust_tracef("%d", (int)payload);
}

/* --payload-size: a NUL-terminated string of that many bytes, formatted with %s. The length
 * argument is unused: tracef finds it, as a program tracing a string would. */
__attribute__((noinline, visibility("default")))
void tb_lttng_tracef_blob(const char *data, uint32_t len)
{
	(void)len;
	lttng_ust_tracef("%s", data);
}

__attribute__((visibility("default")))
int tb_lttng_tracef_enabled(void)
{
	return lttng_ust_tracepoint_lttng_ust_tracef___event.state ? 1 : 0;
}
