/* udp: datagrams between ranks 0 and 1 over the plumbing of udp_plumbing.c.
 *
 * udp.stream (iperf3 -u): the sender sends datagrams of SIZE bytes on each
 * of `streams` flows, at `rate` bits/s per flow (iperf3's -b, per stream)
 * or as fast as the socket takes them (pacing=unlimited). An op is one
 * datagram on every flow; pacing busy-waits on a schedule: op i of a
 * measure call leaves no earlier than t0 + i x SIZE x 8 / rate, so a late
 * op is followed by ops that catch up (iperf3's throttle compares the bits
 * sent with rate x the time since the start, iperf_check_throttle). Every
 * datagram carries its flow, sequence number and send time (udp_hdr); the
 * receiver counts under iperf3's rules (udp_rules.c, udp_rx_take). At
 * the end of a call the sender tells the receiver over MPI the last number
 * it sent on each flow, and the receiver waits for the rest at most
 * `drain_us` after that message: what has not come then is lost, so a lost
 * datagram never stalls a sample. direction=forward: rank 0 sends;
 * reverse: rank 1; bidir: both at once, each receiving between its sends.
 * A sample is the senders' seconds per op (a receiver alone is not timed):
 * bytes_per_op is what was sent, and what arrived is in the counters.
 *
 * udp.rr (netperf UDP_RR): rank 0 sends a request of SIZE bytes, rank 1
 * echoes it; a reply not back within `timeout_us` of the request is a lost
 * transaction, counted, and the loop goes on with the next (netperf's
 * UDP_RR waits for ever: flent #106). A late reply, one whose request was
 * already given up, is dropped and counted. The sample is seconds per
 * transaction, lost ones with their timeout; the completed ones' round trips
 * are the counters' sum. */
#include "udp_plumbing.h"

#include <math.h>
#include <poll.h>
#include <sys/prctl.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UDP_END_TAG 4714   /* a call's last sequence numbers, sender to receiver */
#define UDP_RBUF 65536
#define VERIFY_WAIT_S 1.0  /* a verify op's longest wait for its datagrams */
#define RECV_WAIT_MS 1       /* a receiving rank's longest sleep in poll() */
#define PACE_SLEEP_S 50e-6  /* pacing sleeps while more than this remains before a send */
#define PACE_SPIN_S 25e-6   /* and spins the last of it */
#define PACED_SAMPLE_S 1e-3 /* the shortest sample of a paced stream (batch_multiple) */
/* counters per flow: datagrams sent, received, payload bytes received,
 * lost, out of order (sums) and the jitter estimate (a level) */
#define STREAM_COUNTERS 6

typedef struct {
    udp_params p;
    udp_link l;
    int send, recv, peer, streams;
    int64_t size;
    double gap;           /* seconds between ops; 0: unlimited */
    double tick;          /* iperf3's pacing timer (seconds): a tick's ops go back to back; 0: none */
    double drain_s;
    char *sbuf, *rbuf;
    uint64_t *seq;        /* the sender's next number per flow */
    uint64_t *last;       /* the peer's last numbers, from its end-of-call message */
    uint64_t *mine;       /* this rank's last numbers of a call, sent to the peer */
    double *sent;
    udp_rx *rx;
    char *names;
    struct pollfd *pfd;   /* a receiver's wait, one per flow */
    uint32_t flags;       /* in the datagrams sent: 1 while verifying */
    int64_t bad, checked; /* verify: wrong and checked bytes of the flagged datagrams received */
} us_state;

/* Takes the datagrams now waiting on every flow, at most `most` a flow
 * (0: all); returns how many. */
static int take_some(us_state *s, int most)
{
    int n = 0;
    for (int k = 0; k < s->streams; k++) {
        ssize_t r;
        int took = 0;
        while ((!most || took++ < most) && (r = udp_recv(s->l.fd[k], s->rbuf, UDP_RBUF)) >= (ssize_t)UDP_HDR) {
            udp_hdr h;
            udp_header(s->rbuf, &h);
            if (h.stream != (uint32_t)k)
                continue;
            udp_rx_take(&s->rx[k], h.seq, h.sent_ns, (size_t)r, udp_now_ns());
            n++;
            if (h.flags) { /* a verify op's: its payload after the header is the flow's pattern */
                s->bad += fl_check(s->rbuf + UDP_HDR, (size_t)s->size - UDP_HDR, 11 + (uint64_t)k) +
                          (r != (ssize_t)s->size);
                s->checked += s->size - UDP_HDR;
            }
        }
    }
    return n;
}

