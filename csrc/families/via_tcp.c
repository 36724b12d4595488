/* via_tcp: the VI Architecture experiments over TCP sockets (via.c says
 * what they are): tcp.conns (epoll, the completion queue, against scanning
 * C non-blocking sockets) and tcp.scatter (recvmsg into place against a
 * contiguous receive and memcpy). Connections come from sock.c, one set per
 * point. */
#include "via.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- tcp.conns and tcp.scatter: sockets opened per point ---- */

typedef struct {
    int role;
    sock_link link;
    sock_params p;
    int64_t size, buffers; /* tcp.scatter: bytes of a segment, message slots */
    char *sbuf, *rbuf;
    /* tcp.conns */
    int conns, scan, ep;
    struct epoll_event *ev;
    int64_t *op, *got;     /* receiver: op and bytes so far of each connection */
    int64_t iters;         /* receiver: ops of the current measure call */
    uint64_t left;         /* receiver: bytes still due */
    /* tcp.scatter */
    int64_t segments, msg; /* msg = segments * size */
    int copy;
    char *stage;           /* copy: one contiguous message */
    struct iovec *iov;     /* iovec: one entry per segment */
} sk_state;

/* Opens n connections for a point; TCP_NODELAY is always on while idle, so
 * the receiver's acks are never delayed (tcp.stream does the same). */
static int sk_open(const fl_ctx *ctx, int n, sk_state **state, fl_shape *shape)
{
    sk_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("tcp: out of memory");
    s->ep = -1;
    sock_params_get(ctx->opts, &s->p);
    if (sock_open(ctx, &s->p, 1, n, &s->link, shape->note) < 0) {
        free(s);
        return FL_ERROR;
    }
    s->role = s->link.role;
    shape->timed = s->role == SENDER; /* its time spans the ops to the ack */
    *state = s;
    return FL_OK;
}

static void sk_teardown(const fl_ctx *ctx, void *state)
{
    sk_state *s = state;
    (void)ctx;
    if (s->ep >= 0)
        close(s->ep);
    sock_close(&s->link);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->stage);
    free(s->ev);
    free(s->op);
    free(s->got);
    free(s->iov);
    free(s);
}

/* Nagle on only while a burst is written (nodelay=0), as in tcp.stream. */
static void sk_nagle(const sk_state *s, int on)
{
    if (!s->p.nodelay)
        for (int k = 0; k < s->link.n; k++)
            sock_nagle(s->link.fd[k], on);
}

/* Polled, as tcp.stream's: a sleeping sender would add its wake-up to the
 * time of every sample. */
static void sk_ack_wait(const sk_state *s)
{
    char ack;
    sock_recv_poll(s->link.fd[0], &ack, 1);
}

static void sk_ack_send(const sk_state *s)
{
    char ack = 0;
    sock_send_all(s->link.fd[0], &ack, 1);
}

/* ---- tcp.conns ---- */

static void conns_watch(sk_state *s)
{
    if (!(s->op = malloc(sizeof *s->op * (size_t)s->conns)) ||
        !(s->got = malloc(sizeof *s->got * (size_t)s->conns)))
        fl_die("tcp: out of memory");
    for (int k = 0; k < s->conns; k++)
        sock_nonblock(s->link.fd[k]);
    if (s->scan)
        return;
    if (!(s->ev = malloc(sizeof *s->ev * (size_t)s->conns)))
        fl_die("tcp: out of memory");
    if ((s->ep = epoll_create1(0)) < 0)
        sock_fail(-1, "epoll_create1");
    for (int k = 0; k < s->conns; k++) {
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)k };
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->link.fd[k], &ev) < 0)
            sock_fail(-1, "epoll_ctl");
    }
}

