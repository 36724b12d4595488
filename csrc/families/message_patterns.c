/* Family "message", traffic patterns: two-sided MPI among many ranks at once,
 * each rank following the role and peer its layout gives it (Python decides
 * layouts: measure/patterns.py). Idle ranks take no part in point-to-point
 * traffic and return from measure at once.
 *
 * - bibw, bisection: both ranks of a pair stream a window at each other at
 *   once (OSU osu_bibw): W receives posted, W sends, one wait for all 2W,
 *   then a zero-byte ack each way, so a window ends only when both
 *   directions are done. bisection runs it on a random perfect matching.
 * - saturation: pairs run message.stream's protocol side by side.
 * - hotspot: every sender streams windows to one target, which posts a
 *   window of receives per sender and acks each sender per window.
 * - alltoall: an all-to-all personalized exchange, by MPI_Alltoall, by an
 *   explicit shifted pairwise schedule (Thakur, Rabenseifner and Gropp,
 *   "Optimization of collective communication operations in MPICH", 2005),
 *   or concurrently: the receives and sends of a window of W exchanges
 *   posted at once, 2(N-1)W requests, one wait for all, so that the network
 *   stays loaded across exchanges as the model's continuous all-to-all
 *   assumes (W = 1: one exchange, its ramp-up and tail in every op).
 *
 * Cache state: op i sends from and receives into slot i % buffers of
 * regions of `buffers` slots of `size` bytes, i counted over the whole point
 * (across measure calls), as in message.stream; when buffers < window,
 * receives of one window share slots (OSU does the same), and every message
 * of a verified window carries one
 * pattern per flow. A rank that receives from several peers (hotspot target,
 * alltoall) keeps the footprint the cache state asks for, about
 * buffers x size bytes per side, rather than buffers slots per peer: see
 * share_slots. Alltoall's exchange i uses array i % arrays; when arrays <
 * window, receives of one window share arrays in the same way. */
#include "../fl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_PAT_DATA = 301, TAG_PAT_ACK = 302 };

/* The most exchanges fill= puts in one window (window='s own upper bound). */
enum { FILL_WINDOW_MAX = 4096 };

/* message.alltoall's schedules (param variant). */
enum { SCHED_COLLECTIVE, SCHED_PAIRWISE, SCHED_CONCURRENT };

