/* The shared runner: for every point (stride x size) it runs setup, warm-up,
 * batch calibration, rounds of samples reduced to the slowest rank (or, where
 * the kernel's shape says mean_timed, to the timed ranks' mean), the
 * stopping rule, verify and teardown, and prints the JSON lines of
 * docs/core-protocol.md. Kernels only time their loops. */
#include "fl.h"
#include "fl_facts.h" /* FL_CORE_VERSION: fabriclab's version */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BATCH ((int64_t)1 << 24)
/* Warm-up lasts at least this long (at most half of point_time), whatever
 * the op count: cores leave idle and low-frequency states over tens of ms,
 * so the first point of a run warms up longest; later points find the cores
 * busy (ranks spin in MPI between points), but a library's fast path still
 * needs a few ms to settle after setup and collectives: with 20 warm-up ops a
 * 0-byte ping-pong (MPICH) read 2-4% slower than a long hand-written loop,
 * with 2 ms of warm-up the same. */
#define RUN_WARMUP_S 0.1
#define POINT_WARMUP_S 0.005

enum { GO = 0, CONVERGED, TIME_CAP, MAX_SAMPLES };
static const char *const stop_name[] = {"", "converged", "time_cap", "max_samples"};

typedef struct {
    fl_ctx ctx;
    fl_opts opts;         /* as given, with sample_time resolved */
    const fl_bench *b;
    void *bench_state;
    double *round;        /* one round of per-op times, every rank */
    double *samples;      /* all samples of a point, rank 0 */
    double *sorted;       /* scratch for the stopping rule, rank 0 */
    double *gathered;     /* pattern benchmarks, rank 0: one round of every rank */
    double *rank_samples; /* pattern benchmarks, rank 0: nranks x max_samples */
    char *hosts;          /* rank 0: every rank's processor name */
    int points;
    /* App kernels (k->phases): per phase, one round of per-op phase times on
     * every rank, and rank 0's samples of their mean over the timed ranks. */
    double *phase_round, *phase_samples;
    int nphases, timed_ranks;
    /* Kernel counters (k->counters): this rank's values before the first
     * sample and after each, (max_samples + 1) x ncounters; any_counters:
     * whether some rank's setup named counters this point. */
    double *counter_vals;
    int ncounters, any_counters;
    /* This point's CPU use over its rounds of samples (cpu.c): each round from
     * after its start barrier to after its last measure, summed. */
    fl_cpu_use cpu;
    MPI_Errhandler eh;    /* MPI errors as error lines (on_mpi_error) */
} fl_run_state;

/* MPI errors become an error line and an abort, like every other failure. */
static void on_mpi_error(MPI_Comm *comm, int *code, ...)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    (void)comm;
    MPI_Error_string(*code, s, &n);
    fl_die("MPI error: %s", s);
}

/* "size":S,"stride":T,"conns":C[,"active":A]: where a point is. */
static void point_where(fl_buf *j, const fl_point *pt)
{
    fl_buf_printf(j, ",\"size\":%lld,\"stride\":%lld,\"conns\":%lld", (long long)pt->size,
                  (long long)pt->stride, (long long)pt->conns);
    if (pt->layout)
        fl_buf_printf(j, ",\"active\":%d", pt->layout->active);
}

static void emit_where(const fl_run_state *r, const char *type, const fl_point *pt,
                       const char *reason)
{
    fl_buf j = {0};
    fl_buf_printf(&j, "{\"type\":\"%s\",\"bench\":", type);
    fl_buf_str(&j, r->b->name);
    point_where(&j, pt);
    if (reason) {
        fl_buf_printf(&j, ",\"reason\":");
        fl_buf_str(&j, reason);
    }
    fl_buf_printf(&j, "}");
    fl_emit(j.p);
    fl_buf_free(&j);
}

/* Collective agreement on a status every rank returned. A failure or a skip
 * anywhere wins, and its rank's note reaches every rank. Ranks that disagree
 * (one skips, another is ready) cannot tear down safely: abort. */