static int conns_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                       fl_shape *shape)
{
    (void)bs;
    if (pt->size == 0) {
        snprintf(shape->note, FL_NOTE_LEN, "no payload to send");
        return FL_SKIP;
    }
    if (pt->conns < 1 || pt->conns > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "conns must be 1..%d", INT_MAX);
        return FL_ERROR;
    }
    sk_state *s;
    int st = sk_open(ctx, (int)pt->conns, &s, shape);
    if (st != FL_OK)
        return st;
    s->conns = (int)pt->conns;
    s->scan = strcmp(fl_param(ctx->opts, "check", "epoll"), "scan") == 0;
    s->size = pt->size;
    s->buffers = pt->buffers;
    if (s->role == SENDER)
        s->sbuf = fl_alloc((size_t)(s->size * s->buffers));
    if (s->role == RECEIVER) {
        s->rbuf = fl_alloc((size_t)(s->size * s->buffers));
        conns_watch(s);
    }
    shape->bytes_per_op = pt->size;
    shape->batch_multiple = rounds_multiple(s->conns);
    char conn[FL_INFO_LEN / 2];
    sock_info(&s->link, &s->p, conn, sizeof conn);
    snprintf(shape->info, FL_INFO_LEN, "{%s,\"check\":\"%s\",\"conns\":%d,\"buffers\":%lld}",
             conn, s->scan ? "scan" : "epoll", s->conns, (long long)s->buffers);
    *state = s;
    return FL_OK;
}

/* Reads what connection k holds, message by message, each into the receive
 * slot of its op; returns when the socket is empty or k has all its ops. */
static void conns_drain(sk_state *s, int k)
{
    const int fd = s->link.fd[k];
    while (s->op[k] < s->iters) {
        char *dst = fl_slot(s->rbuf, s->size, s->buffers, s->op[k]) + s->got[k];
        size_t r = sock_recv_some(fd, dst, (size_t)(s->size - s->got[k]));
        if (r == 0)
            return;
        s->left -= (uint64_t)r;
        s->got[k] += (int64_t)r;
        if (s->got[k] == s->size) {
            s->got[k] = 0;
            s->op[k] += s->conns;
        }
    }
}

/* The completion-queue analogue: epoll names the connections with data. */
static void conns_recv_epoll(sk_state *s)
{
    while (s->left > 0) {
        int n = epoll_wait(s->ep, s->ev, s->conns, -1);
        if (n < 0 && errno != EINTR)
            sock_fail(-1, "epoll_wait");
        for (int j = 0; j < n; j++)
            conns_drain(s, (int)s->ev[j].data.u32);
    }
}

/* The round-robin analogue: visit every connection in turn. */
static void conns_recv_scan(sk_state *s)
{
    for (int k = 0; s->left > 0; k = k + 1 == s->conns ? 0 : k + 1)
        conns_drain(s, k);
}

/* Op i: `size` bytes on connection i % C from send slot i, blocking send;
 * the receiver knows how many ops each connection carries. */
static double conns_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    sk_state *s = state;
    (void)ctx;
    if (s->role == IDLE)
        return 0.0;
    double t0 = fl_now();
    if (s->role == SENDER) {
        sk_nagle(s, 1);
        for (int64_t i = 0; i < iters; i++)
            sock_send_all(s->link.fd[i % s->conns], fl_slot(s->sbuf, s->size, s->buffers, i),
                          (size_t)s->size);
        sk_nagle(s, 0);
        sk_ack_wait(s);
    } else {
        for (int k = 0; k < s->conns; k++) {
            s->op[k] = k;
            s->got[k] = 0;
        }
        s->iters = iters;
        s->left = (uint64_t)iters * (uint64_t)s->size;
        if (s->scan)
            conns_recv_scan(s);
        else
            conns_recv_epoll(s);
        sk_ack_send(s);
    }
    return fl_now() - t0;
}

/* One message on every connection, all with the same pattern, so slots
 * that several ops share still hold exactly it. */
static int64_t conns_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    sk_state *s = state;
    const uint64_t seed = (uint64_t)s->size * 0x9e37u + (uint64_t)s->conns;
    const int64_t slots = s->conns < s->buffers ? s->conns : s->buffers;
    int64_t bad = 0;
    if (s->role == SENDER)
        for (int64_t i = 0; i < slots; i++)
            fl_fill(fl_slot(s->sbuf, s->size, s->buffers, i), (size_t)s->size, seed);
    else if (s->role == RECEIVER)
        memset(s->rbuf, 0, (size_t)(s->size * s->buffers));
    conns_measure(ctx, s, s->conns);
    if (s->role == RECEIVER) {
        for (int64_t i = 0; i < slots; i++)
            bad += fl_check(fl_slot(s->rbuf, s->size, s->buffers, i), (size_t)s->size, seed);
        *checked += slots * s->size;
    }
    return bad;
}

