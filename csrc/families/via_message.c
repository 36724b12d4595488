/* via_message: the VI Architecture experiments over MPI (via.c says what
 * they are): message.conns (MPI_Waitany, the completion queue, against a
 * round-robin MPI_Test over C receives) and message.scatter (a vector
 * datatype against a contiguous receive and an unpack). */
#include "via.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- message.conns: C receives on C tags ---- */

typedef struct {
    int role, peer, conns, scan, count;
    int64_t size, buffers;
    char *sbuf, *rbuf;
    MPI_Request *req;   /* one per tag */
    int64_t *op;        /* receiver: the op each tag's receive is for */
    char dummy;
} mc_state;

static int mconns_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    (void)bs;
    int *tag_ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (pt->size > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "size above INT_MAX bytes (MPI int count)");
        return FL_SKIP;
    }
    if (pt->conns < 1 || (flag && pt->conns >= *tag_ub)) {
        snprintf(shape->note, FL_NOTE_LEN, "conns must be 1..%d (tags 0..C-1, ack tag C)",
                 flag ? *tag_ub - 1 : 32766);
        return FL_ERROR;
    }
    mc_state *s = fl_alloc(sizeof *s);
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->conns = (int)pt->conns;
    s->scan = strcmp(fl_param(ctx->opts, "check", "waitany"), "scan") == 0;
    if (s->role != IDLE) {
        s->peer = fl_peer(ctx);
        s->count = (int)pt->size;
        s->size = pt->size;
        s->buffers = pt->buffers;
        s->sbuf = fl_alloc((size_t)(s->size * s->buffers));
        s->rbuf = fl_alloc((size_t)(s->size * s->buffers));
        s->req = fl_alloc(sizeof *s->req * (size_t)s->conns);
        s->op = fl_alloc(sizeof *s->op * (size_t)s->conns);
    }
    shape->bytes_per_op = pt->size;
    shape->timed = s->role == SENDER;
    shape->batch_multiple = rounds_multiple(s->conns);
    snprintf(shape->info, FL_INFO_LEN, "{\"check\":\"%s\",\"conns\":%d,\"buffers\":%lld}",
             s->scan ? "scan" : "waitany", s->conns, (long long)pt->buffers);
    *state = s;
    return FL_OK;
}

static void mconns_teardown(const fl_ctx *ctx, void *state)
{
    mc_state *s = state;
    (void)ctx;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s->op);
    fl_free(s);
}

/* Op i on tag i % C; the request of tag k is reused once its previous send
 * completes, so at most C sends are outstanding. */
static void mconns_send(mc_state *s, MPI_Comm comm, int64_t iters)
{
    for (int64_t i = 0; i < iters; i++) {
        int k = (int)(i % s->conns);
        if (i >= s->conns)
            MPI_Wait(&s->req[k], MPI_STATUS_IGNORE);
        MPI_Isend(fl_slot(s->sbuf, s->size, s->buffers, i), s->count, MPI_BYTE, s->peer, k,
                  comm, &s->req[k]);
    }
    MPI_Waitall(iters < s->conns ? (int)iters : s->conns, s->req, MPI_STATUSES_IGNORE);
    MPI_Recv(&s->dummy, 0, MPI_BYTE, s->peer, s->conns, comm, MPI_STATUS_IGNORE);
}

/* Tag k's receive is for op k, then k + C, ...: re-posted while ops are due. */
static void mconns_post(mc_state *s, MPI_Comm comm, int k, int64_t iters)
{
    if (s->op[k] < iters)
        MPI_Irecv(fl_slot(s->rbuf, s->size, s->buffers, s->op[k]), s->count, MPI_BYTE, s->peer,
                  k, comm, &s->req[k]);
}

