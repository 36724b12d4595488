/* Family "message": two-sided MPI between ranks 0 (sender, timed) and 1
 * (receiver); other ranks idle. pingpong and stream are the pair loops
 * (pair.h) over the MPI transport (message.h). Following Kurmann and
 * Stricker, postal semantics are measured in two cases: restricted
 * (receives posted before the data leaves, so it can move straight into
 * place) and full (sends posted before any receive, so the library must
 * buffer).
 *
 * Cache state as pair.h tells: op i uses slot (next + i) % buffers of the
 * send and receive regions, i counted over the whole point. */
#include "message.h"

#include <limits.h>
#include <stdio.h>

enum { TAG_NOTICE = 3, TAG_READY = 4 };

typedef struct {
    msg_pair m;
    int ssend; /* postal_restricted: synchronous mode, else ready mode */
} msg_state;

static int setup_common(const fl_ctx *ctx, const fl_point *pt, void **state,
                        fl_shape *shape, int64_t window, int legs)
{
    if (pt->size > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "size above INT_MAX bytes (MPI int count)");
        return FL_SKIP;
    }
    int st = pair_check_buffers(pt, pt->size, 1, shape);
    if (st != FL_OK)
        return st;

    msg_state *s = fl_alloc(sizeof *s);
    pair_state *p = &s->m.p;
    /* pingpong and stream list completion=wait|test; postal kernels do not (NULL) */
    const char *completion = fl_param_find(ctx->opts, "completion");
    pair_init(p, ctx, pt, (int)window);
    s->m.comm = ctx->comm;
    if (p->role != FL_IDLE) {
        s->ssend = fl_param_is(ctx->opts, "mode", "ssend");
        s->m.test = fl_param_is(ctx->opts, "completion", "test");
        /* a round trip sends and receives on both ranks; a window one way */
        if (legs == 2 || p->role == FL_SENDER)
            p->sbuf = fl_alloc((size_t)(pt->size * pt->buffers));
        if (legs == 2 || p->role == FL_RECEIVER)
            p->rbuf = fl_alloc((size_t)(pt->size * pt->buffers));
        s->m.req = fl_alloc(sizeof *s->m.req * (size_t)window);
    }
    *state = s;
    shape->bytes_per_op = legs * pt->size;
    shape->timed = ctx->rank == 0; /* the sender's time spans each op to its ack */
    if (legs == 1)
        shape->batch_multiple = window; /* samples are whole windows */
    int n = legs == 1 ? snprintf(shape->info, FL_INFO_LEN, "{\"window\":%lld,", (long long)window)
                      : snprintf(shape->info, FL_INFO_LEN, "{");
    if (completion)
        n += snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, "\"completion\":\"%s\",",
                      completion);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, "\"buffers\":%lld}",
             (long long)pt->buffers);
    return FL_OK;
}

static void teardown(const fl_ctx *ctx, void *state)
{
    msg_state *s = state;
    (void)ctx;
    fl_free(s->m.p.sbuf);
    fl_free(s->m.p.rbuf);
    fl_free(s->m.req);
    fl_free(s);
}

/* ---- pingpong: MPI_Send/MPI_Recv round trip (completion=test: MPI_Isend
 * and MPI_Irecv, each completed by spinning on MPI_Test), 2 legs per op ---- */

static int pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    (void)bs;
    return setup_common(ctx, pt, state, shape, 1, 2);
}

static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_round_trip(state, &msg_ops, iters);
}

static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_round_trip(ctx, state, pingpong_measure, checked);
}

/* ---- windowed kernels: 1 leg per op, one message per op ---- */

static int window_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    (void)bs;
    return setup_common(ctx, pt, state, shape, fl_param_int(ctx->opts, "window"), 1);
}

/* OSU bandwidth style: a window of Isends against pre-posted Irecvs, one
 * zero-byte ack per window (pair_stream). */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &msg_ops, iters);
}

/* One restricted send: ready mode (legal because the receives exist) or
 * synchronous mode. */
