/* Family "message": two-sided MPI between ranks 0 (sender, timed) and 1
 * (receiver); other ranks idle. Following Kurmann and Stricker, postal
 * semantics are measured in two cases: restricted (receives posted before the
 * data leaves, so it can move straight into place) and full (sends posted
 * before any receive, so the library must buffer).
 *
 * Cache state: send buffers and receive slots are regions of `buffers` slots
 * of `size` bytes per side, and op i uses slot i % buffers on both sides (a
 * window's op d + j: slot (d + j) % buffers). i counts on across measure
 * calls, over the whole point, so a batch shorter than the rotation still
 * walks every slot and a cold cache stays cold.
 * When buffers < window, receives of one window share slots, as in OSU's
 * bandwidth tests; every message of a verified window carries the same
 * pattern, so a shared slot still holds exactly it. */
#include "../fl.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

enum { IDLE, SENDER, RECEIVER };
enum { TAG_DATA = 1, TAG_ACK, TAG_NOTICE, TAG_READY };

typedef struct {
    int role, peer, count, window, ssend, test;
    int64_t buffers;   /* slots per side that ops rotate through */
    int64_t next;      /* ops run so far in this point: op i uses slot (next + i) */
    char *sbuf, *rbuf; /* regions of `buffers` slots of count bytes */
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
    if (pt->buffers < 1 || (pt->size > 0 && pt->buffers > INT64_MAX / pt->size)) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
                 (long long)pt->buffers);
        return FL_ERROR;
    }

    msg_state *s = fl_alloc(sizeof *s); /* zeroed: role IDLE */
    /* pingpong and stream list completion=wait|test; postal kernels do not (NULL) */
    const char *completion = fl_param_find(ctx->opts, "completion");
    if (ctx->rank < 2) {
        s->role = ctx->rank == 0 ? SENDER : RECEIVER;
        s->peer = fl_peer(ctx);
        s->count = (int)pt->size;
        s->window = (int)window;
        s->buffers = pt->buffers;
        s->ssend = fl_param_is(ctx->opts, "mode", "ssend");
        s->test = fl_param_is(ctx->opts, "completion", "test");
        s->sbuf = fl_alloc((size_t)(pt->size * pt->buffers));
        s->rbuf = fl_alloc((size_t)(pt->size * pt->buffers));
        s->req = fl_alloc(sizeof *s->req * (size_t)window);
        s->seed = (uint64_t)pt->size * 0x100000001b3ULL;
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
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s);
}

/* Slots of op i of the current measure call. */
static inline char *sslot(const msg_state *s, int64_t i)
{
    return fl_slot(s->sbuf, s->count, s->buffers, s->next + i);
}

static inline char *rslot(const msg_state *s, int64_t i)
{
    return fl_slot(s->rbuf, s->count, s->buffers, s->next + i);
}

/* Ends a measure call of `iters` ops: every rank counts the same ops. */
static inline double finish(msg_state *s, int64_t iters, double t0)
{
    double t = fl_now() - t0;
    s->next += iters;
    return t;
}

/* Completion by MPI_Wait(all), which may block inside the library, or by
 * spinning on MPI_Test(all): the busy-polling completion of seed 002. */
static void complete(const msg_state *s, int n, MPI_Request *req)
{
    if (!s->test) {
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        return;
    }
    int done = 0;
    if (n == 1)
        while (!done)
            MPI_Test(req, &done, MPI_STATUS_IGNORE);
    else
        while (!done)
            MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
}

/* ---- pingpong: Send/Recv round trip, 2 legs per op ---- */

static int pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    (void)bs;
    return setup_common(ctx, pt, state, shape, 1, 2);
}

/* completion=test: the same round trip from MPI_Isend/MPI_Irecv, each
 * completed by spinning on MPI_Test before the next starts. */
static void pp_send(msg_state *s, int64_t i, MPI_Comm comm)
{
    if (!s->test) {
        MPI_Send(sslot(s, i), s->count, MPI_BYTE, s->peer, TAG_DATA, comm);
        return;
    }
    MPI_Isend(sslot(s, i), s->count, MPI_BYTE, s->peer, TAG_DATA, comm, s->req);
    complete(s, 1, s->req);
}

