/* Family "message", traffic patterns: two-sided MPI among many ranks at once,
 * each rank following the role and peer its layout gives it (Python decides
 * layouts: suite/patterns.py). Idle ranks take no part in point-to-point
 * traffic and return from measure at once.
 *
 * - bibw, bisection: both ranks of a pair stream a window at each other at
 *   once (pair_exchange, OSU osu_bibw): W receives posted, W sends, one wait
 *   for all 2W, then a zero-byte ack each way, so a window ends only when
 *   both directions are done. bisection runs it on a random perfect
 *   matching.
 * - saturation: pairs run message.stream's protocol side by side
 *   (pair_stream).
 * - hotspot: every sender streams windows to one target (pair_stream's
 *   sender), which posts a window of receives per sender and acks each
 *   sender per window.
 * - alltoall: an all-to-all personalized exchange, by MPI_Alltoall, by an
 *   explicit shifted pairwise schedule (Thakur, Rabenseifner and Gropp,
 *   "Optimization of collective communication operations in MPICH", 2005),
 *   or concurrently: the receives and sends of a window of W exchanges
 *   posted at once, 2(N-1)W requests, one wait for all, so that the network
 *   stays loaded across exchanges as the model's continuous all-to-all
 *   assumes (W = 1: one exchange, its ramp-up and tail in every op).
 *
 * - shift: mpiGraph's step k (Moody, LLNL): every rank streams a window to
 *   its peer, rank + k, and receives one from the rank that names it, rank -
 *   k, all ranks at once; a zero-byte ack goes back to that sender as soon
 *   as its messages are in, and a rank times its send alone, to its peer's
 *   ack. Python runs k = 1 .. N-1 (the active axis) for the N x N pair
 *   matrix (verdicts/pair_matrix.py).
 *
 * Cache state: op i sends from and receives into slot i % buffers of
 * regions of `buffers` slots of `size` bytes, i counted over the whole point
 * (across measure calls), as in message.stream: a window's messages share
 * the rotation, and under window_buffers=per-op each has a slot of its own
 * (suite/buffers.py plans at least a window of them). A rank that
 * receives from several peers (hotspot target, alltoall) keeps the working
 * set the cache state asks for, about buffers x size bytes per side, rather
 * than buffers slots per peer, and under per-op still a window of slots per
 * sender or a window of arrays (fl_unit_slots). Alltoall's exchange i uses
 * array i % arrays. */
#include "message.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most exchanges fill= puts in one window (window='s own upper bound). */
enum { FILL_WINDOW_MAX = 4096 };

/* message.alltoall's schedules (param variant). */
enum { SCHED_COLLECTIVE, SCHED_PAIRWISE, SCHED_CONCURRENT };

typedef struct {
    msg_pair m;         /* count: bytes of one message (alltoall: of one block);
                         * window: messages per flow (alltoall: exchanges) */
    int schedule;       /* alltoall: SCHED_* */
    int64_t rslots;     /* hotspot target: receive slots per sender; alltoall: arrays */
    int nsrc, *src;     /* hotspot target: the senders that address it */
    int from;           /* shift: the rank whose peer this one is */
    int nap;            /* shift: wait by polling and sleeping (fl_crowded) */
} pat_state;

/* ---- layouts: checked whole on every rank, so every rank agrees (the shared rules: layouts.c) ---- */

static const char *alltoall_fault(const fl_layout *l, int n)
{
    for (int q = 0; q < n; q++)
        if (l->role[q] != FL_BOTH)
            return "layout: all-to-all needs every rank in role 'b'";
    return NULL;
}

/* ---- slots ---- */

/* Hotspot target: slot i of sender number k, in that sender's own region. */
static inline char *tslot(const pat_state *s, int k, int64_t i)
{
    const pair_state *p = &s->m.p;
    return fl_slot(p->rbuf + (size_t)k * (size_t)s->rslots * p->count, (int64_t)p->count,
                   s->rslots, p->next + i);
}

/* Alltoall: array i of the send or receive region (nranks blocks each). */
static inline char *array(const pat_state *s, char *base, int64_t i)
{
    size_t bytes = (size_t)s->m.p.nranks * s->m.p.count;
    return base + (size_t)((s->m.p.next + i) % s->rslots) * bytes;
}