static inline void postal_send(const msg_state *s, int64_t i)
{
    const pair_state *p = &s->m.p;
    if (s->ssend)
        MPI_Ssend(pair_sslot(p, i), (int)p->count, MPI_BYTE, p->peer, MSG_TAG_DATA, s->m.comm);
    else
        MPI_Rsend(pair_sslot(p, i), (int)p->count, MPI_BYTE, p->peer, MSG_TAG_DATA, s->m.comm);
}

/* Restricted postal semantics: the receiver posts the whole window, then
 * signals; only then does the sender send. The next window's signal acks
 * this one; a last ack closes the measurement. */
static double restricted_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    pair_state *p = &s->m.p;
    MPI_Comm comm = s->m.comm;
    (void)ctx;
    double t0 = fl_now();
    if (p->role == FL_SENDER) {
        for (int64_t d = 0; d < iters; d += p->window) {
            const int n = pair_window_len(iters, d, p->window);
            MPI_Recv(&s->m.ack_in, 0, MPI_BYTE, p->peer, TAG_READY, comm, MPI_STATUS_IGNORE);
            for (int j = 0; j < n; j++)
                postal_send(s, d + j);
        }
        MPI_Recv(&s->m.ack_in, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, comm, MPI_STATUS_IGNORE);
    } else if (p->role == FL_RECEIVER) {
        for (int64_t d = 0; d < iters; d += p->window) {
            const int n = pair_window_len(iters, d, p->window);
            for (int j = 0; j < n; j++)
                msg_post_recv(p, d + j, j);
            MPI_Send(&s->m.ack_out, 0, MPI_BYTE, p->peer, TAG_READY, comm);
            MPI_Waitall(n, s->m.req, MPI_STATUSES_IGNORE);
        }
        MPI_Send(&s->m.ack_out, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, comm);
    }
    return pair_finish(p, iters, t0);
}

/* Full postal semantics: the sender posts its window and then a "posted"
 * notice on another tag; the receiver waits for the notice before it posts
 * any receive, so the data arrives unexpected and the library buffers it. */
static double full_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    pair_state *p = &s->m.p;
    MPI_Comm comm = s->m.comm;
    (void)ctx;
    double t0 = fl_now();
    if (p->role == FL_SENDER)
        for (int64_t d = 0; d < iters; d += p->window) {
            const int n = pair_window_len(iters, d, p->window);
            for (int j = 0; j < n; j++)
                msg_post_send(p, d + j, j);
            MPI_Send(&s->m.ack_out, 0, MPI_BYTE, p->peer, TAG_NOTICE, comm);
            MPI_Waitall(n, s->m.req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->m.ack_in, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, comm, MPI_STATUS_IGNORE);
        }
    else if (p->role == FL_RECEIVER)
        for (int64_t d = 0; d < iters; d += p->window) {
            const int n = pair_window_len(iters, d, p->window);
            MPI_Recv(&s->m.ack_in, 0, MPI_BYTE, p->peer, TAG_NOTICE, comm, MPI_STATUS_IGNORE);
            for (int j = 0; j < n; j++)
                msg_post_recv(p, d + j, j);
            MPI_Waitall(n, s->m.req, MPI_STATUSES_IGNORE);
            MPI_Send(&s->m.ack_out, 0, MPI_BYTE, p->peer, MSG_TAG_ACK, comm);
        }
    return pair_finish(p, iters, t0);
}

/* One full window of patterned messages through the kernel's own path
 * (pair_verify_window). */
static int64_t stream_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, stream_measure, checked);
}

static int64_t restricted_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, restricted_measure, checked);
}

static int64_t full_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, full_measure, checked);
}

const fl_kernel fl_message_kernels[] = {
    {.name = "message.pingpong", .setup = pingpong_setup, .measure = pingpong_measure,
     .verify = pingpong_verify, .teardown = teardown},
    {.name = "message.stream", .setup = window_setup, .measure = stream_measure,
     .verify = stream_verify, .teardown = teardown},
    {.name = "message.postal_restricted", .setup = window_setup, .measure = restricted_measure,
     .verify = restricted_verify, .teardown = teardown},
    {.name = "message.postal_full", .setup = window_setup, .measure = full_measure,
     .verify = full_verify, .teardown = teardown},
    {.name = NULL},
};