static int agree(const fl_run_state *r, int st, char *note, const char *what,
                 const fl_point *pt)
{
    const fl_ctx *c = &r->ctx;
    int code = st == FL_OK ? 0 : st == FL_SKIP ? 1 : 2;
    int v[3] = {code, -code, code * c->nranks + c->rank};
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, c->comm);
    if (v[0] == 0)
        return FL_OK;
    int who = v[2] % c->nranks;
    MPI_Bcast(note, FL_NOTE_LEN, MPI_CHAR, who, c->comm);
    note[FL_NOTE_LEN - 1] = '\0';
    if (v[0] == 1 && -v[1] == 1)
        return FL_SKIP;
    if (c->rank == 0)
        fl_die("%s of %s (size %lld, stride %lld, conns %lld, active %d) %s on rank %d: %s",
               what, r->b->name, (long long)pt->size, (long long)pt->stride,
               (long long)pt->conns, pt->layout ? pt->layout->active : 0,
               v[0] == 2 ? "failed" : "skipped on some ranks only", who,
               note[0] ? note : "no reason given");
    MPI_Barrier(c->comm); /* never completes: rank 0 aborts the job */
    return FL_ERROR;
}

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
static void decide(const fl_run_state *r, int n, double t0, double per_sample, int64_t ctl[2])
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
    double want = ceil(r->opts.sample_time / per_op);
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
static int64_t calibrate(const fl_run_state *r, void *state, const fl_shape *sh, double *t1)
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
static int64_t warm(const fl_run_state *r, void *state, int64_t count, double t0, double until)
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
static int64_t settle(const fl_run_state *r, void *state, int64_t batch, double t1,
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

/* Pattern benchmarks: every rank's round goes to rank 0 as well, which files
 * sample n0 + i of rank q at rank_samples[q * max_samples + n0 + i]. */
static void keep_per_rank(fl_run_state *r, int k, int n0)
{
    const fl_ctx *c = &r->ctx;
    MPI_Gather(r->round, k, MPI_DOUBLE, r->gathered, k, MPI_DOUBLE, 0, c->comm);
    if (c->rank != 0)
        return;
    for (int q = 0; q < c->nranks; q++)
        memcpy(r->rank_samples + (size_t)q * (size_t)r->opts.max_samples + n0,
               r->gathered + (size_t)q * (size_t)k, sizeof *r->gathered * (size_t)k);
}

/* ---- app kernels: the phases of an op ---- */

static double phase_mark[FL_MAX_PHASES];

/* The number of phases in "a,b,c" (at most FL_MAX_PHASES), 0 for NULL. */
static int count_phases(const char *names)
{
    int n = names && names[0] ? 1 : 0;
    for (const char *c = names; c && *c; c++)
        n += *c == ',';
    return n < FL_MAX_PHASES ? n : FL_MAX_PHASES;
}

static void phase_begin(const fl_run_state *r, void *state)
{
    r->b->k->phases(state, phase_mark);
}

/* Sample i of a round of k: this rank's seconds per op in each phase (0 on
 * a rank that times nothing), at phase_round[p * k + i]. */
static void phase_end(fl_run_state *r, void *state, int i, int k, int64_t batch, int timed)
{
    double now[FL_MAX_PHASES];
    r->b->k->phases(state, now);
    for (int p = 0; p < r->nphases; p++)
        r->phase_round[(size_t)p * (size_t)k + (size_t)i] =
            timed ? (now[p] - phase_mark[p]) / (double)batch : 0.0;
}

/* A round's phase times, summed over the ranks and divided by the timed
 * ones, into rank 0's phase samples n0..n0+k-1: the mean rank's split of an
 * op (docs/core-protocol.md, "phases"). */
static void keep_phases(fl_run_state *r, int k, int n0)
{
    const fl_ctx *c = &r->ctx;
    size_t len = (size_t)r->nphases * (size_t)k;
    MPI_Reduce(c->rank ? r->phase_round : MPI_IN_PLACE, r->phase_round, (int)len, MPI_DOUBLE,
               MPI_SUM, 0, c->comm);
    if (c->rank != 0)
        return;
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < k; i++)
            r->phase_samples[(size_t)p * (size_t)r->opts.max_samples + (size_t)(n0 + i)] =
                r->phase_round[(size_t)p * (size_t)k + (size_t)i] / (r->timed_ranks > 0 ? r->timed_ranks : 1);
}

