/*
 * lw_plugin.c: the built-in `lw` backend (tracers/src/lw.rs) as a plugin, to measure what the
 * plugin path costs on top of a built-in backend (docs/plugin.md).
 *
 * The survey's LW-ust (Gebai & Dagenais 2018, section 5.2.6): per call, read CLOCK_MONOTONIC
 * through the vDSO, copy {id, ts, payload} into a per-CPU, cache-line-aligned ring of 1024
 * events (16 KiB, the buffer size of section 6.2.3), bump the head. No reentrancy protection,
 * no atomics. Each step mirrors lw.rs so that the two differ only by the plugin call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracebench.h"

#define RING_EVENTS 1024u
#define EVENT_ID 1u

struct event {
    uint32_t id;
    uint32_t payload;
    uint64_t ts;
};

/* The head on its own cache line so that neighbouring CPUs' rings never share a line. */
struct ring {
    uint64_t head;
    uint8_t pad[56];
    struct event events[RING_EVENTS];
} __attribute__((aligned(64)));

struct lw {
    size_t ncpu;
    struct ring *rings;
};

/* The thread's ring index, set by thread_init. initial-exec, not the global-dynamic default of
 * -fPIC: a %fs-relative load like the Rust thread_local of lw.rs, instead of a call to
 * __tls_get_addr on every event (glibc keeps static TLS room for dlopen'ed initial-exec
 * variables this small). */
static __thread size_t slot __attribute__((tls_model("initial-exec")));

static int lw_init(const char *args, void **ctx, char *err, size_t errlen)
{
    if (args && *args) {
        snprintf(err, errlen, "lw-plugin takes no arguments, got '%s'", args);
        return -1;
    }
    long n = sysconf(_SC_NPROCESSORS_CONF);
    struct lw *lw = malloc(sizeof(*lw));
    if (!lw) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    lw->ncpu = n > 0 ? (size_t)n : 1;
    lw->rings = aligned_alloc(64, lw->ncpu * sizeof(struct ring));
    if (!lw->rings) {
        snprintf(err, errlen, "cannot allocate %zu rings: %s", lw->ncpu, strerror(errno));
        free(lw);
        return -1;
    }
    memset(lw->rings, 0, lw->ncpu * sizeof(struct ring));
    *ctx = lw;
    return 0;
}

static uint64_t lw_buffer_events(void *ctx)
{
    (void)ctx;
    return RING_EVENTS;
}

static int lw_thread_init(void *ctx, unsigned cpu)
{
    struct lw *lw = ctx;
    if (cpu >= lw->ncpu)
        return -1;
    slot = cpu;
    /* Touch the whole ring now so that no page fault lands in the timed window. */
    volatile struct event *e = lw->rings[cpu].events;
    for (unsigned i = 0; i < RING_EVENTS; i++)
        e[i] = (struct event){0};
    return 0;
}

static void lw_fire(void *ctx, uint32_t payload)
{
    struct lw *lw = ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    struct ring *r = &lw->rings[slot];
    r->events[r->head & (RING_EVENTS - 1)] =
        (struct event){ .id = EVENT_ID, .payload = payload, .ts = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec };
    r->head++;
}

static void lw_fini(void *ctx)
{
    struct lw *lw = ctx;
    free(lw->rings);
    free(lw);
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "lw-plugin",
    .version = "1.0",
    .init = lw_init,
    .buffer_events = lw_buffer_events,
    .thread_init = lw_thread_init,
    .fire = lw_fire,
    .fini = lw_fini,
};
