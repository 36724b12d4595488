/* tcp: TCP sockets between ranks 0 and 1 (seed 000 level 3, "LAN
 * emulation"): the path unmodified software takes.
 *
 * The connection is bootstrapped over MPI once per run (init): rank 1
 * listens on an ephemeral port and sends "ip port" to rank 0, which
 * connects. Every step that can fail reports over MPI, so a refused connect
 * or a bad interface ends in an error record instead of a hang.
 *
 * tcp.rr_poll and tcp.rr_block compare completion by polling and by
 * blocking (seed 002: VI polling vs interrupt-driven completion); tcp.stream
 * is one-way throughput with delivery confirmed by a 1-byte ack. */
#include "../fl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { T_POLL, T_BLOCK, T_STREAM };

#define T_TAG 4712
#define T_TIMEOUT_MS 10000     /* connect/accept give up after this */
#define T_STREAM_CHUNK (4 << 20) /* receive call size of tcp.stream */
#define T_MSG 256
#define T_NOTE 200 /* reasons written into a T_MSG message after one byte */
#define T_MAX_BURST_OPS 4096 /* keeps a sample of tiny sends to a few ms */

typedef struct {
    int kind;
    int fd;   /* connected socket on ranks 0 and 1, -1 elsewhere */
    int nodelay;
    int err;  /* init failed (on every rank) */
    int64_t burst; /* tcp.stream: bytes per timed burst */
    char note[FL_NOTE_LEN];
    char info[FL_INFO_LEN];
} tcp_run;

typedef struct {
    int role;     /* 0 client, 1 server, -1 idle */
    int kind, fd, nodelay;
    int64_t size; /* payload bytes per message */
    size_t wire;  /* bytes on the wire per message: size, at least 1 */
    char *sbuf, *rbuf;
    size_t rlen;
} tcp_state;

/* ---- helpers: every failure closes the socket before reporting ---- */

static void tcp_fail(int fd, const char *what)
{
    int e = errno;
    if (fd >= 0)
        close(fd);
    fl_die("tcp: %s: %s", what, e ? strerror(e) : "peer closed the connection");
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            tcp_fail(fd, "send");
        }
        p += r;
        n -= (size_t)r;
    }
}

static void recv_block(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, MSG_WAITALL);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                errno = 0;
            tcp_fail(fd, "recv");
        }
        p += r;
        n -= (size_t)r;
    }
}

/* Busy polling: a non-blocking recv spins on EAGAIN and never sleeps. */
static void recv_poll(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
        } else if (r == 0) {
            errno = 0;
            tcp_fail(fd, "recv");
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            tcp_fail(fd, "recv");
        }
    }
}

/* With Nagle on (nodelay=0) the tail segment of a burst can wait for the
 * peer's delayed ACK (ms). Nagle is therefore on only while a stream burst
 * is written; TCP_NODELAY=1 sends the tail, and stays on while idle. */
static void set_nagle(int fd, int on)
{
    int nd = !on;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nd, sizeof nd) < 0)
        tcp_fail(fd, "setsockopt");
}

static int sock_err(int fd, char *note, const char *what)
{
    snprintf(note, T_NOTE, "%s: %s", what, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Options that must precede connect/listen (buffer sizes fix the window
 * scale at the handshake); nodelay is set again on the accepted socket. */
static int set_opts(int fd, int nodelay, int sndbuf, int rcvbuf)
{
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        return -1;
    if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        return -1;
    if (sndbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) < 0)
        return -1;
    if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) < 0)
        return -1;
    return 0;
}

static void get_bufs(int fd, int out[2])
{
    socklen_t len = sizeof out[0];
    out[0] = out[1] = -1;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &out[0], &len);
    len = sizeof out[1];
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &out[1], &len);
}

/* Rank 1's listening address: addr=, else iface=, else loopback when both
 * ranks run on one host, else the first non-loopback IPv4 address. */
static int pick_addr(const char *addr, const char *iface, int same_host,
                     char ip[INET_ADDRSTRLEN], char *note)
{
    struct in_addr a;
    if (addr[0]) {
        if (inet_pton(AF_INET, addr, &a) != 1) {
            snprintf(note, T_NOTE, "addr=%.100s is not an IPv4 address", addr);
            return -1;
        }
        snprintf(ip, INET_ADDRSTRLEN, "%s", addr);
        return 0;
    }
    if (!iface[0] && same_host) {
        snprintf(ip, INET_ADDRSTRLEN, "127.0.0.1");
        return 0;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) < 0)
        return sock_err(-1, note, "getifaddrs");
    int found = 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        if (iface[0] ? strcmp(i->ifa_name, iface) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, ip,
                  INET_ADDRSTRLEN);
        found = 1;
    }
    freeifaddrs(ifs);
    if (!found) {
        if (iface[0])
            snprintf(note, T_NOTE, "iface=%.100s has no IPv4 address that is up on rank 1", iface);
        else
            snprintf(note, T_NOTE, "rank 1 has no non-loopback IPv4 address; set addr=");
        return -1;
    }
    return 0;
}