/* ,"phases":{"pack":[...],...} */
static void emit_phases(fl_buf *j, const fl_run_state *r, const fl_shape *sh, int n)
{
    const char *name = sh->phase_names;
    fl_buf_printf(j, ",\"phases\":{");
    for (int p = 0; p < r->nphases; p++) {
        size_t len = strcspn(name, ",");
        fl_buf_printf(j, "%s\"%.*s\":", p ? "," : "", (int)len, name);
        fl_buf_nums(j, r->phase_samples + (size_t)p * (size_t)r->opts.max_samples, n);
        name += len + (name[len] == ',');
    }
    fl_buf_printf(j, "}");
}

/* ---- kernel counters (docs/core-protocol.md, "counters") ---- */

/* The number of names in "a,b,c", 0 for NULL or "". */
static int count_names(const char *names)
{
    int n = names && names[0] ? 1 : 0;
    for (const char *c = names; c && *c; c++)
        n += *c == ',';
    return n;
}

/* This rank's counters into row `at` (0: before the first sample, i + 1: after sample i). */
static void read_counters(const fl_run_state *r, void *state, int at)
{
    if (r->ncounters)
        r->b->k->counters(state, r->counter_vals + (size_t)at * (size_t)r->ncounters);
}

/* Collective: every rank's counter names and its n + 1 rows of values to
 * rank 0, which appends ,"rank_counters":[null | {"name":[v0..vn]}, ...]. */
static void gather_counters(const fl_run_state *r, const fl_shape *sh, int n, fl_buf *j)
{
    const fl_ctx *c = &r->ctx;
    const char *names = r->ncounters ? sh->counter_names : "";
    int mine[2] = {r->ncounters, (int)strlen(names) + 1}, *all = NULL, *vcount = NULL, *vdisp = NULL;
    int *ncount = NULL, *ndisp = NULL;
    char *allnames = NULL;
    double *allvals = NULL, *x = NULL;
    if (c->rank == 0) {
        all = malloc(sizeof *all * 2 * (size_t)c->nranks);
        vcount = malloc(sizeof *vcount * 4 * (size_t)c->nranks);
        if (!all || !vcount)
            fl_die("out of memory");
        vdisp = vcount + c->nranks, ncount = vdisp + c->nranks, ndisp = ncount + c->nranks;
    }
    MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, c->comm);
    size_t nv = 0, nn = 0;
    for (int q = 0; c->rank == 0 && q < c->nranks; q++) {
        vcount[q] = all[2 * q] * (n + 1), vdisp[q] = (int)nv, nv += (size_t)vcount[q];
        ncount[q] = all[2 * q + 1], ndisp[q] = (int)nn, nn += (size_t)ncount[q];
    }
    if (c->rank == 0 && (!(allvals = malloc(sizeof *allvals * (nv + 1))) || !(allnames = malloc(nn + 1)) ||
                         !(x = malloc(sizeof *x * (size_t)(n + 1)))))
        fl_die("out of memory");
    MPI_Gatherv(names, mine[1], MPI_CHAR, allnames, ncount, ndisp, MPI_CHAR, 0, c->comm);
    MPI_Gatherv(r->counter_vals, r->ncounters * (n + 1), MPI_DOUBLE, allvals, vcount, vdisp, MPI_DOUBLE, 0,
                c->comm);
    for (int q = 0; c->rank == 0 && q < c->nranks; q++) {
        int nc = all[2 * q];
        const char *name = allnames + ndisp[q];
        fl_buf_printf(j, "%s", q ? "," : ",\"rank_counters\":[");
        if (!nc) {
            fl_buf_printf(j, "null");
            continue;
        }
        fl_buf_printf(j, "{");
        for (int p = 0; p < nc; p++) {
            size_t len = strcspn(name, ",");
            for (int i = 0; i <= n; i++)
                x[i] = allvals[vdisp[q] + i * nc + p];
            fl_buf_printf(j, "%s\"%.*s\":", p ? "," : "", (int)len, name);
            fl_buf_nums(j, x, n + 1);
            name += len + (name[len] == ',');
        }
        fl_buf_printf(j, "}");
    }
    if (c->rank == 0)
        fl_buf_printf(j, "]");
    free(all), free(vcount), free(allvals), free(allnames), free(x);
}