typedef struct {
    char role;          /* FL_* role letter of this rank */
    int peer;           /* partner rank, -1 for none */
    int nranks, rank;
    int count;          /* bytes of one message (alltoall: of one block) */
    int window;         /* messages per flow per window (alltoall: exchanges) */
    int schedule;       /* alltoall: SCHED_* */
    int64_t buffers;    /* send (and pair receive) slots ops rotate through */
    int64_t rslots;     /* hotspot target: receive slots per sender; alltoall: arrays */
    int64_t next;       /* ops run so far in this point: op i uses slot (next + i) */
    int nsrc, *src;     /* hotspot target: the senders that address it */
    char *sbuf, *rbuf;
    MPI_Request *req;
    char ack_in, ack_out; /* zero-byte acks */
    uint64_t seed;
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

static inline char *sslot(const pat_state *s, int64_t i)
{
    return fl_slot(s->sbuf, s->count, s->buffers, s->next + i);
}

static inline char *rslot(const pat_state *s, int64_t i)
{
    return fl_slot(s->rbuf, s->count, s->buffers, s->next + i);
}

/* Hotspot target: slot i of sender number k, in that sender's own region. */
static inline char *tslot(const pat_state *s, int k, int64_t i)
{
    return fl_slot(s->rbuf + (size_t)k * (size_t)s->rslots * (size_t)s->count, s->count,
                   s->rslots, s->next + i);
}

/* Alltoall: array i of the send or receive region (nranks blocks each). */
static inline char *array(const pat_state *s, char *base, int64_t i)
{
    size_t bytes = (size_t)s->nranks * (size_t)s->count;
    return base + (size_t)((s->next + i) % s->rslots) * bytes;
}

/* Slots per unit when one op takes `units` slot-sized pieces at once (a
 * hotspot target's messages from `units` senders, an alltoall array of
 * `units` blocks): ceil(buffers / units), at least 1. Rotating `buffers`
 * whole units would multiply the footprint by the rank count (warm: N x
 * 64 KiB, no longer cache-resident; cold: N x 2 x LLC, gigabytes at scale);
 * this keeps it at buffers x size rounded up to whole units, so warm stays
 * within the warm region and cold still exceeds twice the LLC. */
static int64_t share_slots(int64_t buffers, int64_t units)
{
    int64_t k = (buffers + units - 1) / units;
    return k > 0 ? k : 1;
}

/* Ends a measure call of `iters` ops: every rank counts the same ops. */
static inline double finish(pat_state *s, int64_t iters, double t0)
{
    double t = fl_now() - t0;
    s->next += iters;
    return t;
}

static inline int window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

/* ---- setup ---- */

static size_t region(int64_t slots, int64_t size)
{
    return (size_t)slots * (size_t)size;
}

/* The state of a point whose layout passes `fault`, with `window` messages
 * per flow and ops of `unit` bytes per side; or an error or a skip. */
static int pat_begin(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape,
                     const char *(*fault)(const fl_layout *, int), int64_t window, int64_t unit,
                     pat_state **out)
{
    const fl_layout *l = pt->layout;
    const char *bad = l ? fault(l, ctx->nranks) : "a pattern benchmark needs a layout (--layouts)";
    if (bad) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", bad);
        return FL_ERROR;
    }
    if (pt->size > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "size above INT_MAX bytes (MPI int count)");
        return FL_SKIP;
    }
    if (pt->buffers < 1 || (unit > 0 && pt->buffers > INT64_MAX / unit)) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
                 (long long)pt->buffers);
        return FL_ERROR;
    }
    pat_state *s = fl_alloc(sizeof *s);
    s->role = l->role[ctx->rank];
    s->peer = l->peer[ctx->rank];
    s->nranks = ctx->nranks;
    s->rank = ctx->rank;
    s->count = (int)pt->size;
    s->window = (int)window;
    s->buffers = s->rslots = pt->buffers;
    s->seed = (uint64_t)pt->size * 0x100000001b3ULL + 17;
    *out = s;
    return FL_OK;
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
    shape->batch_multiple = window; /* samples are whole windows */
    switch (s->role) {
    case FL_BOTH:
        s->sbuf = fl_alloc(region(s->buffers, size));
        s->rbuf = fl_alloc(region(s->buffers, size));
        s->req = fl_alloc(sizeof *s->req * 2 * (size_t)window);
        shape->sent_bytes = shape->recv_bytes = size;
        shape->messages = 1;
        break;
    case FL_SENDER:
        s->sbuf = fl_alloc(region(s->buffers, size));
        s->req = fl_alloc(sizeof *s->req * (size_t)window);
        shape->sent_bytes = size;
        shape->messages = 1;
        break;
    case FL_RECEIVER:
        s->rbuf = fl_alloc(region(s->buffers, size));
        s->req = fl_alloc(sizeof *s->req * (size_t)window);
        shape->recv_bytes = size;
        break;
    case FL_TARGET:
        s->src = fl_alloc(sizeof *s->src * (size_t)s->nranks);
        for (int q = 0; q < s->nranks; q++)
            if (pt->layout->role[q] == FL_SENDER && pt->layout->peer[q] == s->rank)
                s->src[s->nsrc++] = q;
        s->rslots = share_slots(pt->buffers, s->nsrc > 0 ? s->nsrc : 1);
        s->rbuf = fl_alloc(region(s->rslots * (s->nsrc > 0 ? s->nsrc : 1), size));
        s->req = fl_alloc(sizeof *s->req * ((size_t)s->nsrc * (size_t)window + (size_t)s->nranks));
        shape->recv_bytes = (int64_t)s->nsrc * size;
        break;
    default: /* idle */
        break;
    }
    shape->timed = s->role != FL_IDLE;
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
    for (int q = 0; q < s->nranks; q++)
        senders += pt->layout->role[q] == FL_SENDER;
    int64_t per_sender = share_slots(pt->buffers, senders > 0 ? senders : 1);
    snprintf(shape->info, FL_INFO_LEN,
             "{\"window\":%d,\"buffers\":%lld,\"target_slots_per_sender\":%lld}", s->window,
             (long long)pt->buffers, (long long)per_sender);
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
    s->rslots = share_slots(pt->buffers, n);
    s->sbuf = fl_alloc(region(s->rslots, unit));
    s->rbuf = fl_alloc(region(s->rslots, unit));
    s->req = fl_alloc(sizeof *s->req * 2 * (size_t)n * (size_t)window);
    shape->sent_bytes = shape->recv_bytes = (int64_t)(n - 1) * pt->size;
    shape->messages = n - 1;
    shape->timed = 1;
    shape->batch_multiple = window; /* samples are whole windows */
    snprintf(shape->info, FL_INFO_LEN,
             "{\"variant\":\"%s\",\"window\":%d,\"buffers\":%lld,\"arrays\":%lld}", variant,
             s->window, (long long)pt->buffers, (long long)s->rslots);
    *state = s;
    return FL_OK;
}

