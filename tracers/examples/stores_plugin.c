/*
 * stores_plugin.c: a test tracer with no slow path of its own that stores into LINES cache lines
 * (default 16) per call, the same lines every call. It is the footprint check's probe
 * (docs/method.md, "The harness's footprint"): a harness whose own stores between windows
 * evict these lines, or leave misses pending into the next window, shows up as slow calls that
 * cluster on the harness's cycles (the sample buffer's page, the sentinel spacing).
 *
 * Arguments (plugin:PATH:ARGS): lines=N (1 to 256).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench.h"

#define LINE 64
#define MAX_LINES 256

struct stores {
    unsigned long lines;
};

static __thread unsigned char area[MAX_LINES * LINE] __attribute__((aligned(LINE)));

static int stores_init(const char *args, void **ctx, char *err, size_t errlen)
{
    struct stores *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->lines = 16;
    if (args && *args) {
        char *end = NULL;
        if (strncmp(args, "lines=", 6) != 0 || (s->lines = strtoul(args + 6, &end, 10), *end) || s->lines < 1 ||
            s->lines > MAX_LINES) {
            snprintf(err, errlen, "bad argument '%s': use lines=N with N from 1 to %d", args, MAX_LINES);
            free(s);
            return -1;
        }
    }
    *ctx = s;
    return 0;
}

static uint64_t stores_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

__attribute__((noinline)) static void stores_fire(void *ctx, uint32_t payload)
{
    const struct stores *s = ctx;
    for (unsigned long i = 0; i < s->lines; i++)
        *(volatile uint32_t *)&area[i * LINE] = payload;
}

static void stores_fini(void *ctx)
{
    free(ctx);
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "stores-plugin",
    .version = "1.0",
    .init = stores_init,
    .buffer_events = stores_buffer_events,
    .thread_init = NULL,
    .fire = stores_fire,
    .fini = stores_fini,
};
