/* message.scatter: a windowed stream (message.stream's protocol, the pair
 * loop pair_stream) whose messages of `segments` segments of SIZE bytes
 * land every other block of the receiver's region, scattered by an MPI
 * vector datatype (the transport) or by an unpack after a contiguous
 * receive (the program): the MPI form of seed 002 Fig. 4 and 5, as via.c
 * tells; tcp_scatter.c is the TCP form. */
#include "message.h"
#include "via.h"

#include <stdio.h>

typedef struct {
    msg_pair m;
    scatter_msg sc;
    MPI_Datatype vec; /* datatype: the receiver's layout of one message */
} scatter_state;

static int scatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    scatter_msg sc;
    int st = scatter_message(ctx, pt, shape, &sc);
    (void)bs;
    if (st != FL_OK)
        return st;
    scatter_state *s = fl_alloc(sizeof *s);
    pair_state *p = &s->m.p;
    scatter_pair_init(p, ctx, pt, &sc, (int)fl_param_int(ctx->opts, "window"));
    s->m.comm = ctx->comm;
    s->sc = sc;
    s->vec = MPI_DATATYPE_NULL;
    if (p->role == FL_SENDER) {
        p->sbuf = fl_alloc(p->count * (size_t)p->buffers);
    } else if (p->role == FL_RECEIVER) {
        p->rbuf = fl_alloc(2 * p->count * (size_t)p->buffers);
        if (sc.copy)
            s->sc.stage = fl_alloc(p->count * (size_t)p->buffers);
        MPI_Type_vector((int)sc.segments, (int)sc.seg, (int)(2 * sc.seg), MPI_BYTE, &s->vec);
        MPI_Type_commit(&s->vec);
    }
    if (p->role != FL_IDLE)
        s->m.req = fl_alloc(sizeof *s->m.req * (size_t)p->window);
    shape->bytes_per_op = (int64_t)p->count;
    shape->buffers = p->buffers;
    shape->working_set = (int64_t)p->count * p->buffers;
    shape->timed = p->role == FL_SENDER;
    shape->batch_multiple = p->window; /* samples are whole windows */
    snprintf(shape->info, FL_INFO_LEN,
             "{\"mode\":\"%s\",\"segments\":%lld,\"window\":%d,\"buffers\":%lld}",
             sc.copy ? "copy" : "datatype", (long long)sc.segments, p->window,
             (long long)p->buffers);
    *state = s;
    return FL_OK;
}

static void scatter_teardown(const fl_ctx *ctx, void *state)
{
    scatter_state *s = state;
    (void)ctx;
    if (s->vec != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->vec);
    fl_free(s->m.p.sbuf);
    fl_free(s->m.p.rbuf);
    fl_free(s->sc.stage);
    fl_free(s->m.req);
    fl_free(s);
}

/* Receive j of a window: op i scattered by the datatype into its block, or
 * contiguous into its staging slot. */
static inline void scatter_post_recv(pair_state *p, int64_t i, int j)
{
    scatter_state *s = (scatter_state *)p;
    if (s->sc.copy)
        MPI_Irecv(scatter_stage(p, &s->sc, i), (int)p->count, MPI_BYTE, p->peer, MSG_TAG_DATA,
                  s->m.comm, &s->m.req[j]);
    else
        MPI_Irecv(scatter_block(p, i), 1, s->vec, p->peer, MSG_TAG_DATA, s->m.comm, &s->m.req[j]);
}

static inline void scatter_wait_recvs(pair_state *p, int64_t d, int n)
{
    msg_wait(p, d, n);
    scatter_unpack(p, &((scatter_state *)p)->sc, d, n);
}

/* message.stream's transport with the scattering receive. */
static const pair_ops msg_scatter_ops = {
    .post_send = msg_post_send, .post_recv = scatter_post_recv, .wait_sends = msg_wait,
    .wait_recvs = scatter_wait_recvs, .ack_recv = msg_ack_recv, .ack_send = msg_ack_send,
};

static double scatter_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &msg_scatter_ops, iters);
}

static int64_t scatter_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    scatter_state *s = state;
    return verify_scatter(ctx, state, scatter_measure, &s->sc, checked);
}

const fl_kernel fl_message_scatter_kernels[] = {
    {.name = "message.scatter", .setup = scatter_setup, .measure = scatter_measure,
     .verify = scatter_verify, .teardown = scatter_teardown},
    {.name = NULL},
};
