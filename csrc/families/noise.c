/* Family "noise": the machine's own noise on every core the run's ranks are
 * bound to (docs/noise.md). Two anchors:
 *
 * - noise.fwq, the fixed work quantum (FWQ: fwq.c of LLNL's ASC Sequoia
 *   benchmarks, Sottile and Seager, after Sottile and Minnich's FTQ): a
 *   fixed loop of `work` iterations timed again and again, back to back;
 *   a quantum that took longer than the shortest lost the difference to
 *   something else on its core.
 * - noise.detour, the selfish detour (Beckman et al., "Benchmarking the
 *   effects of operating system interference on extreme-scale parallel
 *   machines", Cluster Computing 11(1), 2008; netgauge's noise mode,
 *   Hoefler, Schneider and Lumsdaine, SC'10): a tight loop reading the
 *   clock; a gap between two reads above `threshold` times the shortest
 *   gap is a detour, kept as its start and length.
 *
 * The runner's samples time `measure` as for any kernel: the mean quantum
 * (FWQ) or the mean loop (detour) per sample. What the anchors print, every
 * quantum and every detour, comes from `record` after the samples: all ranks
 * start together (a barrier), each runs `quanta` quanta or `record_ms`
 * milliseconds of the detour loop on its own core, and rank 0 appends the
 * raw values as integer nanoseconds to the point line (",\"noise\":{...}",
 * docs/core-protocol.md): integers, because a quantum's or a detour's
 * nanoseconds are exact in them, and they take a third of the characters of
 * seconds in %.17g. Python computes every figure from them
 * (analysis/noise.py). */
#include "fl.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The work: a dependent chain of 64-bit multiply-adds (Knuth's MMIX linear
 * congruential step), nothing from memory, which no compiler can shorten;
 * about 1.1 ns an iteration on this machine's cores. */
#define LCG_MUL 6364136223846793005ULL
#define LCG_ADD 1442695040888963407ULL
/* The detours kept per rank (more are counted and their time summed). */
#define DETOUR_CAP ((int64_t)1 << 17)
/* The shortest gap: rounds of CAL_READS clock reads until it has not fallen
 * for CAL_STILL rounds in a row (netgauge's calibration: NOT_SMALLER), at most CAL_ROUNDS. */
#define CAL_READS 1000
#define CAL_STILL 100
#define CAL_ROUNDS 10000

typedef struct {
    int64_t work;      /* fwq: iterations of a quantum */
    int64_t quanta;    /* fwq: quanta in the record */
    double threshold;  /* detour: a gap above threshold x gap_min */
    int64_t record_ns; /* detour: the record's length */
    int64_t gap_min;   /* detour: the shortest gap between two clock reads, ns */
    uint64_t x;        /* fwq: the work's running value */
    int64_t detours;   /* detour: gaps above the threshold in measure (not kept) */
    int64_t *rec;      /* fwq: quanta (ns); detour: (start, length) pairs (ns) */
    int64_t n;         /* the record's quanta, or its detours (kept or not) */
    int64_t loops;     /* detour: the record's loop iterations */
    int64_t span;      /* detour: the record's length as run, ns */
} noise_state;

static inline int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline uint64_t quantum(uint64_t x, int64_t work)
{
    for (int64_t i = 0; i < work; i++)
        x = x * LCG_MUL + LCG_ADD;
    return x;
}

/* x after n steps of the work, in log2(n) steps (Brown, "Random number
 * generation with arbitrary strides", 1994): what verify compares with. */
static uint64_t jump(uint64_t x, int64_t n)
{
    uint64_t mul = 1, add = 0, cm = LCG_MUL, ca = LCG_ADD;
    for (uint64_t k = (uint64_t)n; k; k >>= 1) {
        if (k & 1)
            mul *= cm, add = add * cm + ca;
        ca = (cm + 1) * ca;
        cm *= cm;
    }
    return mul * x + add;
}

static noise_state *new_state(void **state, int64_t entries)
{
    noise_state *s = fl_alloc(sizeof *s);
    s->rec = fl_alloc(sizeof *s->rec * (size_t)(entries > 0 ? entries : 1));
    s->x = 1;
    *state = s;
    return s;
}

/* Every rank's point of the pattern "all": it times alone on its own core,
 * moving nothing; the samples start together per round, not per sample. */
static int noise_shape(const fl_point *pt, fl_shape *shape)
{
    shape->bytes_per_op = 0;
    shape->timed = 1;
    shape->self_synced = 1;
    shape->working_set = -1;
    return fl_pattern_point(pt, shape, NULL);
}

/* ---- noise.fwq ---- */

static int fwq_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    int st = noise_shape(pt, shape);
    if (st != FL_OK)
        return st;
    int64_t quanta = fl_param_int(ctx->opts, "quanta");
    noise_state *s = new_state(state, quanta);
    s->work = fl_param_int(ctx->opts, "work");
    s->quanta = quanta;
    snprintf(shape->info, FL_INFO_LEN, "{\"work\":%lld,\"quanta\":%lld}", (long long)s->work,
             (long long)quanta);
    return FL_OK;
}