/* ---- setup ---- */

static size_t region(int64_t slots, int64_t size)
{
    return (size_t)slots * (size_t)size;
}

/* shift: every rank 'b', each named as a peer by exactly one other rank. */
static const char *shift_fault(const fl_layout *l, int n)
{
    char *named = calloc((size_t)n, 1);
    const char *bad = named ? NULL : "layout: out of memory";
    for (int q = 0; q < n && !bad; q++) {
        int p = l->peer[q];
        if (l->role[q] != FL_BOTH || p < 0 || p >= n || p == q || named[p]++)
            bad = "layout: a shift needs every rank 'b', each the peer of exactly one other rank";
    }
    free(named);
    return bad;
}

/* The state of a point whose layout passes `fault`, with `window` messages
 * per flow and ops of `unit` bytes per side; or an error or a skip. */
static int pat_begin(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape,
                     const char *(*fault)(const fl_layout *, int), int64_t window, int64_t unit,
                     pat_state **out)
{
    int st = fl_pattern_point(pt, shape, pt->layout ? fault(pt->layout, ctx->nranks) : NULL);
    if (st != FL_OK)
        return st;
    st = pair_check_buffers(pt, unit, 1, shape);
    if (st != FL_OK)
        return st;
    pat_state *s = fl_alloc(sizeof *s);
    pair_init_layout(&s->m.p, ctx, pt, (int)window);
    s->m.comm = ctx->comm;
    s->rslots = pt->buffers;
    *out = s;
    return FL_OK;
}

/* A hotspot target's senders, their receive slots and region. */
static void target_regions(pat_state *s, const fl_ctx *ctx, const fl_point *pt, fl_shape *shape)
{
    pair_state *p = &s->m.p;
    s->src = fl_alloc(sizeof *s->src * (size_t)p->nranks);
    for (int q = 0; q < p->nranks; q++)
        if (pt->layout->role[q] == FL_SENDER && pt->layout->peer[q] == p->rank)
            s->src[s->nsrc++] = q;
    s->rslots = fl_unit_slots(pt->buffers, s->nsrc, fl_own_slots(ctx->opts, p->window));
    p->rbuf = fl_alloc(region(s->rslots * (s->nsrc > 0 ? s->nsrc : 1), pt->size));
    shape->working_set = s->rslots * (s->nsrc > 0 ? s->nsrc : 1) * pt->size;
    s->m.req = fl_alloc(sizeof *s->m.req *
                        ((size_t)s->nsrc * (size_t)p->window + (size_t)p->nranks));
    shape->recv_bytes = (int64_t)s->nsrc * pt->size;
}

/* bibw, saturation, hotspot and bisection: windows of messages, buffers
 * and shape by role. */
static int windowed_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape,
                          const char *(*fault)(const fl_layout *, int), pat_state **out)
{
    const int64_t window = fl_param_int(ctx->opts, "window"), size = pt->size;
    pat_state *s;
    int st = pat_begin(ctx, pt, shape, fault, window, size, &s);
    if (st != FL_OK)
        return st;
    pair_state *p = &s->m.p;
    const int sends = p->role == FL_BOTH || p->role == FL_SENDER;
    const int receives = p->role == FL_BOTH || p->role == FL_RECEIVER;
    shape->batch_multiple = window; /* samples are whole windows */
    if (sends) {
        p->sbuf = fl_alloc(region(p->buffers, size));
        shape->sent_bytes = size;
        shape->messages = 1;
    }
    if (receives) {
        p->rbuf = fl_alloc(region(p->buffers, size));
        shape->recv_bytes = size;
    }
    if (sends || receives) /* an exchange keeps a window each way outstanding */
        s->m.req = fl_alloc(sizeof *s->m.req * (size_t)(sends + receives) * (size_t)window);
    if (p->role == FL_TARGET)
        target_regions(s, ctx, pt, shape);
    shape->timed = p->role != FL_IDLE;
    snprintf(shape->info, FL_INFO_LEN, "{\"window\":%lld,\"buffers\":%lld}", (long long)window,
             (long long)pt->buffers);
    *state = s;
    if (out)
        *out = s;
    return FL_OK;
}
/* bibw, bisection */
static int exchange_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    (void)bs;
    return windowed_setup(ctx, pt, state, shape, fl_exchange_fault, NULL);
}