static int make_listener(const char *ip, int sndbuf, int rcvbuf, int *port, char *note)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
    socklen_t len = sizeof sa;
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return sock_err(-1, note, "socket");
    if (set_opts(fd, 0, sndbuf, rcvbuf) < 0)
        return sock_err(fd, note, "setsockopt");
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return sock_err(fd, note, "bind");
    if (listen(fd, 1) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        return sock_err(fd, note, "listen");
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Non-blocking connect bounded by T_TIMEOUT_MS; returns a blocking socket. */
static int connect_to(const char *ip, int port, int nodelay, int sndbuf, int rcvbuf,
                      char *note)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return sock_err(-1, note, "socket");
    if (set_opts(fd, nodelay, sndbuf, rcvbuf) < 0)
        return sock_err(fd, note, "setsockopt");
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno != EINPROGRESS)
            return sock_err(fd, note, "connect");
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int e = 0;
        socklen_t len = sizeof e;
        int r = poll(&p, 1, T_TIMEOUT_MS);
        if (r == 0)
            errno = ETIMEDOUT;
        else if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0)
            errno = e;
        if (r <= 0 || e != 0)
            return sock_err(fd, note, "connect");
    }
    fcntl(fd, F_SETFL, fl);
    return fd;
}

static int accept_from(int lfd, int nodelay, char *note)
{
    struct pollfd p = { .fd = lfd, .events = POLLIN };
    int r = poll(&p, 1, T_TIMEOUT_MS), one = 1;
    if (r == 0)
        errno = ETIMEDOUT;
    int fd = r > 0 ? accept(lfd, NULL, NULL) : -1;
    close(lfd);
    if (fd < 0)
        return sock_err(-1, note, "accept");
    if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        return sock_err(fd, note, "setsockopt");
    return fd;
}

/* ---- once per run: the connection ---- */

