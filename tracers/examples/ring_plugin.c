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
 *
 * ABI v2 (tracebench.h): with --payload-size N (N != 4) the harness calls fire_bytes instead,
 * which appends variable-length records {ts, len, seq, N bytes padded to 8} to a second
 * per-thread ring of BYTES_RING bytes, overwriting the oldest, the way lw does.
 *   tracebench sweep --tracer plugin:target/plugins/libring_plugin.so --vary payload-size=4,256,1024
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "tracebench.h"

#define MAX_THREADS 1024
/* The variable-length ring: 64 KiB, a power of two, room for 15 records of MAX_PAYLOAD bytes. */
#define BYTES_RING 65536
#define MAX_PAYLOAD 4096

struct bytes_header {
    uint64_t ts;
    uint32_t len;
    uint32_t seq;
};
struct record {
    uint64_t ts;
    uint32_t payload;
    uint32_t seq;
};

struct thread_ring {
    uint64_t head;
    struct record *rec;
    uint64_t bhead;  /* byte offset of the next variable-length record (fire_bytes) */
    uint8_t *bytes;  /* BYTES_RING bytes */
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
    if (!r->bytes) {
        r->bytes = aligned_alloc(64, BYTES_RING);
        if (!r->bytes)
            return -1;
    }
    memset(r->bytes, 0, BYTES_RING);
    r->bhead = 0;
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

static inline uint64_t now(const struct ring_tracer *t)
{
    if (t->tsc)
        return __rdtsc();
    struct timespec tv;
    clock_gettime(CLOCK_MONOTONIC, &tv);
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_nsec;
}

/* ABI v2: one record of len bytes (len <= MAX_PAYLOAD, which the harness guarantees). */
static void ring_fire_bytes(void *ctx, const void *data, size_t len)
{
    struct ring_tracer *t = ctx;
    struct thread_ring *r = mine;
    size_t rec = sizeof(struct bytes_header) + ((len + 7) & ~(size_t)7);
    size_t off = r->bhead & (BYTES_RING - 1);
    if (off + rec > BYTES_RING) { /* would cross the end: start again at 0 */
        r->bhead += BYTES_RING - off;
        off = 0;
    }
    struct bytes_header *h = (struct bytes_header *)(r->bytes + off);
    h->ts = now(t);
    h->len = (uint32_t)len;
    h->seq = (uint32_t)r->head++;
    memcpy(h + 1, data, len);
    r->bhead += rec;
}

static uint64_t ring_buffer_events_for(void *ctx, size_t len)
{
    (void)ctx;
    return BYTES_RING / (sizeof(struct bytes_header) + ((len + 7) & ~(size_t)7)) + 1;
}

static void ring_fini(void *ctx)
{
    struct ring_tracer *t = ctx;
    for (unsigned i = 0; i < MAX_THREADS; i++) {
        free(t->rings[i].rec);
        free(t->rings[i].bytes);
    }
    free(t);
}

const struct tracebench_tracer_v2 tracebench_tracer_v2 = {
    .abi_version = TRACEBENCH_ABI_VERSION_2,
    .name = "ring-plugin",
    .version = "1.0",
    .init = ring_init,
    .buffer_events = ring_buffer_events,
    .thread_init = ring_thread_init,
    .fire = ring_fire,
    .fini = ring_fini,
    .max_payload = MAX_PAYLOAD,
    .fire_bytes = ring_fire_bytes,
    .buffer_events_for = ring_buffer_events_for,
};