static int saturation_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                            fl_shape *shape)
{
    (void)bs;
    return windowed_setup(ctx, pt, state, shape, fl_pairs_fault, NULL);
}

static int hotspot_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    pat_state *s;
    int st = windowed_setup(ctx, pt, state, shape, fl_hotspot_fault, &s);
    (void)bs;
    if (st != FL_OK)
        return st;
    int senders = 0; /* of the layout (one target) */
    for (int q = 0; q < s->m.p.nranks; q++)
        senders += pt->layout->role[q] == FL_SENDER;
    int64_t per_sender = fl_unit_slots(pt->buffers, senders, fl_own_slots(ctx->opts, s->m.p.window));
    snprintf(shape->info, FL_INFO_LEN,
             "{\"window\":%d,\"buffers\":%lld,\"target_slots_per_sender\":%lld}", s->m.p.window,
             (long long)pt->buffers, (long long)per_sender);
    return FL_OK;
}

/* shift: an exchange's buffers (a window each way), its sender found, and
 * two requests more, the acks in and out. */
static int shift_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    pat_state *s;
    int st = windowed_setup(ctx, pt, state, shape, shift_fault, &s);
    if (st != FL_OK)
        return st;
    pair_state *p = &s->m.p;
    for (int q = 0; q < p->nranks; q++)
        if (pt->layout->peer[q] == p->rank)
            s->from = q;
    s->nap = *(const int *)bs;
    const size_t len = strlen(shape->info); /* the object's end: how its ranks waited */
    if (len > 1 && len + 24 < FL_INFO_LEN)
        snprintf(shape->info + len - 1, FL_INFO_LEN - len + 1, ",\"waiting\":\"%s\"}",
                 s->nap ? "sleep" : "spin");
    fl_free(s->m.req);
    s->m.req = fl_alloc(sizeof *s->m.req * (2 * (size_t)p->window + 2));
    return FL_OK;
}

/* alltoall: every rank sends a block to every rank; ops rotate through
 * arrays of nranks blocks. A window of W exchanges keeps 2(N-1)W requests
 * (window is 1 but for the concurrent schedule: fl_opts_bind). */
static int alltoall_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    const int n = ctx->nranks;
    const int64_t unit = (int64_t)n * pt->size, fill = fl_param_int(ctx->opts, "fill");
    int64_t window = fl_param_int(ctx->opts, "window");
    pat_state *s;
    (void)bs;
    /* fill=BYTES: enough exchanges per window that each flow carries at least
     * BYTES, so that every size keeps the cables as busy as the largest (the
     * steady state the network model describes) */
    if (fill > 0 && pt->size > 0 && (fill + pt->size - 1) / pt->size > window)
        window = (fill + pt->size - 1) / pt->size < FILL_WINDOW_MAX ? (fill + pt->size - 1) / pt->size
                                                                     : FILL_WINDOW_MAX;
    if (2 * (int64_t)(n - 1) * window > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "2 x %d peers x window %lld requests exceed an MPI int count",
                 n - 1, (long long)window);
        return FL_ERROR;
    }
    int st = pat_begin(ctx, pt, shape, alltoall_fault, window, unit, &s);
    if (st != FL_OK)
        return st;
    const char *variant = fl_param(ctx->opts, "variant");
    s->schedule = fl_param_is(ctx->opts, "variant", "pairwise")     ? SCHED_PAIRWISE
                  : fl_param_is(ctx->opts, "variant", "concurrent") ? SCHED_CONCURRENT
                                                                    : SCHED_COLLECTIVE;
    s->rslots = fl_unit_slots(pt->buffers, n, fl_own_slots(ctx->opts, window));
    s->m.p.sbuf = fl_alloc(region(s->rslots, unit));
    s->m.p.rbuf = fl_alloc(region(s->rslots, unit));
    shape->working_set = s->rslots * unit;
    s->m.req = fl_alloc(sizeof *s->m.req * 2 * (size_t)n * (size_t)window);
    shape->sent_bytes = shape->recv_bytes = (int64_t)(n - 1) * pt->size;
    shape->messages = n - 1;
    shape->timed = 1;
    shape->batch_multiple = window; /* samples are whole windows */
    snprintf(shape->info, FL_INFO_LEN,
             "{\"variant\":\"%s\",\"window\":%d,\"buffers\":%lld,\"arrays\":%lld}", variant,
             s->m.p.window, (long long)pt->buffers, (long long)s->rslots);
    *state = s;
    return FL_OK;
}