/* Step 4: rounds of samples; returns the stop reason, *n the sample count. */
static int sample(fl_run_state *r, void *state, const fl_shape *sh, int64_t batch,
                  double t1, double t0, int *n)
{
    const fl_ctx *c = &r->ctx;
    int64_t ctl[2] = {GO, 0};
    double ts = fl_now();
    *n = 0;
    if (c->rank == 0)
        decide(r, 0, t0, (double)batch * t1, ctl);
    MPI_Bcast(ctl, 2, MPI_INT64_T, 0, c->comm);
    while (ctl[0] == GO) {
        int k = (int)ctl[1];
        if (!sh->self_synced)
            MPI_Barrier(c->comm);
        const fl_cpu_use round_start = fl_cpu_now();
        for (int i = 0; i < k; i++) {
            /* A pattern's ranks start every sample together: sample i's slowest
             * time then spans one interval for all of them, over which the
             * aggregate (all ranks' bytes) was really carried. Free-running,
             * a pair that finishes its samples early leaves the others a
             * faster cable, and the sum overstates what it carries. */
            if (i > 0 && r->b->facts->pattern && !sh->self_synced)
                MPI_Barrier(c->comm);
            if (r->nphases)
                phase_begin(r, state);
            r->round[i] = r->b->k->measure(c, state, batch) / (double)batch;
            read_counters(r, state, *n + i + 1);
            if (r->nphases)
                phase_end(r, state, i, k, batch, sh->timed);
        }
        fl_cpu_add_since(&r->cpu, round_start);
        if (r->nphases)
            keep_phases(r, k, *n);
        if (!sh->timed)
            memset(r->round, 0, sizeof *r->round * (size_t)k);
        if (r->rank_samples)
            keep_per_rank(r, k, *n);
        /* the slowest rank's time, or (sh->mean_timed) the timed ranks' mean */
        MPI_Reduce(c->rank ? r->round : MPI_IN_PLACE, r->round, k, MPI_DOUBLE,
                   sh->mean_timed ? MPI_SUM : MPI_MAX, 0, c->comm);
        if (c->rank == 0) {
            for (int i = 0; sh->mean_timed && i < k; i++)
                r->round[i] /= r->timed_ranks > 0 ? r->timed_ranks : 1;
            memcpy(r->samples + *n, r->round, sizeof *r->round * (size_t)k);
            *n += k;
            decide(r, *n, t0, (fl_now() - ts) / *n, ctl);
        } else {
            *n += k;
        }
        MPI_Bcast(ctl, 2, MPI_INT64_T, 0, c->comm);
    }
    return (int)ctl[0];
}

/* Pattern benchmarks: roles, peers, hosts, per-rank samples (null for a rank
 * that times nothing), bytes and messages per op; the totals become the
 * point's bytes_per_op and messages_per_op. */
