/*
 * ring_plugin.c: a small ring-buffer tracer, the example to start a plugin from.
 *
 * One ring per thread of fixed-size records {ts, payload, seq}, overwritten when full (flight
 * recorder mode, like LTTng's overwrite mode). The ring is allocated and touched in
 * thread_init, on the pinned thread, so that its pages are local to that CPU and no page fault
 * lands in the timed window. ARGS is a comma-separated list:
 *   events=N      ring size in events, a power of two (default 4096)
 *   clock=mono    timestamps from clock_gettime(CLOCK_MONOTONIC) (default)
 *   clock=tsc     timestamps from rdtsc (x86-64)
 * e.g.  tracebench run --tracer plugin:target/plugins/libring_plugin.so:events=1024+clock=tsc,lw
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "tracebench.h"

#define MAX_THREADS 1024

struct record {
    uint64_t ts;
    uint32_t payload;
    uint32_t seq;
};

struct thread_ring {
    uint64_t head;
    struct record *rec;
} __attribute__((aligned(64)));

struct ring_tracer {
    uint64_t events; /* power of two */
    int tsc;
    struct thread_ring rings[MAX_THREADS];
};

/* This thread's ring (see lw_plugin.c for why initial-exec). */
static __thread struct thread_ring *mine __attribute__((tls_model("initial-exec")));

static int parse(struct ring_tracer *t, const char *args, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    for (char *save = NULL, *tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        if (strncmp(tok, "events=", 7) == 0) {
            char *end;
            unsigned long long n = strtoull(tok + 7, &end, 10);
            if (*end || n < 2 || (n & (n - 1))) {
                snprintf(err, errlen, "events must be a power of two >= 2, got '%s'", tok + 7);
                return -1;
            }
            t->events = n;
        } else if (strcmp(tok, "clock=mono") == 0) {
            t->tsc = 0;
        } else if (strcmp(tok, "clock=tsc") == 0) {
            t->tsc = 1;
        } else {
            snprintf(err, errlen, "unknown option '%s' (known: events=N, clock=mono|tsc)", tok);
            return -1;
        }
    }
    return 0;
}

static int ring_init(const char *args, void **ctx, char *err, size_t errlen)
{
    struct ring_tracer *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->events = 4096;
    if (parse(t, args, err, errlen)) {
        free(t);
        return -1;
    }
    *ctx = t;
    return 0;
}

static uint64_t ring_buffer_events(void *ctx)
{
    return ((struct ring_tracer *)ctx)->events;
}

static int ring_thread_init(void *ctx, unsigned cpu)
{
    struct ring_tracer *t = ctx;
    if (cpu >= MAX_THREADS)
        return -1;
    struct thread_ring *r = &t->rings[cpu];
    if (!r->rec) {
        r->rec = aligned_alloc(64, t->events * sizeof(struct record));
        if (!r->rec)
            return -1;
    }
    memset(r->rec, 0, t->events * sizeof(struct record)); /* touch every page now */
    r->head = 0;
    mine = r;
    return 0;
}

static void ring_fire(void *ctx, uint32_t payload)
{
    struct ring_tracer *t = ctx;
    struct thread_ring *r = mine;
    uint64_t ts;
    if (t->tsc) {
        ts = __rdtsc();
    } else {
        struct timespec tv;
        clock_gettime(CLOCK_MONOTONIC, &tv);
        ts = (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_nsec;
    }
    struct record *rec = &r->rec[r->head & (t->events - 1)];
    rec->ts = ts;
    rec->payload = payload;
    rec->seq = (uint32_t)r->head;
    r->head++;
}

static void ring_fini(void *ctx)
{
    struct ring_tracer *t = ctx;
    for (unsigned i = 0; i < MAX_THREADS; i++)
        free(t->rings[i].rec);
    free(t);
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "ring-plugin",
    .version = "1.0",
    .init = ring_init,
    .buffer_events = ring_buffer_events,
    .thread_init = ring_thread_init,
    .fire = ring_fire,
    .fini = ring_fini,
};