static void pat_teardown(const fl_ctx *ctx, void *state)
{
    pat_state *s = state;
    (void)ctx;
    fl_free(s->m.p.sbuf);
    fl_free(s->m.p.rbuf);
    fl_free(s->m.req);
    fl_free(s->src);
    fl_free(s);
}

/* ---- measure ---- */

/* bibw, bisection: the pair's exchange. */
static double exchange_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_exchange(state, &msg_ops, iters);
}

/* saturation: message.stream's protocol per pair. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &msg_ops, iters);
}

/* hotspot: senders stream windows to the target; the target posts W
 * receives per sender, each into that sender's own slots, waits for all,
 * then acks every sender. */
static double hotspot_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pat_state *s = state;
    pair_state *p = &s->m.p;
    const int c = (int)p->count;
    (void)ctx;
    if (p->role == FL_SENDER)
        return pair_stream(p, &msg_ops, iters);
    if (p->role != FL_TARGET)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += p->window) {
        const int n = pair_window_len(iters, d, p->window);
        int r = 0;
        for (int k = 0; k < s->nsrc; k++)
            for (int j = 0; j < n; j++)
                MPI_Irecv(tslot(s, k, d + j), c, MPI_BYTE, s->src[k], MSG_TAG_DATA, s->m.comm,
                          &s->m.req[r++]);
        MPI_Waitall(r, s->m.req, MPI_STATUSES_IGNORE);
        for (int k = 0; k < s->nsrc; k++)
            MPI_Isend(&s->m.ack_out, 0, MPI_BYTE, s->src[k], MSG_TAG_ACK, s->m.comm, &s->m.req[k]);
        MPI_Waitall(s->nsrc, s->m.req, MPI_STATUSES_IGNORE);
    }
    return pair_finish(p, iters, t0);
}

/* MPI_Waitany, or on a crowded machine polls of MPI_Testany with naps between. */
static void shift_wait(const pat_state *s, int n, MPI_Request *rq, int *idx)
{
    int done = 0;
    if (!s->nap) {
        MPI_Waitany(n, rq, idx, MPI_STATUS_IGNORE);
        return;
    }
    for (MPI_Testany(n, rq, idx, &done, MPI_STATUS_IGNORE); !done;
         MPI_Testany(n, rq, idx, &done, MPI_STATUS_IGNORE))
        fl_nap();
}

/* shift: per window, the peer's ack and the sender's messages posted, the
 * window sent; the ack goes to the sender as soon as its messages are in,
 * and the rank's time is its send's alone, from the window's start to its
 * peer's ack (mpiGraph's send matrix): waiting for its own sender, whose
 * route may be another, is not its pair's time. */
static double shift_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pat_state *s = state;
    pair_state *p = &s->m.p;
    const int c = (int)p->count;
    double sent = 0;
    (void)ctx;
    if (p->role != FL_BOTH)
        return 0.0;
    for (int64_t d = 0; d < iters; d += p->window) {
        const int n = pair_window_len(iters, d, p->window);
        MPI_Request *rq = s->m.req; /* ack in, n receives, n sends, ack out */
        const double t0 = fl_now();
        MPI_Irecv(&s->m.ack_in, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, s->m.comm, &rq[0]);
        for (int j = 0; j < n; j++)
            MPI_Irecv(pair_rslot(p, d + j), c, MPI_BYTE, s->from, MSG_TAG_DATA, s->m.comm, &rq[1 + j]);
        for (int j = 0; j < n; j++)
            MPI_Isend(pair_sslot(p, d + j), c, MPI_BYTE, p->peer, MSG_TAG_DATA, s->m.comm, &rq[1 + n + j]);
        rq[1 + 2 * n] = MPI_REQUEST_NULL;
        for (int left = 2 * n + 1, in = 0, idx; left > 0; left--) {
            shift_wait(s, 2 * n + 2, rq, &idx);
            if (idx == 0)
                sent += fl_now() - t0;
            else if (idx <= n && ++in == n) { /* the sender's window is in: ack it */
                MPI_Isend(&s->m.ack_out, 0, MPI_BYTE, s->from, MSG_TAG_ACK, s->m.comm, &rq[1 + 2 * n]);
                left++;
            }
        }
    }
    p->next += iters;
    return sent;
}

