/*
 * The LTTng-UST side of tracebench's `lttng-ust` and `lttng-tracef` backends, built into
 * libtb_lttng.so and dlopen()ed by the measuring child only when one of those backends is
 * created. The tracebench binary itself never links liblttng-ust: loading it runs the UST
 * constructor, which registers the process with lttng-sessiond and starts listener threads,
 * and no other backend's measurement should carry that.
 *
 * Link with -Wl,-z,nostart-stop-gc: with section garbage collection of __start_/__stop_
 * symbols (the default of recent linkers), the tracepoint pointer section is dropped and the
 * tracepoints are silently never registered.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tb_lttng_tp.h"

#include <lttng/ust-version.h>

/* A real tracepoint: `tracebench:event` with a 4-byte integer payload (survey 5.2.2). */
__attribute__((noinline, visibility("default")))
void tb_lttng_fire(uint32_t payload)
{
	lttng_ust_tracepoint(tracebench, event, payload);
}

/* `tracebench:blob`: len bytes of data into a sequence field (--payload-size). */
__attribute__((noinline, visibility("default")))
void tb_lttng_fire_blob(const char *data, uint32_t len)
{
	lttng_ust_tracepoint(tracebench, blob, data, len);
}

__attribute__((visibility("default")))
int tb_lttng_blob_enabled(void)
{
	return lttng_ust_tracepoint_enabled(tracebench, blob) ? 1 : 0;
}

/* The LTTng-UST headers this object was compiled against, for run.json. */
__attribute__((visibility("default")))
const char *tb_lttng_ust_version(void)
{
	return LTTNG_UST_VERSION;
}

/* Whether the tracepoint is enabled in this process right now (the sessiond has pushed an
 * enabled event to it): lets the backend refuse to measure a disabled tracepoint, which would
 * time a test-and-branch instead of the tracer. */
__attribute__((visibility("default")))
int tb_lttng_event_enabled(void)
{
	return lttng_ust_tracepoint_enabled(tracebench, event) ? 1 : 0;
}
