/* A stand-in for the HPC tracers' libraries (Extrae, VampirTrace, Score-P), none of which is
 * packaged in Debian: it exports the entry points tracers/src/hpc.rs resolves, with the argument
 * lists it passes, and counts every call and every argument that is not what the backend must
 * pass. tracers/tests/hpc_standin.rs loads it under each library's name through the backends and
 * reads the counts back with standin_count(). Not a tracer: it records nothing. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static unsigned long n_extrae_init, n_extrae_event, n_extrae_fini, extrae_last;
static unsigned long n_vt_start, n_vt_end;
static unsigned long n_scorep_begin, n_scorep_end, n_scorep_register;
static unsigned long bad;
static int depth;
static int region; /* the Score-P region handle points here once registered */

void Extrae_init(void) { n_extrae_init++; }
void Extrae_event(unsigned type, unsigned long long value) {
    /* Type 81000 (the user range); value payload + 1, never 0 ("end" to Paraver). */
    if (type != 81000u || value == 0) bad++;
    if (n_extrae_init != 1) bad++;
    extrae_last = (unsigned long)value;
    n_extrae_event++;
}
void Extrae_fini(void) { n_extrae_fini++; }

void VT_User_start__(const char *name, const char *file, int line) {
    if (!name || strcmp(name, "tracebench_fire") || !file || strcmp(file, "tracebench.c") || line != 1) bad++;
    if (depth++ != 0) bad++;
    n_vt_start++;
}
void VT_User_end__(const char *name) {
    if (!name || strcmp(name, "tracebench_fire")) bad++;
    if (--depth != 0) bad++;
    n_vt_end++;
}

void SCOREP_User_RegionBegin(void **handle, const char **last_file_name, size_t *last_file, const char *name,
                             unsigned type, const char *file, uint32_t line) {
    if (!handle || !last_file_name || !last_file) { bad++; return; }
    if (!name || strcmp(name, "tracebench_fire") || type != 0 || !file || strcmp(file, "tracebench.c") || line != 1) bad++;
    if (*handle == NULL) { /* first Begin registers the region, as Score-P does */
        *handle = &region;
        *last_file_name = file;
        *last_file = 7;
        n_scorep_register++;
    } else if (*handle != &region || *last_file_name != file || *last_file != 7) {
        bad++;
    }
    if (depth++ != 0) bad++;
    n_scorep_begin++;
}
void SCOREP_User_RegionEnd(void *handle) {
    if (handle != &region) bad++;
    if (--depth != 0) bad++;
    n_scorep_end++;
}

unsigned long standin_count(const char *what) {
    static const struct { const char *name; unsigned long *v; } all[] = {
        {"extrae_init", &n_extrae_init}, {"extrae_event", &n_extrae_event}, {"extrae_fini", &n_extrae_fini},
        {"extrae_last", &extrae_last}, {"vt_start", &n_vt_start}, {"vt_end", &n_vt_end},
        {"scorep_begin", &n_scorep_begin}, {"scorep_end", &n_scorep_end}, {"scorep_register", &n_scorep_register},
        {"bad", &bad},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(all[i].name, what)) return *all[i].v;
    return (unsigned long)-1;
}