/* Concurrent alltoall: the receives of `len` exchanges from op d, then
 * their sends, then one wait for all 2(N-1)len. Exchange j uses array d + j;
 * messages of one flow match in posting order, so each lands in its own. */
static void concurrent_window(pat_state *s, MPI_Comm comm, int64_t d, int len)
{
    const int c = (int)s->m.p.count, n = s->m.p.nranks, me = s->m.p.rank, m = n - 1;
    MPI_Request *rq = s->m.req, *sq = s->m.req + (size_t)len * (size_t)m;
    for (int j = 0; j < len; j++) {
        char *ra = array(s, s->m.p.rbuf, d + j);
        for (int k = 1; k < n; k++) {
            int src = (me - k + n) % n;
            MPI_Irecv(ra + (size_t)src * (size_t)c, c, MPI_BYTE, src, MSG_TAG_DATA, comm,
                      &rq[j * m + k - 1]);
        }
    }
    for (int j = 0; j < len; j++) {
        char *sa = array(s, s->m.p.sbuf, d + j);
        for (int k = 1; k < n; k++) { /* shifted: no rank is everyone's first target */
            int dst = (me + k) % n;
            MPI_Isend(sa + (size_t)dst * (size_t)c, c, MPI_BYTE, dst, MSG_TAG_DATA, comm,
                      &sq[j * m + k - 1]);
        }
    }
    MPI_Waitall(2 * m * len, s->m.req, MPI_STATUSES_IGNORE);
}

/* Pairwise alltoall: one partner at a time, N-1 steps of one exchange. */
static void pairwise_exchange(pat_state *s, MPI_Comm comm, int64_t i)
{
    const int c = (int)s->m.p.count, n = s->m.p.nranks, me = s->m.p.rank;
    char *sa = array(s, s->m.p.sbuf, i), *ra = array(s, s->m.p.rbuf, i);
    MPI_Request *req = s->m.req;
    for (int k = 1; k < n; k++) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        MPI_Irecv(ra + (size_t)src * (size_t)c, c, MPI_BYTE, src, MSG_TAG_DATA, comm, &req[0]);
        MPI_Isend(sa + (size_t)dst * (size_t)c, c, MPI_BYTE, dst, MSG_TAG_DATA, comm, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
}

/* alltoall: one op = one personalized exchange of `count` bytes with every
 * other rank; the self block moves too (collective) but is not counted.
 * Schedules: the library's MPI_Alltoall; an explicit shifted pairwise
 * exchange, one partner at a time; or every message of a window of
 * exchanges at once (all receives and sends posted, then one wait): the
 * traffic the network model assumes. */
static double alltoall_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pat_state *s = state;
    MPI_Comm comm = s->m.comm;
    const int c = (int)s->m.p.count, w = s->m.p.window;
    (void)ctx;
    double t0 = fl_now();
    if (s->schedule == SCHED_COLLECTIVE)
        for (int64_t i = 0; i < iters; i++)
            MPI_Alltoall(array(s, s->m.p.sbuf, i), c, MPI_BYTE, array(s, s->m.p.rbuf, i), c,
                         MPI_BYTE, comm);
    else if (s->schedule == SCHED_CONCURRENT)
        for (int64_t d = 0; d < iters; d += w)
            concurrent_window(s, comm, d, pair_window_len(iters, d, w));
    else
        for (int64_t i = 0; i < iters; i++)
            pairwise_exchange(s, comm, i);
    return pair_finish(&s->m.p, iters, t0);
}