static void pp_recv(msg_state *s, int64_t i, MPI_Comm comm)
{
    if (!s->test) {
        MPI_Recv(rslot(s, i), s->count, MPI_BYTE, s->peer, TAG_DATA, comm, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Irecv(rslot(s, i), s->count, MPI_BYTE, s->peer, TAG_DATA, comm, s->req);
    complete(s, 1, s->req);
}

static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_state *s = state;
    MPI_Comm comm = ctx->comm;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t i = 0; i < iters; i++) {
            pp_send(s, i, comm);
            pp_recv(s, i, comm);
        }
    else if (s->role == RECEIVER)
        for (int64_t i = 0; i < iters; i++) {
            pp_recv(s, i, comm);
            pp_send(s, i, comm);
        }
    return finish(s, iters, t0);
}

/* One round trip (slot 0) with patterned data both ways; each side
 * checks what it got. */
static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    msg_state *s = state;
    if (s->role == IDLE)
        return 0;
    s->next = 0;
    int64_t bad = fl_verify_round_trip(ctx, state, pingpong_measure, sslot(s, 0), rslot(s, 0),
                                       (size_t)s->count, s->peer, s->seed, checked);
    s->next = 0; /* back to the slots the round trip used */
    s->seed += 4;
    return bad;
}

/* ---- windowed kernels: 1 leg per op, one message per op ---- */

static int window_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    (void)bs;
    return setup_common(ctx, pt, state, shape, fl_param_int(ctx->opts, "window"), 1);
}

/* Messages in the window that starts after `done` of `iters` (the last
 * window of a measure call may be partial). */
static inline int window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

/* The sender waits for the receiver's zero-byte ack of a window. */
static void recv_ack(msg_state *s, MPI_Comm comm)
{
    if (!s->test) {
        MPI_Recv(&s->dummy, 0, MPI_BYTE, s->peer, TAG_ACK, comm, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Irecv(&s->dummy, 0, MPI_BYTE, s->peer, TAG_ACK, comm, s->req);
    complete(s, 1, s->req);
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
                MPI_Isend(sslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            complete(s, n, s->req);
            recv_ack(s, comm);
        }
    else if (s->role == RECEIVER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Irecv(rslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            complete(s, n, s->req);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm);
        }
    return finish(s, iters, t0);
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
                    MPI_Ssend(sslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm);
            }
        else
            for (int64_t d = 0; d < iters; d += s->window) {
                const int n = window_len(iters, d, s->window);
                MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_READY, comm, MPI_STATUS_IGNORE);
                for (int j = 0; j < n; j++)
                    MPI_Rsend(sslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm);
            }
        MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm, MPI_STATUS_IGNORE);
    } else if (s->role == RECEIVER) {
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                MPI_Irecv(rslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_READY, comm);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
        }
        MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm);
    }
    return finish(s, iters, t0);
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
                MPI_Isend(sslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_NOTICE, comm);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm, MPI_STATUS_IGNORE);
        }
    else if (s->role == RECEIVER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            MPI_Recv(&s->dummy, 0, MPI_BYTE, p, TAG_NOTICE, comm, MPI_STATUS_IGNORE);
            for (int j = 0; j < n; j++)
                MPI_Irecv(rslot(s, d + j), c, MPI_BYTE, p, TAG_DATA, comm, &s->req[j]);
            MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE);
            MPI_Send(&s->dummy, 0, MPI_BYTE, p, TAG_ACK, comm);
        }
    return finish(s, iters, t0);
}

/* One full window of patterned messages through the kernel's own path, all
 * with one seed: the sender fills every send slot the window uses, the
 * receiver zeroes and then checks every receive slot it wrote, each distinct
 * slot once (min(window, buffers) of them). */
static int64_t window_verify(const fl_ctx *ctx, void *state, int64_t *checked,
                             double (*measure)(const fl_ctx *, void *, int64_t))
{
    msg_state *s = state;
    size_t c = (size_t)s->count;
    int64_t slots = s->window < s->buffers ? s->window : s->buffers, bad = 0;
    if (s->role == IDLE)
        return 0;
    s->next = 0;
    for (int64_t k = 0; k < slots; k++) {
        if (s->role == SENDER)
            fl_fill(sslot(s, k), c, s->seed);
        else
            memset(rslot(s, k), 0, c);
    }
    measure(ctx, state, s->window);
    s->next = 0; /* back to the slots the window used */
    if (s->role == RECEIVER) {
        for (int64_t k = 0; k < slots; k++)
            bad += fl_check(rslot(s, k), c, s->seed);
        *checked += (int64_t)c * slots;
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
