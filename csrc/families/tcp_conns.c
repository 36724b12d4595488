/* tcp.conns: a TCP stream round-robin over C connections, the receiver
 * finding the connections that hold data by epoll (the completion-queue
 * analogue) or by visiting every non-blocking socket in turn (round-robin
 * checking): seed 002 Table 2, as via.c tells. Connections come from
 * tcp_plumbing.c, one set per point. */
#include "tcp_plumbing.h"
#include "via.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    int role;
    sock_link link;
    sock_params p;
    int conns, scan, ep;
    int64_t size, buffers;
    char *sbuf, *rbuf;
    struct epoll_event *ev;
    int64_t *op, *got;     /* receiver: op and bytes so far of each connection */
    int64_t iters;         /* receiver: ops of the current measure call */
    uint64_t left;         /* receiver: bytes still due */
} conns_state;

static void conns_watch(conns_state *s)
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
    conns_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("tcp: out of memory");
    s->ep = -1;
    sock_params_get(ctx->opts, &s->p);
    if (sock_open(ctx, &s->p, 1, (int)pt->conns, &s->link, shape->note) < 0) {
        free(s);
        return FL_ERROR;
    }
    s->role = s->link.role;
    s->conns = (int)pt->conns;
    s->scan = fl_param_is(ctx->opts, "check", "scan");
    s->size = pt->size;
    s->buffers = pt->buffers;
    if (s->role == SENDER)
        s->sbuf = fl_alloc((size_t)(s->size * s->buffers));
    if (s->role == RECEIVER) {
        s->rbuf = fl_alloc((size_t)(s->size * s->buffers));
        conns_watch(s);
    }
    shape->timed = s->role == SENDER; /* its time spans the ops to the ack */
    shape->bytes_per_op = pt->size;
    shape->batch_multiple = rounds_multiple(s->conns);
    char conn[FL_INFO_LEN / 2];
    sock_info(&s->link, &s->p, conn, sizeof conn);
    snprintf(shape->info, FL_INFO_LEN, "{%s,\"check\":\"%s\",\"conns\":%d,\"buffers\":%lld}",
             conn, s->scan ? "scan" : "epoll", s->conns, (long long)s->buffers);
    *state = s;
    return FL_OK;
}

static void conns_teardown(const fl_ctx *ctx, void *state)
{
    conns_state *s = state;
    (void)ctx;
    if (s->ep >= 0)
        close(s->ep);
    sock_close(&s->link);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    free(s->ev);
    free(s->op);
    free(s->got);
    free(s);
}

/* Reads what connection k holds, message by message, each into the receive
 * slot of its op; returns when the socket is empty or k has all its ops. */
static void conns_drain(conns_state *s, int k)
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
static void conns_recv_epoll(conns_state *s)
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
static void conns_recv_scan(conns_state *s)
{
    for (int k = 0; s->left > 0; k = k + 1 == s->conns ? 0 : k + 1)
        conns_drain(s, k);
}

/* Op i: `size` bytes on connection i % C from send slot i, blocking send;
 * the receiver knows how many ops each connection carries. */
static double conns_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    conns_state *s = state;
    (void)ctx;
    if (s->role == IDLE)
        return 0.0;
    double t0 = fl_now();
    if (s->role == SENDER) {
        sock_send_slots(&s->link, &s->p, s->sbuf, s->size, s->buffers, iters);
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
        sock_ack_send(&s->link);
    }
    return fl_now() - t0;
}

/* One message on every connection (via.c). */
static int64_t conns_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    conns_state *s = state;
    return verify_conns(ctx, s, conns_measure, s->role, s->conns, s->size, s->buffers, s->sbuf,
                        s->rbuf, checked);
}

const fl_kernel fl_tcp_conns_kernels[] = {
    {.name = "tcp.conns", .setup = conns_setup, .measure = conns_measure, .verify = conns_verify,
     .teardown = conns_teardown},
    {.name = NULL},
};