static void emit_ranks(fl_buf *j, const fl_run_state *r, const fl_point *pt,
                       const int64_t *per, int n, int64_t *bytes, int64_t *messages)
{
    const fl_layout *l = pt->layout;
    const int nr = r->ctx.nranks;
    *bytes = *messages = 0;
    fl_buf_printf(j, ",\"roles\":\"%.*s\",\"peers\":[", nr, l->role);
    for (int q = 0; q < nr; q++)
        fl_buf_printf(j, "%s%d", q ? "," : "", l->peer[q]);
    fl_buf_printf(j, "],\"rank_sent_bytes\":[");
    for (int q = 0; q < nr; q++) {
        fl_buf_printf(j, "%s%lld", q ? "," : "", (long long)per[3 * q]);
        *bytes += per[3 * q];
        *messages += per[3 * q + 2];
    }
    fl_buf_printf(j, "],\"rank_recv_bytes\":[");
    for (int q = 0; q < nr; q++)
        fl_buf_printf(j, "%s%lld", q ? "," : "", (long long)per[3 * q + 1]);
    fl_buf_printf(j, "],\"rank_samples\":[");
    for (int q = 0; q < nr; q++) {
        const double *x = r->rank_samples + (size_t)q * (size_t)r->opts.max_samples;
        fl_buf_printf(j, "%s", q ? "," : "");
        if (n > 0 && x[0] > 0)
            fl_buf_nums(j, x, n);
        else
            fl_buf_printf(j, "null");
    }
    fl_buf_printf(j, "]");
}

/* Every rank's bytes held by the point's kernel since before its setup
 * (fl_held_peak) and the working set of its ops, to rank 0 as pairs. */
static int64_t *gather_held(const fl_run_state *r, const fl_point *pt, const fl_shape *sh,
                            int64_t base)
{
    const fl_ctx *c = &r->ctx;
    int64_t mine[2] = {fl_held_peak() - base, sh->working_set}, *all = NULL;
    if (!mine[1])
        mine[1] = (sh->buffers > 0 ? sh->buffers : pt->buffers) * pt->size;
    if (c->rank == 0 && !(all = malloc(sizeof *all * 2 * (size_t)c->nranks)))
        fl_die("out of memory");
    MPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, c->comm);
    return all;
}

/* ,"working_set_bytes":W,"rank_alloc_bytes":[...]: the largest working set
 * of any rank (null for an app's op) and what each rank's kernel held. */
static void emit_held(fl_buf *j, const int64_t *held, int nranks)
{
    int64_t ws = -1;
    for (int q = 0; q < nranks; q++)
        ws = held[2 * q + 1] > ws ? held[2 * q + 1] : ws;
    if (ws >= 0)
        fl_buf_printf(j, ",\"working_set_bytes\":%lld", (long long)ws);
    else
        fl_buf_printf(j, ",\"working_set_bytes\":null");
    fl_buf_printf(j, ",\"rank_alloc_bytes\":[");
    for (int q = 0; q < nranks; q++)
        fl_buf_printf(j, "%s%lld", q ? "," : "", (long long)held[2 * q]);
    fl_buf_printf(j, "]");
}

