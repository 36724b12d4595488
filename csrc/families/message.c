/* Family "message": two-sided MPI between ranks 0 (sender, timed) and 1
 * (receiver); other ranks idle. Following Kurmann and Stricker, postal
 * semantics are measured in two cases: restricted (receives posted before the
 * data leaves, so it can move straight into place) and full (sends posted
 * before any receive, so the library must buffer). */
#include "../fl.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Receive slots of one window are distinct buffers (concurrent receives into
 * one buffer are erroneous MPI); this caps their total, shrinking the window
 * for very large messages, where a window is no longer needed. */
#define WINDOW_BYTES ((int64_t)64 << 20)

enum { IDLE, SENDER, RECEIVER };
enum { TAG_DATA = 1, TAG_ACK, TAG_NOTICE, TAG_READY };

typedef struct {
    int role, peer, count, window, ssend;
    char *sbuf, *rbuf; /* rbuf: window slots of count bytes */
    MPI_Request *req;
    char dummy;        /* zero-byte control messages */
    uint64_t seed;
} msg_state;

static int setup_common(const fl_ctx *ctx, const fl_point *pt, void **state,
                        fl_shape *shape, int64_t window, int legs)
{
    if (pt->size > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "size above INT_MAX bytes (MPI int count)");
        return FL_SKIP;
    }
    if (window < 1 || window > 1 << 20) {
        snprintf(shape->note, FL_NOTE_LEN, "window must be 1..2^20, got %lld",
                 (long long)window);
        return FL_ERROR;
    }
    if (pt->size > 0 && window * pt->size > WINDOW_BYTES)
        window = WINDOW_BYTES / pt->size > 1 ? WINDOW_BYTES / pt->size : 1;

    msg_state *s = fl_alloc(sizeof *s); /* zeroed: role IDLE */
    if (ctx->rank < 2) {
        s->role = ctx->rank == 0 ? SENDER : RECEIVER;
        s->peer = fl_peer(ctx);
        s->count = (int)pt->size;
        s->window = (int)window;
        s->ssend = strcmp(fl_param(ctx->opts, "mode", "ready"), "ssend") == 0;
        s->sbuf = fl_alloc((size_t)pt->size);
        s->rbuf = fl_alloc((size_t)(pt->size * window));
        s->req = fl_alloc(sizeof *s->req * (size_t)window);
        s->seed = (uint64_t)pt->size * 0x100000001b3ULL;
    }
    *state = s;
    shape->bytes_per_op = legs * pt->size;
    shape->timed = ctx->rank == 0; /* the sender's time spans each op to its ack */
    if (legs == 1) {
        shape->batch_multiple = window; /* samples are whole windows */
        snprintf(shape->info, FL_INFO_LEN, "{\"window\":%lld}", (long long)window);
    }
    return FL_OK;
}

static void teardown(const fl_ctx *ctx, void *state)
{
    msg_state *s = state;
    (void)ctx;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s);
}

/* ---- pingpong: Send/Recv round trip, 2 legs per op ---- */

static int pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    (void)bs;
    return setup_common(ctx, pt, state, shape, 1, 2);
}

static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    MPI_Comm comm = ctx->comm;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t i = 0; i < iters; i++) {
            MPI_Send(s->sbuf, s->count, MPI_BYTE, s->peer, TAG_DATA, comm);
            MPI_Recv(s->rbuf, s->count, MPI_BYTE, s->peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
        }
    else if (s->role == RECEIVER)
        for (int64_t i = 0; i < iters; i++) {
            MPI_Recv(s->rbuf, s->count, MPI_BYTE, s->peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
            MPI_Send(s->sbuf, s->count, MPI_BYTE, s->peer, TAG_DATA, comm);
        }
    return fl_now() - t0;
}

/* One round trip with patterned data both ways; each side checks what it got. */
static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    msg_state *s = state;
    if (s->role == IDLE)
        return 0;
    uint64_t mine = s->seed + 2 * (uint64_t)ctx->rank, theirs = s->seed + 2 * (uint64_t)s->peer;
    fl_fill(s->sbuf, (size_t)s->count, mine);
    memset(s->rbuf, 0, (size_t)s->count);
    pingpong_measure(ctx, state, 1);
    s->seed += 4;
    *checked += s->count;
    return fl_check(s->rbuf, (size_t)s->count, theirs);
}

