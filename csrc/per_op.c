/* Per-operation timing's histogram (fl.h): log buckets of fixed relative
 * width, counted on each rank and gathered to rank 0 once per point. The
 * bucket of a time is a logarithm, computed outside the timed op. */
#include "fl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fl_hist_init(fl_hist *h)
{
    h->n = 0;
    h->min = INFINITY;
    h->max = 0;
    h->counts = calloc(FL_HIST_BUCKETS, sizeof *h->counts);
    if (!h->counts)
        fl_die("out of memory");
}

void fl_hist_add(fl_hist *h, double t)
{
    double x = t > FL_HIST_BASE ? floor(log(t / FL_HIST_BASE) / log1p(FL_HIST_ERROR)) : 0;
    int64_t i = x < FL_HIST_BUCKETS - 1 ? (int64_t)x : FL_HIST_BUCKETS - 1;
    h->counts[i]++;
    h->n++;
    h->min = t < h->min ? t : h->min;
    h->max = t > h->max ? t : h->max;
}

void fl_hist_free(fl_hist *h)
{
    free(h->counts);
    h->counts = NULL;
}

/* One rank's entry: {"rank":q,"n":..,"min_s":..,"max_s":..,"buckets":[[i,count],..]}. */
static void emit_rank(fl_buf *j, int q, const int64_t *counts, const double *mm, int64_t n)
{
    fl_buf_printf(j, "{\"rank\":%d,\"n\":%lld,\"min_s\":", q, (long long)n);
    fl_buf_num(j, mm[0]);
    fl_buf_printf(j, ",\"max_s\":");
    fl_buf_num(j, mm[1]);
    fl_buf_printf(j, ",\"buckets\":[");
    for (int i = 0, first = 1; i < FL_HIST_BUCKETS; i++)
        if (counts[i]) {
            fl_buf_printf(j, "%s[%d,%lld]", first ? "" : ",", i, (long long)counts[i]);
            first = 0;
        }
    fl_buf_printf(j, "]}");
}

void fl_hist_gather(fl_buf *j, const fl_hist *h, MPI_Comm comm, double timer_cost, int64_t unit)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    const size_t nb = FL_HIST_BUCKETS, nr = (size_t)nranks;
    int64_t *all = rank == 0 ? malloc(sizeof *all * nb * nr) : NULL;
    int64_t *ns = rank == 0 ? malloc(sizeof *ns * nr) : NULL;
    double mm[2] = {h->n ? h->min : 0, h->max};
    double *mms = rank == 0 ? malloc(sizeof *mms * 2 * nr) : NULL;
    if (rank == 0 && (!all || !ns || !mms))
        fl_die("out of memory");
    MPI_Gather(h->counts, FL_HIST_BUCKETS, MPI_INT64_T, all, FL_HIST_BUCKETS, MPI_INT64_T, 0, comm);
    MPI_Gather(&h->n, 1, MPI_INT64_T, ns, 1, MPI_INT64_T, 0, comm);
    MPI_Gather(mm, 2, MPI_DOUBLE, mms, 2, MPI_DOUBLE, 0, comm);
    if (rank == 0) {
        fl_buf_printf(j, ",\"op_histogram\":{\"base_s\":%g,\"error\":%g,\"buckets\":%d,\"timer_cost_s\":",
                      FL_HIST_BASE, FL_HIST_ERROR, FL_HIST_BUCKETS);
        fl_buf_num(j, timer_cost);
        fl_buf_printf(j, ",\"ops_per_timing\":%lld,\"ranks\":[", (long long)unit);
        for (int q = 0, first = 1; q < nranks; q++)
            if (ns[q] > 0) {
                fl_buf_printf(j, first ? "" : ",");
                emit_rank(j, q, all + (size_t)q * nb, mms + 2 * q, ns[q]);
                first = 0;
            }
        fl_buf_printf(j, "]}");
    }
    free(all);
    free(ns);
    free(mms);
}
