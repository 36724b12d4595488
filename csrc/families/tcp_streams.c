/* tcp.stream's parallel streams and directions (docs/sockets.md, "Streams
 * and directions"): streams=N connections between ranks 0 and 1 (iperf3
 * -P N), direction=forward (rank 0 sends), reverse (rank 1 sends: iperf3
 * -R) or bidir (both at once, N connections each way: iperf3 --bidir).
 *
 * The default, one stream forward, and one stream reverse are tcp.c's
 * loop, unchanged (fl_tcp_stream_one, with the sender's rank swapped for
 * reverse). Several streams, or both directions, run here in iperf3's
 * select round (iperf3 3.12 iperf_send/iperf_recv, one thread per side):
 * one thread per rank waits in epoll on every connection it writes or
 * reads; then (bidir: rank 0 writes first, rank 1 reads first, as iperf3's
 * client and server) up to MS_MULTISEND passes over the ready writers, each
 * writing SIZE bytes (iperf3's blksize) until done or EAGAIN, and one read
 * of up to SIZE bytes on each ready reader (Nread: until SIZE or EAGAIN).
 * The figures follow that round: a rank that reads 4 MiB per call as
 * tcp.c's one stream does drains its peer's socket more often, and read
 * bidir 1.6x and -P 4 0.8x iperf3's on loopback. The N streams share a
 * sample's ops: a connection that can take bytes takes the next op, so a
 * slow stream never holds the others back and the bytes each stream carries
 * are its own share, counted by the receiver per stream (counters
 * received_bytes.K). One thread rather than iperf3 3.16's thread per
 * stream: the ranks keep MPI's thread level and the run's CPUs (a thread
 * per stream on a 2-CPU host times the scheduler), and a sample moves a
 * number of bytes the receiver counts to its end (exact one way; bidir's
 * sample is open-ended, ms_loop); the price is one CPU per rank for all
 * streams. */
#include "tcp_plumbing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MS_MAX_BURST_OPS 4096  /* as tcp.c's stream */
#define MS_NAMED FL_MAX_COUNTERS /* streams with counters: one each */
#define MS_MULTISEND 10        /* iperf3's test->multisend: write passes per select round */

typedef struct {
    sock_link link; /* streams connections, twice that for bidir: k < streams carry 0 -> 1 */
    sock_params p;
    int streams;
    const char *direction;
    int err;
    char note[FL_NOTE_LEN];
    char conn[FL_INFO_LEN / 2];
} ms_run;

typedef struct {
    int role, nodelay, verifying;
    int nsend, nrecv;  /* connections this rank writes, reads */
    int *sfd, *rfd;
    int ep;
    struct epoll_event *ev;
    int64_t size, buffers;
    char *sbuf, *rbuf;
    size_t rlen, pos;
    /* sender: each connection's message in progress, the sample's ops */
    const char **cur;
    size_t *cur_left;
    int *want;         /* connection k asks epoll for EPOLLOUT */
    int *ready;        /* the writers one wait found ready */
    int64_t next_op, ops;
    int64_t pending;   /* messages of the sample not yet wholly sent */
    /* bidir's open-ended sample (ms_loop): writers go on past ops while this
     * rank's own receive is short; the control bytes each rank sends back on
     * its first read connection: its ops sent (8 bytes, little-endian), then
     * the 1-byte ack */
    int bidir, open, announced;
    uint64_t recvd;    /* this call's bytes received */
    unsigned char ctl[9];
    int nctl;          /* control bytes read from the peer */
    int64_t peer_ops;  /* the peer's count; -1 until it arrives */
    /* receiver: bytes per stream since setup (the counters); the sample's
     * bytes still due */
    double *got;
    size_t *vgot;      /* verify: bytes of stream k's one message */
    uint64_t left;
    char *names;
} ms_state;

static int multi(const fl_opts *o)
{
    return fl_param_int(o, "streams") > 1 || fl_param_is(o, "direction", "bidir");
}

static void *ms_calloc(size_t n, size_t each)
{
    void *p = calloc(n ? n : 1, each);
    if (!p)
        fl_die("tcp: out of memory");
    return p;
}

/* ---- once per run: the connections ---- */

static int ms_init(const fl_ctx *ctx, void **bench_state)
{
    ms_run *r = ms_calloc(1, sizeof *r);
    sock_params_get(ctx->opts, &r->p);
    r->streams = (int)fl_param_int(ctx->opts, "streams");
    r->direction = fl_param(ctx->opts, "direction");
    int n = r->streams * (strcmp(r->direction, "bidir") == 0 ? 2 : 1);
    /* TCP_NODELAY while idle, as tcp.c's stream: acks are never delayed */
    if (sock_open(ctx, &r->p, 1, n, &r->link, r->note) < 0)
        r->err = 1;
    else
        sock_info(&r->link, &r->p, r->conn, sizeof r->conn);
    *bench_state = r;
    return FL_OK;
}

