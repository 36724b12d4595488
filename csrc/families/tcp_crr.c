/* tcp.crr: netperf's TCP_CRR between ranks 0 and 1 (docs/sockets.md,
 * "Connection rate"). An op is one transaction: rank 0 connects to rank 1's
 * listener, sends a request of SIZE bytes, receives a response of SIZE bytes
 * and the connection closes. Rank 0's time spans the whole transaction, so
 * samples give transactions per second and --per-op the per-transaction
 * percentiles.
 *
 * TIME_WAIT: the side that closes first keeps the connection's 4-tuple in
 * TIME_WAIT for 60 s on Linux. close=server (the default): rank 1 closes
 * right after its response and rank 0 closes when it reads that FIN, so the
 * TIME_WAIT lands on the listening side, under the listener's port, where
 * it holds no port the connecting side needs; rank 0's sockets end in
 * LAST_ACK -> CLOSED and their ephemeral ports are free at once (a new SYN
 * on a 4-tuple still in TIME_WAIT on rank 1 is accepted by its newer
 * timestamp). close=reset: rank 0 aborts after the response (SO_LINGER 0:
 * an RST, no FIN exchange) and no side keeps TIME_WAIT; the transaction is
 * shorter by the FIN exchange rank 0 no longer waits for. */
#include "tcp_plumbing.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define CRR_TAG 4713
#define CRR_BACKLOG 128

typedef struct {
    sock_link link;  /* the control connection: its address is the listener's */
    sock_params p;
    int lfd;         /* rank 1: the listener; -1 elsewhere */
    int port;        /* the listener's port, on ranks 0 and 1 */
    int reset;       /* close=reset */
    int err;
    char note[FL_NOTE_LEN];
    char conn[FL_INFO_LEN / 2];
} crr_run;

typedef struct {
    const crr_run *r;
    int role;
    struct sockaddr_in sa;  /* rank 0: the listener's address */
    int64_t size, buffers;
    size_t wire;            /* bytes each way: SIZE, at least 1 */
    char *sbuf, *rbuf;
} crr_state;

static void crr_opts(int fd, const sock_params *p)
{
    int one = 1;
    struct timeval tv = { .tv_sec = SOCK_TIMEOUT_MS / 1000 };
    /* the timeouts bound connect, accept and every recv: no hang */
    if ((p->nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
        (p->sndbuf > 0 &&
         setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &p->sndbuf, sizeof p->sndbuf) < 0) ||
        (p->rcvbuf > 0 &&
         setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &p->rcvbuf, sizeof p->rcvbuf) < 0))
        sock_fail(fd, "setsockopt");
}

/* Rank 1: a listener on the control connection's address, any port;
 * accepted sockets inherit its options. */
static int crr_listen(crr_run *r)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
    socklen_t len = sizeof sa;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, r->link.ip, &sa.sin_addr);
    if (fd < 0)
        return -1;
    crr_opts(fd, &r->p);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, CRR_BACKLOG) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        close(fd);
        return -1;
    }
    r->port = ntohs(sa.sin_port);
    return fd;
}

static int crr_init(const fl_ctx *ctx, void **bench_state)
{
    crr_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("tcp: out of memory");
    r->lfd = -1;
    sock_params_get(ctx->opts, &r->p);
    r->reset = fl_param_is(ctx->opts, "close", "reset");
    if (sock_open(ctx, &r->p, 1, 1, &r->link, r->note) < 0) {
        r->err = 1;
        *bench_state = r;
        return FL_OK;
    }
    sock_info(&r->link, &r->p, r->conn, sizeof r->conn);
    int port = -1;
    if (r->link.role == 1) {
        r->lfd = crr_listen(r);
        port = r->lfd >= 0 ? r->port : -errno;
        MPI_Send(&port, 1, MPI_INT, 0, CRR_TAG, ctx->comm);
    } else if (r->link.role == 0) {
        MPI_Recv(&port, 1, MPI_INT, 1, CRR_TAG, ctx->comm, MPI_STATUS_IGNORE);
        r->port = port;
        if (port < 0)
            snprintf(r->note, sizeof r->note, "tcp.crr: rank 1's listener on %s: %s", r->link.ip,
                     strerror(-port));
    }
    MPI_Bcast(&port, 1, MPI_INT, 0, ctx->comm);
    MPI_Bcast(r->note, FL_NOTE_LEN, MPI_CHAR, 0, ctx->comm);
    r->err = port < 0;
    *bench_state = r;
    return FL_OK;
}

static void crr_fini(const fl_ctx *ctx, void *bench_state)
{
    crr_run *r = bench_state;
    (void)ctx;
    if (!r)
        return;
    if (r->lfd >= 0)
        close(r->lfd);
    sock_close(&r->link);
    free(r);
}