static void pat_teardown(const fl_ctx *ctx, void *state)
{
    pat_state *s = state;
    (void)ctx;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s->src);
    fl_free(s);
}

/* ---- measure ---- */

/* bibw, bisection: per window, W receives from the peer, W sends to it, one
 * wait for all 2W, then a zero-byte ack each way. */
static double exchange_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pat_state *s = state;
    MPI_Comm comm = ctx->comm;
    const int c = s->count, p = s->peer;
    if (s->role != FL_BOTH)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += s->window) {
        const int n = window_len(iters, d, s->window);
        for (int j = 0; j < n; j++)
            MPI_Irecv(rslot(s, d + j), c, MPI_BYTE, p, TAG_PAT_DATA, comm, &s->req[j]);
        for (int j = 0; j < n; j++)
            MPI_Isend(sslot(s, d + j), c, MPI_BYTE, p, TAG_PAT_DATA, comm, &s->req[n + j]);
        MPI_Waitall(2 * n, s->req, MPI_STATUSES_IGNORE);
        MPI_Irecv(&s->ack_in, 0, MPI_BYTE, p, TAG_PAT_ACK, comm, &s->req[0]);
        MPI_Isend(&s->ack_out, 0, MPI_BYTE, p, TAG_PAT_ACK, comm, &s->req[1]);
        MPI_Waitall(2, s->req, MPI_STATUSES_IGNORE);
    }
    return finish(s, iters, t0);
}

/* saturation: message.stream's protocol per pair: a window of Isends to
 * pre-posted Irecvs, one zero-byte ack per window. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pat_state *s = state;
    MPI_Comm comm = ctx->comm;
    const int c = s->count, p = s->peer;
    if (s->role != FL_SENDER && s->role != FL_RECEIVER)
        return 0.0;
    double t0 = fl_now();
    if (s->role == FL_SENDER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Isend(sslot(s, d + j), c, MPI_BYTE, p, TAG_PAT_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->ack_in, 0, MPI_BYTE, p, TAG_PAT_ACK, comm, MPI_STATUS_IGNORE);
        }
    else
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Irecv(rslot(s, d + j), c, MPI_BYTE, p, TAG_PAT_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Send(&s->ack_out, 0, MPI_BYTE, p, TAG_PAT_ACK, comm);
        }
    return finish(s, iters, t0);
}

/* hotspot: senders stream windows to the target; the target posts W
 * receives per sender, each into that sender's own slots, waits for all,
 * then acks every sender. */
