/*
 * nops_plugin.c: a tracer of known functions with known instruction counts, for the per-function
 * profile of a stepped run (docs/instructions.md): fire calls nutrace_header once
 * (NOPS_HEADER nops and a ret: 6 instructions) and nutrace_write twice (NOPS_WRITE nops and a
 * ret: 11 instructions each, 22 per call). Their bodies are naked asm, so the compiler adds
 * nothing and the counts are exact whatever the flags.
 *
 * Built twice (examples.mk): libnops_plugin.so, and libnops1_plugin.so with -DNOPS_EXTRA_STORE,
 * whose nutrace_write does one store more (the gate's test pair: +2 instructions per call, all in
 * nutrace_write).
 */
#include "tracebench.h"

#define NOPS_HEADER 5
#define NOPS_WRITE 10

#define STR_(x) #x
#define STR(x) STR_(x)

/* Where libnops1_plugin.so's extra store goes (local: a PC-relative store needs no GOT). */
__attribute__((used)) static unsigned int nutrace_sink;

__attribute__((naked, noinline)) void nutrace_header(void)
{
    __asm__ volatile(".rept " STR(NOPS_HEADER) "\n\tnop\n\t.endr\n\tret");
}

#ifdef NOPS_EXTRA_STORE
#define EXTRA "movl %edi, nutrace_sink(%rip)\n\t"
#else
#define EXTRA ""
#endif

__attribute__((naked, noinline)) void nutrace_write(void)
{
    __asm__ volatile(".rept " STR(NOPS_WRITE) "\n\tnop\n\t.endr\n\t" EXTRA "ret");
}

static int nops_init(const char *args, void **ctx, char *err, size_t errlen)
{
    (void)args;
    (void)err;
    (void)errlen;
    *ctx = NULL;
    return 0;
}

static uint64_t nops_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

__attribute__((noinline)) static void nops_fire(void *ctx, uint32_t payload)
{
    (void)ctx;
    (void)payload;
    nutrace_header();
    nutrace_write();
    nutrace_write();
}

static void nops_fini(void *ctx)
{
    (void)ctx;
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "nops-plugin",
    .version = "1.0",
    .init = nops_init,
    .buffer_events = nops_buffer_events,
    .thread_init = NULL,
    .fire = nops_fire,
    .fini = nops_fini,
};
