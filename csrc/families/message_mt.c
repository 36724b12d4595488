/* Family "message", several threads per rank (MPI_THREAD_MULTIPLE: main.c
 * asks for it for these benchmarks, whose facts say `threads`). Ranks 0 and
 * 1 take part, other ranks idle. Each rank keeps a pool of threads for the
 * point (thread_pool.h), started at setup and woken for every measure call
 * by a pthread barrier; the calling thread is thread 0. A call's time is rank
 * 0's (both active ranks' for the IMB-MT bandwidths, the slowest of them)
 * from the start barrier to the end barrier, so it spans every thread's ops.
 *
 * latency_mt (OSU's osu_latency_mt, c/mpi/pt2pt/standard/osu_latency_mt.c):
 * S sender threads on rank 0, R receiver threads on rank 1 (OSU's `-t
 * R` or `-t S:R`: 1 sender and 2 receivers by default). Of a call's S x
 * iters round trips, sender thread s runs i = s, s+S, .. and receiver thread
 * r answers i = r, r+R, .. (OSU's loops `i = val; i += num_threads`), each a
 * blocking MPI_Send and MPI_Recv of SIZE bytes both ways. With one sender
 * the tags are OSU's fixed 1 and 2 and any receiver thread takes the next
 * message; with several, round trip i carries tag i (here i modulo a
 * multiple of lcm(S, R) within MPI_TAG_UB, which keeps the pairs apart as
 * OSU's unique tags do). An op is one round trip on every sender thread at
 * once: OSU prints t_total / (2 x iterations / S), the time of a sender
 * thread's round trip over two, which is the call's time / iters / 2 here
 * (legs 2).
 *
 * mt_uniband, mt_biband (IMB-MT's UniBandMT and BiBandMT, src_cpp/MT/
 * MT_benchmark.cpp mt_uniband, mt_biband): T threads on each of the two
 * ranks, thread t of rank 0 with thread t of rank 1 on a communicator of its
 * own; each pair runs windows of `window` MPI_Isend to MPI_Irecv and a
 * one-byte ack per window (uniband: rank 0 sends; biband: both send and
 * receive a window at once, then the ack). An op is one message per thread
 * (both ways in biband), so the bytes of an op are T x SIZE (biband 2 x T x
 * SIZE) and bandwidth is IMB-MT's cumulative Mbytes/sec: SIZE x T x window
 * over the slowest thread's time per window (biband's time halved). */
#include "thread_pool.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MT_ACK_TAG 3
#define MT_SAMPLE_S 2e-3 /* latency_mt: the shortest sample (latency_mt_setup) */

typedef struct mt_pool mt_pool;

typedef struct {
    mt_pool *pool;
    int id;
    MPI_Comm comm;       /* IMB-MT: a duplicate per thread; latency_mt: the run's */
    char *sbuf, *rbuf;   /* `buffers` slots of `count` bytes each */
    MPI_Request *req;    /* 2 x window (IMB-MT), or NULL */
    int64_t next;        /* ops this thread has run in this point (its slot rotation) */
    double busy;         /* latency_mt, clock=per-op: this call's round trips, each timed alone */
} mt_thread;

typedef void (*mt_loop)(mt_thread *t, int64_t iters);

struct mt_pool {
    char role;           /* FL_SENDER (rank 0), FL_RECEIVER (rank 1) or FL_IDLE */
    int peer;
    int threads;         /* this rank's (0 on an idle rank) */
    int entries;         /* of th[]: every rank keeps one per thread of the run's pools */
    int own_comm;        /* th[i].comm is a duplicate (IMB-MT) */
    int senders, receivers; /* latency_mt */
    int tag_span;        /* latency_mt with several senders: tags cycle through 0..tag_span-1 */
    int clock_per_op;    /* latency_mt: a sender thread's round trips timed one by one (OSU's t_total) */
    int clock_osu;       /* latency_mt: OSU's shared t_start and t_total, every sender thread's */
    uint64_t osu_start;  /* clock=osu: the latest round trip's start of any sender thread (double bits) */
    uint64_t osu_total;  /* clock=osu: the sum over every round trip of its end less osu_start */
    int window;          /* IMB-MT */
    int both;            /* mt_biband */
    size_t count;
    int64_t buffers;
    mt_loop loop;        /* a thread's ops: latency_mt's or IMB-MT's */
    fl_pool run;         /* the threads */
    mt_thread *th;
    uint64_t seed;       /* of the verify patterns; every pass takes a new one */
};

