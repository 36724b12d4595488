/* tcp: TCP sockets between ranks 0 and 1 (seed 000 level 3, "LAN
 * emulation"): the path unmodified software takes.
 *
 * One connection per run, bootstrapped over MPI (tcp_plumbing.c). tcp.rr_poll,
 * tcp.rr_block and tcp.rr_epoll compare how a receive completes: by busy
 * polling, by blocking in recv, or by blocking in epoll_wait and then
 * reading, the way event-driven servers wait (seed 002: VI polling vs
 * interrupt-driven completion, 15 vs 85 us round trip). tcp.stream is
 * one-way throughput with delivery confirmed by a 1-byte ack. */
#include "tcp_plumbing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define T_STREAM_CHUNK (4 << 20) /* receive call size of tcp.stream */
#define T_MAX_BURST_OPS 4096 /* keeps a sample of tiny sends to a few ms */

typedef struct {
    sock_link link; /* one connection */
    int ep;         /* tcp.rr_epoll: an epoll instance watching it; else -1 */
    int err;        /* init failed (on every rank) */
    const char *recv; /* how a receive completes, recorded in info */
    char note[FL_NOTE_LEN];
    char conn[FL_INFO_LEN / 2]; /* the connection's info members */
    sock_params p;
} tcp_run;

typedef struct {
    int role; /* 0 client, 1 server, -1 idle */
    int fd, ep, nodelay;
    int sender;      /* tcp.stream: the rank that sends (direction=reverse: 1) */
    int64_t size;    /* payload bytes per message */
    size_t wire;     /* bytes on the wire per message: size, at least 1 */
    int64_t buffers; /* send and receive slots of `wire` bytes */
    char *sbuf, *rbuf;
    size_t rlen;     /* receive region; tcp.stream reads up to T_STREAM_CHUNK per call into it */
} tcp_state;

/* Blocks in epoll_wait until the socket is readable, then reads with recv
 * until the message is complete, waiting again whenever recv finds nothing. */