static int take_waiting(us_state *s)
{
    return take_some(s, 0);
}

/* A rank that only receives sleeps in poll() until a datagram comes, at
 * most RECV_WAIT_MS (then it looks for the sender's end-of-call message),
 * as iperf3's receiver waits in select(): a receiver that spun would lose
 * whole scheduler slices to other work on a busy host and read them as
 * jitter. The wake-up's latency is in the transit times, as in iperf3's. */
static void wait_readable(us_state *s)
{
    for (int k = 0; k < s->streams; k++)
        s->pfd[k].fd = s->l.fd[k], s->pfd[k].events = POLLIN;
    poll(s->pfd, (nfds_t)s->streams, RECV_WAIT_MS);
}

/* Waits until `due` (fl_now seconds), taking datagrams meanwhile on a rank
 * that receives: it sleeps (a receiver in ppoll, woken by a datagram) while
 * more than PACE_SLEEP_S remain, to PACE_SPIN_S before `due`, and spins the
 * rest. A sender that only spun would be preempted for whole scheduler
 * slices on a busy host, and the stalls would read as jitter; iperf3's
 * sender waits in select() between sends. The process's timer slack is 1 ns
 * (setup), so a sleep ends within its wake-up latency. */
static void pace_until(us_state *s, double due)
{
    for (;;) {
        double left = due - fl_now();
        if (left <= 0)
            return;
        if (s->recv && take_waiting(s))
            continue;
        if (left > PACE_SLEEP_S) {
            double nap = left - PACE_SPIN_S;
            struct timespec ts = {.tv_sec = (time_t)nap, .tv_nsec = (long)((nap - floor(nap)) * 1e9)};
            if (s->recv) {
                for (int k = 0; k < s->streams; k++)
                    s->pfd[k].fd = s->l.fd[k], s->pfd[k].events = POLLIN;
                ppoll(s->pfd, (nfds_t)s->streams, &ts, NULL);
            } else {
                nanosleep(&ts, NULL);
            }
        }
    }
}

static void send_ops(us_state *s, int64_t iters, double t0)
{
    for (int64_t i = 0; i < iters; i++) {
        if (s->gap > 0) {
            /* iperf3 (iperf_api.c, iperf_check_throttle on its pacing timer) sends, at each tick,
             * whatever keeps its average at the rate: a tick's ops back to back (udp_due); a
             * call still ends on its schedule, iters x gap */
            pace_until(s, t0 + udp_due(i, iters, s->gap, s->tick));
        } else if (s->recv) {
            take_waiting(s);
        }
        for (int k = 0; k < s->streams; k++) {
            char *b = s->sbuf + (size_t)k * (size_t)s->size;
            if (s->tick > 0) {
                /* iperf3's send round under its pacing timer: a select() on the socket, then
                 * the datagram (iperf_send with multisend 1): the spacing of a tick's datagrams */
                struct pollfd w = {.fd = s->l.fd[k], .events = POLLOUT};
                poll(&w, 1, 0);
            }
            udp_stamp(b, s->seq[k], (uint32_t)k, s->flags);
            while (!udp_send(s->l.fd[k], b, (size_t)s->size))
                if (s->recv)
                    take_waiting(s);
            s->seq[k]++;
            s->sent[k] += 1;
        }
    }
    /* the call lasts its ops' schedule, iters x gap: its rate is the rate asked when the sender keeps up */
    if (s->gap > 0)
        pace_until(s, t0 + (double)iters * s->gap);
}

/* Whether every flow has its peer's last datagram (or a later one). */
static int all_in(const us_state *s)
{
    for (int k = 0; k < s->streams; k++)
        if (s->rx[k].next <= s->last[k])
            return 0;
    return 1;
}

/* Receives until the peer's end-of-call message has come and every flow
 * has its last datagram, or drain_s has passed since the message. */
static void drain(us_state *s, MPI_Request *req)
{
    int got = 0;
    double until = 0;
    for (;;) {
        /* a rank that only receives takes one datagram a flow per wake-up, as iperf3's
         * receiver reads one per select() (iperf_recv): each arrival's time includes the wait */
        if (s->send) {
            take_waiting(s);
        } else {
            wait_readable(s);
            take_some(s, 1);
        }
        if (!got) {
            MPI_Test(req, &got, MPI_STATUS_IGNORE);
            if (got) {
                /* what waits in the socket when the message comes has arrived: taken now, not
                 * left to drain_s (a receiver behind by a scheduler slice on a busy host counted
                 * its unread backlog lost: 0.27-0.32 against the trunk's 0.25, docs/sockets.md) */
                take_waiting(s);
                until = fl_now() + s->drain_s;
            }
        }
        if (got && (all_in(s) || fl_now() > until))
            break;
    }
    for (int k = 0; k < s->streams; k++)
        udp_rx_close(&s->rx[k], s->last[k]);
}