static char *slot(char *base, const mt_pool *p, int64_t k)
{
    return fl_slot(base, (int64_t)p->count, p->buffers, k);
}

/* A pool thread's part of a call: its loop on its own mt_thread. */
static void pool_loop(void *state, int id, int64_t iters)
{
    mt_pool *p = state;
    p->loop(&p->th[id], iters);
}

static int lcm(int a, int b)
{
    int x = a, y = b;
    while (y) {
        int r = x % y;
        x = y;
        y = r;
    }
    return a / x * b;
}

/* The pool of this rank for a point: `threads` of them, each with its regions (and,
 * `own_comm`, a communicator duplicated from the run's, collectively, thread by thread). */
static mt_pool *pool_new(const fl_ctx *ctx, const fl_point *pt, int threads, int own_comm, int window,
                         mt_loop loop)
{
    mt_pool *p = fl_alloc(sizeof *p);
    p->role = ctx->rank == 0 ? FL_SENDER : ctx->rank == 1 ? FL_RECEIVER : FL_IDLE;
    p->peer = ctx->rank == 0 ? 1 : 0;
    p->threads = p->role == FL_IDLE ? 0 : threads;
    p->window = window;
    p->count = (size_t)pt->size;
    p->buffers = pt->buffers;
    p->loop = loop;
    p->seed = 1;
    p->entries = threads;
    p->own_comm = own_comm;
    /* every rank joins every duplicate: the active ranks' thread counts are equal in IMB-MT */
    p->th = fl_alloc(sizeof *p->th * (size_t)threads);
    for (int i = 0; i < threads; i++) {
        mt_thread *t = &p->th[i];
        t->pool = p;
        t->id = i;
        t->comm = ctx->comm;
        if (own_comm)
            MPI_Comm_dup(ctx->comm, &t->comm);
        if (i >= p->threads)
            continue;
        t->sbuf = fl_alloc(p->count * (size_t)p->buffers);
        t->rbuf = fl_alloc(p->count * (size_t)p->buffers);
        if (window > 0)
            t->req = fl_alloc(sizeof *t->req * 2 * (size_t)window);
    }
    return p;
}

static int pool_start(mt_pool *p)
{
    fl_pool_start(&p->run, p->threads, pool_loop, p);
    return FL_OK;
}

static void teardown(const fl_ctx *ctx, void *state)
{
    mt_pool *p = state;
    (void)ctx;
    fl_pool_stop(&p->run);
    for (int i = 0; i < p->entries; i++) {
        mt_thread *t = &p->th[i];
        if (p->own_comm)
            MPI_Comm_free(&t->comm);
        fl_free(t->sbuf);
        fl_free(t->rbuf);
        fl_free(t->req);
    }
    fl_free(p->th);
    fl_free(p);
}

/* Whether MPI lets several threads call it at once; a note why not. */
static int need_multiple(fl_shape *shape)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided >= MPI_THREAD_MULTIPLE)
        return FL_OK;
    snprintf(shape->note, FL_NOTE_LEN, "MPI granted MPI_THREAD_%s, below MPI_THREAD_MULTIPLE",
             fl_thread_level_name(provided));
    return FL_ERROR;
}

static int check_size(const fl_point *pt, fl_shape *shape)
{
    if (pt->size > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "size above INT_MAX bytes (MPI int count)");
        return FL_SKIP;
    }
    if (pt->buffers < 1 || (pt->size > 0 && pt->buffers > INT64_MAX / 2 / pt->size)) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
                 (long long)pt->buffers);
        return FL_ERROR;
    }
    return FL_OK;
}

/* ---- latency_mt: OSU's send_thread and recv_thread ---- */

