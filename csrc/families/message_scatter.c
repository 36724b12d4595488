/* message.scatter: a windowed stream (message.stream's protocol) whose
 * messages of `segments` segments of SIZE bytes land every other block of
 * the receiver's region, scattered by an MPI vector datatype (the
 * transport) or by an unpack after a contiguous receive (the program): the
 * MPI form of seed 002 Fig. 4 and 5, as via.c tells; tcp_scatter.c is the
 * TCP form. */
#include "via.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int role, peer, copy, window, count; /* count = segments * seg bytes per message */
    int64_t segments, seg, slots;        /* slots: message slots per side */
    char *sbuf, *rbuf, *stage;           /* rbuf: slots of 2 * count; stage: slots of count */
    MPI_Datatype vec;                    /* datatype: the receiver's layout of one message */
    MPI_Request *req;
    char dummy;
} scatter_state;

static int scatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    (void)bs;
    int64_t segments, window = fl_param_int(ctx->opts, "window");
    int st = scatter_segments(ctx, pt, shape, &segments);
    if (st != FL_OK)
        return st;
    scatter_state *s = fl_alloc(sizeof *s);
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->copy = fl_param_is(ctx->opts, "mode", "copy");
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

static void scatter_teardown(const fl_ctx *ctx, void *state)
{
    scatter_state *s = state;
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
static void scatter_recv_window(scatter_state *s, MPI_Comm comm, int64_t d, int n)
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
static double scatter_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    scatter_state *s = state;
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
            scatter_recv_window(s, comm, d, n);
            MPI_Send(&s->dummy, 0, MPI_BYTE, s->peer, TAG_SCATTER_ACK, comm);
        }
    }
    return fl_now() - t0;
}

/* One window, every message with the same per-segment patterns; the
 * receiver checks every slot the window used, segments and gaps. */
static int64_t scatter_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    scatter_state *s = state;
    const uint64_t seed = (uint64_t)s->seg * 0x100000001b3ULL + (uint64_t)s->segments;
    const int64_t used = s->window < s->slots ? s->window : s->slots;
    int64_t bad = 0;
    if (s->role == SENDER)
        for (int64_t i = 0; i < used; i++)
            fill_segments(fl_slot(s->sbuf, s->count, s->slots, i), s->segments, s->seg, seed);
    else if (s->role == RECEIVER)
        memset(s->rbuf, 0, 2 * (size_t)s->count * (size_t)s->slots);
    scatter_measure(ctx, s, s->window);
    if (s->role == RECEIVER) {
        for (int64_t i = 0; i < used; i++)
            bad += check_scattered(fl_slot(s->rbuf, 2 * (int64_t)s->count, s->slots, i),
                                   s->segments, s->seg, seed);
        *checked += used * s->count;
    }
    return bad;
}

const fl_kernel fl_message_scatter_kernels[] = {
    {.name = "message.scatter", .setup = scatter_setup, .measure = scatter_measure,
     .verify = scatter_verify, .teardown = scatter_teardown},
    {.name = NULL},
};