/* ---- tcp.scatter ---- */

static int tscatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    (void)bs;
    int64_t segments;
    int st = scatter_segments(ctx, pt, shape, &segments);
    sk_state *s;
    if (st != FL_OK || (st = sk_open(ctx, 1, &s, shape)) != FL_OK)
        return st;
    s->segments = segments;
    s->size = pt->size;
    s->msg = segments * pt->size;
    s->buffers = message_slots(pt->buffers, segments);
    s->copy = strcmp(fl_param(ctx->opts, "mode", "iovec"), "copy") == 0;
    if (s->role == SENDER)
        s->sbuf = fl_alloc((size_t)(s->msg * s->buffers));
    if (s->role == RECEIVER) {
        s->rbuf = fl_alloc((size_t)(2 * s->msg * s->buffers));
        if (s->copy)
            s->stage = fl_alloc((size_t)s->msg);
        else if (!(s->iov = malloc(sizeof *s->iov * (size_t)segments)))
            fl_die("tcp: out of memory");
    }
    shape->bytes_per_op = s->msg;
    shape->buffers = s->buffers;
    shape->batch_multiple = MIN_OPS_PER_ACK;
    char conn[FL_INFO_LEN / 2];
    sock_info(&s->link, &s->p, conn, sizeof conn);
    snprintf(shape->info, FL_INFO_LEN,
             "{%s,\"mode\":\"%s\",\"segments\":%lld,\"buffers\":%lld}", conn,
             s->copy ? "copy" : "iovec", (long long)segments, (long long)s->buffers);
    *state = s;
    return FL_OK;
}

/* recvmsg straight into the segments, MSG_WAITALL; a short read (a signal,
 * or more than IOV_MAX entries) advances the iovec and reads again. */
static void recv_iov(int fd, struct iovec *iov, int64_t cnt)
{
    while (cnt > 0) {
        struct msghdr mh = { .msg_iov = iov };
        mh.msg_iovlen = (size_t)(cnt < IOV_MAX ? cnt : IOV_MAX);
        ssize_t r = recvmsg(fd, &mh, MSG_WAITALL);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                errno = 0;
            sock_fail(fd, "recvmsg");
        }
        while (cnt > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            cnt--;
        }
        if (r > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
}

static void tscatter_recv(sk_state *s, int64_t i)
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
static double tscatter_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    sk_state *s = state;
    (void)ctx;
    if (s->role == IDLE)
        return 0.0;
    double t0 = fl_now();
    if (s->role == SENDER) {
        sk_nagle(s, 1);
        for (int64_t i = 0; i < iters; i++)
            sock_send_all(s->link.fd[0], fl_slot(s->sbuf, s->msg, s->buffers, i),
                          (size_t)s->msg);
        sk_nagle(s, 0);
        sk_ack_wait(s);
    } else {
        for (int64_t i = 0; i < iters; i++)
            tscatter_recv(s, i);
        sk_ack_send(s);
    }
    return fl_now() - t0;
}

static int64_t tscatter_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    sk_state *s = state;
    const uint64_t seed = (uint64_t)s->size * 0x9e37u + (uint64_t)s->segments;
    if (s->role == SENDER)
        fill_segments(s->sbuf, s->segments, s->size, seed);
    else if (s->role == RECEIVER)
        memset(s->rbuf, 0, (size_t)(2 * s->msg * s->buffers));
    tscatter_measure(ctx, s, 1);
    if (s->role != RECEIVER)
        return 0;
    *checked += s->msg;
    return check_scattered(s->rbuf, s->segments, s->size, seed);
}

const fl_kernel fl_via_tcp_kernels[] = {
    {.name = "tcp.conns", .setup = conns_setup, .measure = conns_measure,
     .verify = conns_verify, .teardown = sk_teardown},
    {.name = "tcp.scatter", .setup = tscatter_setup, .measure = tscatter_measure,
     .verify = tscatter_verify, .teardown = sk_teardown},
    {.name = NULL},
};
