/* udp.underload, tcp.underload: latency under load, sockperf's under-load mode
 * (sockperf src/client.cpp): rank 0 sends datagrams of SIZE bytes at a set
 * rate (mps, sockperf --mps), paced by a busy wait on an absolute schedule
 * (playbackCycleDurationWait: the next send is due one period after the
 * last one was due, so a late send is followed by a burst that catches up);
 * every reply_every-th message (sequence number a multiple of it, sockperf
 * --reply-every) asks rank 1 for a reply, and rank 1 echoes that message.
 * A reply's latency is half its round trip (client.cpp client_statistics:
 * pLat = rtt / 2 without --full-rtt). Every message starts with the
 * plumbing's 24-byte header (udp_plumbing.h: sequence number, send time,
 * flags), so SIZE is 24 at least (sockperf's own header is 14 bytes).
 * tcp.underload sends the same messages over one TCP connection (sockperf
 * --tcp), where nothing is lost but a reply may come late; each recv reads
 * what the stream holds, up to UL_STAGE, and the messages are taken from it.
 *
 * An op is one message sent; a measure call sends `iters` of them (whole
 * cycles of reply_every: the shape's batch_multiple), then waits for the
 * replies still due, each at most UL_WAIT_S after it was sent: a reply not
 * back by then is lost and counted, and a late one is dropped when it comes;
 * that wait is not in the call's time, which is the sends' (a period each,
 * or longer where the sends fell behind).
 * The call's end reaches rank 1 over MPI, so a lost datagram stalls nothing.
 * Rank 0 receives the replies in a thread of its own that sleeps until one
 * arrives, as sockperf's client does, while its main thread paces the sends.
 * A sample is therefore seconds per message sent, whose inverse is the
 * achieved message rate (sockperf's "Message Rate"); the latencies are the
 * counters' sum over replies (their mean) and, with --per-op, measure_each's
 * one timing per reply into the per-op histogram (the percentiles). */
#include "tcp_plumbing.h"
#include "udp_plumbing.h"

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UL_WAIT_S 0.1            /* a reply is lost when not back this long after its send */
#define UL_SLEEP_MS 1            /* rank 1 looks for a call's end at least this often */
#define UL_ASK 1u                /* udp_hdr.flags: a reply asked */
#define UL_TAG 0x5544            /* MPI tag of a call's end */
#define UL_STAGE (64 << 10)      /* TCP: bytes one recv reads at most, as sockperf reads what is there */

typedef struct {
    int tcp;       /* tcp.underload: one TCP connection (tcp_plumbing.c) */
    udp_link link; /* udp.underload: one flow between ranks 0 and 1 */
    udp_params p;
    sock_link tlink;
    sock_params tp;
    int err;
    char note[FL_NOTE_LEN];
} ul_run;

typedef struct {
    int role;          /* 0 client, 1 server, -1 idle */
    int fd;
    int tcp;           /* messages over a TCP stream: whole ones are read in pieces */
    char *stage;       /* TCP: what the stream delivered, read in calls of up to UL_STAGE */
    size_t pos, end;   /* TCP: the stage's unread bytes are [pos, end) */
    MPI_Comm comm;     /* the call's end goes from rank 0 to rank 1 over it */
    int64_t size, buffers, every;
    double period;     /* seconds between sends: 1 / mps */
    char *sbuf;        /* send slots */
    char *rbuf;        /* 2 x size: a datagram as received, then (rank 0) the last reply of this call */
    uint64_t seq;      /* the client's next sequence number (from 1, as sockperf's) */
    uint64_t first;    /* the current call's first sequence number: replies below are late */
    /* counters: messages sent, replies asked, replies back, replies lost, and
     * the sum of the replies' latencies (seconds) */
    double sent, asked, back, lost, lat_sum;
} ul_state;

/* ---- once per run: one connected UDP socket each on ranks 0 and 1 (udp_plumbing.c) ---- */

static int ul_init(const fl_ctx *ctx, void **bench_state)
{
    ul_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("udp: out of memory");
    udp_params_get(ctx->opts, &r->p);
    r->err = udp_open(ctx, &r->p, 1, &r->link, r->note) < 0;
    *bench_state = r;
    return FL_OK;
}