static void ms_fini(const fl_ctx *ctx, void *bench_state)
{
    ms_run *r = bench_state;
    (void)ctx;
    if (!r)
        return;
    sock_close(&r->link);
    free(r);
}

/* ---- per point ---- */

static void ms_watch(ms_state *s)
{
    if ((s->ep = epoll_create1(0)) < 0)
        sock_fail(-1, "epoll_create1");
    for (int k = 0; k < s->nsend + s->nrecv; k++) {
        int recv_side = k >= s->nsend;
        int fd = recv_side ? s->rfd[k - s->nsend] : s->sfd[k];
        struct epoll_event ev = { .events = recv_side ? EPOLLIN : 0, .data.u32 = (uint32_t)k };
        sock_nonblock(fd);
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
            sock_fail(fd, "epoll_ctl");
    }
}

/* The counter names: received_bytes.K per stream this rank reads. */
static void ms_names(ms_state *s)
{
    size_t len = (size_t)s->nrecv * 32 + 1;
    char *p = s->names = ms_calloc(len, 1);
    for (int k = 0; k < s->nrecv; k++)
        p += snprintf(p, len - (size_t)(p - s->names), "%sreceived_bytes.%d", k ? "," : "", k);
}

static int ms_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    const ms_run *r = bench_state;
    if (r->err) {
        snprintf(shape->note, sizeof shape->note, "%s", r->note);
        return FL_ERROR;
    }
    if (pt->size == 0) {
        snprintf(shape->note, sizeof shape->note, "no payload to stream");
        return FL_SKIP;
    }
    ms_state *s = ms_calloc(1, sizeof *s);
    const int n = r->streams, bidir = strcmp(r->direction, "bidir") == 0;
    const int reverse = strcmp(r->direction, "reverse") == 0;
    s->role = r->link.role;
    s->ep = -1;
    s->nodelay = r->p.nodelay;
    s->bidir = bidir;
    s->size = pt->size;
    s->buffers = pt->buffers;
    if (s->role >= 0) {
        /* forward: rank 0 writes connections 0..n-1; reverse: rank 1 does;
         * bidir: rank 0 writes 0..n-1 and reads n..2n-1, rank 1 the other way */
        int writes_first = bidir ? s->role == 0 : s->role == (reverse ? 1 : 0);
        s->nsend = bidir || writes_first ? n : 0;
        s->nrecv = bidir || !writes_first ? n : 0;
        s->sfd = r->link.fd + (bidir && !writes_first ? n : 0);
        s->rfd = r->link.fd + (bidir && writes_first ? n : 0);
        s->cur = ms_calloc((size_t)s->nsend, sizeof *s->cur);
        s->cur_left = ms_calloc((size_t)s->nsend, sizeof *s->cur_left);
        s->want = ms_calloc((size_t)s->nsend, sizeof *s->want);
        s->ready = ms_calloc((size_t)s->nsend, sizeof *s->ready);
        s->got = ms_calloc((size_t)s->nrecv, sizeof *s->got);
        s->vgot = ms_calloc((size_t)s->nrecv, sizeof *s->vgot);
        s->ev = ms_calloc((size_t)(s->nsend + s->nrecv), sizeof *s->ev);
        /* room for the verify pass's message per stream on both sides */
        int64_t slots = s->buffers > n ? s->buffers : n;
        /* reads of SIZE rotate through the point's buffers, as iperf3 reads each stream
         * into its one blksize buffer (a 4 MiB region, tcp.c's for its 4 MiB reads, left
         * every read's copy to land outside the core's own cache) */
        s->rlen = (size_t)(s->size * s->buffers);
        if (s->rlen < (size_t)(s->size * n))
            s->rlen = (size_t)(s->size * n);
        if (s->nsend)
            s->sbuf = fl_alloc((size_t)(s->size * slots));
        if (s->nrecv)
            s->rbuf = fl_alloc(s->rlen);
        ms_watch(s);
        if (s->nrecv && s->nrecv <= MS_NAMED) {
            ms_names(s);
            shape->counter_names = s->names;
        }
    }
    int64_t burst = fl_param_int(ctx->opts, "burst");
    int64_t ops = burst > pt->size ? (burst + pt->size - 1) / pt->size : 1;
    shape->timed = s->role >= 0;
    shape->bytes_per_op = pt->size * (bidir ? 2 : 1); /* an op: SIZE bytes each way */
    shape->batch_multiple = ops < MS_MAX_BURST_OPS ? ops : MS_MAX_BURST_OPS;
    shape->working_set = (int64_t)(s->rlen > (size_t)(s->size * s->buffers)
                                   ? s->rlen : (size_t)(s->size * s->buffers));
    snprintf(shape->info, sizeof shape->info,
             "{%s,\"recv\":\"epoll\",\"loop\":\"epoll\",\"streams\":%d,\"direction\":\"%s\","
             "\"stream_counters\":%s,\"wire_min_bytes\":1,\"buffers\":%lld,\"burst_ops\":%lld,"
             "\"recv_chunk\":%lld,\"write_passes\":%d}",
             r->conn, n, r->direction, n <= MS_NAMED ? "true" : "false", (long long)s->buffers,
             (long long)shape->batch_multiple, (long long)s->size, MS_MULTISEND);
    *state = s;
    return FL_OK;
}