static int lat_tag(const mt_pool *p, int64_t i, int fixed)
{
    return p->senders == 1 ? fixed : (int)(i % p->tag_span);
}

static inline void lat_round_trip(mt_thread *t, mt_pool *p, int64_t i)
{
    MPI_Send(slot(t->sbuf, p, t->next), (int)p->count, MPI_BYTE, p->peer, lat_tag(p, i, 1), t->comm);
    MPI_Recv(slot(t->rbuf, p, t->next), (int)p->count, MPI_BYTE, p->peer, lat_tag(p, i, 2), t->comm,
             MPI_STATUS_IGNORE);
}

/* clock=per-op: OSU's send_thread reads the clock around every round trip
 * and prints its summed t_total, so the time a thread waits between its
 * round trips (for its core, when threads outnumber cores) is not counted;
 * the call's time (clock=loop) counts it. */
static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* clock=osu: OSU's t_start and t_total are globals every sender thread
 * writes (osu_latency_mt.c, send_thread): a round trip adds its end less
 * the latest start of any sender thread, which may be another thread's
 * later one. The two are shared here too, stored and added atomically (OSU's
 * plain `t_total +=` may also lose an add, which is not reproduced). */
static void lat_round_trip_osu(mt_thread *t, mt_pool *p, int64_t i)
{
    __atomic_store_n(&p->osu_start, bits_of(fl_now()), __ATOMIC_RELAXED);
    lat_round_trip(t, p, i);
    const double end = fl_now();
    uint64_t old = __atomic_load_n(&p->osu_total, __ATOMIC_RELAXED);
    for (;;) {
        const double span = end - double_of(__atomic_load_n(&p->osu_start, __ATOMIC_RELAXED));
        if (__atomic_compare_exchange_n(&p->osu_total, &old, bits_of(double_of(old) + span), 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            break;
    }
}

static void lat_send_loop(mt_thread *t, int64_t iters)
{
    mt_pool *p = t->pool;
    const int64_t total = iters * p->senders;
    t->busy = 0.0;
    for (int64_t i = t->id; i < total; i += p->senders, t->next++) {
        if (p->clock_osu) {
            lat_round_trip_osu(t, p, i);
        } else if (p->clock_per_op) {
            const double t0 = fl_now();
            lat_round_trip(t, p, i);
            t->busy += fl_now() - t0;
        } else {
            lat_round_trip(t, p, i);
        }
    }
}

static void lat_recv_loop(mt_thread *t, int64_t iters)
{
    mt_pool *p = t->pool;
    const int64_t total = iters * p->senders;
    for (int64_t i = t->id; i < total; i += p->receivers, t->next++) {
        MPI_Recv(slot(t->rbuf, p, t->next), (int)p->count, MPI_BYTE, p->peer, lat_tag(p, i, 1), t->comm,
                 MPI_STATUS_IGNORE);
        MPI_Send(slot(t->sbuf, p, t->next), (int)p->count, MPI_BYTE, p->peer, lat_tag(p, i, 2), t->comm);
    }
}

static int latency_mt_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    int st = check_size(pt, shape);
    if (st == FL_OK)
        st = need_multiple(shape);
    if (st != FL_OK)
        return st;
    const int senders = (int)fl_param_int(ctx->opts, "senders");
    const int receivers = (int)fl_param_int(ctx->opts, "receivers");
    int mine = ctx->rank == 0 ? senders : receivers;
    mt_pool *p = pool_new(ctx, pt, mine, 0, 0, ctx->rank == 0 ? lat_send_loop : lat_recv_loop);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(ctx->comm, MPI_TAG_UB, &ub, &flag);
    const int span = lcm(senders, receivers), top = flag && ub ? *ub : 32767;
    p->senders = senders;
    p->receivers = receivers;
    p->tag_span = span * (top / span > 0 ? top / span : 1);
    p->clock_per_op = fl_param_is(ctx->opts, "clock", "per-op");
    p->clock_osu = fl_param_is(ctx->opts, "clock", "osu");
    *state = p;
    /* Each sender thread's round trips back to back for at least MT_SAMPLE_S, as OSU's
     * loop of 10,000 (1,000 above 8 KiB) runs them: a sample of a round trip or two (the
     * 20 us sample time) times the pool's wake-ups besides, and at 2:2 read 1.1-2.5x
     * OSU's figure; 2 ms and 20 ms samples read the same. */
    shape->min_sample_s = MT_SAMPLE_S;
    shape->bytes_per_op = 2 * (int64_t)senders * pt->size; /* one round trip per sender thread */
    shape->timed = ctx->rank == 0;  /* OSU prints the sender threads' time */
    snprintf(shape->info, FL_INFO_LEN,
             "{\"senders\":%d,\"receivers\":%d,\"tags\":\"%s\",\"buffers\":%lld}",
             senders, receivers, senders == 1 ? "fixed" : "per-round-trip", (long long)pt->buffers);
    return pool_start(p);
}

/* The call's time, or on rank 0 (clock=per-op) sender thread 0's summed
 * round trips or (clock=osu) OSU's t_total over every sender thread: each
 * thread runs `iters` round trips, and OSU prints t_total over 2 x a
 * thread's round trips, so each is per op. */
static double latency_mt_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mt_pool *p = state;
    (void)ctx;
    p->osu_total = bits_of(0.0);
    const double t = fl_pool_run(&p->run, iters);
    if (p->role != FL_SENDER)
        return t;
    return p->clock_osu ? double_of(p->osu_total) : p->clock_per_op ? p->th[0].busy : t;
}

