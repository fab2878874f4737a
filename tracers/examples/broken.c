/*
 * broken.c: deliberately broken plugins, one per failure the harness must report clearly
 * (tests in harness/tests/plugin.rs). Built once per BROKEN_* macro by examples.mk:
 *   BROKEN_SEGV      fire() writes through a NULL pointer       -> SIGSEGV in the cell
 *   BROKEN_ABORT     fire() calls abort()                        -> SIGABRT in the cell
 *   BROKEN_HANG      fire() never returns                        -> killed at --timeout
 *   BROKEN_ABI       abi_version is TRACEBENCH_ABI_VERSION + 41  -> refused at load
 *   BROKEN_NOSYM     does not export tracebench_tracer_v1        -> refused at load
 *   BROKEN_INIT      init() fails with a message                 -> refused at set-up
 * Each one writes a line to stderr before it breaks so that tests can check that the cell's
 * stderr reaches the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracebench.h"

static int b_init(const char *args, void **ctx, char *err, size_t errlen)
{
    (void)args;
#ifdef BROKEN_INIT
    snprintf(err, errlen, "broken-init: refusing on purpose (no device /dev/imaginary)");
    *ctx = NULL;
    return -1;
#else
    (void)err;
    (void)errlen;
    *ctx = NULL;
    return 0;
#endif
}

static uint64_t b_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

/* Breaks on the 100th call (warm-up included), not on a payload value, so that it breaks
 * whatever payloads the harness passes during warm-up. */
static unsigned long calls __attribute__((unused));

static void b_fire(void *ctx, uint32_t payload)
{
    (void)ctx;
    (void)payload;
#if defined(BROKEN_SEGV)
    if (++calls == 100) {
        fputs("broken-segv: about to dereference NULL\n", stderr);
        *(volatile int *)(uintptr_t)ctx = 1; /* ctx is NULL */
    }
#elif defined(BROKEN_ABORT)
    if (++calls == 100) {
        fputs("broken-abort: about to abort()\n", stderr);
        abort();
    }
#elif defined(BROKEN_HANG)
    if (++calls == 100) {
        fputs("broken-hang: about to hang\n", stderr);
        for (;;)
            pause(); /* sleeps, so that a hang does not also steal a CPU from the other cells */
    }
#endif
}

static void b_fini(void *ctx)
{
    (void)ctx;
}

#ifdef BROKEN_NOSYM
/* The right struct under the wrong name: dlsym("tracebench_tracer_v1") must fail. */
#define EXPORTED tracebench_tracer
extern const struct tracebench_tracer_v1 tracebench_tracer;
#else
#define EXPORTED tracebench_tracer_v1
#endif

#if defined(BROKEN_SEGV)
#define NAME "broken-segv"
#elif defined(BROKEN_ABORT)
#define NAME "broken-abort"
#elif defined(BROKEN_HANG)
#define NAME "broken-hang"
#elif defined(BROKEN_ABI)
#define NAME "broken-abi"
#elif defined(BROKEN_NOSYM)
#define NAME "broken-nosym"
#else
#define NAME "broken-init"
#endif

const struct tracebench_tracer_v1 EXPORTED = {
#ifdef BROKEN_ABI
    .abi_version = TRACEBENCH_ABI_VERSION + 41,
#else
    .abi_version = TRACEBENCH_ABI_VERSION,
#endif
    .name = NAME,
    .version = "0",
    .init = b_init,
    .buffer_events = b_buffer_events,
    .thread_init = NULL,
    .fire = b_fire,
    .fini = b_fini,
};