static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    us_state *s = state;
    MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
    if (s->l.role < 0)
        return 0;
    if (s->recv)
        MPI_Irecv(s->last, s->streams, MPI_UINT64_T, s->peer, UDP_END_TAG, ctx->comm, &rreq);
    double t0 = fl_now(), t = 0;
    if (s->send) {
        send_ops(s, iters, t0);
        t = fl_now() - t0;
        for (int k = 0; k < s->streams; k++)
            s->mine[k] = s->seq[k] - 1;
        MPI_Isend(s->mine, s->streams, MPI_UINT64_T, s->peer, UDP_END_TAG, ctx->comm, &sreq);
    }
    if (s->recv)
        drain(s, &rreq);
    if (s->send)
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    return s->send ? t : fl_now() - t0;
}

static void stream_counters(const void *state, double *out)
{
    const us_state *s = state;
    for (int k = 0; k < s->streams; k++) {
        double *o = out + (size_t)k * STREAM_COUNTERS;
        o[0] = s->sent[k], o[1] = s->rx[k].received, o[2] = s->rx[k].bytes;
        o[3] = s->rx[k].lost, o[4] = s->rx[k].out_of_order, o[5] = s->rx[k].call_jitter_s;
    }
}

static void us_free(us_state *s)
{
    udp_close(&s->l);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    free(s->seq);
    free(s->last);
    free(s->mine);
    free(s->sent);
    free(s->rx);
    free(s->names);
    free(s->pfd);
    free(s);
}

/* The datagram's size against what the socket can carry: one line each. */
static int size_fault(const us_state *s, const fl_point *pt, fl_shape *shape)
{
    if (pt->size < UDP_HDR || pt->size > UDP_MAX_PAYLOAD) {
        snprintf(shape->note, FL_NOTE_LEN, "udp: a datagram carries %d to %d payload bytes, not %lld", UDP_HDR,
                 UDP_MAX_PAYLOAD, (long long)pt->size);
        return 1;
    }
    if (s->p.dontfrag && s->l.mtu > 0 && pt->size + UDP_IP_OVERHEAD > s->l.mtu) {
        snprintf(shape->note, FL_NOTE_LEN, "udp: a datagram of %lld bytes is a %lld-byte packet, over the path "
                 "MTU of %d with df=1", (long long)pt->size, (long long)pt->size + UDP_IP_OVERHEAD, s->l.mtu);
        return 1;
    }
    return 0;
}

/* Opens the flows and the buffers both kernels use; FL_OK or FL_ERROR (note). */
static int us_open(const fl_ctx *ctx, const fl_point *pt, us_state *s, int streams, fl_shape *shape)
{
    udp_params_get(ctx->opts, &s->p);
    s->streams = streams;
    s->size = pt->size;
    s->peer = ctx->rank < 2 ? 1 - ctx->rank : -1;
    if (udp_open(ctx, &s->p, streams, &s->l, shape->note) < 0)
        return FL_ERROR;
    int bad = s->l.role >= 0 && size_fault(s, pt, shape);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (bad) {
        MPI_Bcast(shape->note, FL_NOTE_LEN, MPI_CHAR, 0, ctx->comm);
        return FL_ERROR;
    }
    size_t n = (size_t)streams;
    s->sbuf = fl_alloc((size_t)pt->size * n);
    s->rbuf = fl_alloc(UDP_RBUF);
    s->seq = calloc(n, sizeof *s->seq), s->last = calloc(n, sizeof *s->last);
    s->mine = calloc(n, sizeof *s->mine), s->sent = calloc(n, sizeof *s->sent);
    s->rx = calloc(n, sizeof *s->rx), s->pfd = calloc(n, sizeof *s->pfd);
    if (!s->seq || !s->last || !s->mine || !s->sent || !s->rx || !s->pfd)
        fl_die("udp: out of memory");
    fl_fill(s->sbuf, (size_t)pt->size * n, 1);
    return FL_OK;
}