static double fwq_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    noise_state *s = state;
    uint64_t x = s->x;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++)
        x = quantum(x, s->work);
    double t = fl_now() - t0;
    s->x = x;
    return t;
}

/* The record: `quanta` quanta back to back, each timed by the clock read
 * that ends it and starts the next. */
static void fwq_run(noise_state *s)
{
    uint64_t x = s->x;
    int64_t prev = now_ns();
    for (int64_t i = 0; i < s->quanta; i++) {
        x = quantum(x, s->work);
        int64_t t = now_ns();
        s->rec[i] = t - prev;
        prev = t;
    }
    s->x = x;
    s->n = s->quanta;
}

/* ---- noise.detour ---- */

/* The shortest gap between two clock reads on this rank, at least 1 ns. */
static int64_t gap_min(void)
{
    int64_t best = INT64_MAX;
    for (int round = 0, still = 0; round < CAL_ROUNDS && still < CAL_STILL; round++) {
        int64_t low = INT64_MAX, prev = now_ns();
        for (int i = 0; i < CAL_READS; i++) {
            int64_t t = now_ns();
            low = t - prev < low ? t - prev : low;
            prev = t;
        }
        still = low < best ? 0 : still + 1;
        best = low < best ? low : best;
    }
    return best > 0 ? best : 1;
}

static int detour_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    int st = noise_shape(pt, shape);
    if (st != FL_OK)
        return st;
    char *end = NULL;
    const char *text = fl_param(ctx->opts, "threshold");
    double threshold = strtod(text, &end);
    if (end == text || *end || !(threshold >= 1) || !isfinite(threshold)) {
        snprintf(shape->note, FL_NOTE_LEN, "threshold %.40s is not a number of at least 1", text);
        return FL_ERROR;
    }
    noise_state *s = new_state(state, 2 * DETOUR_CAP);
    s->threshold = threshold;
    s->record_ns = fl_param_int(ctx->opts, "record_ms") * 1000000;
    s->gap_min = gap_min();
    snprintf(shape->info, FL_INFO_LEN, "{\"threshold\":%.17g,\"record_ms\":%lld,\"kept_max\":%lld}", threshold,
             (long long)fl_param_int(ctx->opts, "record_ms"), (long long)DETOUR_CAP);
    return FL_OK;
}

static inline int64_t detour_bound(const noise_state *s)
{
    return (int64_t)ceil(s->threshold * (double)s->gap_min);
}

/* The selfish loop, `iters` clock reads: its detours counted only. */
static double detour_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    noise_state *s = state;
    const int64_t bound = detour_bound(s);
    int64_t start = now_ns(), prev = start, n = 0;
    for (int64_t i = 0; i < iters; i++) {
        int64_t t = now_ns();
        n += t - prev > bound;
        prev = t;
    }
    s->detours += n;
    return (double)(prev - start) * 1e-9;
}

/* The record: the same loop for record_ns, each detour's start (since the
 * loop began) and length kept, DETOUR_CAP of them at most. */
static void detour_run(noise_state *s)
{
    const int64_t bound = detour_bound(s);
    int64_t start = now_ns(), prev = start, t = start, end = start + s->record_ns, n = 0, loops = 0;
    while (t < end) {
        t = now_ns();
        loops++;
        if (t - prev > bound) {
            if (n < DETOUR_CAP)
                s->rec[2 * n] = prev - start, s->rec[2 * n + 1] = t - prev;
            n++;
        }
        prev = t;
    }
    s->n = n, s->loops = loops, s->span = t - start;
}

/* ---- the record, both kernels ---- */

/* Every rank's `meta` (META values) and `count` entries to rank 0, which
 * gets the metas and the entries rank after rank; counts per rank in *counts. */
#define META 5
static int64_t *gather(const fl_ctx *c, const int64_t *meta, int64_t *metas, const int64_t *mine, int count,
                       int **counts)
{
    int *cnt = NULL, *disp = NULL;
    int64_t *all = NULL;
    MPI_Gather(meta, META, MPI_INT64_T, metas, META, MPI_INT64_T, 0, c->comm);
    if (c->rank == 0) {
        cnt = malloc(sizeof *cnt * 2 * (size_t)c->nranks);
        if (!cnt)
            fl_die("out of memory");
        disp = cnt + c->nranks;
    }
    MPI_Gather(&count, 1, MPI_INT, cnt, 1, MPI_INT, 0, c->comm);
    size_t total = 0;
    for (int q = 0; c->rank == 0 && q < c->nranks; q++)
        disp[q] = (int)total, total += (size_t)cnt[q];
    if (c->rank == 0 && !(all = malloc(sizeof *all * (total + 1))))
        fl_die("out of memory");
    MPI_Gatherv(mine, count, MPI_INT64_T, all, cnt, disp, MPI_INT64_T, 0, c->comm);
    *counts = cnt;
    return all;
}