static void ms_counters(const void *state, double *out)
{
    const ms_state *s = state;
    for (int k = 0; k < s->nrecv; k++)
        out[k] = s->got[k];
}

static void ms_teardown(const fl_ctx *ctx, void *state)
{
    ms_state *s = state;
    (void)ctx;
    if (!s)
        return;
    if (s->ep >= 0)
        close(s->ep);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    free(s->cur);
    free(s->cur_left);
    free(s->want);
    free(s->ready);
    free(s->got);
    free(s->vgot);
    free(s->ev);
    free(s->names);
    free(s);
}

/* ---- the timed loop ---- */

static void ms_want_out(ms_state *s, int k, int on)
{
    /* an open sample also reads the peer's control bytes on the first connection it writes */
    uint32_t in = s->open && k == 0 ? EPOLLIN : 0;
    struct epoll_event ev = { .events = (on ? EPOLLOUT : 0) | in, .data.u32 = (uint32_t)k };
    if (epoll_ctl(s->ep, EPOLL_CTL_MOD, s->sfd[k], &ev) < 0)
        sock_fail(s->sfd[k], "epoll_ctl");
}

/* Whether the sample has another op to start: the first ops, and in an
 * open sample more while this rank has not yet received ops of the peer's. */
static int ms_more(const ms_state *s)
{
    return s->next_op < s->ops ||
           (s->open && s->recvd < (uint64_t)s->ops * (uint64_t)s->size);
}

/* Connection k writes its message in progress, or the sample's next op
 * (verify: its own one message), until it is out or the socket is full, as
 * iperf3's Nwrite; 0 when it had nothing left. A connection with nothing
 * left stops asking to write and, with nodelay=0, sends its tail (tcp.c). */
static int ms_send_one(ms_state *s, int k)
{
    if (s->cur_left[k] == 0) {
        int have = s->verifying ? s->next_op == 0 && s->cur[k] == NULL : ms_more(s);
        if (!have) {
            if (s->want[k]) {
                ms_want_out(s, k, 0);
                s->want[k] = 0;
                if (!s->nodelay)
                    sock_nagle(s->sfd[k], 0);
            }
            return 0;
        }
        if (!s->verifying && s->next_op >= s->ops)
            s->pending++; /* an open sample's op beyond ops */
        s->cur[k] = s->verifying ? s->sbuf + (size_t)k * (size_t)s->size
                                 : fl_slot(s->sbuf, s->size, s->buffers, s->next_op++);
        s->cur_left[k] = (size_t)s->size;
    }
    while (s->cur_left[k] > 0) {
        ssize_t r = send(s->sfd[k], s->cur[k], s->cur_left[k], MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 1;
            sock_fail(s->sfd[k], "send");
        }
        s->cur[k] += r;
        s->cur_left[k] -= (size_t)r;
    }
    s->pending--;
    return 1;
}

/* Stream j reads up to SIZE bytes (iperf3's Nread of blksize: until SIZE
 * or EAGAIN) into the shared receive region (verify: into stream j's own
 * message). */
