/* tcp.scatter: messages of `segments` segments of SIZE bytes, placed
 * every other block of the receiver's region by the transport (recvmsg
 * with an iovec) or by the program (a contiguous receive, then memcpy):
 * seed 002 Fig. 4 and 5, as via.c tells. Connections come from
 * tcp_plumbing.c, one per point. */
#include "tcp_plumbing.h"
#include "via.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct {
    int role;
    sock_link link;
    sock_params p;
    int64_t size, buffers; /* bytes of a segment, message slots */
    int64_t segments, msg; /* msg = segments * size */
    int copy;
    char *sbuf, *rbuf;
    char *stage;           /* copy: one contiguous message */
    struct iovec *iov;     /* iovec: one entry per segment */
} scatter_state;

static int scatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    (void)bs;
    int64_t segments;
    int st = scatter_segments(ctx, pt, shape, &segments);
    if (st != FL_OK)
        return st;
    scatter_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("tcp: out of memory");
    sock_params_get(ctx->opts, &s->p);
    if (sock_open(ctx, &s->p, 1, 1, &s->link, shape->note) < 0) {
        free(s);
        return FL_ERROR;
    }
    s->role = s->link.role;
    s->segments = segments;
    s->size = pt->size;
    s->msg = segments * pt->size;
    s->buffers = fl_unit_slots(pt->buffers, segments, 1);
    s->copy = fl_param_is(ctx->opts, "mode", "copy");
    if (s->role == SENDER)
        s->sbuf = fl_alloc((size_t)(s->msg * s->buffers));
    if (s->role == RECEIVER) {
        s->rbuf = fl_alloc((size_t)(2 * s->msg * s->buffers));
        if (s->copy)
            s->stage = fl_alloc((size_t)s->msg);
        else if (!(s->iov = malloc(sizeof *s->iov * (size_t)segments)))
            fl_die("tcp: out of memory");
    }
    shape->timed = s->role == SENDER; /* its time spans the ops to the ack */
    shape->bytes_per_op = s->msg;
    shape->buffers = s->buffers;
    shape->working_set = s->msg * s->buffers;
    shape->batch_multiple = MIN_OPS_PER_ACK;
    char conn[FL_INFO_LEN / 2];
    sock_info(&s->link, &s->p, conn, sizeof conn);
    snprintf(shape->info, FL_INFO_LEN,
             "{%s,\"mode\":\"%s\",\"segments\":%lld,\"buffers\":%lld}", conn,
             s->copy ? "copy" : "iovec", (long long)segments, (long long)s->buffers);
    *state = s;
    return FL_OK;
}

static void scatter_teardown(const fl_ctx *ctx, void *state)
{
    scatter_state *s = state;
    (void)ctx;
    sock_close(&s->link);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->stage);
    free(s->iov);
    free(s);
}

/* recvmsg straight into the segments, MSG_WAITALL; a short read (a signal,
 * or more than IOV_MAX entries) advances the iovec and reads again. */
static void recv_iov(int fd, struct iovec *iov, int64_t cnt)
{
    while (cnt > 0) {
        struct msghdr mh = { .msg_iov = iov };
        mh.msg_iovlen = (size_t)(cnt < IOV_MAX ? cnt : IOV_MAX);
        size_t r = sock_received(fd, recvmsg(fd, &mh, MSG_WAITALL), "recvmsg");
        while (cnt > 0 && r >= iov->iov_len) {
            r -= iov->iov_len;
            iov++;
            cnt--;
        }
        if (r > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= r;
        }
    }
}

static void scatter_recv(scatter_state *s, int64_t i)
{
    const int64_t b = s->size;
    char *region = fl_slot(s->rbuf, 2 * s->msg, s->buffers, i);
    if (s->copy) {
        sock_recv_block(s->link.fd[0], s->stage, (size_t)s->msg);
        unpack(region, s->stage, s->segments, b);
        return;
    }
    for (int64_t j = 0; j < s->segments; j++)
        s->iov[j] = (struct iovec){ .iov_base = region + 2 * j * b, .iov_len = (size_t)b };
    recv_iov(s->link.fd[0], s->iov, s->segments);
}

/* Op i: one contiguous message of segments * SIZE bytes from send slot i,
 * scattered into receive region i. */
static double scatter_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    scatter_state *s = state;
    (void)ctx;
    if (s->role == IDLE)
        return 0.0;
    double t0 = fl_now();
    if (s->role == SENDER) {
        sock_send_slots(&s->link, &s->p, s->sbuf, s->msg, s->buffers, iters);
    } else {
        for (int64_t i = 0; i < iters; i++)
            scatter_recv(s, i);
        sock_ack_send(&s->link);
    }
    return fl_now() - t0;
}

static int64_t scatter_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    scatter_state *s = state;
    const uint64_t seed = (uint64_t)s->size * 0x9e37u + (uint64_t)s->segments;
    if (s->role == SENDER)
        fill_segments(s->sbuf, s->segments, s->size, seed);
    else if (s->role == RECEIVER)
        memset(s->rbuf, 0, (size_t)(2 * s->msg * s->buffers));
    scatter_measure(ctx, s, 1);
    if (s->role != RECEIVER)
        return 0;
    *checked += s->msg;
    return check_scattered(s->rbuf, s->segments, s->size, seed);
}

const fl_kernel fl_tcp_scatter_kernels[] = {
    {.name = "tcp.scatter", .setup = scatter_setup, .measure = scatter_measure,
     .verify = scatter_verify, .teardown = scatter_teardown},
    {.name = NULL},
};