static void recv_epoll(int fd, int ep, char *p, size_t n)
{
    struct epoll_event ev;
    while (n > 0) {
        if (epoll_wait(ep, &ev, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            sock_fail(fd, "epoll_wait");
        }
        for (size_t r; n > 0 && (r = sock_recv_some(fd, p, n)) > 0;) {
            p += r;
            n -= r;
        }
    }
}

/* ---- once per run: the connection ---- */

static void watch(tcp_run *r)
{
    int fd = r->link.fd[0];
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
    sock_nonblock(fd);
    r->ep = epoll_create1(0);
    if (r->ep < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        sock_fail(fd, "epoll");
}

/* The connection, with TCP_NODELAY as asked or `nodelay` forced, and an
 * epoll instance on it when `epoll`; `recv` names how receives complete. */
static int tcp_open(const fl_ctx *ctx, void **bench_state, const char *recv, int nodelay,
                    int epoll)
{
    tcp_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("tcp: out of memory");
    r->ep = -1;
    r->recv = recv;
    sock_params_get(ctx->opts, &r->p);
    if (sock_open(ctx, &r->p, r->p.nodelay || nodelay, 1, &r->link, r->note) < 0) {
        r->err = 1;
    } else {
        if (epoll && r->link.role >= 0)
            watch(r);
        sock_info(&r->link, &r->p, r->conn, sizeof r->conn);
    }
    *bench_state = r;
    return FL_OK;
}

static int rr_poll_init(const fl_ctx *ctx, void **bs) { return tcp_open(ctx, bs, "poll", 0, 0); }
static int rr_block_init(const fl_ctx *ctx, void **bs) { return tcp_open(ctx, bs, "block", 0, 0); }
static int rr_epoll_init(const fl_ctx *ctx, void **bs) { return tcp_open(ctx, bs, "epoll", 0, 1); }
/* the stream receiver only sends 1-byte acks: never delay them */
static int stream_init(const fl_ctx *ctx, void **bs) { return tcp_open(ctx, bs, "block", 1, 0); }

static void tcp_fini(const fl_ctx *ctx, void *bench_state)
{
    tcp_run *r = bench_state;
    (void)ctx;
    if (!r)
        return;
    if (r->ep >= 0)
        close(r->ep);
    sock_close(&r->link);
    free(r);
}

/* ---- per point ---- */

/* A point's state over the run's connection, receiving into `rlen` bytes
 * at least; the shape's info records the connection. */
static int tcp_point(const tcp_run *r, const fl_point *pt, size_t rlen, const char *extra,
                     void **state, fl_shape *shape)
{
    tcp_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("tcp: out of memory");
    s->role = r->link.role;
    s->fd = s->role >= 0 ? r->link.fd[0] : -1;
    s->ep = r->ep;
    s->nodelay = r->p.nodelay;
    s->size = pt->size;
    s->wire = pt->size > 0 ? (size_t)pt->size : 1; /* size 0: a 1-byte token */
    s->buffers = pt->buffers;
    s->rlen = s->wire * (size_t)s->buffers;
    if (s->rlen < rlen)
        s->rlen = rlen;
    shape->timed = s->role >= 0;
    shape->working_set = (int64_t)s->rlen; /* the stream receiver's region is the larger */
    snprintf(shape->info, sizeof shape->info,
             "{%s,\"recv\":\"%s\",\"wire_min_bytes\":1,\"buffers\":%lld%s}", r->conn, r->recv,
             (long long)s->buffers, extra);
    if (s->role >= 0) {
        s->sbuf = fl_alloc(s->wire * (size_t)s->buffers);
        s->rbuf = fl_alloc(s->rlen);
    }
    *state = s;
    return FL_OK;
}

/* rr_poll, rr_block, rr_epoll: a request and its response per op. */
static int rr_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    const tcp_run *r = bench_state;
    (void)ctx;
    if (r->err) {
        snprintf(shape->note, sizeof shape->note, "%s", r->note);
        return FL_ERROR;
    }
    shape->bytes_per_op = 2 * pt->size;
    return tcp_point(r, pt, 0, "", state, shape);
}

/* The stream receiver reads in large calls whatever the op size, as iperf3
 * does: a stream has no message boundaries. Its calls move through a region
 * of at least one call, and of all the buffers. */
static int stream_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    const tcp_run *r = bench_state;
    if (r->err) {
        snprintf(shape->note, sizeof shape->note, "%s", r->note);
        return FL_ERROR;
    }
    if (pt->size == 0) {
        snprintf(shape->note, sizeof shape->note, "no payload to stream");
        return FL_SKIP;
    }
    /* One ack per sample costs a round trip and drains the pipeline, so a
     * sample streams at least `burst` bytes (iperf3 reports seconds). */
    int64_t burst = fl_param_int(ctx->opts, "burst");
    int64_t ops = burst > pt->size ? (burst + pt->size - 1) / pt->size : 1;
    char extra[128];
    shape->bytes_per_op = pt->size;
    shape->batch_multiple = ops < T_MAX_BURST_OPS ? ops : T_MAX_BURST_OPS;
    snprintf(extra, sizeof extra, ",\"burst_ops\":%lld,\"recv_chunk\":%d",
             (long long)shape->batch_multiple, T_STREAM_CHUNK);
    int ok = tcp_point(r, pt, T_STREAM_CHUNK, extra, state, shape);
    ((tcp_state *)*state)->sender = fl_param_is(ctx->opts, "direction", "reverse");
    return ok;
}

/* ---- the timed loops ---- */

static void recv_poll(const tcp_state *s, char *p)
{
    sock_recv_poll(s->fd, p, s->wire);
}

static void recv_block(const tcp_state *s, char *p)
{
    sock_recv_block(s->fd, p, s->wire);
}

static void recv_ready(const tcp_state *s, char *p)
{
    recv_epoll(s->fd, s->ep, p, s->wire);
}

/* Request/response: rank 0 sends op i's request from send slot i and
 * receives the response into receive slot i; rank 1 the other way round.
 * Inlined with a constant `recv`, so each benchmark's loop calls its own
 * receive directly. */
static inline double rr_loop(const tcp_state *s, int64_t iters,
                             void (*recv)(const tcp_state *, char *))
{
    const size_t wire = s->wire;
    if (s->role < 0)
        return 0.0;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        char *sb = fl_slot(s->sbuf, (int64_t)wire, s->buffers, i);
        char *rb = fl_slot(s->rbuf, (int64_t)wire, s->buffers, i);
        if (s->role == 0) {
            sock_send_all(s->fd, sb, wire);
            recv(s, rb);
        } else {
            recv(s, rb);
            sock_send_all(s->fd, sb, wire);
        }
    }
    return fl_now() - t0;
}

static double rr_poll_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rr_loop(state, iters, recv_poll);
}

static double rr_block_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rr_loop(state, iters, recv_block);
}

static double rr_epoll_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rr_loop(state, iters, recv_ready);
}

/* With Nagle on (nodelay=0) the tail segment of a burst can wait for the
 * peer's delayed ACK (ms). Nagle is therefore on only while a burst is
 * written; TCP_NODELAY=1 sends the tail, and stays on while idle. */
