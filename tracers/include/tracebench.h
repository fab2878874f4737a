/*
 * tracebench.h: the ABI of out-of-tree tracer plugins.
 *
 * A plugin is a shared object that exports one symbol, `tracebench_tracer_v1`, a constant
 * struct of function pointers. tracebench loads it with dlopen(RTLD_NOW | RTLD_LOCAL) and
 * measures it exactly like a built-in backend:
 *
 *     tracebench run --tracer plugin:/path/libmytracer.so[:ARGS],lttng-ust,printf
 *
 * Everything after the second ':' (ARGS, possibly empty, may itself contain ':') is passed
 * verbatim to init(). The row name in the results is the plugin's `name`.
 *
 * Life cycle, in the measuring child process (one process per cell, so a plugin that crashes
 * or hangs only loses its own cell):
 *
 *   1. dlopen, dlsym("tracebench_tracer_v1"), abi_version check (before any cell, too, to
 *      validate the command line: at that point init() is NOT called);
 *   2. init(args, &ctx, err, errlen) once. Allocate and touch every buffer here: nothing may
 *      page-fault later in the timed window. On failure return non-zero and write a one-line,
 *      NUL-terminated reason into err (at most errlen bytes, terminator included);
 *   3. buffer_events(ctx): how many fire() calls wrap your buffer once on one thread/CPU; the
 *      harness warms up with at least that many calls so that the measured calls see the
 *      steady state (Gebai & Dagenais 2018, section 6.2.4). Return 0 if there is no buffer;
 *   4. thread_init(ctx, cpu) on each measuring thread, after it has been pinned to `cpu`
 *      (may be NULL). Return non-zero to fail the run;
 *   5. fire(ctx, payload) many times, from several threads at once when the user measures
 *      scalability (`tracebench scale`): each thread is pinned to its own CPU, so per-CPU
 *      state indexed by the cpu given to thread_init needs no synchronisation. fire() is the
 *      ONLY thing between the two clock reads: the harness calls it through one indirect call
 *      with ctx, nothing else;
 *   6. fini(ctx) once, after all threads have finished. Free everything; flush if you want,
 *      it is not timed.
 *
 * Rules: `name` and `version` are static NUL-terminated strings; every function pointer but
 * thread_init must be non-NULL; the struct must stay valid until dlclose. Keep
 * TRACEBENCH_ABI_VERSION as compiled in: the harness refuses a plugin whose abi_version is
 * not the one it was built with, with an error naming the file.
 *
 * Build: cc -O2 -fPIC -shared -I tracers/include -o libmytracer.so mytracer.c
 * See tracers/examples/ for a C ring-buffer tracer, the built-in `lw` as a plugin, and a Rust
 * cdylib plugin.
 */
#ifndef TRACEBENCH_H
#define TRACEBENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACEBENCH_ABI_VERSION 1

struct tracebench_tracer_v1 {
    uint32_t abi_version;          /* must equal TRACEBENCH_ABI_VERSION */
    const char *name;              /* row name in results */
    const char *version;           /* recorded in run.json */
    /* 0 on success; on failure, a message in err */
    int  (*init)(const char *args, void **ctx, char *err, size_t errlen);
    /* events needed to wrap the buffer once; 0 = no buffer */
    uint64_t (*buffer_events)(void *ctx);
    int  (*thread_init)(void *ctx, unsigned cpu);  /* may be NULL; called on each pinned thread */
    void (*fire)(void *ctx, uint32_t payload);     /* the tracepoint: the only thing inside the timed window */
    void (*fini)(void *ctx);
};

/* exported by the plugin */
extern const struct tracebench_tracer_v1 tracebench_tracer_v1;

#ifdef __cplusplus
}
#endif

#endif /* TRACEBENCH_H */