/* tcp.underload: one connection, TCP_NODELAY as nodelay= says (its
 * default 1: sockperf --tcp sets it unless --tcp-avoid-nodelay),
 * non-blocking on both ends. */
static int ul_tcp_init(const fl_ctx *ctx, void **bench_state)
{
    ul_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("tcp: out of memory");
    r->tcp = 1;
    sock_params_get(ctx->opts, &r->tp);
    r->err = sock_open(ctx, &r->tp, r->tp.nodelay, 1, &r->tlink, r->note) < 0;
    if (!r->err && r->tlink.role >= 0)
        sock_nonblock(r->tlink.fd[0]);
    *bench_state = r;
    return FL_OK;
}

static void ul_fini(const fl_ctx *ctx, void *bench_state)
{
    ul_run *r = bench_state;
    (void)ctx;
    if (!r)
        return;
    if (!r->err && r->tcp)
        sock_close(&r->tlink);
    else if (!r->err)
        udp_close(&r->link);
    free(r);
}

/* ---- per point ---- */

static int ul_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    const ul_run *r = bench_state;
    if (r->err) {
        snprintf(shape->note, sizeof shape->note, "%s", r->note);
        return FL_ERROR;
    }
    if (pt->size < UDP_HDR) {
        snprintf(shape->note, sizeof shape->note, "a message carries a %d-byte header", UDP_HDR);
        return FL_SKIP;
    }
    ul_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("udp: out of memory");
    s->role = ctx->rank < 2 ? ctx->rank : -1;
    s->tcp = r->tcp;
    s->fd = s->role < 0 ? -1 : r->tcp ? r->tlink.fd[0] : r->link.fd[0];
    s->comm = ctx->comm;
    s->size = pt->size;
    s->buffers = pt->buffers;
    s->every = fl_param_int(ctx->opts, "reply_every");
    s->period = 1.0 / (double)fl_param_int(ctx->opts, "mps");
    s->seq = 1;
    if (s->role >= 0) {
        s->sbuf = fl_alloc((size_t)(s->size * s->buffers));
        s->rbuf = fl_alloc(2 * (size_t)s->size);
        if (s->tcp)
            s->stage = fl_alloc((size_t)s->size + UL_STAGE);
    }
    shape->bytes_per_op = pt->size;  /* one message one way; replies are not counted */
    shape->timed = s->role == 0;
    shape->batch_multiple = s->every; /* whole cycles: one reply asked per cycle */
    shape->counter_names = s->role == 0 ? "sent,asked,back,lost,latency_s" : NULL;
    char conn[FL_INFO_LEN / 2];
    if (r->tcp)
        sock_info(&r->tlink, &r->tp, conn, sizeof conn);
    else
        udp_info(&r->link, &r->p, conn, sizeof conn);
    snprintf(shape->info, sizeof shape->info,
             "{%s,\"mps\":%lld,\"reply_every\":%lld,\"reply_wait_s\":%g,\"buffers\":%lld,"
             "\"per_op\":\"latency of each reply (RTT/2)\"}",
             conn, (long long)fl_param_int(ctx->opts, "mps"), (long long)s->every, UL_WAIT_S,
             (long long)s->buffers);
    *state = s;
    return FL_OK;
}

static void ul_counters(const void *state, double *out)
{
    const ul_state *s = state;
    out[0] = s->sent, out[1] = s->asked, out[2] = s->back, out[3] = s->lost, out[4] = s->lat_sum;
}

/* ---- the timed loops ---- */

/* One whole message into rbuf: its bytes, or -1 when none is complete now.
 * A datagram is one; a TCP stream's message may come in pieces. */
