/* via: the VI Architecture feature experiments of Hellwagner et al. (seed
 * 002) with today's interfaces, between ranks 0 (sender, timed) and 1
 * (receiver); other ranks idle.
 *
 * - Many connections: the receiver learns which of C connections holds data
 *   from a completion queue (epoll over C sockets, MPI_Waitany over C
 *   receives) or by visiting them in turn (non-blocking recv on each socket,
 *   MPI_Test on each request): seed 002 Table 2, where round-robin checking
 *   of 100 VIs lost 6% and the completion queue stayed flat.
 * - Scatter: a block arrives as `segments` segments of SIZE bytes placed
 *   every other block of the receiver's region, scattered by the transport
 *   (an iovec for recvmsg, an MPI vector datatype) or by the program
 *   (contiguous receive, then memcpy): seed 002 Fig. 4 and 5, where the
 *   NIC's scatter of 8-byte items fell to 22 Mbit/s against 585 for the
 *   program's, and 32 segments of 8..1024 bytes (Fig. 5's sweep) rose to
 *   560 at best.
 *
 * Every measure call ends with an ack from the receiver, so the sender's
 * time covers delivery. TCP connections come from sock.c, one set per point. */
#include "sock.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum { SENDER = 0, RECEIVER = 1, IDLE = -1 };
enum { TAG_SCATTER = 1, TAG_SCATTER_ACK = 2 };

/* Ops per ack at least: a sample of tiny messages (sample_time is 20 us by
 * default) would otherwise time one or two ops and the ack's round trip,
 * and that share would shrink as C grows, faking a gain from connections.
 * 128 ops make the ack a few percent of a sample at any C up to 128. */
#define MIN_OPS_PER_ACK 128

/* A batch is whole rounds over the C connections, and MIN_OPS_PER_ACK ops
 * at least. */
static int64_t rounds_multiple(int64_t conns)
{
    return (MIN_OPS_PER_ACK + conns - 1) / conns * conns;
}

/* ---- the scatter layout: segment j of a block at j * 2B, gaps of B ---- */

/* Message slots per side for segments of B bytes: the point's buffer count
 * is in units of B, so a message of `segments` segments takes that many of
 * them and the cache state (bytes in rotation) stays what Python chose. The
 * point records the slots (fl_shape.buffers). */
static int64_t message_slots(int64_t buffers, int64_t segments)
{
    int64_t m = (buffers + segments - 1) / segments;
    return m > 0 ? m : 1;
}

/* Segment j carries its own pattern (seed + j), so each can be checked in
 * place wherever it lands. */
static void fill_segments(char *msg, int64_t segments, int64_t b, uint64_t seed)
{
    for (int64_t j = 0; j < segments; j++)
        fl_fill(msg + j * b, (size_t)b, seed + (uint64_t)j);
}

/* Mismatching bytes of one scattered block: every segment against its
 * pattern, every gap against zero. */
static int64_t check_scattered(const char *region, int64_t segments, int64_t b, uint64_t seed)
{
    int64_t bad = 0;
    for (int64_t j = 0; j < segments; j++) {
        const char *seg = region + 2 * j * b;
        bad += fl_check(seg, (size_t)b, seed + (uint64_t)j);
        for (int64_t x = 0; x < b; x++)
            bad += seg[b + x] != 0;
    }
    return bad;
}

/* The program's scatter: contiguous segments to every other block. */
static void unpack(char *region, const char *stage, int64_t segments, int64_t b)
{
    for (int64_t j = 0; j < segments; j++)
        memcpy(region + 2 * j * b, stage + j * b, (size_t)b);
}

static int scatter_segments(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape,
                            int64_t *segments)
{
    *segments = fl_param_int(ctx->opts, "segments", 32);
    if (*segments < 1 || *segments > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "segments must be 1..%d, got %lld", INT_MAX,
                 (long long)*segments);
        return FL_ERROR;
    }
    if (pt->size == 0) {
        snprintf(shape->note, FL_NOTE_LEN, "no payload to scatter");
        return FL_SKIP;
    }
    if (pt->size > INT_MAX / 2 / *segments) {
        snprintf(shape->note, FL_NOTE_LEN, "message above INT_MAX/2 bytes (MPI int count)");
        return FL_SKIP;
    }
    return FL_OK;
}

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
    if (window < 1 || window > 1 << 20) {
        snprintf(shape->note, FL_NOTE_LEN, "window must be 1..2^20, got %lld", (long long)window);
        return FL_ERROR;
    }
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

const fl_kernel fl_via_kernels[] = {
    {.name = "tcp.conns", .setup = conns_setup, .measure = conns_measure,
     .verify = conns_verify, .teardown = sk_teardown},
    {.name = "tcp.scatter", .setup = tscatter_setup, .measure = tscatter_measure,
     .verify = tscatter_verify, .teardown = sk_teardown},
    {.name = "message.conns", .setup = mconns_setup, .measure = mconns_measure,
     .verify = mconns_verify, .teardown = mconns_teardown},
    {.name = "message.scatter", .setup = mscatter_setup, .measure = mscatter_measure,
     .verify = mscatter_verify, .teardown = mscatter_teardown},
    {.name = NULL},
};