static double hotspot_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pat_state *s = state;
    MPI_Comm comm = ctx->comm;
    const int c = s->count;
    if (s->role == FL_SENDER) {
        double t0 = fl_now();
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Isend(sslot(s, d + j), c, MPI_BYTE, s->peer, TAG_PAT_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->ack_in, 0, MPI_BYTE, s->peer, TAG_PAT_ACK, comm, MPI_STATUS_IGNORE);
        }
        return finish(s, iters, t0);
    }
    if (s->role != FL_TARGET)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += s->window) {
        const int n = window_len(iters, d, s->window);
        int r = 0;
        for (int k = 0; k < s->nsrc; k++)
            for (int j = 0; j < n; j++)
                MPI_Irecv(tslot(s, k, d + j), c, MPI_BYTE, s->src[k], TAG_PAT_DATA, comm,
                          &s->req[r++]);
        MPI_Waitall(r, s->req, MPI_STATUSES_IGNORE);
        for (int k = 0; k < s->nsrc; k++)
            MPI_Isend(&s->ack_out, 0, MPI_BYTE, s->src[k], TAG_PAT_ACK, comm, &s->req[k]);
        MPI_Waitall(s->nsrc, s->req, MPI_STATUSES_IGNORE);
    }
    return finish(s, iters, t0);
}

/* Concurrent alltoall: the receives of `len` exchanges from op d, then
 * their sends, then one wait for all 2(N-1)len. Exchange j uses array d + j;
 * messages of one flow match in posting order, so each lands in its own. */
static void concurrent_window(pat_state *s, MPI_Comm comm, int64_t d, int len)
{
    const int c = s->count, n = s->nranks, me = s->rank, m = n - 1;
    MPI_Request *rq = s->req, *sq = s->req + (size_t)len * (size_t)m;
    for (int j = 0; j < len; j++) {
        char *ra = array(s, s->rbuf, d + j);
        for (int k = 1; k < n; k++) {
            int src = (me - k + n) % n;
            MPI_Irecv(ra + (size_t)src * (size_t)c, c, MPI_BYTE, src, TAG_PAT_DATA, comm,
                      &rq[j * m + k - 1]);
        }
    }
    for (int j = 0; j < len; j++) {
        char *sa = array(s, s->sbuf, d + j);
        for (int k = 1; k < n; k++) { /* shifted: no rank is everyone's first target */
            int dst = (me + k) % n;
            MPI_Isend(sa + (size_t)dst * (size_t)c, c, MPI_BYTE, dst, TAG_PAT_DATA, comm,
                      &sq[j * m + k - 1]);
        }
    }
    MPI_Waitall(2 * m * len, s->req, MPI_STATUSES_IGNORE);
}

/* Pairwise alltoall: one partner at a time, N-1 steps of one exchange. */
static void pairwise_exchange(pat_state *s, MPI_Comm comm, int64_t i)
{
    const int c = s->count, n = s->nranks, me = s->rank;
    char *sa = array(s, s->sbuf, i), *ra = array(s, s->rbuf, i);
    for (int k = 1; k < n; k++) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        MPI_Irecv(ra + (size_t)src * (size_t)c, c, MPI_BYTE, src, TAG_PAT_DATA, comm, &s->req[0]);
        MPI_Isend(sa + (size_t)dst * (size_t)c, c, MPI_BYTE, dst, TAG_PAT_DATA, comm, &s->req[1]);
        MPI_Waitall(2, s->req, MPI_STATUSES_IGNORE);
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
    MPI_Comm comm = ctx->comm;
    const int c = s->count;
    double t0 = fl_now();
    if (s->schedule == SCHED_COLLECTIVE)
        for (int64_t i = 0; i < iters; i++)
            MPI_Alltoall(array(s, s->sbuf, i), c, MPI_BYTE, array(s, s->rbuf, i), c, MPI_BYTE,
                         comm);
    else if (s->schedule == SCHED_CONCURRENT)
        for (int64_t d = 0; d < iters; d += s->window)
            concurrent_window(s, comm, d, window_len(iters, d, s->window));
    else
        for (int64_t i = 0; i < iters; i++)
            pairwise_exchange(s, comm, i);
    return finish(s, iters, t0);
}

