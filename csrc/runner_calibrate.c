/* The runner's warm-up, batch calibration and stopping rule: how many ops a
 * point warms up with, how many ops a sample times, and when a point's
 * samples are enough (runner.c runs them in this order). */
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BATCH ((int64_t)1 << 24)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Distribution-free 95% confidence interval of the median from order
 * statistics, normal approximation (Le Boudec, Performance Evaluation of
 * Computer and Communication Systems, 2010, Thm. 2.1): the 1-based ranks
 * floor(n/2 - 0.98 sqrt(n)) and ceil(n/2 + 1 + 0.98 sqrt(n)). */
static int median_converged(const fl_run_state *r, int n)
{
    double *x = r->sorted;
    memcpy(x, r->samples, sizeof *x * (size_t)n);
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double med = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    int lo = (int)floor(0.5 * n - 0.98 * sqrt(n));
    int hi = (int)ceil(0.5 * n + 1 + 0.98 * sqrt(n));
    lo = lo < 1 ? 1 : lo;
    hi = hi > n ? n : hi;
    return 0.5 * (x[hi - 1] - x[lo - 1]) <= r->opts.target_ci * med;
}

/* Rank 0: stop, or how many samples the next round takes. Rounds grow by a
 * quarter so the rule is checked often without a collective per sample, and
 * shrink to what fits before point_time. */
void runner_decide(const fl_run_state *r, int n, double t0, double per_sample, int64_t ctl[2])
{
    const fl_opts *o = &r->opts;
    double left = o->point_time - (fl_now() - t0);
    if (n >= o->min_samples && median_converged(r, n))
        ctl[0] = CONVERGED;
    else if (left <= 0 && n > 0) /* every point gets at least one sample */
        ctl[0] = TIME_CAP;
    else if (n >= o->max_samples)
        ctl[0] = MAX_SAMPLES;
    if (ctl[0] != GO)
        return;
    int64_t k = n < o->min_samples ? o->min_samples - n : (n / 4 > 1 ? n / 4 : 1);
    if (k > o->max_samples - n)
        k = o->max_samples - n;
    if (per_sample > 0 && left / per_sample + 1 < (double)k)
        k = left > 0 ? (int64_t)(left / per_sample) + 1 : 1;
    ctl[1] = k;
}

/* Per-op time of the slowest timed rank, on every rank: each rank takes the
 * largest (worst = 1) or the smallest of three calls of measure(iters). */
static double slowest(const fl_run_state *r, void *state, const fl_shape *sh, int64_t iters,
                      int worst)
{
    const fl_ctx *c = &r->ctx;
    double t = 0;
    for (int i = 0; i < 3; i++) {
        double x = r->b->k->measure(c, state, iters) / (double)iters;
        if (i == 0 || (worst ? x > t : x < t))
            t = x;
    }
    if (!sh->timed)
        t = 0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    return t > 1e-12 ? t : 1e-12;
}

static int64_t batch_for(const fl_run_state *r, const fl_shape *sh, double per_op)
{
    const double span = sh->min_sample_s > r->opts.sample_time ? sh->min_sample_s : r->opts.sample_time;
    double want = ceil(span / per_op);
    int64_t batch = want < 1 ? 1 : want > (double)MAX_BATCH ? MAX_BATCH : (int64_t)want;
    int64_t m = sh->batch_multiple;
    return m > 1 ? (batch + m - 1) / m * m : batch;
}

/* Step 3: batch = ceil(sample_time / t1) from the slowest rank's largest of
 * three single ops, so one timer pair costs < 1% of a sample. A single op
 * carries the timer pair and any cold start, so when that gives a batch > 1
 * the per-op time is taken again, as the fastest of three measure(batch),
 * and the batch recomputed once: ops far shorter than a timer read, and
 * pipelined ops (windows), would otherwise get samples much shorter than
 * sample_time. */
int64_t runner_calibrate(const fl_run_state *r, void *state, const fl_shape *sh, double *t1)
{
    const fl_ctx *c = &r->ctx;
    double t = slowest(r, state, sh, 1, 1);
    int64_t batch = batch_for(r, sh, t);
    /* rank 0's shape decides (batch_multiple), so every rank runs the same batch */
    MPI_Bcast(&batch, 1, MPI_INT64_T, 0, c->comm);
    if (batch > 1) {
        t = slowest(r, state, sh, batch, 0);
        batch = batch_for(r, sh, t);
        MPI_Bcast(&batch, 1, MPI_INT64_T, 0, c->comm);
    }
    *t1 = t;
    return batch;
}

/* The counted warm-up, cut short once it has used `until` seconds since t0:
 * one strided copy of 64 MiB takes tens of ms, and a fixed count of them
 * would overrun the point's time cap before the first sample. Rank 0 decides
 * after every op, so all ranks run the same number. */
int64_t runner_warm(const fl_run_state *r, void *state, int64_t count, double t0, double until)
{
    int64_t ops = 0;
    int go = 1;
    while (ops < count && go) {
        r->b->k->measure(&r->ctx, state, 1);
        ops++;
        if (r->ctx.rank == 0)
            go = fl_now() - t0 < until;
        MPI_Bcast(&go, 1, MPI_INT, 0, r->ctx.comm);
    }
    return ops;
}

/* Continues the warm-up with measure(batch) until it has lasted `until`
 * seconds since t0, deciding on rank 0 about every millisecond; returns the
 * ops run. t1 is the same on every rank (calibrate), and so is chunk. */
int64_t runner_settle(const fl_run_state *r, void *state, int64_t batch, double t1,
                      double t0, double until)
{
    int64_t chunk = (int64_t)ceil(1e-3 / ((double)batch * t1)), ops = 0;
    int go = 1;
    for (;;) {
        if (r->ctx.rank == 0)
            go = fl_now() - t0 < until;
        MPI_Bcast(&go, 1, MPI_INT, 0, r->ctx.comm);
        if (!go)
            return ops;
        for (int64_t i = 0; i < chunk; i++)
            r->b->k->measure(&r->ctx, state, batch);
        ops += chunk * batch;
    }
}