static void emit_point(const fl_run_state *r, const fl_point *pt, fl_shape *sh,
                       const int64_t *per, const int64_t *held, int64_t warmup, int64_t batch,
                       int n, int stop, double elapsed, const int64_t *validation, const char *extra)
{
    const fl_facts *f = r->b->facts;
    int64_t bytes = sh->bytes_per_op, messages = 0;
    fl_buf j = {0}, ranks = {0};
    if (pt->layout)
        emit_ranks(&ranks, r, pt, per, n, &bytes, &messages);
    if (pt->layout && sh->bytes_per_op > 0) /* an app's op: its problem's bytes (the array) */
        bytes = sh->bytes_per_op;
    fl_buf_printf(&j, "{\"type\":\"point\",\"bench\":");
    fl_buf_str(&j, r->b->name);
    point_where(&j, pt);
    fl_buf_printf(&j, ",\"buffers\":%lld", (long long)(sh->buffers > 0 ? sh->buffers : pt->buffers));
    emit_held(&j, held, r->ctx.nranks);
    fl_buf_printf(&j, ",\"bytes_per_op\":%lld,\"legs_per_op\":%d,\"concurrent\":%s,"
                  "\"warmup\":%lld,\"batch\":%lld,\"samples\":", (long long)bytes, sh->legs_per_op,
                  f->concurrent ? "true" : "false", (long long)warmup, (long long)batch);
    fl_buf_nums(&j, r->samples, n);
    fl_buf_printf(&j, ",\"stop\":\"%s\",\"elapsed_s\":", stop_name[stop]);
    fl_buf_num(&j, elapsed);
    if (validation)
        fl_buf_printf(&j, ",\"validation\":{\"checked_bytes\":%lld,\"errors\":%lld}",
                      (long long)validation[1], (long long)validation[0]);
    else
        fl_buf_printf(&j, ",\"validation\":null");
    if (pt->layout)
        fl_buf_printf(&j, ",\"messages_per_op\":%lld%s", (long long)messages, ranks.p);
    if (r->nphases)
        emit_phases(&j, r, sh, n);
    if (extra)
        fl_buf_printf(&j, "%s", extra);
    sh->info[FL_INFO_LEN - 1] = '\0';
    fl_buf_printf(&j, ",\"info\":%s}", sh->info[0] ? sh->info : "{}");
    fl_emit(j.p);
    fl_buf_free(&j);
    fl_buf_free(&ranks);
}

static void run_point(fl_run_state *r, const fl_point *pt)
{
    const fl_ctx *c = &r->ctx;
    const fl_bench *b = r->b;
    fl_shape sh;
    void *state = NULL;
    int64_t v[2] = {0, 0}; /* errors, checked bytes */
    double t1 = 0;
    int n = 0;

    if (c->rank == 0)
        emit_where(r, "begin", pt, NULL);
    memset(&sh, 0, sizeof sh);
    sh.legs_per_op = b->facts->legs; /* the facts say it; a kernel may not differ */
    const int64_t held_before = fl_held_mark();
    int st = agree(r, b->k->setup(c, r->bench_state, pt, &state, &sh), sh.note, "setup", pt);
    if (st == FL_SKIP) {
        if (c->rank == 0)
            emit_where(r, "skip", pt, sh.note);
        return;
    }
    /* every rank takes part in the phase reductions, one whose setup named
     * no phases (an idle rank) too; rank 0, always active, names them. The
     * runner's barriers in sample() are on every rank or on none: a kernel
     * that syncs its ops itself (on its active ranks' communicator) may say
     * so on its active ranks alone, and an idle rank that then entered the
     * runner's barrier would wait for ranks that never come */
    int ph[4] = {b->k->phases ? count_phases(sh.phase_names) : 0, sh.self_synced != 0,
                 sh.mean_timed != 0, sh.timed};
    MPI_Allreduce(MPI_IN_PLACE, &ph[0], 3, MPI_INT, MPI_MAX, c->comm);
    MPI_Allreduce(MPI_IN_PLACE, &ph[3], 1, MPI_INT, MPI_SUM, c->comm);
    r->nphases = ph[0], sh.self_synced = ph[1], sh.mean_timed = ph[2], r->timed_ranks = ph[3];
    r->ncounters = b->k->counters ? count_names(sh.counter_names) : 0;
    if (r->ncounters > FL_MAX_COUNTERS)
        fl_die("%s names %d counters, more than %d", b->name, r->ncounters, FL_MAX_COUNTERS);
    MPI_Allreduce(&r->ncounters, &r->any_counters, 1, MPI_INT, MPI_MAX, c->comm);
    free(r->counter_vals);
    r->counter_vals = NULL;
    if (r->ncounters && !(r->counter_vals = malloc(sizeof *r->counter_vals * (size_t)r->ncounters *
                                                   (size_t)(r->opts.max_samples + 1))))
        fl_die("cannot allocate %d counters x %d samples", r->ncounters, r->opts.max_samples + 1);
    MPI_Barrier(c->comm);
    double t0 = fl_now();
    int64_t warmup = warm(r, state, r->opts.warmup, t0, 0.5 * r->opts.point_time);
    int64_t batch = calibrate(r, state, &sh, &t1);
    double floor_s = r->points == 0 ? RUN_WARMUP_S : POINT_WARMUP_S;
    warmup += settle(r, state, batch, t1, t0, fmin(floor_s, 0.5 * r->opts.point_time));
    read_counters(r, state, 0);
    r->cpu = (fl_cpu_use){0, 0, 0};
    int stop = sample(r, state, &sh, batch, t1, t0, &n);
    double elapsed = fl_now() - t0;
    fl_buf tails = {0};
    fl_cpu_gather(c, &r->cpu, &tails);
    if (r->any_counters)
        gather_counters(r, &sh, n, &tails);
    if (r->opts.per_op > 0)
        fl_per_op(c, b->k, state, &sh, r->samples, n, &tails);
    if (b->k->record) /* the noise kernels' raw quanta and detours */
        b->k->record(c, state, &tails);

    int validated = r->opts.validate && b->k->verify;
    if (validated) {
        v[0] = b->k->verify(c, state, &v[1]);
        MPI_Reduce(c->rank ? v : MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_SUM, 0, c->comm);
    }
    int64_t totals[3] = {sh.sent_bytes, sh.recv_bytes, sh.messages}, *per = NULL;
    int64_t *held = gather_held(r, pt, &sh, held_before);
    if (r->rank_samples) {
        if (c->rank == 0 && !(per = malloc(sizeof *per * 3 * (size_t)c->nranks)))
            fl_die("out of memory");
        MPI_Gather(totals, 3, MPI_INT64_T, per, 3, MPI_INT64_T, 0, c->comm);
    }
    if (c->rank == 0)
        emit_point(r, pt, &sh, per, held, warmup, batch, n, stop, elapsed, validated ? v : NULL, tails.p);
    fl_buf_free(&tails);
    free(per);
    free(held);
    r->points++;
    b->k->teardown(c, state);
}