/* ---- verify: one window of patterned data ---- */

/* The seed of the flow from rank `from` to rank `to`. */
static inline uint64_t flow_seed(const pat_state *s, int from, int to)
{
    return s->seed + (uint64_t)from * (uint64_t)s->nranks + (uint64_t)to;
}

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Pair and hotspot kernels: senders fill every send slot the window uses
 * with their flow's pattern; receivers zero, then check, every receive slot
 * the window wrote, each distinct slot once. */
static int64_t window_verify(const fl_ctx *ctx, void *state, int64_t *checked,
                             double (*measure)(const fl_ctx *, void *, int64_t))
{
    pat_state *s = state;
    const size_t c = (size_t)s->count;
    const int sends = s->role == FL_BOTH || s->role == FL_SENDER;
    const int64_t slots = min64(s->window, s->buffers);
    int64_t bad = 0;
    s->next = 0;
    if (sends)
        for (int64_t k = 0; k < slots; k++)
            fl_fill(sslot(s, k), c, flow_seed(s, s->rank, s->peer));
    if (s->role == FL_BOTH || s->role == FL_RECEIVER)
        for (int64_t k = 0; k < slots; k++)
            memset(rslot(s, k), 0, c);
    const int64_t tslots = min64(s->window, s->rslots);
    if (s->role == FL_TARGET)
        for (int q = 0; q < s->nsrc; q++)
            for (int64_t k = 0; k < tslots; k++)
                memset(tslot(s, q, k), 0, c);

    measure(ctx, state, s->window);
    s->next = 0; /* back to the slots the window used */

    if (s->role == FL_BOTH || s->role == FL_RECEIVER) {
        for (int64_t k = 0; k < slots; k++)
            bad += fl_check(rslot(s, k), c, flow_seed(s, s->peer, s->rank));
        *checked += (int64_t)c * slots;
    }
    if (s->role == FL_TARGET) {
        for (int q = 0; q < s->nsrc; q++)
            for (int64_t k = 0; k < tslots; k++)
                bad += fl_check(tslot(s, q, k), c, flow_seed(s, s->src[q], s->rank));
        *checked += (int64_t)c * tslots * s->nsrc;
    }
    s->seed += (uint64_t)s->nranks * (uint64_t)s->nranks;
    return bad;
}

static int64_t exchange_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return window_verify(ctx, st, checked, exchange_measure);
}

static int64_t stream_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return window_verify(ctx, st, checked, stream_measure);
}

static int64_t hotspot_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return window_verify(ctx, st, checked, hotspot_measure);
}

/* One window of exchanges (ops 0..W-1): block d of every send array the
 * window uses carries the flow pattern (rank -> d); every block received
 * from another rank is checked, in each distinct array once. */
static int64_t alltoall_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    pat_state *s = state;
    const size_t c = (size_t)s->count, n = (size_t)s->nranks;
    const int64_t arrays = min64(s->window, s->rslots);
    int64_t bad = 0;
    s->next = 0;
    for (int64_t k = 0; k < arrays; k++) {
        for (int q = 0; q < s->nranks; q++)
            fl_fill(array(s, s->sbuf, k) + (size_t)q * c, c, flow_seed(s, s->rank, q));
        memset(array(s, s->rbuf, k), 0, c * n);
    }
    alltoall_measure(ctx, state, s->window);
    s->next = 0; /* back to the arrays the window used */
    for (int64_t k = 0; k < arrays; k++)
        for (int q = 0; q < s->nranks; q++)
            if (q != s->rank) {
                bad += fl_check(array(s, s->rbuf, k) + (size_t)q * c, c, flow_seed(s, q, s->rank));
                *checked += (int64_t)c;
            }
    s->seed += (uint64_t)s->nranks * (uint64_t)s->nranks;
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
    {.name = NULL},
};