/* "sent.0,received.0,...": the counters of `streams` flows of `per` names each. */
static char *flow_names(const char *const *base, int per, int streams)
{
    size_t cap = (size_t)streams * (size_t)per * 32 + 1, len = 0;
    char *out = malloc(cap);
    if (!out)
        fl_die("udp: out of memory");
    out[0] = '\0';
    for (int k = 0; k < streams; k++)
        for (int c = 0; c < per; c++)
            len += (size_t)snprintf(out + len, cap - len, "%s%s.%d", len ? "," : "", base[c], k);
    return out;
}

static int stream_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    static const char *const base[STREAM_COUNTERS] = {"sent", "received", "received_bytes", "lost", "out_of_order",
                                                      "jitter_s"};
    (void)bs;
    us_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("udp: out of memory");
    const fl_opts *o = ctx->opts;
    int rc = us_open(ctx, pt, s, (int)fl_param_int(o, "streams"), shape);
    if (rc != FL_OK) {
        us_free(s);
        return rc;
    }
    const char *dir = fl_param(o, "direction");
    int bidir = strcmp(dir, "bidir") == 0, sender = strcmp(dir, "reverse") == 0 ? 1 : 0;
    s->send = s->l.role >= 0 && (bidir || s->l.role == sender);
    s->recv = s->l.role >= 0 && (bidir || s->l.role != sender);
    s->gap = fl_param_is(o, "pacing", "unlimited") ? 0
             : (double)pt->size * 8.0 / (double)fl_param_int(o, "rate");
    s->drain_s = 1e-6 * (double)fl_param_int(o, "drain_us");
    s->tick = s->gap > 0 ? 1e-6 * (double)fl_param_int(o, "pacing_timer") : 0;
    if (s->gap > 0)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* pacing's sleeps end on time, not up to 50 us late */
    shape->bytes_per_op = pt->size * s->streams * (bidir ? 2 : 1);
    shape->timed = s->send;
    shape->buffers = s->streams;
    /* a paced sample spans at least PACED_SAMPLE_S: enough datagrams for its loss and jitter to mean something */
    if (s->gap > 0)
        shape->batch_multiple = (int64_t)ceil(PACED_SAMPLE_S / s->gap);
    if (s->l.role >= 0) {
        s->names = flow_names(base, STREAM_COUNTERS, s->streams);
        shape->counter_names = s->names;
    }
    char info[FL_INFO_LEN / 2];
    udp_info(&s->l, &s->p, info, sizeof info);
    snprintf(shape->info, FL_INFO_LEN, "{%s,\"direction\":\"%s\",\"pacing\":\"%s\",\"gap_s\":%.9g,\"tick_s\":%.9g}",
             info, dir, s->gap > 0 ? "rate" : "unlimited", s->gap, s->tick);
    *state = s;
    return FL_OK;
}

static void us_teardown(const fl_ctx *ctx, void *state)
{
    MPI_Barrier(ctx->comm); /* no socket closes while its peer may still send */
    us_free(state);
}

/* ---- udp.rr ---- */

/* counters: transactions sent, completed, lost (no reply within the
 * timeout), late replies dropped, and the completed ones' round trips
 * summed (seconds) */
#define RR_COUNTERS 5

typedef struct {
    us_state u;
    double timeout_s;
    double sent, done, lost, late, rtt_s;
} rr_state;

/* Rank 0: one request, then its reply or the timeout. */
static void rr_client_op(rr_state *r)
{
    us_state *s = &r->u;
    int fd = s->l.fd[0];
    uint64_t seq = s->seq[0]++;
    udp_stamp(s->sbuf, seq, 0, 0);
    /* the round trip from before the request's send, as sockperf's ping-pong times it: on one host
     * the send delivers the request to its socket; the timeout counts from when it has left */
    int64_t t0 = udp_now_ns();
    while (!udp_send(fd, s->sbuf, (size_t)s->size))
        ;
    r->sent += 1;
    int64_t until = udp_now_ns() + (int64_t)(r->timeout_s * 1e9);
    for (;;) {
        ssize_t n = udp_recv(fd, s->rbuf, UDP_RBUF);
        int64_t now = udp_now_ns();
        if (n >= (ssize_t)UDP_HDR) {
            udp_hdr h;
            udp_header(s->rbuf, &h);
            if (h.seq == seq) {
                r->done += 1;
                r->rtt_s += 1e-9 * (double)(now - t0);
                return;
            }
            r->late += 1;
        }
        if (now > until) {
            r->lost += 1;
            return;
        }
    }
}