static ssize_t ul_take(ul_state *s)
{
    const size_t size = (size_t)s->size;
    if (!s->tcp)
        return udp_recv(s->fd, s->rbuf, size);
    if (s->end - s->pos < size) { /* read what the stream has, up to UL_STAGE, after the rest */
        memmove(s->stage, s->stage + s->pos, s->end - s->pos);
        s->end -= s->pos;
        s->pos = 0;
        s->end += sock_recv_some(s->fd, s->stage + s->end, size + UL_STAGE - s->end);
        if (s->end < size)
            return -1;
    }
    memcpy(s->rbuf, s->stage + s->pos, size);
    s->pos += size;
    return (ssize_t)size;
}

/* One message out: 1, or 0 when a datagram found no room (call again). */
static int ul_put(ul_state *s, const char *m, size_t n)
{
    if (!s->tcp)
        return udp_send(s->fd, m, n);
    sock_send_all(s->fd, m, n); /* waits in poll() while the socket is full */
    return 1;
}

/* Rank 0's receiver of one measure call: a thread of its own that sleeps in
 * poll() until a reply arrives, as sockperf's client receives its replies in
 * a thread blocked in recvfrom() (client.h client_receiver_thread) while its
 * main thread paces the sends. It alone writes its figures until joined. */
typedef struct {
    ul_state *s;
    double *each;        /* the replies' latencies, `room` of them at most */
    int64_t room, k;
    double lat_sum;
    _Atomic int64_t back; /* replies of this call so far */
    atomic_int stop;
} ul_rx;

static void *ul_receive(void *arg)
{
    ul_rx *x = arg;
    ul_state *s = x->s;
    struct pollfd pf = {.fd = s->fd, .events = POLLIN};
    while (!atomic_load(&x->stop)) {
        const ssize_t got = ul_take(s);
        const int64_t now = udp_now_ns();
        udp_hdr h;
        if (got < 0) {
            poll(&pf, 1, UL_SLEEP_MS);
            continue;
        }
        if (got < UDP_HDR)
            continue;
        udp_header(s->rbuf, &h);
        if (h.seq < s->first)
            continue; /* late: already counted lost */
        const double lat = (double)(now - h.sent_ns) * 1e-9 / 2; /* sockperf: rtt / 2 */
        x->lat_sum += lat;
        memcpy(s->rbuf + s->size, s->rbuf, (size_t)got); /* a late one never overwrites it */
        if (x->each && x->k < x->room)
            x->each[x->k++] = lat;
        atomic_fetch_add(&x->back, 1);
    }
    return NULL;
}

/* Rank 0: `iters` messages at the set rate, then the replies still due. */
static double ul_send(ul_state *s, int64_t iters, double *each, int64_t room)
{
    int64_t asked = 0;
    const size_t wire = (size_t)s->size;
    ul_rx x = {.s = s, .each = each, .room = room};
    pthread_t rx;
    atomic_init(&x.back, 0);
    atomic_init(&x.stop, 0);
    s->first = s->seq;
    if (pthread_create(&rx, NULL, ul_receive, &x) != 0)
        fl_die("udp.underload: cannot start the receiver thread");
    double t0 = fl_now(), due = t0, last = t0;
    for (int64_t i = 0; i < iters; i++) {
        while (fl_now() < due)
            ;
        char *m = fl_slot(s->sbuf, s->size, s->buffers, i);
        const uint64_t seq = s->seq++;
        const int ask = seq % (uint64_t)s->every == 0;
        last = fl_now();
        udp_stamp(m, seq, 0, ask ? UL_ASK : 0);
        while (!ul_put(s, m, wire)) /* no room in the socket now: send when there is */
            ;
        asked += ask;
        due += s->period;
    }
    /* the messages' time: each owns one period, or the late sends took longer */
    const double t = fmax(fl_now(), t0 + (double)iters * s->period) - t0;
    /* sleeping, so that the receiver has the CPU for the last replies */
    const struct timespec nap = {.tv_sec = 0, .tv_nsec = 20000};
    while (atomic_load(&x.back) < asked && fl_now() < last + UL_WAIT_S)
        nanosleep(&nap, NULL);
    atomic_store(&x.stop, 1);
    pthread_join(rx, NULL);
    const int64_t back = atomic_load(&x.back);
    s->sent += (double)iters;
    s->asked += (double)asked;
    s->back += (double)back;
    s->lat_sum += x.lat_sum;
    s->lost += (double)(asked > back ? asked - back : 0);
    for (int64_t k = x.k; each && k < room; k++)
        each[k] = UL_WAIT_S / 2; /* a lost reply's timing: at least the wait, halved */
    MPI_Send(&iters, 1, MPI_INT64_T, 1, UL_TAG, s->comm);
    return t;
}