static void ms_recv_one(ms_state *s, int j)
{
    size_t want = (size_t)s->size;
    while (want > 0 && s->left > 0) {
        char *dst;
        size_t n;
        if (s->verifying) {
            dst = s->rbuf + (size_t)j * (size_t)s->size + s->vgot[j];
            n = (size_t)s->size - s->vgot[j];
        } else {
            dst = s->rbuf + s->pos;
            n = s->rlen - s->pos;
            if (s->left < n)
                n = (size_t)s->left;
        }
        if (want < n)
            n = want;
        if (n == 0)
            return;
        size_t r = sock_recv_some(s->rfd[j], dst, n);
        if (r == 0)
            return;
        want -= r;
        s->left -= r;
        s->recvd += r;
        s->got[j] += (double)r;
        if (s->verifying)
            s->vgot[j] += r;
        else
            s->pos = s->pos + r == s->rlen ? 0 : s->pos + r;
    }
}

/* iperf_send's passes: up to MS_MULTISEND over the writers epoll found
 * ready, each writing until its message is out or the socket is full. */
static void ms_send_round(ms_state *s, const int *ready, int nready)
{
    for (int pass = 0; pass < MS_MULTISEND; pass++) {
        int active = 0;
        for (int i = 0; i < nready; i++)
            active |= ms_send_one(s, ready[i]);
        if (!active)
            break;
    }
}

/* Reads what has arrived of the peer's control bytes (an open sample). */
static void ms_read_ctl(ms_state *s)
{
    if (s->nctl < (int)sizeof s->ctl)
        s->nctl += (int)sock_recv_some(s->sfd[0], s->ctl + s->nctl, sizeof s->ctl - (size_t)s->nctl);
}

/* An open sample's control steps, after each wait: this rank's count once it
 * has no op left to start and every message is out; the peer's count fixes
 * the bytes still due; the ack once they are in (after the count, so the
 * peer reads the two in order). */
static void ms_control(ms_state *s, int *acked)
{
    if (!s->announced && s->pending == 0 && !ms_more(s)) {
        unsigned char b[8];
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)((uint64_t)s->next_op >> (8 * i));
        sock_send_all(s->rfd[0], b, sizeof b);
        s->announced = 1;
    }
    if (s->nctl >= 8 && s->peer_ops < 0) {
        uint64_t n = 0;
        for (int i = 0; i < 8; i++)
            n |= (uint64_t)s->ctl[i] << (8 * i);
        s->peer_ops = (int64_t)n;
        s->left = n * (uint64_t)s->size - s->recvd;
    }
    if (s->announced && s->peer_ops >= 0 && s->left == 0 && !*acked) {
        char ack = 0;
        sock_send_all(s->rfd[0], &ack, 1);
        *acked = 1;
    }
}

/* Every connection this rank writes sends until the sample's bytes are out,
 * every one it reads receives until the peer's are in (then the 1-byte ack
 * on its first), and a writer's time ends with the peer's ack (the time
 * covers delivery, as tcp.c's stream).
 *
 * bidir's sample is open-ended, as iperf3 --bidir keeps both directions
 * going for the whole test: each rank writes its ops and then more while it
 * has not yet received ops of the peer's, so neither direction idles while
 * the slower one finishes (a fixed op count each way left the faster
 * direction idle for 30-50% of a loopback sample, and read the sum 0.81-0.98
 * of iperf3's). Each rank then tells the other how many ops it wrote, reads
 * them all and acks. The time returned is the sample's per 2 x ops SIZE
 * messages: elapsed x 2 ops / (ops written both ways), so the point's
 * bandwidth (2 x SIZE per op) is the bytes really moved over the elapsed
 * time, and its counters, each stream's bytes, say how the directions
 * shared them (analysis/streams.py). */