/* Rank 1: echoes requests until the client's end-of-call message. */
static void rr_server(const fl_ctx *ctx, rr_state *r)
{
    us_state *s = &r->u;
    MPI_Request req;
    int got = 0;
    MPI_Irecv(s->last, 1, MPI_UINT64_T, 0, UDP_END_TAG, ctx->comm, &req);
    while (!got) {
        ssize_t n = udp_recv(s->l.fd[0], s->rbuf, UDP_RBUF);
        if (n > 0)
            while (!udp_send(s->l.fd[0], s->rbuf, (size_t)n))
                ;
        else
            MPI_Test(&req, &got, MPI_STATUS_IGNORE);
    }
}

static double rr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    rr_state *r = state;
    double t0 = fl_now(), t = 0;
    if (r->u.l.role == 0) {
        for (int64_t i = 0; i < iters; i++)
            rr_client_op(r);
        t = fl_now() - t0;
        r->u.mine[0] = r->u.seq[0] - 1;
        MPI_Send(r->u.mine, 1, MPI_UINT64_T, 1, UDP_END_TAG, ctx->comm);
    } else if (r->u.l.role == 1) {
        rr_server(ctx, r);
        t = fl_now() - t0;
    }
    return t;
}

static void rr_counters(const void *state, double *out)
{
    const rr_state *r = state;
    out[0] = r->sent, out[1] = r->done, out[2] = r->lost, out[3] = r->late, out[4] = r->rtt_s;
}

static int rr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    rr_state *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("udp: out of memory");
    int rc = us_open(ctx, pt, &r->u, 1, shape);
    if (rc != FL_OK) {
        us_free(&r->u); /* r->u is r's first member: frees r */
        return rc;
    }
    r->timeout_s = 1e-6 * (double)fl_param_int(ctx->opts, "timeout_us");
    shape->bytes_per_op = 2 * pt->size;
    shape->timed = r->u.l.role == 0;
    shape->buffers = 1;
    if (r->u.l.role == 0)
        shape->counter_names = "sent,completed,lost,late,rtt_s";
    char info[FL_INFO_LEN / 2];
    udp_info(&r->u.l, &r->u.p, info, sizeof info);
    snprintf(shape->info, FL_INFO_LEN, "{%s,\"timeout_s\":%.9g}", info, r->timeout_s);
    *state = r;
    return FL_OK;
}

/* Whether the echoed reply of one request comes back intact: a request of
 * pattern-filled bytes (after its header) and its reply's bytes checked. */
static int64_t rr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    rr_state *r = state;
    us_state *s = &r->u;
    int64_t bad = 0;
    size_t body = (size_t)s->size - UDP_HDR;
    double timeout_s = r->timeout_s;
    r->timeout_s = fmax(timeout_s, VERIFY_WAIT_S);
    if (s->l.role == 0) {
        double done = r->done;
        fl_fill(s->sbuf + UDP_HDR, body, 7);
        memset(s->rbuf, 0, (size_t)s->size);
        rr_measure(ctx, state, 1);
        if (r->done > done) {
            bad = fl_check(s->rbuf + UDP_HDR, body, 7);
            *checked += (int64_t)body;
        }
        fl_fill(s->sbuf, (size_t)s->size, 1);
    } else {
        rr_measure(ctx, state, 1);
    }
    r->timeout_s = timeout_s;
    return bad;
}

/* Whether what arrived is what was sent: one op whose datagrams carry the
 * flow's pattern after their headers, flagged, and every flagged datagram
 * that arrives checked whole (a lost one is not checked). */
static int64_t stream_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    us_state *s = state;
    size_t body = (size_t)s->size - UDP_HDR;
    if (s->l.role < 0)
        return 0;
    for (int k = 0; k < s->streams && s->send; k++)
        fl_fill(s->sbuf + (size_t)k * (size_t)s->size + UDP_HDR, body, 11 + (uint64_t)k);
    /* a verify op waits a second for its datagrams: a crowded host may delay them past drain_us */
    double drain_s = s->drain_s;
    s->flags = 1, s->bad = s->checked = 0, s->drain_s = fmax(drain_s, VERIFY_WAIT_S);
    stream_measure(ctx, s, 1);
    s->flags = 0, s->drain_s = drain_s;
    fl_fill(s->sbuf, (size_t)s->size * (size_t)s->streams, 1);
    *checked += s->checked;
    return s->bad;
}

const fl_kernel fl_udp_kernels[] = {
    {.name = "udp.stream", .setup = stream_setup, .measure = stream_measure, .verify = stream_verify,
     .teardown = us_teardown, .counters = stream_counters},
    {.name = "udp.rr", .setup = rr_setup, .measure = rr_measure, .verify = rr_verify, .teardown = us_teardown,
     .counters = rr_counters},
    {.name = NULL},
};
