/* The hello line a run starts with (docs/core-protocol.md, "hello"): the
 * timer's cost and resolution, every rank's host, CPUs, affinity and the CPU
 * it starts on, the MPI library and the thread level it granted, and the
 * options the run was given. */
#include "fl.h"
#include "fl_facts.h" /* FL_CORE_VERSION: fabriclab's version */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* What every rank tells rank 0 for the hello line (rank 0 only). */
typedef struct {
    char *hosts;  /* processor names, MPI_MAX_PROCESSOR_NAME apart */
    char *masks;  /* affinity CPU lists, AFFINITY_LEN apart */
    int *cpus;    /* online CPUs */
    int *on;      /* the CPU it starts on */
} hello_ranks;

static void gather_ranks(const fl_ctx *c, hello_ranks *h)
{
    char me[MPI_MAX_PROCESSOR_NAME] = "", mask[AFFINITY_LEN];
    int len = 0, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    const size_t n = (size_t)c->nranks;
    MPI_Get_processor_name(me, &len);
    affinity_text(mask, sizeof mask);
    memset(h, 0, sizeof *h);
    if (c->rank == 0 && (!(h->hosts = malloc(n * MPI_MAX_PROCESSOR_NAME)) ||
                         !(h->cpus = malloc(sizeof *h->cpus * n)) ||
                         !(h->on = malloc(sizeof *h->on * n)) ||
                         !(h->masks = malloc(n * AFFINITY_LEN))))
        fl_die("out of memory");
    MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, h->hosts, MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, 0, c->comm);
    MPI_Gather(&ncpu, 1, MPI_INT, h->cpus, 1, MPI_INT, 0, c->comm);
    MPI_Gather(mask, AFFINITY_LEN, MPI_CHAR, h->masks, AFFINITY_LEN, MPI_CHAR, 0, c->comm);
    fl_gather_cpus(c, h->on);
}

/* ,"key":["a","b",...]: n strings `stride` bytes apart */
static void str_list(fl_buf *j, const char *key, const char *x, size_t stride, int n)
{
    fl_buf_printf(j, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        fl_buf_printf(j, "%s", i ? "," : "");
        fl_buf_str(j, x + (size_t)i * stride);
    }
    fl_buf_printf(j, "]");
}

/* ,"mpi_library":...,"mpi_version":"3.1" */
static void print_mpi(fl_buf *j)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, major = 0, minor = 0;
    MPI_Get_library_version(lib, &len);
    while (len > 0 && (lib[len - 1] == '\n' || lib[len - 1] == ' ' || lib[len - 1] == '\0'))
        lib[--len] = '\0';
    MPI_Get_version(&major, &minor);
    fl_buf_printf(j, ",\"mpi_library\":");
    fl_buf_str(j, lib);
    fl_buf_printf(j, ",\"mpi_version\":\"%d.%d\"", major, minor);
}

/* ,"ranks":N,"hosts":[...],...,"node_size":K */
static void print_ranks(fl_buf *j, const fl_ctx *c, const hello_ranks *h)
{
    fl_buf_printf(j, ",\"ranks\":%d", c->nranks);
    str_list(j, "hosts", h->hosts, MPI_MAX_PROCESSOR_NAME, c->nranks);
    fl_buf_int_list(j, "cpus", h->cpus, c->nranks);
    str_list(j, "affinity", h->masks, AFFINITY_LEN, c->nranks);
    fl_buf_int_list(j, "cpu_start", h->on, c->nranks);
    fl_buf_printf(j, ",\"node_size\":%d", c->node_size);
}

static void print_timer(fl_buf *j, const fl_ctx *c, double resolution)
{
    fl_buf_printf(j, ",\"timer\":{\"name\":\"clock_gettime(CLOCK_MONOTONIC)\",\"overhead_s\":");
    fl_buf_num(j, c->timer_overhead);
    fl_buf_printf(j, ",\"resolution_s\":");
    fl_buf_num(j, resolution);
    fl_cpu_clock(j); /* how rank_cpu is read (cpu.c) */
    fl_buf_printf(j, "}");
}

/* ,"options":{...}: the run's options as the core took them, params with
 * their defaults filled in. */
static void print_options(fl_buf *j, const fl_opts *o)
{
    fl_buf_printf(j, ",\"options\":{\"sizes\":");
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
    fl_buf_printf(j, "}}");
}

int fl_thread_level(const fl_facts *f)
{
    return f->threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
}

const char *fl_thread_level_name(int level)
{
    return level >= MPI_THREAD_MULTIPLE ? "MULTIPLE" : level >= MPI_THREAD_SERIALIZED ? "SERIALIZED"
           : level >= MPI_THREAD_FUNNELED ? "FUNNELED" : "SINGLE";
}

/* ,"thread_level":{"required":"SINGLE","provided":"SINGLE"}: what main.c asked
 * MPI_Init_thread for, from the benchmark's facts, and what MPI granted. */
static void print_thread_level(fl_buf *j, const char *bench)
{
    fl_bench b;
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    const int required = fl_find_bench(bench, &b) ? MPI_THREAD_SINGLE : fl_thread_level(b.facts);
    fl_buf_printf(j, ",\"thread_level\":{\"required\":\"%s\",\"provided\":\"%s\"}",
                  fl_thread_level_name(required), fl_thread_level_name(provided));
}

/* Gathers every rank's processor name, online CPU count, affinity and
 * current CPU, then prints the hello line; returns, on rank 0, every rank's
 * processor name (MPI_MAX_PROCESSOR_NAME apart) for the point records. */
char *fl_hello(const fl_ctx *c, const fl_opts *o, const char *bench, double resolution)
{
    hello_ranks h;
    gather_ranks(c, &h);
    if (c->rank != 0)
        return NULL;
    fl_buf j = {0};
    fl_buf_printf(&j, "{\"type\":\"hello\",\"core_version\":\"%s\",\"bench\":", FL_CORE_VERSION);
    fl_buf_str(&j, bench);
    /* the world's size first: a launcher's output may cut a long line (slurmstepd forwards
     * 1 KiB at a time), and a cut singleton's hello still says it is one rank of 1 */
    print_ranks(&j, c, &h);
    print_mpi(&j);
    print_thread_level(&j, bench);
    print_timer(&j, c, resolution);
    print_options(&j, o);
    fl_buf_printf(&j, "}");
    fl_emit(j.p);
    fl_buf_free(&j);
    free(h.cpus);
    free(h.on);
    free(h.masks);
    return h.hosts;
}
