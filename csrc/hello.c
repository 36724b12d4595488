/* The hello line a run starts with (docs/core-protocol.md, "hello"): the
 * timer's cost and resolution, every rank's host, CPUs, affinity and the CPU
 * it starts on, the MPI library, and the options the run was given. */
#include "fl.h"
#include "fl_facts.h" /* FL_CORE_VERSION: fabriclab's version */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

double fl_timer_overhead(void)
{
    volatile double sink = 0;
    const int n = 100000;
    double t0 = fl_now();
    for (int i = 0; i < n; i++)
        sink = fl_now();
    (void)sink;
    return (fl_now() - t0) / n;
}

/* Smallest nonzero step between two readings: the clock's granularity or the
 * cost of one reading, whichever is larger. */
double fl_timer_resolution(void)
{
    double best = 1.0;
    for (int i = 0; i < 1000; i++) {
        double a = fl_now(), b;
        while ((b = fl_now()) == a)
            ;
        if (b - a < best)
            best = b - a;
    }
    return best;
}

#define AFFINITY_LEN 128

/* This rank's affinity mask as a CPU list, "0-1,4"; "?" if unreadable. */
static void affinity_text(char *out, size_t len)
{
    cpu_set_t set;
    size_t n = 0;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(out, len, "?");
        return;
    }
    for (int c = 0; c < CPU_SETSIZE && n + 16 < len; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
            e++;
        n += (size_t)snprintf(out + n, len - n, n ? ",%d" : "%d", c);
        if (e > c)
            n += (size_t)snprintf(out + n, len - n, "-%d", e);
        c = e;
    }
}

/* Where every rank runs: the CPU it is on (sched_getcpu) on every rank, on rank 0. */
void fl_gather_cpus(const fl_ctx *c, int *cpus)
{
    int me = sched_getcpu();
    MPI_Gather(&me, 1, MPI_INT, cpus, 1, MPI_INT, 0, c->comm);
}

void fl_buf_int_list(fl_buf *j, const char *key, const int *x, int n)
{
    fl_buf_printf(j, ",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        fl_buf_printf(j, "%s%d", i ? "," : "", x[i]);
    fl_buf_printf(j, "]");
}

/* Gathers every rank's processor name, online CPU count, affinity and
 * current CPU, then prints the hello line; returns, on rank 0, every rank's
 * processor name (MPI_MAX_PROCESSOR_NAME apart) for the point records. */
char *fl_hello(const fl_ctx *c, const fl_opts *o, const char *bench, double resolution)
{
    char *hosts = NULL, me[MPI_MAX_PROCESSOR_NAME] = "", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    char mask[AFFINITY_LEN], *masks = NULL;
    int len = 0, major = 0, minor = 0, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), *cpus = NULL;
    int *on = NULL;

    MPI_Get_processor_name(me, &len);
    affinity_text(mask, sizeof mask);
    if (c->rank == 0 && (!(hosts = malloc((size_t)c->nranks * MPI_MAX_PROCESSOR_NAME)) ||
                         !(cpus = malloc(sizeof *cpus * (size_t)c->nranks)) ||
                         !(on = malloc(sizeof *on * (size_t)c->nranks)) ||
                         !(masks = malloc((size_t)c->nranks * AFFINITY_LEN))))
        fl_die("out of memory");
    MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, 0, c->comm);
    MPI_Gather(&ncpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, c->comm);
    MPI_Gather(mask, AFFINITY_LEN, MPI_CHAR, masks, AFFINITY_LEN, MPI_CHAR, 0, c->comm);
    fl_gather_cpus(c, on);
    if (c->rank != 0)
        return NULL;
    MPI_Get_library_version(lib, &len);
    while (len > 0 && (lib[len - 1] == '\n' || lib[len - 1] == ' ' || lib[len - 1] == '\0'))
        lib[--len] = '\0';
    MPI_Get_version(&major, &minor);

    fl_buf buf = {0}, *j = &buf;
    fl_buf_printf(j, "{\"type\":\"hello\",\"core_version\":\"%s\",\"bench\":", FL_CORE_VERSION);
    fl_buf_str(j, bench);
    fl_buf_printf(j, ",\"mpi_library\":");
    fl_buf_str(j, lib);
    fl_buf_printf(j, ",\"mpi_version\":\"%d.%d\",\"ranks\":%d,\"hosts\":[", major, minor,
                  c->nranks);
    for (int i = 0; i < c->nranks; i++) {
        fl_buf_printf(j, "%s", i ? "," : "");
        fl_buf_str(j, hosts + (size_t)i * MPI_MAX_PROCESSOR_NAME);
    }
    fl_buf_printf(j, "]");
    fl_buf_int_list(j, "cpus", cpus, c->nranks);
    fl_buf_printf(j, ",\"affinity\":[");
    for (int i = 0; i < c->nranks; i++) {
        fl_buf_printf(j, "%s", i ? "," : "");
        fl_buf_str(j, masks + (size_t)i * AFFINITY_LEN);
    }
    fl_buf_printf(j, "]");
    fl_buf_int_list(j, "cpu_start", on, c->nranks);
    fl_buf_printf(j, ",\"node_size\":%d,\"timer\":{\"name\":\"clock_gettime(CLOCK_MONOTONIC)\","
                  "\"overhead_s\":", c->node_size);
    fl_buf_num(j, c->timer_overhead);
    fl_buf_printf(j, ",\"resolution_s\":");
    fl_buf_num(j, resolution);
    fl_buf_printf(j, "},\"options\":{\"sizes\":");
    fl_buf_ints(j, o->sizes, o->nsizes);
    fl_buf_printf(j, ",\"buffers\":");
    fl_buf_ints(j, o->buffers, o->nbuffers);
    fl_buf_printf(j, ",\"strides\":");
    fl_buf_ints(j, o->strides, o->nstrides);
    fl_buf_printf(j, ",\"conns\":");
    fl_buf_ints(j, o->conns, o->nconns);
    fl_buf_printf(j, ",\"layouts\":%d", o->nlayouts);
    fl_buf_printf(j, ",\"warmup\":%lld,\"min_samples\":%d,\"max_samples\":%d,\"target_ci\":",
                  (long long)o->warmup, o->min_samples, o->max_samples);
    fl_buf_num(j, o->target_ci);
    fl_buf_printf(j, ",\"point_time\":");
    fl_buf_num(j, o->point_time);
    fl_buf_printf(j, ",\"sample_time\":");
    fl_buf_num(j, o->sample_time);
    fl_buf_printf(j, ",\"validate\":%s,\"params\":{", o->validate ? "true" : "false");
    for (int i = 0; i < o->nparams; i++) {
        fl_buf_printf(j, "%s", i ? "," : "");
        fl_buf_str(j, o->params[i].key);
        fl_buf_printf(j, ":");
        fl_buf_str(j, o->params[i].value);
    }
    fl_buf_printf(j, "}}}");
    fl_emit(j->p);
    fl_buf_free(j);
    free(cpus);
    free(on);
    free(masks);
    return hosts;
}
