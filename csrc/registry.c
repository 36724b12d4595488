/* The benchmark registry is data: each family exports a table of kernels,
 * and the facts (summary, params, ranks, axes, timing) come from fl_facts.h,
 * generated from fabriclab's registry at build time. This file only lists
 * the tables and joins the two by name. Adding a kernel file means one line below.
 * The fabric and ucx tables exist only in a core built with libfabric and UCX
 * (measure/libraries.py); --list then shows their benchmarks with "kernel": false. */
#include "fl.h"
#define FL_FACTS_TABLE /* this file defines the table; others see the defaults only */
#include "fl_facts.h"

#include <string.h>

static const fl_kernel *const families[] = {
    fl_memory_kernels,
    fl_deposit_kernels,
    fl_deposit_strided_kernels,
    fl_deposit_pattern_kernels,
    fl_deposit_atomic_kernels,
    fl_message_kernels,
    fl_message_pattern_kernels,
    fl_message_congestion_kernels,
    fl_message_victim_kernels,
    fl_message_ring_kernels,
    fl_message_conns_kernels,
    fl_message_scatter_kernels,
    fl_message_mt_kernels,
    fl_message_halo_kernels,
    fl_message_rate_kernels,
    fl_tcp_kernels,
    fl_tcp_conns_kernels,
    fl_tcp_scatter_kernels,
    fl_tcp_streams_kernels,
    fl_tcp_crr_kernels,
    fl_udp_underload_kernels,
    fl_udp_kernels,
    fl_app_transpose_kernels,
    fl_app_matmul_kernels,
    fl_app_sort_kernels,
    fl_coll_kernels,
    fl_coll_neighbor_kernels,
    fl_noise_kernels,
#ifdef FL_HAVE_FABRIC
    fl_fabric_kernels,
    fl_fabric_pattern_kernels,
    fl_fabric_via_kernels,
    fl_fabric_atomic_kernels,
    fl_fabric_rate_kernels,
#endif
#ifdef FL_HAVE_UCX
    fl_ucx_kernels,
    fl_ucx_atomic_kernels,
    fl_ucx_rate_kernels,
    fl_ucx_mt_kernels,
#endif
};
#define NFAMILIES (sizeof families / sizeof families[0])

static const fl_kernel *find_kernel(const char *name)
{
    for (size_t f = 0; f < NFAMILIES; f++)
        for (const fl_kernel *k = families[f]; k->name; k++)
            if (strcmp(k->name, name) == 0)
                return k;
    return NULL;
}

static const fl_facts *find_facts(const char *name)
{
    for (const fl_facts *f = fl_facts_table; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

const char *fl_find_bench(const char *name, fl_bench *out)
{
    out->name = name;
    out->facts = find_facts(name);
    out->k = find_kernel(name);
    return !out->facts && !out->k ? "unknown benchmark"
           : !out->k               ? "no kernel in this core for"
           : !out->facts           ? "no facts compiled in for"
                                   : NULL;
}

static void axes_json(fl_buf *o, unsigned axes)
{
    static const struct { unsigned bit; const char *name; } names[] = {
        {FL_AXIS_SIZE, "size"}, {FL_AXIS_STRIDE, "stride"},
        {FL_AXIS_ACTIVE, "active"}, {FL_AXIS_CONNS, "conns"}};
    int first = 1;
    fl_buf_printf(o, "[");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (axes & names[i].bit) {
            fl_buf_printf(o, "%s\"%s\"", first ? "" : ",", names[i].name);
            first = 0;
        }
    fl_buf_printf(o, "]");
}

/* Every benchmark of the facts, with "kernel": whether this core has it,
 * then every kernel without facts ("facts": false): a test asserts none. */
void fl_list_benches(void)
{
    int rank = 0, mpi = 0;
    MPI_Initialized(&mpi); /* `--list` alone runs without MPI (main.c) */
    if (mpi)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0)
        return;
    for (const fl_facts *f = fl_facts_table; f->name; f++) {
        fl_buf o = {0};
        fl_buf_printf(&o, "{\"name\":");
        fl_buf_str(&o, f->name);
        fl_buf_printf(&o, ",\"summary\":");
        fl_buf_str(&o, f->summary);
        fl_buf_printf(&o, ",\"min_ranks\":%d,\"even_ranks\":%s,\"legs\":%d,\"concurrent\":%s,"
                      "\"pattern\":%s,\"axes\":", f->min_ranks, f->even_ranks ? "true" : "false",
                      f->legs, f->concurrent ? "true" : "false", f->pattern ? "true" : "false");
        axes_json(&o, f->axes);
        fl_buf_printf(&o, ",\"params\":");
        fl_buf_str(&o, f->params);
        fl_buf_printf(&o, ",\"kernel\":%s,\"facts\":true}", find_kernel(f->name) ? "true" : "false");
        fl_emit(o.p);
        fl_buf_free(&o);
    }
    for (size_t i = 0; i < NFAMILIES; i++)
        for (const fl_kernel *k = families[i]; k->name; k++)
            if (!find_facts(k->name)) {
                fl_buf o = {0};
                fl_buf_printf(&o, "{\"name\":");
                fl_buf_str(&o, k->name);
                fl_buf_printf(&o, ",\"kernel\":true,\"facts\":false}");
                fl_emit(o.p);
                fl_buf_free(&o);
            }
}