static int tcp_init(const fl_ctx *ctx, int kind, void **bench_state)
{
    tcp_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("tcp: out of memory");
    r->kind = kind;
    r->fd = -1;
    const fl_opts *o = ctx->opts;
    const char *addr = fl_param(o, "addr", ""), *iface = fl_param(o, "iface", "");
    int nodelay = fl_param_int(o, "nodelay", 1) != 0;
    r->nodelay = nodelay;
    r->burst = kind == T_STREAM ? fl_param_int(o, "burst", 32 << 20) : 0;
    int sndbuf = (int)fl_param_int(o, "sndbuf", 0), rcvbuf = (int)fl_param_int(o, "rcvbuf", 0);
    char msg[T_MSG] = "", host[T_MSG] = "", ip[INET_ADDRSTRLEN] = "";
    int err = 0, port = 0, peer[3] = { 0, -1, -1 }; /* rank 1: status, sndbuf, rcvbuf */

    if (ctx->rank == 0) {
        gethostname(host, sizeof host - 1);
        MPI_Send(host, T_MSG, MPI_CHAR, 1, T_TAG, ctx->comm);
        MPI_Recv(msg, T_MSG, MPI_CHAR, 1, T_TAG, ctx->comm, MPI_STATUS_IGNORE);
        int listening = msg[0] != '!'; /* rank 1 then waits for our status */
        if (!listening) {
            snprintf(r->note, sizeof r->note, "tcp: rank 1: %.200s", msg + 1);
            err = 1;
        } else if (sscanf(msg, "%15s %d", ip, &port) != 2) {
            snprintf(r->note, sizeof r->note, "tcp: bad address message '%.200s'", msg);
            err = 1;
        } else {
            r->fd = connect_to(ip, port, nodelay || kind == T_STREAM, sndbuf, rcvbuf, msg);
            if (r->fd < 0) {
                snprintf(r->note, sizeof r->note, "tcp: rank 0 -> %s:%d: %.200s", ip, port, msg);
                err = 1;
            }
        }
        if (listening) {
            MPI_Send(&err, 1, MPI_INT, 1, T_TAG, ctx->comm);
            if (!err) {
                MPI_Recv(peer, 3, MPI_INT, 1, T_TAG, ctx->comm, MPI_STATUS_IGNORE);
                if (peer[0] != 0) {
                    snprintf(r->note, sizeof r->note, "tcp: rank 1 failed to accept");
                    err = 1;
                }
            }
        }
    } else if (ctx->rank == 1) {
        char mine[T_MSG] = "";
        gethostname(mine, sizeof mine - 1);
        MPI_Recv(host, T_MSG, MPI_CHAR, 0, T_TAG, ctx->comm, MPI_STATUS_IGNORE);
        int lfd = -1;
        if (pick_addr(addr, iface, strcmp(host, mine) == 0, ip, msg + 1) == 0)
            lfd = make_listener(ip, sndbuf, rcvbuf, &port, msg + 1);
        if (lfd < 0) {
            msg[0] = '!';
            err = 1;
        } else {
            snprintf(msg, sizeof msg, "%s %d", ip, port);
        }
        MPI_Send(msg, T_MSG, MPI_CHAR, 0, T_TAG, ctx->comm);
        if (lfd >= 0) {
            int cerr = 0;
            MPI_Recv(&cerr, 1, MPI_INT, 0, T_TAG, ctx->comm, MPI_STATUS_IGNORE);
            if (cerr) {
                close(lfd);
                err = 1;
            } else {
                /* the stream receiver only sends 1-byte acks: never delay them */
                r->fd = accept_from(lfd, nodelay || kind == T_STREAM, msg);
                peer[0] = r->fd < 0;
                if (r->fd >= 0)
                    get_bufs(r->fd, &peer[1]);
                MPI_Send(peer, 3, MPI_INT, 0, T_TAG, ctx->comm);
                err = peer[0];
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, ctx->comm);
    r->err = err;
    if (err) { /* rank 0 knows why (rank 1 reports to it): every rank says so */
        if (r->fd >= 0)
            close(r->fd);
        r->fd = -1;
        MPI_Bcast(r->note, FL_NOTE_LEN, MPI_CHAR, 0, ctx->comm);
    } else if (ctx->rank == 0) {
        int b[2];
        get_bufs(r->fd, b);
        static const char *const recv_mode[] = { "poll", "block", "block" };
        snprintf(r->info, sizeof r->info,
                 "{\"addr\":\"%s\",\"port\":%d,\"nodelay\":%d,\"recv\":\"%s\","
                 "\"sndbuf\":[%d,%d],\"rcvbuf\":[%d,%d],\"wire_min_bytes\":1}",
                 ip, port, nodelay, recv_mode[kind], b[0], peer[1], b[1], peer[2]);
    }
    *bench_state = r;
    return FL_OK;
}

static void tcp_fini(const fl_ctx *ctx, void *bench_state)
{
    tcp_run *r = bench_state;
    (void)ctx;
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

static int init_poll(const fl_ctx *c, void **b) { return tcp_init(c, T_POLL, b); }
static int init_block(const fl_ctx *c, void **b) { return tcp_init(c, T_BLOCK, b); }
static int init_stream(const fl_ctx *c, void **b) { return tcp_init(c, T_STREAM, b); }

/* ---- per point ---- */

static int tcp_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt,
                     void **state, fl_shape *shape)
{
    const tcp_run *r = bench_state;
    if (r->err) {
        snprintf(shape->note, sizeof shape->note, "%s", r->note);
        return FL_ERROR;
    }
    if (r->kind == T_STREAM && pt->size == 0) {
        snprintf(shape->note, sizeof shape->note, "no payload to stream");
        return FL_SKIP;
    }
    tcp_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("tcp: out of memory");
    s->role = ctx->rank < 2 ? ctx->rank : -1;
    s->kind = r->kind;
    s->fd = r->fd;
    s->nodelay = r->nodelay;
    s->size = pt->size;
    s->wire = pt->size > 0 ? (size_t)pt->size : 1; /* size 0: a 1-byte token */
    int rr = r->kind != T_STREAM;
    shape->bytes_per_op = rr ? 2 * pt->size : pt->size;
    shape->timed = s->role >= 0;
    /* The stream receiver reads in large calls whatever the op size, as
     * iperf3 does: a stream has no message boundaries. */
    s->rlen = r->kind == T_STREAM && s->wire < T_STREAM_CHUNK ? T_STREAM_CHUNK : s->wire;
    snprintf(shape->info, sizeof shape->info, "%s", r->info);
    if (r->kind == T_STREAM) {
        /* One ack per sample costs a round trip and drains the pipeline, so
         * a sample streams at least `burst` bytes (iperf3 reports seconds). */
        int64_t ops = r->burst > pt->size ? (r->burst + pt->size - 1) / pt->size : 1;
        shape->batch_multiple = ops < T_MAX_BURST_OPS ? ops : T_MAX_BURST_OPS;
        size_t len = strlen(shape->info);
        if (len > 1)
            snprintf(shape->info + len - 1, sizeof shape->info - len + 1,
                     ",\"burst_ops\":%lld,\"recv_chunk\":%zu}",
                     (long long)shape->batch_multiple, s->rlen);
    }
    if (s->role >= 0) {
        s->sbuf = fl_alloc(s->wire);
        s->rbuf = fl_alloc(s->rlen);
    }
    *state = s;
    return FL_OK;
}

static double tcp_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    const tcp_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0.0;
    const int fd = s->fd;
    const size_t wire = s->wire;
    char *sb = s->sbuf, *rb = s->rbuf;
    double t0 = fl_now();
    switch (s->kind * 2 + s->role) {
    case T_POLL * 2 + 0:
        for (int64_t i = 0; i < iters; i++) {
            send_all(fd, sb, wire);
            recv_poll(fd, rb, wire);
        }
        break;
    case T_POLL * 2 + 1:
        for (int64_t i = 0; i < iters; i++) {
            recv_poll(fd, rb, wire);
            send_all(fd, sb, wire);
        }
        break;
    case T_BLOCK * 2 + 0:
        for (int64_t i = 0; i < iters; i++) {
            send_all(fd, sb, wire);
            recv_block(fd, rb, wire);
        }
        break;
    case T_BLOCK * 2 + 1:
        for (int64_t i = 0; i < iters; i++) {
            recv_block(fd, rb, wire);
            send_all(fd, sb, wire);
        }
        break;
    case T_STREAM * 2 + 0: {
        char ack;
        if (!s->nodelay)
            set_nagle(fd, 1);
        for (int64_t i = 0; i < iters; i++)
            send_all(fd, sb, wire);
        if (!s->nodelay)
            set_nagle(fd, 0);
        recv_poll(fd, &ack, 1); /* the time covers delivery, not just buffering */
        break;
    }
    case T_STREAM * 2 + 1: {
        const size_t rlen = s->rlen;
        for (uint64_t left = (uint64_t)iters * wire; left > 0;) {
            ssize_t r = recv(fd, rb, left < rlen ? (size_t)left : rlen, 0);
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                if (r == 0)
                    errno = 0;
                tcp_fail(fd, "recv");
            }
            left -= (uint64_t)r;
        }
        send_all(fd, sb, 1);
        break;
    }
    }
    return fl_now() - t0;
}