static int crr_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                     fl_shape *shape)
{
    const crr_run *r = bench_state;
    (void)ctx;
    if (r->err) {
        snprintf(shape->note, sizeof shape->note, "%s", r->note);
        return FL_ERROR;
    }
    crr_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("tcp: out of memory");
    s->r = r;
    s->role = r->link.role;
    s->size = pt->size;
    s->wire = pt->size > 0 ? (size_t)pt->size : 1; /* size 0: a 1-byte token, as tcp.rr_* */
    s->buffers = pt->buffers;
    s->sa.sin_family = AF_INET;
    s->sa.sin_port = htons((uint16_t)r->port);
    inet_pton(AF_INET, r->link.ip, &s->sa.sin_addr);
    if (s->role >= 0) {
        s->sbuf = fl_alloc(s->wire * (size_t)s->buffers);
        s->rbuf = fl_alloc(s->wire * (size_t)s->buffers);
    }
    shape->timed = s->role == 0; /* the connecting side's time spans the transaction */
    shape->bytes_per_op = 2 * pt->size;
    snprintf(shape->info, sizeof shape->info,
             "{%s,\"listen_port\":%d,\"close\":\"%s\",\"time_wait\":\"%s\",\"wire_min_bytes\":1,"
             "\"buffers\":%lld}",
             r->conn, r->port, r->reset ? "reset" : "server", r->reset ? "none" : "listener",
             (long long)s->buffers);
    *state = s;
    return FL_OK;
}

/* Rank 0's transaction: connect, request, response, close (server: after
 * rank 1's FIN; reset: at once, with an RST). */
static void crr_client(const crr_state *s, char *sb, char *rb)
{
    const sock_params *p = &s->r->p;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        sock_fail(-1, "socket");
    crr_opts(fd, p);
    while (connect(fd, (const struct sockaddr *)&s->sa, sizeof s->sa) < 0)
        if (errno != EINTR)
            sock_fail(fd, errno == EADDRNOTAVAIL ? "connect (no ephemeral port free)" : "connect");
    sock_send_all(fd, sb, s->wire);
    sock_recv_block(fd, rb, s->wire);
    if (s->r->reset) {
        struct linger off = { .l_onoff = 1, .l_linger = 0 };
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof off);
    } else {
        char c;
        ssize_t n;
        while ((n = recv(fd, &c, 1, 0)) < 0 && errno == EINTR)
            ;
        if (n != 0) {
            if (n > 0)
                errno = EPROTO;
            sock_fail(fd, "recv (awaiting the listener's close)");
        }
    }
    close(fd);
}

/* Rank 1's: accept, request, response, close (server: first, so TIME_WAIT
 * is here; reset: once rank 0's RST or FIN has come). */
static void crr_server(const crr_state *s, char *sb, char *rb)
{
    int fd;
    while ((fd = accept(s->r->lfd, NULL, NULL)) < 0)
        if (errno != EINTR)
            sock_fail(-1, "accept");
    sock_recv_block(fd, rb, s->wire);
    sock_send_all(fd, sb, s->wire);
    if (s->r->reset) {
        char c;
        while (recv(fd, &c, 1, 0) < 0 && errno == EINTR)
            ;
    }
    close(fd);
}

static double crr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    const crr_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0.0;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        char *sb = fl_slot(s->sbuf, (int64_t)s->wire, s->buffers, i);
        char *rb = fl_slot(s->rbuf, (int64_t)s->wire, s->buffers, i);
        if (s->role == 0)
            crr_client(s, sb, rb);
        else
            crr_server(s, sb, rb);
    }
    return fl_now() - t0;
}

/* One transaction (slot 0 both ways), request and response each checked. */
static int64_t crr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    crr_state *s = state;
    if (s->role < 0)
        return 0;
    size_t n = (size_t)s->size;
    uint64_t seed_req = (uint64_t)n * 2654435761u + 7, seed_rep = seed_req + 1;
    fl_fill(s->sbuf, n, s->role == 0 ? seed_req : seed_rep);
    memset(s->rbuf, 0, s->wire);
    crr_measure(ctx, s, 1);
    *checked += (int64_t)n;
    return fl_check(s->rbuf, n, s->role == 0 ? seed_rep : seed_req);
}

static void crr_teardown(const fl_ctx *ctx, void *state)
{
    crr_state *s = state;
    (void)ctx;
    if (!s)
        return;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    free(s);
}

const fl_kernel fl_tcp_crr_kernels[] = {
    {.name = "tcp.crr", .init = crr_init, .fini = crr_fini, .setup = crr_setup,
     .measure = crr_measure, .verify = crr_verify, .teardown = crr_teardown},
    {.name = NULL},
};