static void mconns_recv(mc_state *s, MPI_Comm comm, int64_t iters)
{
    const int n = iters < s->conns ? (int)iters : s->conns;
    for (int k = 0; k < n; k++) {
        s->op[k] = k;
        mconns_post(s, comm, k, iters);
    }
    if (s->scan) { /* round-robin: MPI_Test on each posted receive in turn */
        for (int64_t left = iters, k = 0; left > 0; k = k + 1 == n ? 0 : k + 1) {
            int done = 0;
            if (s->req[k] == MPI_REQUEST_NULL)
                continue;
            MPI_Test(&s->req[k], &done, MPI_STATUS_IGNORE);
            if (done) {
                left--;
                s->op[k] += s->conns;
                mconns_post(s, comm, (int)k, iters);
            }
        }
    } else { /* completion queue: MPI_Waitany names the tag that completed */
        for (int64_t left = iters; left > 0; left--) {
            int k;
            MPI_Waitany(n, s->req, &k, MPI_STATUS_IGNORE);
            s->op[k] += s->conns;
            mconns_post(s, comm, k, iters);
        }
    }
    MPI_Send(&s->dummy, 0, MPI_BYTE, s->peer, s->conns, comm);
}

static double mconns_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mc_state *s = state;
    double t0 = fl_now();
    if (s->role == SENDER)
        mconns_send(s, ctx->comm, iters);
    else if (s->role == RECEIVER)
        mconns_recv(s, ctx->comm, iters);
    return fl_now() - t0;
}

/* One message on every tag, all with the same pattern. */
static int64_t mconns_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    mc_state *s = state;
    const uint64_t seed = (uint64_t)s->size * 0x100000001b3ULL + (uint64_t)s->conns;
    const int64_t slots = s->conns < s->buffers ? s->conns : s->buffers;
    int64_t bad = 0;
    if (s->role == IDLE)
        return 0;
    if (s->role == SENDER)
        for (int64_t i = 0; i < slots; i++)
            fl_fill(fl_slot(s->sbuf, s->size, s->buffers, i), (size_t)s->size, seed);
    else
        memset(s->rbuf, 0, (size_t)(s->size * s->buffers));
    mconns_measure(ctx, s, s->conns);
    if (s->role == RECEIVER) {
        for (int64_t i = 0; i < slots; i++)
            bad += fl_check(fl_slot(s->rbuf, s->size, s->buffers, i), (size_t)s->size, seed);
        *checked += slots * s->size;
    }
    return bad;
}

/* ---- message.scatter: a windowed stream received into a strided layout ---- */

typedef struct {
    int role, peer, copy, window, count; /* count = segments * seg bytes per message */
    int64_t segments, seg, slots;        /* slots: message slots per side */
    char *sbuf, *rbuf, *stage;           /* rbuf: slots of 2 * count; stage: slots of count */
    MPI_Datatype vec;                    /* datatype: the receiver's layout of one message */
    MPI_Request *req;
    char dummy;
} ms_state;

static int mscatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    (void)bs;
    int64_t segments, window = fl_param_int(ctx->opts, "window", 64);
    int st = scatter_segments(ctx, pt, shape, &segments);
    if (st != FL_OK)
        return st;
    ms_state *s = fl_alloc(sizeof *s);
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->copy = strcmp(fl_param(ctx->opts, "mode", "datatype"), "copy") == 0;
    s->window = (int)window;
    s->segments = segments;
    s->seg = pt->size;
    s->count = (int)(segments * pt->size);
    s->slots = message_slots(pt->buffers, segments);
    s->vec = MPI_DATATYPE_NULL;
    if (s->role == SENDER) {
        s->sbuf = fl_alloc((size_t)s->count * (size_t)s->slots);
    } else if (s->role == RECEIVER) {
        s->rbuf = fl_alloc(2 * (size_t)s->count * (size_t)s->slots);
        if (s->copy)
            s->stage = fl_alloc((size_t)s->count * (size_t)s->slots);
        MPI_Type_vector((int)segments, (int)pt->size, (int)(2 * pt->size), MPI_BYTE, &s->vec);
        MPI_Type_commit(&s->vec);
    }
    if (s->role != IDLE) {
        s->peer = fl_peer(ctx);
        s->req = fl_alloc(sizeof *s->req * (size_t)s->window);
    }
    shape->bytes_per_op = s->count;
    shape->buffers = s->slots;
    shape->timed = s->role == SENDER;
    shape->batch_multiple = s->window; /* samples are whole windows */
    snprintf(shape->info, FL_INFO_LEN,
             "{\"mode\":\"%s\",\"segments\":%lld,\"window\":%d,\"buffers\":%lld}",
             s->copy ? "copy" : "datatype", (long long)segments, s->window, (long long)s->slots);
    *state = s;
    return FL_OK;
}