static int64_t tcp_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    tcp_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0;
    size_t n = (size_t)s->size;
    uint64_t seed_req = (uint64_t)n * 2654435761u + 1, seed_rep = seed_req + 1;
    char ack = 0;
    fl_fill(s->sbuf, n, s->role == 0 ? seed_req : seed_rep);
    memset(s->rbuf, 0, s->rlen);
    if (s->kind == T_STREAM) {
        if (s->role == 0) {
            send_all(s->fd, s->sbuf, n); /* the socket is in TCP_NODELAY */
            recv_block(s->fd, &ack, 1);
            return 0;
        }
        recv_block(s->fd, s->rbuf, n); /* in place, unlike the timed loop */
        send_all(s->fd, &ack, 1);
        *checked += (int64_t)n;
        return fl_check(s->rbuf, n, seed_req);
    }
    tcp_measure(ctx, s, 1);
    *checked += (int64_t)n;
    return fl_check(s->rbuf, n, s->role == 0 ? seed_rep : seed_req);
}

static void tcp_teardown(const fl_ctx *ctx, void *state)
{
    tcp_state *s = state;
    (void)ctx;
    if (!s)
        return;
    if (s->sbuf)
        fl_free(s->sbuf);
    if (s->rbuf)
        fl_free(s->rbuf);
    free(s);
}

#define TCP_KERNEL(bench, init_fn)                                                  \
    {.name = bench, .init = init_fn, .fini = tcp_fini, .setup = tcp_setup,            \
     .measure = tcp_measure, .verify = tcp_verify, .teardown = tcp_teardown}

const fl_kernel fl_tcp_kernels[] = {
    TCP_KERNEL("tcp.rr_poll", init_poll),
    TCP_KERNEL("tcp.rr_block", init_block),
    TCP_KERNEL("tcp.stream", init_stream),
    {.name = NULL},
};