/* The run's private communicator (a kernel's stray message cannot reach
 * others) and the ranks sharing memory; MPI errors become error lines; the
 * timer's cost, which sets the shortest sample. Returns the timer's
 * resolution (rank 0). */
static double open_context(fl_run_state *r)
{
    double resolution = 0;
    MPI_Comm_create_errhandler(on_mpi_error, &r->eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, r->eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &r->ctx.comm);
    MPI_Comm_rank(r->ctx.comm, &r->ctx.rank);
    MPI_Comm_size(r->ctx.comm, &r->ctx.nranks);
    MPI_Comm_split_type(r->ctx.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &r->ctx.node_comm);
    MPI_Comm_rank(r->ctx.node_comm, &r->ctx.node_rank);
    MPI_Comm_size(r->ctx.node_comm, &r->ctx.node_size);
    if (r->ctx.rank == 0) {
        r->ctx.timer_overhead = fl_timer_overhead();
        resolution = fl_timer_resolution();
    }
    MPI_Bcast(&r->ctx.timer_overhead, 1, MPI_DOUBLE, 0, r->ctx.comm);
    /* a sample lasts at least 100 timer reads, so the timer costs < 1% */
    r->opts.sample_time = fmax(r->opts.sample_time > 0 ? r->opts.sample_time : 2e-5,
                               100 * r->ctx.timer_overhead);
    r->ctx.opts = &r->opts;
    return resolution;
}

/* One round per rank; rank 0 keeps every sample of a point (and, for a
 * pattern, every rank's; for an app, every phase's). */
