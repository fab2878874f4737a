/*
 * bimodal_plugin.c: a test tracer that is fast in half of its processes and slow in the other
 * half, as a tracer is when its cost depends on where a process lands (another core, a buffer at
 * another alignment). The gate must say that a side's repetitions form two clusters instead of
 * asking for more of them.
 *
 * Arguments (plugin:PATH:ARGS, `+` between them): state=FILE, ns=NS. Each process that measures
 * (init runs once per measuring process) takes the next number from FILE (created 0600 if
 * missing, never through a symbolic link, under an exclusive lock) and spins NS ns more on every
 * call when that number is odd: the processes alternate fast, slow, fast, ... exactly, so a test
 * of the diagnosis does not depend on chance. Default ns: 80.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "tracebench.h"

struct bimodal {
    long ns; /* extra ns per call in this process: 0 or the ns argument */
};

/* Takes the next number from `path` and stores the one after it. -1 on error (errno set). */
static long next_number(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    long n = -1;
    if (flock(fd, LOCK_EX) == 0) {
        char buf[32] = {0};
        ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);
        n = r > 0 ? strtol(buf, NULL, 10) : 0;
        int len = snprintf(buf, sizeof(buf), "%ld\n", n + 1);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len)
            n = -1;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return n;
}

static int bimodal_init(const char *args, void **ctx, char *err, size_t errlen)
{
    char buf[512], state[480] = {0};
    long ns = 80;
    snprintf(buf, sizeof(buf), "%s", args ? args : "");
    for (char *save = NULL, *kv = strtok_r(buf, "+", &save); kv; kv = strtok_r(NULL, "+", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, errlen, "bad argument '%s': use state=FILE+ns=NS", kv);
            return -1;
        }
        *eq = 0;
        if (!strcmp(kv, "state"))
            snprintf(state, sizeof(state), "%s", eq + 1);
        else if (!strcmp(kv, "ns"))
            ns = strtol(eq + 1, NULL, 10);
        else {
            snprintf(err, errlen, "unknown argument '%s': use state=FILE+ns=NS", kv);
            return -1;
        }
    }
    if (!state[0] || ns < 0) {
        snprintf(err, errlen, "give state=FILE (a file of the test's own) and ns >= 0");
        return -1;
    }
    long n = next_number(state);
    if (n < 0) {
        snprintf(err, errlen, "cannot take a number from %s: %s", state, strerror(errno));
        return -1;
    }
    struct bimodal *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->ns = (n % 2) ? ns : 0;
    *ctx = b;
    return 0;
}

static uint64_t bimodal_buffer_events(void *ctx)
{
    (void)ctx;
    return 0;
}

__attribute__((noinline)) static void bimodal_fire(void *ctx, uint32_t payload)
{
    const struct bimodal *b = ctx;
    __asm__ volatile("" : : "r"(payload));
    if (b->ns) {
        struct timespec a, c;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do {
            clock_gettime(CLOCK_MONOTONIC, &c);
        } while ((c.tv_sec - a.tv_sec) * 1000000000L + (c.tv_nsec - a.tv_nsec) < b->ns);
    }
}

static void bimodal_fini(void *ctx)
{
    free(ctx);
}

const struct tracebench_tracer_v1 tracebench_tracer_v1 = {
    .abi_version = TRACEBENCH_ABI_VERSION,
    .name = "bimodal-plugin",
    .version = "1.0",
    .init = bimodal_init,
    .buffer_events = bimodal_buffer_events,
    .thread_init = NULL,
    .fire = bimodal_fire,
    .fini = bimodal_fini,
};
