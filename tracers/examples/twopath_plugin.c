/*
 * twopath_plugin.c: a test tracer with two periodic slow paths, like LTTng's kernel page
 * crossing and sub-buffer switch (survey section 7.1: the middle path every PAGE_SIZE /
 * EVENT_SIZE events, the slow path every SUB-BUFFER_SIZE / EVENT_SIZE events). The report must
 * find both, each with its own period and extra cost.
 *
 * Arguments (plugin:PATH:ARGS, `+` between them): p1=CALLS, ns1=NS, p2=CALLS, ns2=NS. Defaults:
 * every 97th call spins 400 ns more, every 1000th call 2000 ns more. Calls are counted per
 * thread from the first fire (warm-up included), so the phase is arbitrary, as in a tracer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracebench.h"

struct twopath {
    unsigned long p1, p2;
    long ns1, ns2;
};

static __thread unsigned long calls;

static int twopath_init(const char *args, void **ctx, char *err, size_t errlen)
{
    struct twopath *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *t = (struct twopath){.p1 = 97, .ns1 = 400, .p2 = 1000, .ns2 = 2000};
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", args ? args : "");
    for (char *save = NULL, *kv = strtok_r(buf, "+", &save); kv; kv = strtok_r(NULL, "+", &save)) {
        char *eq = strchr(kv, '=');
        long v = eq ? strtol(eq + 1, NULL, 10) : -1;
        if (!eq || v < 0) {
            snprintf(err, errlen, "bad argument '%s': use p1=CALLS+ns1=NS+p2=CALLS+ns2=NS", kv);
            free(t);
            return -1;
        }
        *eq = 0;
        if (!strcmp(kv, "p1"))
            t->p1 = (unsigned long)v;
        else if (!strcmp(kv, "ns1"))
            t->ns1 = v;
        else if (!strcmp(kv, "p2"))
            t->p2 = (unsigned long)v;
        else if (!strcmp(kv, "ns2"))
            t->ns2 = v;
        else {
            snprintf(err, errlen, "unknown argument '%s': use p1, ns1, p2, ns2", kv);
            free(t);
            return -1;
        }
    }
    if (t->p1 < 2 || t->p2 < 2) {
        snprintf(err, errlen, "periods must be at least 2");
        free(t);
        return -1;
    }
    *ctx = t;
    return 0;
}

static uint64_t twopath_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

static void spin_ns(long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

__attribute__((noinline)) static void twopath_fire(void *ctx, uint32_t payload)
{
    const struct twopath *t = ctx;
    unsigned long n = ++calls;
    __asm__ volatile("" : : "r"(payload));
    if (n % t->p1 == 0)
        spin_ns(t->ns1);
    if (n % t->p2 == 0)
        spin_ns(t->ns2);
}

static void twopath_fini(void *ctx)
{
    free(ctx);
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "twopath-plugin",
    .version = "1.0",
    .init = twopath_init,
    .buffer_events = twopath_buffer_events,
    .thread_init = NULL,
    .fire = twopath_fire,
    .fini = twopath_fini,
};