static double stream_send(const tcp_state *s, int64_t iters)
{
    char ack;
    double t0 = fl_now();
    if (!s->nodelay)
        sock_nagle(s->fd, 1);
    for (int64_t i = 0; i < iters; i++)
        sock_send_all(s->fd, fl_slot(s->sbuf, (int64_t)s->wire, s->buffers, i), s->wire);
    if (!s->nodelay)
        sock_nagle(s->fd, 0);
    sock_recv_poll(s->fd, &ack, 1); /* the time covers delivery, not just buffering */
    return fl_now() - t0;
}

static double stream_recv(const tcp_state *s, int64_t iters)
{
    size_t pos = 0;
    double t0 = fl_now();
    for (uint64_t left = (uint64_t)iters * s->wire; left > 0;) {
        size_t n = s->rlen - pos < T_STREAM_CHUNK ? s->rlen - pos : T_STREAM_CHUNK;
        ssize_t r = recv(s->fd, s->rbuf + pos, left < n ? (size_t)left : n, 0);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                errno = 0;
            sock_fail(s->fd, "recv");
        }
        left -= (uint64_t)r;
        pos = pos + (size_t)r == s->rlen ? 0 : pos + (size_t)r;
    }
    sock_send_all(s->fd, s->sbuf, 1);
    return fl_now() - t0;
}

static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    const tcp_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0.0;
    return s->role == s->sender ? stream_send(s, iters) : stream_recv(s, iters);
}

/* ---- verify ---- */

/* Request/response: op 0 (slot 0 both ways) through the benchmark's loop. */
static int64_t rr_verify(const fl_ctx *ctx, tcp_state *s, int64_t *checked,
                         double (*measure)(const fl_ctx *, void *, int64_t))
{
    if (s->role < 0)
        return 0;
    size_t n = (size_t)s->size;
    uint64_t seed_req = (uint64_t)n * 2654435761u + 1, seed_rep = seed_req + 1;
    fl_fill(s->sbuf, n, s->role == 0 ? seed_req : seed_rep);
    memset(s->rbuf, 0, s->rlen);
    measure(ctx, s, 1);
    *checked += (int64_t)n;
    return fl_check(s->rbuf, n, s->role == 0 ? seed_rep : seed_req);
}

static int64_t rr_poll_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rr_verify(ctx, state, checked, rr_poll_measure);
}

static int64_t rr_block_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rr_verify(ctx, state, checked, rr_block_measure);
}

static int64_t rr_epoll_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rr_verify(ctx, state, checked, rr_epoll_measure);
}

/* One message in place, unlike the timed loop (the socket is in TCP_NODELAY). */
static int64_t stream_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    tcp_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0;
    size_t n = (size_t)s->size;
    uint64_t seed = (uint64_t)n * 2654435761u + 1;
    char ack = 0;
    memset(s->rbuf, 0, s->rlen);
    if (s->role == s->sender) {
        fl_fill(s->sbuf, n, seed);
        sock_send_all(s->fd, s->sbuf, n);
        sock_recv_block(s->fd, &ack, 1);
        return 0;
    }
    sock_recv_block(s->fd, s->rbuf, n);
    sock_send_all(s->fd, &ack, 1);
    *checked += (int64_t)n;
    return fl_check(s->rbuf, n, seed);
}

static void tcp_teardown(const fl_ctx *ctx, void *state)
{
    tcp_state *s = state;
    (void)ctx;
    if (!s)
        return;
    fl_free(s->sbuf); /* fl_free takes NULL */
    fl_free(s->rbuf);
    free(s);
}

const fl_kernel fl_tcp_kernels[] = {
    {.name = "tcp.rr_poll", .init = rr_poll_init, .fini = tcp_fini, .setup = rr_setup,
     .measure = rr_poll_measure, .verify = rr_poll_verify, .teardown = tcp_teardown},
    {.name = "tcp.rr_block", .init = rr_block_init, .fini = tcp_fini, .setup = rr_setup,
     .measure = rr_block_measure, .verify = rr_block_verify, .teardown = tcp_teardown},
    {.name = "tcp.rr_epoll", .init = rr_epoll_init, .fini = tcp_fini, .setup = rr_setup,
     .measure = rr_epoll_measure, .verify = rr_epoll_verify, .teardown = tcp_teardown},
    {.name = NULL},
};

/* tcp.stream with one stream, forward or reverse; tcp_streams.c runs it. */
const fl_kernel fl_tcp_stream_one = {
    .name = "tcp.stream", .init = stream_init, .fini = tcp_fini, .setup = stream_setup,
    .measure = stream_measure, .verify = stream_verify, .teardown = tcp_teardown};