/* ---- windowed kernels: 1 leg per op, one message per op ---- */

static int window_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    (void)bs;
    return setup_common(ctx, pt, state, shape, fl_param_int(ctx->opts, "window", 64), 1);
}

/* Messages in the window that starts after `done` of `iters` (the last
 * window of a measure call may be partial). */
static inline int window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

/* OSU bandwidth style: a window of Isends against pre-posted Irecvs, one
 * zero-byte ack per window. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    MPI_Comm comm = ctx->comm;
    int c = s->count, p = s->peer;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Isend(s->sbuf, c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm, MPI_STATUS_IGNORE);
        }
    else if (s->role == RECEIVER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Irecv(s->rbuf + (size_t)j * c, c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm);
        }
    return fl_now() - t0;
}

/* Restricted postal semantics: the receiver posts the whole window, then
 * signals; only then does the sender send, in ready mode (legal because the
 * receives exist) or synchronous mode. The next window's signal acks this
 * one; a last ack closes the measurement. */
static double restricted_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    MPI_Comm comm = ctx->comm;
    int c = s->count, p = s->peer;
    double t0 = fl_now();
    if (s->role == SENDER) {
        if (s->ssend)
            for (int64_t d = 0; d < iters; d += s->window) {
                const int n = window_len(iters, d, s->window);
                MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_READY, comm, MPI_STATUS_IGNORE);
                for (int j = 0; j < n; j++)
                    MPI_Ssend(s->sbuf, c, MPI_BYTE, p, TAG_DATA, comm);
            }
        else
            for (int64_t d = 0; d < iters; d += s->window) {
                const int n = window_len(iters, d, s->window);
                MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_READY, comm, MPI_STATUS_IGNORE);
                for (int j = 0; j < n; j++)
                    MPI_Rsend(s->sbuf, c, MPI_BYTE, p, TAG_DATA, comm);
            }
        MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm, MPI_STATUS_IGNORE);
    } else if (s->role == RECEIVER) {
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Irecv(s->rbuf + (size_t)j * c, c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_READY, comm);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
        }
        MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm);
    }
    return fl_now() - t0;
}

/* Full postal semantics: the sender posts its window and then a "posted"
 * notice on another tag; the receiver waits for the notice before it posts
 * any receive, so the data arrives unexpected and the library buffers it. */
static double full_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    MPI_Comm comm = ctx->comm;
    int c = s->count, p = s->peer;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Isend(s->sbuf, c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_NOTICE, comm);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm, MPI_STATUS_IGNORE);
        }
    else if (s->role == RECEIVER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_NOTICE, comm, MPI_STATUS_IGNORE);
            for (int j = 0; j < n; j++)
                MPI_Irecv(s->rbuf + (size_t)j * c, c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm);
        }
    return fl_now() - t0;
}

/* One full window of patterned messages through the kernel's own path; the
 * receiver checks every byte of every slot. */
static int64_t window_verify(const fl_ctx *ctx, void *state, int64_t *checked,
                             double (*measure)(const fl_ctx *, void *, int64_t))
{
    msg_state *s = state;
    size_t c = (size_t)s->count;
    int64_t bad = 0;
    if (s->role == IDLE)
        return 0;
    if (s->role == SENDER)
        fl_fill(s->sbuf, c, s->seed);
    else if (s->role == RECEIVER)
        memset(s->rbuf, 0, c * (size_t)s->window);
    measure(ctx, state, s->window);
    if (s->role == RECEIVER) {
        for (int j = 0; j < s->window; j++)
            bad += fl_check(s->rbuf + (size_t)j * c, c, s->seed);
        *checked += (int64_t)c * s->window;
    }
    s->seed++;
    return bad;
}

static int64_t stream_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return window_verify(ctx, st, checked, stream_measure);
}

static int64_t restricted_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return window_verify(ctx, st, checked, restricted_measure);
}

static int64_t full_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return window_verify(ctx, st, checked, full_measure);
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