static void mscatter_teardown(const fl_ctx *ctx, void *state)
{
    ms_state *s = state;
    (void)ctx;
    if (s->vec != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->vec);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->stage);
    fl_free(s->req);
    fl_free(s);
}

/* Receives of one window: ops d..d+n-1 into their slots, scattered by the
 * datatype, or contiguous into staging slots and unpacked after completion. */
static void mscatter_recv_window(ms_state *s, MPI_Comm comm, int64_t d, int n)
{
    for (int j = 0; j < n; j++) {
        if (s->copy)
            MPI_Irecv(fl_slot(s->stage, s->count, s->slots, d + j), s->count, MPI_BYTE, s->peer,
                      TAG_SCATTER, comm, &s->req[j]);
        else
            MPI_Irecv(fl_slot(s->rbuf, 2 * (int64_t)s->count, s->slots, d + j), 1, s->vec,
                      s->peer, TAG_SCATTER, comm, &s->req[j]);
    }
    MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
    if (s->copy)
        for (int j = 0; j < n; j++)
            unpack(fl_slot(s->rbuf, 2 * (int64_t)s->count, s->slots, d + j),
                   fl_slot(s->stage, s->count, s->slots, d + j), s->segments, s->seg);
}

/* message.stream's window (Isends against pre-posted Irecvs, a zero-byte ack
 * per window); the receiver's scatter is inside the window's time. */
static double mscatter_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ms_state *s = state;
    MPI_Comm comm = ctx->comm;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters && s->role != IDLE; d += s->window) {
        const int n = iters - d < s->window ? (int)(iters - d) : s->window;
        if (s->role == SENDER) {
            for (int j = 0; j < n; j++)
                MPI_Isend(fl_slot(s->sbuf, s->count, s->slots, d + j), s->count, MPI_BYTE,
                          s->peer, TAG_SCATTER, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->dummy, 0, MPI_BYTE, s->peer, TAG_SCATTER_ACK, comm, MPI_STATUS_IGNORE);
        } else {
            mscatter_recv_window(s, comm, d, n);
            MPI_Send(&s->dummy, 0, MPI_BYTE, s->peer, TAG_SCATTER_ACK, comm);
        }
    }
    return fl_now() - t0;
}

/* One window, every message with the same per-segment patterns; the
 * receiver checks every slot the window used, segments and gaps. */
static int64_t mscatter_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ms_state *s = state;
    const uint64_t seed = (uint64_t)s->seg * 0x100000001b3ULL + (uint64_t)s->segments;
    const int64_t used = s->window < s->slots ? s->window : s->slots;
    int64_t bad = 0;
    if (s->role == SENDER)
        for (int64_t i = 0; i < used; i++)
            fill_segments(fl_slot(s->sbuf, s->count, s->slots, i), s->segments, s->seg, seed);
    else if (s->role == RECEIVER)
        memset(s->rbuf, 0, 2 * (size_t)s->count * (size_t)s->slots);
    mscatter_measure(ctx, s, s->window);
    if (s->role == RECEIVER) {
        for (int64_t i = 0; i < used; i++)
            bad += check_scattered(fl_slot(s->rbuf, 2 * (int64_t)s->count, s->slots, i),
                                   s->segments, s->seg, seed);
        *checked += used * s->count;
    }
    return bad;
}

const fl_kernel fl_via_message_kernels[] = {
    {.name = "message.conns", .setup = mconns_setup, .measure = mconns_measure,
     .verify = mconns_verify, .teardown = mconns_teardown},
    {.name = "message.scatter", .setup = mscatter_setup, .measure = mscatter_measure,
     .verify = mscatter_verify, .teardown = mscatter_teardown},
    {.name = NULL},
};