/* One op (a round trip per sender thread, iters = 1) on patterned data:
 * sender thread s sends round trip s with the pattern of s, which receiver
 * thread s % R answers (its k-th op, s = r + k R) with the pattern of r.
 * Where a receiver thread's ops outnumber its slots, the last op into each
 * slot is the one checked. */
static int64_t latency_mt_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    mt_pool *p = state;
    if (p->role == FL_IDLE)
        return 0;
    const uint64_t out = p->seed * 1000003u, back = out + 500001u;
    for (int i = 0; i < p->threads; i++) {
        mt_thread *t = &p->th[i];
        t->next = 0;
        for (int64_t k = 0; k < p->buffers; k++) {
            memset(slot(t->rbuf, p, k), 0, p->count);
            fl_fill(slot(t->sbuf, p, k), p->count, (p->role == FL_SENDER ? out : back) + (uint64_t)i);
        }
    }
    latency_mt_measure(ctx, p, 1);
    int64_t bad = 0;
    for (int i = 0; i < p->threads; i++) {
        mt_thread *t = &p->th[i];
        for (int64_t k = t->next > p->buffers ? t->next - p->buffers : 0; k < t->next; k++) {
            const int64_t from = p->role == FL_SENDER ? i % p->receivers : i + k * p->receivers;
            bad += fl_check(slot(t->rbuf, p, k), p->count, (p->role == FL_SENDER ? back : out) + (uint64_t)from);
            *checked += (int64_t)p->count;
        }
        t->next = 0;
    }
    p->seed++;
    return bad;
}

/* ---- mt_uniband, mt_biband: IMB-MT's windows, a communicator per thread ---- */

static void uniband_loop(mt_thread *t, int64_t iters)
{
    mt_pool *p = t->pool;
    char ack = 0;
    for (int64_t d = 0; d < iters; d += p->window) {
        const int n = iters - d < p->window ? (int)(iters - d) : p->window;
        if (p->role == FL_SENDER) {
            for (int j = 0; j < n; j++)
                MPI_Isend(slot(t->sbuf, p, t->next + j), (int)p->count, MPI_BYTE, p->peer, 0, t->comm, &t->req[j]);
            MPI_Waitall(n, t->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_CHAR, p->peer, MT_ACK_TAG, t->comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < n; j++)
                MPI_Irecv(slot(t->rbuf, p, t->next + j), (int)p->count, MPI_BYTE, p->peer, 0, t->comm, &t->req[j]);
            MPI_Waitall(n, t->req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_CHAR, p->peer, MT_ACK_TAG, t->comm);
        }
        t->next += n;
    }
}