/* Rank 1: echoes every message that asks for a reply until rank 0's end of
 * the call arrives over MPI. It sleeps in poll() between messages, as
 * sockperf's server sleeps in recvfrom() (what sockperf 3.7's `sr` reports
 * it blocks in by default), and looks for the end whenever the socket is empty. */
static double ul_serve(ul_state *s)
{
    MPI_Request end;
    int64_t sent;
    int done = 0;
    struct pollfd pf = {.fd = s->fd, .events = POLLIN};
    MPI_Irecv(&sent, 1, MPI_INT64_T, 0, UL_TAG, s->comm, &end);
    while (!done) {
        const ssize_t got = ul_take(s);
        udp_hdr h;
        if (got < 0) {
            MPI_Test(&end, &done, MPI_STATUS_IGNORE);
            if (!done)
                poll(&pf, 1, UL_SLEEP_MS);
            continue;
        }
        if (got < UDP_HDR)
            continue;
        udp_header(s->rbuf, &h);
        while ((h.flags & UL_ASK) && !ul_put(s, s->rbuf, (size_t)got))
            ;
    }
    return 0.0;
}

static double ul_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ul_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0.0;
    return s->role == 0 ? ul_send(s, iters, NULL, 0) : ul_serve(s);
}

/* Per-op timing: `timings` cycles of `unit` (reply_every) messages, one
 * reply each, its latency into each[] (a lost reply: UL_WAIT_S / 2). */
static void ul_measure_each(const fl_ctx *ctx, void *state, int64_t timings, int64_t unit,
                            double *each)
{
    ul_state *s = state;
    (void)ctx;
    if (s->role == 0)
        ul_send(s, timings * unit, each, timings);
    else if (s->role == 1)
        ul_serve(s);
}

/* One cycle through the timed loop with patterned payloads: rank 1 echoes
 * the message that asks for a reply, and rank 0 checks the echo's payload
 * (a lost reply counts every byte wrong). */
static int64_t ul_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ul_state *s = state;
    (void)ctx;
    if (s->role < 0)
        return 0;
    const size_t n = (size_t)(s->size - UDP_HDR);
    const uint64_t seed = (uint64_t)s->size * 2654435761u + 7;
    if (s->role == 1) {
        ul_serve(s);
        return 0;
    }
    s->seq = (s->seq + (uint64_t)s->every - 1) / (uint64_t)s->every * (uint64_t)s->every;
    fl_fill(s->sbuf + UDP_HDR, n, seed); /* op 0 uses slot 0 */
    memset(s->rbuf, 0, 2 * (size_t)s->size);
    ul_send(s, 1, NULL, 0);
    *checked += (int64_t)n;
    return fl_check(s->rbuf + s->size + UDP_HDR, n, seed);
}

static void ul_teardown(const fl_ctx *ctx, void *state)
{
    ul_state *s = state;
    (void)ctx;
    if (!s)
        return;
    fl_free(s->sbuf); /* fl_free takes NULL */
    fl_free(s->rbuf);
    fl_free(s->stage);
    free(s);
}

const fl_kernel fl_udp_underload_kernels[] = {
    {.name = "udp.underload", .init = ul_init, .fini = ul_fini, .setup = ul_setup,
     .measure = ul_measure, .verify = ul_verify, .teardown = ul_teardown,
     .counters = ul_counters, .measure_each = ul_measure_each},
    {.name = "tcp.underload", .init = ul_tcp_init, .fini = ul_fini, .setup = ul_setup,
     .measure = ul_measure, .verify = ul_verify, .teardown = ul_teardown,
     .counters = ul_counters, .measure_each = ul_measure_each},
    {.name = NULL},
};
