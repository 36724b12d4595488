/* message.conns: C receives posted on C tags, completed by MPI_Waitany
 * (the completion queue) or by a round-robin MPI_Test over them (scanning
 * the connections): the MPI form of seed 002 Table 2, as via.c tells;
 * tcp_conns.c is the TCP form. */
#include "via.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int role, peer, conns, scan, count;
    int64_t size, buffers;
    char *sbuf, *rbuf;
    MPI_Request *req;   /* one per tag */
    int64_t *op;        /* receiver: the op each tag's receive is for */
    char dummy;
} conns_state;

static int conns_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
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
    conns_state *s = fl_alloc(sizeof *s);
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->conns = (int)pt->conns;
    s->scan = fl_param_is(ctx->opts, "check", "scan");
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

static void conns_teardown(const fl_ctx *ctx, void *state)
{
    conns_state *s = state;
    (void)ctx;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s->op);
    fl_free(s);
}

/* Op i on tag i % C; the request of tag k is reused once its previous send
 * completes, so at most C sends are outstanding. */
static void conns_send(conns_state *s, MPI_Comm comm, int64_t iters)
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
static void conns_post(conns_state *s, MPI_Comm comm, int k, int64_t iters)
{
    if (s->op[k] < iters)
        MPI_Irecv(fl_slot(s->rbuf, s->size, s->buffers, s->op[k]), s->count, MPI_BYTE, s->peer,
                  k, comm, &s->req[k]);
}

static void conns_recv(conns_state *s, MPI_Comm comm, int64_t iters)
{
    const int n = iters < s->conns ? (int)iters : s->conns;
    for (int k = 0; k < n; k++) {
        s->op[k] = k;
        conns_post(s, comm, k, iters);
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
                conns_post(s, comm, (int)k, iters);
            }
        }
    } else { /* completion queue: MPI_Waitany names the tag that completed */
        for (int64_t left = iters; left > 0; left--) {
            int k;
            MPI_Waitany(n, s->req, &k, MPI_STATUS_IGNORE);
            s->op[k] += s->conns;
            conns_post(s, comm, k, iters);
        }
    }
    MPI_Send(&s->dummy, 0, MPI_BYTE, s->peer, s->conns, comm);
}

static double conns_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    conns_state *s = state;
    double t0 = fl_now();
    if (s->role == SENDER)
        conns_send(s, ctx->comm, iters);
    else if (s->role == RECEIVER)
        conns_recv(s, ctx->comm, iters);
    return fl_now() - t0;
}

/* One message on every tag (via.c). */
static int64_t conns_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    conns_state *s = state;
    return verify_conns(ctx, s, conns_measure, s->role, s->conns, s->size, s->buffers, s->sbuf,
                        s->rbuf, checked);
}

const fl_kernel fl_message_conns_kernels[] = {
    {.name = "message.conns", .setup = conns_setup, .measure = conns_measure,
     .verify = conns_verify, .teardown = conns_teardown},
    {.name = NULL},
};