static double ms_loop(ms_state *s, int64_t iters)
{
    char ack = 0;
    s->ops = iters;
    s->next_op = 0;
    s->pending = !s->nsend ? 0 : s->verifying ? s->nsend : iters;
    s->left = (uint64_t)(s->verifying ? s->nrecv : iters) * (uint64_t)s->size;
    if (!s->nrecv)
        s->left = 0;
    s->open = s->bidir && !s->verifying;
    s->announced = 0;
    s->recvd = 0;
    s->nctl = 0;
    s->peer_ops = -1;
    if (s->open)
        s->left = UINT64_MAX / 2; /* until the peer's count: whatever it writes */
    double t0 = fl_now();
    for (int k = 0; k < s->nsend; k++) {
        s->cur[k] = NULL;
        s->cur_left[k] = 0;
        if (!s->nodelay)
            sock_nagle(s->sfd[k], 1);
        ms_want_out(s, k, 1);
        s->want[k] = 1;
    }
    int acked = 0;
    while (s->open ? !(acked && s->nctl == (int)sizeof s->ctl) : s->pending > 0 || s->left > 0) {
        int m = epoll_wait(s->ep, s->ev, s->nsend + s->nrecv, -1);
        if (m < 0 && errno != EINTR)
            sock_fail(-1, "epoll_wait");
        int nready = 0;
        for (int e = 0; e < m; e++) {
            int k = (int)s->ev[e].data.u32;
            if (k < s->nsend && (s->ev[e].events & EPOLLIN))
                ms_read_ctl(s);
            if (k < s->nsend && (s->ev[e].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                s->ready[nready++] = k;
        }
        if (s->role == 0)
            ms_send_round(s, s->ready, nready);
        for (int e = 0; e < m; e++) {
            int k = (int)s->ev[e].data.u32;
            if (k >= s->nsend)
                ms_recv_one(s, k - s->nsend);
        }
        if (s->role != 0)
            ms_send_round(s, s->ready, nready);
        if (s->open) {
            ms_control(s, &acked);
        } else if (s->nrecv && s->left == 0 && !acked) {
            sock_send_all(s->rfd[0], &ack, 1);
            acked = 1;
        }
    }
    /* every connection stops asking to write and, nodelay=0, sends its tail */
    for (int k = 0; k < s->nsend; k++)
        ms_send_one(s, k);
    if (s->nsend && !s->open)
        sock_recv_poll(s->sfd[0], &ack, 1);
    double t = fl_now() - t0;
    if (s->open) {
        s->open = 0;
        ms_want_out(s, 0, 0); /* the control bytes are read: stop watching for them */
        t *= 2.0 * (double)iters / (double)(s->next_op + s->peer_ops);
    }
    return t;
}

static double ms_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ms_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0.0;
    return ms_loop(s, iters);
}

/* One message of SIZE bytes on every stream this rank writes, each from its
 * own pattern in send slot k, received by the peer into its own place (slot
 * j of the receive region) and checked there: every stream's bytes are
 * validated. */
static int64_t ms_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ms_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0;
    const size_t size = (size_t)s->size;
    const int rank_seed = s->role == 0 ? 0 : 1000003; /* each direction its own patterns */
    double *got = s->got;
    s->got = ms_calloc((size_t)s->nrecv, sizeof *s->got); /* the counters leave out its bytes */
    if (s->nrecv)
        memset(s->rbuf, 0, size * (size_t)s->nrecv);
    for (int k = 0; k < s->nsend; k++)
        fl_fill(s->sbuf + (size_t)k * size, size, (uint64_t)(rank_seed + k) * 2654435761u + size);
    for (int j = 0; j < s->nrecv; j++)
        s->vgot[j] = 0;
    s->verifying = 1;
    ms_loop(s, 1);
    s->verifying = 0;
    int64_t bad = 0;
    const int peer_seed = s->role == 0 ? 1000003 : 0;
    for (int j = 0; j < s->nrecv; j++) {
        uint64_t seed = (uint64_t)(peer_seed + j) * 2654435761u + size;
        bad += fl_check(s->rbuf + (size_t)j * size, size, seed);
        *checked += (int64_t)size;
    }
    free(s->got);
    s->got = got;
    return bad;
}

/* ---- tcp.stream: one stream (tcp.c) or many (above), by its params ---- */

static int st_init(const fl_ctx *ctx, void **bs)
{
    return multi(ctx->opts) ? ms_init(ctx, bs) : fl_tcp_stream_one.init(ctx, bs);
}

static void st_fini(const fl_ctx *ctx, void *bs)
{
    if (multi(ctx->opts))
        ms_fini(ctx, bs);
    else
        fl_tcp_stream_one.fini(ctx, bs);
}

static int st_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return multi(ctx->opts) ? ms_setup(ctx, bs, pt, state, shape)
                            : fl_tcp_stream_one.setup(ctx, bs, pt, state, shape);
}

static double st_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    return multi(ctx->opts) ? ms_measure(ctx, state, iters)
                            : fl_tcp_stream_one.measure(ctx, state, iters);
}

static int64_t st_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return multi(ctx->opts) ? ms_verify(ctx, state, checked)
                            : fl_tcp_stream_one.verify(ctx, state, checked);
}

static void st_teardown(const fl_ctx *ctx, void *state)
{
    if (multi(ctx->opts))
        ms_teardown(ctx, state);
    else
        fl_tcp_stream_one.teardown(ctx, state);
}

/* The runner calls counters only on a rank whose setup named some: the
 * many-stream state's. */
const fl_kernel fl_tcp_streams_kernels[] = {
    {.name = "tcp.stream", .init = st_init, .fini = st_fini, .setup = st_setup,
     .measure = st_measure, .verify = st_verify, .teardown = st_teardown,
     .counters = ms_counters},
    {.name = NULL},
};