/* Entries x[0], x[step], x[2 step] .. of n as a JSON list. */
static void emit_every(fl_buf *j, const int64_t *x, int64_t n, int step)
{
    fl_buf_printf(j, "[");
    for (int64_t i = 0; i < n; i++)
        fl_buf_printf(j, "%s%lld", i ? "," : "", (long long)x[i * step]);
    fl_buf_printf(j, "]");
}

static void fwq_record(const fl_ctx *c, void *state, struct fl_buf *j)
{
    noise_state *s = state;
    MPI_Barrier(c->comm); /* every rank's record starts together */
    fwq_run(s);
    int64_t meta[META] = {sched_getcpu(), s->work, s->n, 0, 0}, *metas = NULL;
    int *cnt = NULL;
    if (c->rank == 0 && !(metas = malloc(sizeof *metas * META * (size_t)c->nranks)))
        fl_die("out of memory");
    int64_t *all = gather(c, meta, metas, s->rec, (int)s->n, &cnt);
    if (c->rank == 0) {
        fl_buf_printf(j, ",\"noise\":{\"method\":\"fwq\",\"work\":%lld,\"ranks\":[", (long long)s->work);
        for (int q = 0, at = 0; q < c->nranks; at += cnt[q], q++) {
            fl_buf_printf(j, "%s{\"rank\":%d,\"cpu\":%lld,\"quanta_ns\":", q ? "," : "", q,
                          (long long)metas[META * q]);
            emit_every(j, all + at, cnt[q], 1);
            fl_buf_printf(j, "}");
        }
        fl_buf_printf(j, "]}");
    }
    free(metas), free(cnt), free(all);
}

static void detour_record(const fl_ctx *c, void *state, struct fl_buf *j)
{
    noise_state *s = state;
    MPI_Barrier(c->comm);
    detour_run(s);
    int64_t kept = s->n < DETOUR_CAP ? s->n : DETOUR_CAP;
    int64_t meta[META] = {sched_getcpu(), s->gap_min, s->loops, s->span, s->n}, *metas = NULL;
    int *cnt = NULL;
    if (c->rank == 0 && !(metas = malloc(sizeof *metas * META * (size_t)c->nranks)))
        fl_die("out of memory");
    int64_t *all = gather(c, meta, metas, s->rec, (int)(2 * kept), &cnt);
    if (c->rank == 0) {
        fl_buf_printf(j, ",\"noise\":{\"method\":\"detour\",\"threshold\":");
        fl_buf_num(j, s->threshold);
        fl_buf_printf(j, ",\"ranks\":[");
        for (int q = 0, at = 0; q < c->nranks; at += cnt[q], q++) {
            const int64_t *m = metas + META * q;
            fl_buf_printf(j, "%s{\"rank\":%d,\"cpu\":%lld,\"gap_min_ns\":%lld,\"loops\":%lld,\"span_ns\":%lld,"
                          "\"detours\":%lld,\"start_ns\":", q ? "," : "", q, (long long)m[0], (long long)m[1],
                          (long long)m[2], (long long)m[3], (long long)m[4]);
            emit_every(j, all + at, cnt[q] / 2, 2);
            fl_buf_printf(j, ",\"length_ns\":");
            emit_every(j, all + at + 1, cnt[q] / 2, 2);
            fl_buf_printf(j, "}");
        }
        fl_buf_printf(j, "]}");
    }
    free(metas), free(cnt), free(all);
}

/* ---- verify: the work done, the record read back ---- */

/* One quantum through measure against the work's value jumped ahead
 * (8 bytes), and every quantum of the record above zero (8 bytes each). */
static int64_t fwq_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    noise_state *s = state;
    uint64_t want = jump(s->x, s->work);
    fwq_measure(ctx, state, 1);
    int64_t bad = s->x != want ? 8 : 0;
    for (int64_t i = 0; i < s->n; i++)
        bad += s->rec[i] <= 0 ? 8 : 0;
    *checked += 8 * (1 + s->n);
    return bad;
}

/* Every detour kept (16 bytes each): inside the record's span, after the
 * one before it, and longer than the threshold's bound. */
static int64_t detour_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    noise_state *s = state;
    detour_measure(ctx, state, 1);
    const int64_t bound = detour_bound(s), kept = s->n < DETOUR_CAP ? s->n : DETOUR_CAP;
    int64_t bad = 0, last = -1;
    for (int64_t i = 0; i < kept; i++) {
        int64_t at = s->rec[2 * i], len = s->rec[2 * i + 1];
        bad += (at <= last || at < 0 || at + len > s->span || len <= bound) ? 16 : 0;
        last = at;
    }
    *checked += 16 * kept;
    return bad;
}

static void noise_teardown(const fl_ctx *ctx, void *state)
{
    (void)ctx;
    noise_state *s = state;
    fl_free(s->rec);
    fl_free(s);
}

const fl_kernel fl_noise_kernels[] = {
    {.name = "noise.fwq", .setup = fwq_setup, .measure = fwq_measure, .verify = fwq_verify,
     .teardown = noise_teardown, .record = fwq_record},
    {.name = "noise.detour", .setup = detour_setup, .measure = detour_measure, .verify = detour_verify,
     .teardown = noise_teardown, .record = detour_record},
    {.name = NULL},
};
