/* The shared runner: for every point (stride x size) it runs setup, warm-up,
 * batch calibration, rounds of samples reduced to the slowest rank (or, where
 * the kernel's shape says mean_timed, to the timed ranks' mean), the
 * stopping rule, verify and teardown, and prints the JSON lines of
 * docs/core-protocol.md. Kernels only time their loops. The steps live
 * beside it: runner_calibrate.c (warm-up, batch, stopping rule),
 * runner_readings.c (phases, counters), runner_emit.c (the JSON lines). */
#include "runner.h"
#include "fl_facts.h" /* FL_CORE_VERSION: fabriclab's version */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Warm-up lasts at least this long (at most half of point_time), whatever
 * the op count: cores leave idle and low-frequency states over tens of ms,
 * so the first point of a run warms up longest; later points find the cores
 * busy (ranks spin in MPI between points), but a library's fast path still
 * needs a few ms to settle after setup and collectives: with 20 warm-up ops a
 * 0-byte ping-pong (MPICH) read 2-4% slower than a long hand-written loop,
 * with 2 ms of warm-up the same. */
#define RUN_WARMUP_S 0.1
#define POINT_WARMUP_S 0.005

/* MPI errors become an error line and an abort, like every other failure. */
static void on_mpi_error(MPI_Comm *comm, int *code, ...)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    (void)comm;
    MPI_Error_string(*code, s, &n);
    fl_die("MPI error: %s", s);
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

/* Step 4: rounds of samples; returns the stop reason, *n the sample count. */
static int sample(fl_run_state *r, void *state, const fl_shape *sh, int64_t batch,
                  double t1, double t0, int *n)
{
    const fl_ctx *c = &r->ctx;
    int64_t ctl[2] = {GO, 0};
    double ts = fl_now();
    *n = 0;
    if (c->rank == 0)
        runner_decide(r, 0, t0, (double)batch * t1, ctl);
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
                runner_phase_begin(r, state);
            r->round[i] = r->b->k->measure(c, state, batch) / (double)batch;
            runner_read_counters(r, state, *n + i + 1);
            if (r->nphases)
                runner_phase_end(r, state, i, k, batch, sh->timed);
        }
        fl_cpu_add_since(&r->cpu, round_start);
        if (r->nphases)
            runner_keep_phases(r, k, *n);
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
            runner_decide(r, *n, t0, (fl_now() - ts) / *n, ctl);
        } else {
            *n += k;
        }
        MPI_Bcast(ctl, 2, MPI_INT64_T, 0, c->comm);
    }
    return (int)ctl[0];
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
        runner_emit_where(r, "begin", pt, NULL);
    memset(&sh, 0, sizeof sh);
    sh.legs_per_op = b->facts->legs; /* the facts say it; a kernel may not differ */
    const int64_t held_before = fl_held_mark();
    int st = agree(r, b->k->setup(c, r->bench_state, pt, &state, &sh), sh.note, "setup", pt);
    if (st == FL_SKIP) {
        if (c->rank == 0)
            runner_emit_where(r, "skip", pt, sh.note);
        return;
    }
    /* every rank takes part in the phase reductions, one whose setup named
     * no phases (an idle rank) too; rank 0, always active, names them. The
     * runner's barriers in sample() are on every rank or on none: a kernel
     * that syncs its ops itself (on its active ranks' communicator) may say
     * so on its active ranks alone, and an idle rank that then entered the
     * runner's barrier would wait for ranks that never come */
    int ph[4] = {b->k->phases ? runner_count_phases(sh.phase_names) : 0, sh.self_synced != 0,
                 sh.mean_timed != 0, sh.timed};
    MPI_Allreduce(MPI_IN_PLACE, &ph[0], 3, MPI_INT, MPI_MAX, c->comm);
    MPI_Allreduce(MPI_IN_PLACE, &ph[3], 1, MPI_INT, MPI_SUM, c->comm);
    r->nphases = ph[0], sh.self_synced = ph[1], sh.mean_timed = ph[2], r->timed_ranks = ph[3];
    r->ncounters = b->k->counters ? runner_count_names(sh.counter_names) : 0;
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
    int64_t warmup = runner_warm(r, state, r->opts.warmup, t0, 0.5 * r->opts.point_time);
    int64_t batch = runner_calibrate(r, state, &sh, &t1);
    double floor_s = r->points == 0 ? RUN_WARMUP_S : POINT_WARMUP_S;
    warmup += runner_settle(r, state, batch, t1, t0, fmin(floor_s, 0.5 * r->opts.point_time));
    runner_read_counters(r, state, 0);
    r->cpu = (fl_cpu_use){0, 0, 0};
    int stop = sample(r, state, &sh, batch, t1, t0, &n);
    double elapsed = fl_now() - t0;
    fl_buf tails = {0};
    fl_cpu_gather(c, &r->cpu, &tails);
    if (r->any_counters)
        runner_gather_counters(r, &sh, n, &tails);
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
    int64_t *held = runner_gather_held(r, pt, &sh, held_before);
    if (r->rank_samples) {
        if (c->rank == 0 && !(per = malloc(sizeof *per * 3 * (size_t)c->nranks)))
            fl_die("out of memory");
        MPI_Gather(totals, 3, MPI_INT64_T, per, 3, MPI_INT64_T, 0, c->comm);
    }
    if (c->rank == 0)
        runner_emit_point(r, pt, &sh, per, held, warmup, batch, n, stop, elapsed,
                          validated ? v : NULL, tails.p);
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
                        runner_emit_where(r, "skip", &pt, note);
                    else if (st == FL_OK)
                        run_point(r, &pt);
                }
    if (st == FL_OK && k->fini)
        k->fini(&r->ctx, r->bench_state);
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
    runner_emit_end(&r);
    close_run(&r);
    return 0;
}
