/*
 * tracebench.h: the ABI of out-of-tree tracer plugins.
 *
 * A plugin is a shared object that exports one symbol, `tracebench_tracer_v2` (or, for a
 * plugin written before payload sizes existed, `tracebench_tracer_v1`), a constant struct of
 * function pointers. tracebench loads it with dlopen(RTLD_NOW | RTLD_LOCAL) and
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
 * ABI v2 (`struct tracebench_tracer_v2`, abi_version = TRACEBENCH_ABI_VERSION_2) is v1 with
 * three fields appended, for `--payload-size N`:
 *   - max_payload: the largest N fire_bytes takes (sizes 1..max_payload; 4 always uses fire);
 *   - fire_bytes(ctx, data, len): record the len bytes at data. With --payload-size N != 4 it
 *     replaces fire() as the ONLY thing in the timed window; data points to a buffer the harness
 *     filled before the run (printable ASCII, NUL at data[len]), the same on every call;
 *   - buffer_events_for(ctx, len): fire_bytes calls of len bytes that wrap the buffer once
 *     (may be NULL: buffer_events is used).
 * tracebench looks for `tracebench_tracer_v2` first, then `tracebench_tracer_v1`; a v1 plugin
 * loads and runs as before, at the default payload only. run.json records the plugin's ABI.
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

/* abi_version of struct tracebench_tracer_v1 (keep it: v1 plugins set it) */
#define TRACEBENCH_ABI_VERSION 1
/* abi_version of struct tracebench_tracer_v2 */
#define TRACEBENCH_ABI_VERSION_2 2

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

/* v1 with the payload-size entry points appended (same layout up to fini). */
struct tracebench_tracer_v2 {
    uint32_t abi_version;          /* must equal TRACEBENCH_ABI_VERSION_2 */
    const char *name;
    const char *version;
    int  (*init)(const char *args, void **ctx, char *err, size_t errlen);
    uint64_t (*buffer_events)(void *ctx);
    int  (*thread_init)(void *ctx, unsigned cpu);
    void (*fire)(void *ctx, uint32_t payload);     /* the default 4-byte payload */
    void (*fini)(void *ctx);
    uint32_t max_payload;                          /* largest --payload-size fire_bytes takes */
    void (*fire_bytes)(void *ctx, const void *data, size_t len);  /* --payload-size N != 4 */
    uint64_t (*buffer_events_for)(void *ctx, size_t len);         /* may be NULL */
};

/* exported by the plugin: one of */
extern const struct tracebench_tracer_v2 tracebench_tracer_v2;
extern const struct tracebench_tracer_v1 tracebench_tracer_v1;

#ifdef __cplusplus
}
#endif

#endif /* TRACEBENCH_H */