/* ---- verify: one window of patterned data (pair_verify_window) ---- */

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t exchange_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, exchange_measure, checked);
}

static int64_t stream_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, stream_measure, checked);
}

/* shift: one window, the received slots checked against the sender's flow
 * pattern (from -> rank) rather than the peer's. */
static int64_t shift_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    pat_state *s = state;
    pair_state *p = &s->m.p;
    pair_verify_begin(p);
    shift_measure(ctx, state, p->window);
    const int peer = p->peer;
    p->peer = s->from; /* pair_verify_end checks the flow peer -> rank */
    int64_t bad = pair_verify_end(p, checked);
    p->peer = peer;
    return bad;
}

/* The pair's window for the senders; the target zeroes, then checks, every
 * slot the window wrote in each sender's region, each distinct slot once. */
static int64_t hotspot_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    pat_state *s = state;
    pair_state *p = &s->m.p;
    const int64_t tslots = min64(p->window, s->rslots);
    int64_t bad = 0;
    pair_verify_begin(p);
    for (int q = 0; p->role == FL_TARGET && q < s->nsrc; q++)
        for (int64_t k = 0; k < tslots; k++)
            memset(tslot(s, q, k), 0, p->count);
    hotspot_measure(ctx, state, p->window);
    p->next = 0; /* back to the slots the window used */
    for (int q = 0; p->role == FL_TARGET && q < s->nsrc; q++) {
        for (int64_t k = 0; k < tslots; k++)
            bad += fl_check(tslot(s, q, k), p->count, pair_flow_seed(p, s->src[q], p->rank));
        *checked += (int64_t)p->count * tslots;
    }
    return bad + pair_verify_end(p, checked);
}

/* One window of exchanges (ops 0..W-1): block d of every send array the
 * window uses carries the flow pattern (rank -> d); every block received
 * from another rank is checked, in each distinct array once. */
static int64_t alltoall_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    pat_state *s = state;
    pair_state *p = &s->m.p;
    const size_t c = p->count, n = (size_t)p->nranks;
    const int64_t arrays = min64(p->window, s->rslots);
    int64_t bad = 0;
    p->next = 0;
    for (int64_t k = 0; k < arrays; k++) {
        for (int q = 0; q < p->nranks; q++)
            fl_fill(array(s, p->sbuf, k) + (size_t)q * c, c, pair_flow_seed(p, p->rank, q));
        memset(array(s, p->rbuf, k), 0, c * n);
    }
    alltoall_measure(ctx, state, p->window);
    p->next = 0; /* back to the arrays the window used */
    for (int64_t k = 0; k < arrays; k++)
        for (int q = 0; q < p->nranks; q++)
            if (q != p->rank) {
                bad += fl_check(array(s, p->rbuf, k) + (size_t)q * c, c,
                                pair_flow_seed(p, q, p->rank));
                *checked += (int64_t)c;
            }
    pair_next_pass(p);
    return bad;
}

const fl_kernel fl_message_pattern_kernels[] = {
    {.name = "message.bibw", .setup = exchange_setup, .measure = exchange_measure,
     .verify = exchange_verify, .teardown = pat_teardown},
    {.name = "message.hotspot", .setup = hotspot_setup, .measure = hotspot_measure,
     .verify = hotspot_verify, .teardown = pat_teardown},
    {.name = "message.saturation", .setup = saturation_setup, .measure = stream_measure,
     .verify = stream_verify, .teardown = pat_teardown},
    {.name = "message.alltoall", .setup = alltoall_setup, .measure = alltoall_measure,
     .verify = alltoall_verify, .teardown = pat_teardown},
    {.name = "message.bisection", .setup = exchange_setup, .measure = exchange_measure,
     .verify = exchange_verify, .teardown = pat_teardown},
    {.name = "message.shift", .init = fl_crowded_init, .fini = fl_crowded_fini, .setup = shift_setup, .measure = shift_measure, .verify = shift_verify,
     .teardown = pat_teardown},
    {.name = NULL},
};
