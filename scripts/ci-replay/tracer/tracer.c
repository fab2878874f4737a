/*
 * tracer.c: the fixture tracer of the workflow replay (scripts/ci-replay/replay.py). Each event
 * stores its payload into a one-slot buffer. The replay makes the PR's head from this file: a
 * no-op change edits this comment only; a change that adds work puts stores at the WORK line.
 */
#include "tracebench.h"

static volatile uint32_t slot[8];

static int fixture_init(const char *args, void **ctx, char *err, size_t errlen)
{
    (void)args;
    (void)err;
    (void)errlen;
    *ctx = NULL;
    return 0;
}

static uint64_t fixture_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

__attribute__((noinline)) static void fixture_fire(void *ctx, uint32_t payload)
{
    (void)ctx;
    slot[0] = payload;
    /* WORK */
}

static void fixture_fini(void *ctx)
{
    (void)ctx;
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "fixture",
    .version = "1.0",
    .init = fixture_init,
    .buffer_events = fixture_buffer_events,
    .thread_init = NULL,
    .fire = fixture_fire,
    .fini = fixture_fini,
};