static void alloc_samples(fl_run_state *r)
{
    const size_t nmax = (size_t)r->opts.max_samples, nr = (size_t)r->ctx.nranks;
    const int root = r->ctx.rank == 0, pattern = r->b->facts->pattern;
    r->round = malloc(sizeof *r->round * nmax);
    if (root) {
        r->samples = malloc(sizeof *r->samples * nmax);
        r->sorted = malloc(sizeof *r->sorted * nmax);
        if (pattern) {
            r->gathered = malloc(sizeof *r->gathered * nmax * nr);
            r->rank_samples = calloc(nmax * nr, sizeof *r->rank_samples);
        }
    }
    if (pattern && !root)
        r->rank_samples = r->round; /* a non-NULL flag: this rank takes part in the gathers */
    if (r->b->k && r->b->k->phases) {
        r->phase_round = malloc(sizeof *r->phase_round * nmax * FL_MAX_PHASES);
        if (root)
            r->phase_samples = malloc(sizeof *r->phase_samples * nmax * FL_MAX_PHASES);
        if (!r->phase_round || (root && !r->phase_samples))
            fl_die("cannot allocate %zu phase samples", nmax);
    }
    if (!r->round || (root && (!r->samples || !r->sorted)) ||
        (root && pattern && (!r->gathered || !r->rank_samples)))
        fl_die("cannot allocate %zu samples", nmax);
}

/* The kernel's init, then every point (layouts x conns x strides x sizes;
 * a two-rank benchmark has one NULL layout), then its fini. An init that
 * skips turns every point into a skip line. */
static void run_points(fl_run_state *r)
{
    const fl_opts *o = &r->opts;
    const fl_kernel *k = r->b->k;
    char note[FL_NOTE_LEN] = "";
    fl_point first = {o->sizes[0], o->strides[0], o->conns[0], o->buffers[0],
                      o->nlayouts ? &o->layouts[0] : NULL};
    int st = agree(r, k->init ? k->init(&r->ctx, &r->bench_state) : FL_OK, note, "init", &first);
    for (int l = 0; l < (o->nlayouts ? o->nlayouts : 1); l++)
        for (int cn = 0; cn < o->nconns; cn++)
            for (int s = 0; s < o->nstrides; s++)
                for (int i = 0; i < o->nsizes; i++) {
                    fl_point pt = {o->sizes[i], o->strides[s], o->conns[cn], o->buffers[i],
                                   o->nlayouts ? &o->layouts[l] : NULL};
                    if (st == FL_SKIP && r->ctx.rank == 0)
                        emit_where(r, "skip", &pt, note);
                    else if (st == FL_OK)
                        run_point(r, &pt);
                }
    if (st == FL_OK && k->fini)
        k->fini(&r->ctx, r->bench_state);
}

/* The run's last line: the points it printed and the CPU each rank ends on. */
static void emit_end(const fl_run_state *r)
{
    int *on = r->ctx.rank == 0 ? malloc(sizeof *on * (size_t)r->ctx.nranks) : NULL;
    if (r->ctx.rank == 0 && !on)
        fl_die("out of memory");
    fl_gather_cpus(&r->ctx, on);
    if (r->ctx.rank == 0) {
        fl_buf j = {0};
        fl_buf_printf(&j, "{\"type\":\"end\",\"bench\":");
        fl_buf_str(&j, r->b->name);
        fl_buf_printf(&j, ",\"points\":%d", r->points);
        fl_buf_int_list(&j, "cpu_end", on, r->ctx.nranks);
        fl_buf_printf(&j, "}");
        fl_emit(j.p);
        fl_buf_free(&j);
    }
    free(on);
}

static void close_run(fl_run_state *r)
{
    free(r->round);
    free(r->phase_round);
    free(r->phase_samples);
    free(r->counter_vals);
    free(r->samples);
    free(r->sorted);
    if (r->ctx.rank == 0) {
        free(r->gathered);
        free(r->rank_samples);
    }
    free(r->hosts);
    MPI_Comm_free(&r->ctx.node_comm);
    MPI_Comm_free(&r->ctx.comm);
    MPI_Errhandler_free(&r->eh);
}

int fl_run(const fl_bench *b, const fl_opts *o)
{
    fl_run_state r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.opts = *o;
    double resolution = open_context(&r);
    r.hosts = fl_hello(&r.ctx, &r.opts, b->name, resolution);
    alloc_samples(&r);
    run_points(&r);
    emit_end(&r);
    close_run(&r);
    return 0;
}