static void biband_loop(mt_thread *t, int64_t iters)
{
    mt_pool *p = t->pool;
    char ack = 0;
    for (int64_t d = 0; d < iters; d += p->window) {
        const int n = iters - d < p->window ? (int)(iters - d) : p->window;
        for (int j = 0; j < n; j++)
            MPI_Irecv(slot(t->rbuf, p, t->next + j), (int)p->count, MPI_BYTE, p->peer, 0, t->comm, &t->req[j]);
        for (int j = 0; j < n; j++)
            MPI_Isend(slot(t->sbuf, p, t->next + j), (int)p->count, MPI_BYTE, p->peer, 0, t->comm,
                      &t->req[n + j]);
        MPI_Waitall(2 * n, t->req, MPI_STATUSES_IGNORE);
        if (p->role == FL_SENDER)
            MPI_Recv(&ack, 1, MPI_CHAR, p->peer, MT_ACK_TAG, t->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, p->peer, MT_ACK_TAG, t->comm);
        t->next += n;
    }
}

static int band_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape, int both)
{
    int st = check_size(pt, shape);
    if (st == FL_OK)
        st = need_multiple(shape);
    if (st != FL_OK)
        return st;
    const int threads = (int)fl_param_int(ctx->opts, "threads");
    const int window = (int)fl_param_int(ctx->opts, "window");
    mt_pool *p = pool_new(ctx, pt, threads, 1, window, both ? biband_loop : uniband_loop);
    p->both = both;
    *state = p;
    shape->bytes_per_op = (both ? 2 : 1) * (int64_t)threads * pt->size;
    shape->timed = ctx->rank <= 1;  /* IMB-MT's time_max: the slowest thread of either rank */
    shape->batch_multiple = window; /* whole windows */
    snprintf(shape->info, FL_INFO_LEN,
             "{\"threads\":%d,\"window\":%d,\"buffers\":%lld}", threads, window,
             (long long)pt->buffers);
    return pool_start(p);
}

static int uniband_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return band_setup(ctx, pt, state, shape, 0);
}

static int biband_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return band_setup(ctx, pt, state, shape, 1);
}

static double band_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mt_pool *p = state;
    (void)ctx;
    return fl_pool_run(&p->run, iters);
}

/* One window on patterned data: thread t of each rank sends the pattern of
 * (rank, t), and checks the slots its window filled against (peer, t). */
static int64_t band_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    mt_pool *p = state;
    if (p->role == FL_IDLE)
        return 0;
    const int sends = p->both || p->role == FL_SENDER, recvs = p->both || p->role == FL_RECEIVER;
    const int64_t used = p->window < p->buffers ? p->window : p->buffers;
    const uint64_t base = p->seed * 1000003u;
    for (int i = 0; i < p->threads; i++) {
        mt_thread *t = &p->th[i];
        t->next = 0;
        for (int64_t k = 0; k < used; k++) {
            if (sends)
                fl_fill(slot(t->sbuf, p, k), p->count, base + (uint64_t)(ctx->rank * 4096 + i));
            if (recvs)
                memset(slot(t->rbuf, p, k), 0, p->count);
        }
    }
    band_measure(ctx, p, p->window);
    int64_t bad = 0;
    for (int i = 0; i < p->threads && recvs; i++) {
        mt_thread *t = &p->th[i];
        for (int64_t k = 0; k < used; k++) {
            bad += fl_check(slot(t->rbuf, p, k), p->count, base + (uint64_t)(p->peer * 4096 + i));
            *checked += (int64_t)p->count;
        }
    }
    for (int i = 0; i < p->threads; i++)
        p->th[i].next = 0;
    p->seed++;
    return bad;
}

const fl_kernel fl_message_mt_kernels[] = {
    {.name = "message.latency_mt", .setup = latency_mt_setup, .measure = latency_mt_measure,
     .verify = latency_mt_verify, .teardown = teardown},
    {.name = "message.mt_uniband", .setup = uniband_setup, .measure = band_measure, .verify = band_verify,
     .teardown = teardown},
    {.name = "message.mt_biband", .setup = biband_setup, .measure = band_measure, .verify = band_verify,
     .teardown = teardown},
    {.name = NULL},
};
