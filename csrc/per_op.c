/* Per-operation timing (--per-op SECONDS, fl.h): the single ops a point
 * runs after its samples, and their histogram: log buckets of fixed
 * relative width, counted on each rank and gathered to rank 0 once per
 * point. The bucket of a time is a logarithm, computed outside the timed op. */
#include "fl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-operation timing (--per-op SECONDS): after the samples, every rank
 * runs the same number of single ops (rank 0's: the seconds over the
 * samples' median op, at most MAX_PER_OP), each timed alone by the kernel's
 * measure(1), and the ranks that time count them into their histogram. The
 * ops run back to back, one after the other, like the samples' batches. A
 * kernel that times only whole windows or rounds (fl_shape.batch_multiple)
 * is timed a window at a time, each window's time over its ops counted once,
 * and the histogram says so (ops_per_timing). A kernel with measure_each
 * times its single ops in calls of a sample's time each (`chunk` timings),
 * so that what surrounds its op keeps running between them. */
#define MAX_PER_OP ((int64_t)1 << 24)
#define MAX_CHUNK ((int64_t)1 << 16)
static int by_time(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The samples' median op (the upper one of an even count; rank 0's samples). */
static double median_op(const double *samples, int n)
{
    double *x = malloc(sizeof *x * (size_t)n);
    if (!x)
        fl_die("out of memory");
    memcpy(x, samples, sizeof *x * (size_t)n);
    qsort(x, (size_t)n, sizeof *x, by_time);
    const double m = x[n / 2];
    free(x);
    return m;
}

static void per_op_plan(const fl_ctx *c, const fl_shape *sh, const double *samples, int n, int64_t plan[3])
{
    int64_t ops = 1, unit = sh->batch_multiple > 1 ? sh->batch_multiple : 1, chunk = 1;
    if (c->rank == 0 && n > 0) {
        const double timing = fmax(median_op(samples, n) * (double)unit, 1e-9);
        double want = c->opts->per_op / timing, per_call = c->opts->sample_time / timing;
        ops = want < 1 ? 1 : want > (double)MAX_PER_OP ? MAX_PER_OP : (int64_t)want;
        chunk = per_call < 1 ? 1 : per_call > (double)MAX_CHUNK ? MAX_CHUNK : (int64_t)per_call;
    }
    plan[0] = ops, plan[1] = unit, plan[2] = chunk;
    /* rank 0's shape decides the unit, as it decides the batch: every rank runs the same calls */
    MPI_Bcast(plan, 3, MPI_INT64_T, 0, c->comm);
}

void fl_per_op(const fl_ctx *c, const fl_kernel *k, void *state, const fl_shape *sh, const double *samples,
               int n, fl_buf *out)
{
    int64_t plan[3];
    per_op_plan(c, sh, samples, n, plan);
    const int64_t ops = plan[0], unit = plan[1], chunk = k->measure_each ? plan[2] : 1;
    double *each = k->measure_each ? malloc(sizeof *each * (size_t)chunk) : NULL; /* the runner's, not the kernel's */
    if (k->measure_each && !each)
        fl_die("out of memory");
    fl_hist h;
    fl_hist_init(&h);
    MPI_Barrier(c->comm);
    for (int64_t i = 0; i < ops; i += chunk) {
        const int64_t m = ops - i < chunk ? ops - i : chunk;
        if (!k->measure_each) {
            double t = k->measure(c, state, unit) / (double)unit;
            if (sh->timed)
                fl_hist_add(&h, t);
            continue;
        }
        k->measure_each(c, state, m, unit, each);
        for (int64_t j = 0; j < m && sh->timed; j++)
            fl_hist_add(&h, each[j]);
    }
    free(each);
    fl_hist_gather(out, &h, c->comm, c->timer_overhead, unit);
    fl_hist_free(&h);
}

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
