/*
 * none_plugin.c: the built-in `none` (an empty call) as a plugin. Against `none`, it isolates
 * what the plugin path itself costs: the one extra indirect call from the harness's dispatch
 * into the plugin's fire (docs/plugin.md).
 */
#include "tracebench.h"

static int none_init(const char *args, void **ctx, char *err, size_t errlen)
{
    (void)args;
    (void)err;
    (void)errlen;
    *ctx = NULL;
    return 0;
}

static uint64_t none_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

/* noinline + an empty asm that "uses" the payload: a real call with a real argument, like the
 * built-in none's black_box. */
__attribute__((noinline)) static void none_fire(void *ctx, uint32_t payload)
{
    (void)ctx;
    __asm__ volatile("" : : "r"(payload));
}

static void none_fini(void *ctx)
{
    (void)ctx;
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "none-plugin",
    .version = "1.0",
    .init = none_init,
    .buffer_events = none_buffer_events,
    .thread_init = NULL,
    .fire = none_fire,
    .fini = none_fini,
};
