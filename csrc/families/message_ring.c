/* Family "message", HPC Challenge's network figures: the latency and
 * bandwidth tests HPCC took from the effective bandwidth benchmark b_eff
 * (hpcc/src/bench_lat_bw_1.5.2.c, Rabenseifner, Schulz and Speck), each
 * op one iteration of HPCC's loop:
 *
 * - message.cross_pingpong: MPI_Send/MPI_Recv round trips between the one
 *   pair of ranks the point's layout names (pattern 'cross',
 *   suite/patterns.py: active k is the k-th ordered pair, its client 's'
 *   and server 'r'), every other rank idle, as cross_ping_pong_set runs
 *   its pairs one after the other; the client's time counts. The pair
 *   loop of pair.h over the MPI transport of message.h.
 * - message.ring: every rank sends SIZE bytes to each neighbour on a ring
 *   and receives SIZE bytes from each (pattern 'ring': a rank's peer is its
 *   right neighbour, its left the rank that names it), in HPCC's two ways
 *   (param method, ring_lat_bw_loop): two MPI_Sendrecv, to the right then
 *   to the left (sendrecv), or two MPI_Irecv, two MPI_Isend and one
 *   MPI_Waitall (irecv). Every rank's time counts (the slowest, as HPCC's
 *   MPI_MAX over the ranks).
 *
 * HPCC's latency is an op's time over two (two messages a ping-pong and
 * two a ring iteration), its bandwidth SIZE over that: analysis/hpcc.py. */
#include "message.h"

#include <stdio.h>
#include <string.h>

enum { TAG_RIGHT = 200, TAG_LEFT = 201 }; /* HPCC's TO_RIGHT and TO_LEFT */

/* ---- message.cross_pingpong ---- */

/* One pair, its client 's' and server 'r' naming each other; the rest idle. */
static const char *cross_fault(const fl_layout *l, int n)
{
    int clients = 0, servers = 0;
    for (int q = 0; q < n; q++) {
        clients += l->role[q] == FL_SENDER;
        servers += l->role[q] == FL_RECEIVER;
    }
    if (clients != 1 || servers != 1)
        return "layout: one client 's' and one server 'r', every other rank idle";
    return fl_pairs_fault(l, n);
}

static int cross_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    int st = fl_pattern_point(pt, shape, pt->layout ? cross_fault(pt->layout, ctx->nranks) : NULL);
    if (st == FL_OK)
        st = pair_check_buffers(pt, pt->size, 1, shape);
    if (st != FL_OK)
        return st;
    msg_pair *m = fl_alloc(sizeof *m);
    pair_init_layout(&m->p, ctx, pt, 1);
    m->comm = ctx->comm;
    if (m->p.role != FL_IDLE) {
        m->p.sbuf = fl_alloc((size_t)(pt->size * pt->buffers));
        m->p.rbuf = fl_alloc((size_t)(pt->size * pt->buffers));
        m->req = fl_alloc(sizeof *m->req);
        shape->sent_bytes = shape->recv_bytes = pt->size;
        shape->messages = 1;
    }
    shape->timed = m->p.role == FL_SENDER; /* the client's time spans each round trip */
    snprintf(shape->info, FL_INFO_LEN, "{\"buffers\":%lld}", (long long)pt->buffers);
    *state = m;
    return FL_OK;
}

/* HPCC's loop runs from i_loop = -1 and starts its clock at 0: one round trip
 * untimed, which takes up how far apart the two ranks left the sample's
 * barrier, on the slot the first timed op uses. */
static double cross_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    msg_pair *m = state;
    const int64_t next = m->p.next;
    (void)ctx;
    pair_round_trip(&m->p, &msg_ops, 1);
    m->p.next = next;
    return pair_round_trip(&m->p, &msg_ops, iters);
}

static int64_t cross_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_round_trip(ctx, state, cross_measure, checked);
}

static void cross_teardown(const fl_ctx *ctx, void *state)
{
    msg_pair *m = state;
    (void)ctx;
    fl_free(m->p.sbuf);
    fl_free(m->p.rbuf);
    fl_free(m->req);
    fl_free(m);
}

/* ---- message.ring ---- */

typedef struct ring_state ring_state;
struct ring_state {
    MPI_Comm comm;
    int rank, nranks, left, right;
    int count;
    char *sbuf;      /* to the right, then to the left: count bytes each */
    char *rbuf;      /* from the left, then from the right */
    MPI_Request *req; /* 4 */
    uint64_t seed;   /* of the verify patterns; every pass takes a new one */
    double (*loop)(ring_state *s, int64_t iters); /* the method's */
};

/* Every rank 'b', the peers one cycle through all ranks. */
static const char *ring_fault(const fl_layout *l, int n)
{
    for (int q = 0; q < n; q++)
        if (l->role[q] != FL_BOTH || l->peer[q] < 0 || l->peer[q] >= n || l->peer[q] == q)
            return "layout: every rank 'b', its peer (its right neighbour) another rank";
    int steps = 1;
    for (int q = l->peer[0]; q != 0 && steps <= n; q = l->peer[q])
        steps++;
    return steps == n ? NULL : "layout: the peers must make one ring through every rank";
}

/* HPCC's first way: two MPI_Sendrecv, to the right, then to the left. */
static double sendrecv_loop(ring_state *s, int64_t iters)
{
    const int c = s->count;
    char *to_right = s->sbuf, *to_left = s->sbuf + c, *from_left = s->rbuf, *from_right = s->rbuf + c;
    const double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        MPI_Sendrecv(to_right, c, MPI_BYTE, s->right, TAG_RIGHT, from_left, c, MPI_BYTE, s->left, TAG_RIGHT,
                     s->comm, MPI_STATUS_IGNORE);
        MPI_Sendrecv(to_left, c, MPI_BYTE, s->left, TAG_LEFT, from_right, c, MPI_BYTE, s->right, TAG_LEFT,
                     s->comm, MPI_STATUS_IGNORE);
    }
    return fl_now() - t0;
}

/* HPCC's second way: both receives posted, both sends, one wait for all four. */
static double irecv_loop(ring_state *s, int64_t iters)
{
    const int c = s->count;
    char *to_right = s->sbuf, *to_left = s->sbuf + c, *from_left = s->rbuf, *from_right = s->rbuf + c;
    const double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        MPI_Irecv(from_left, c, MPI_BYTE, s->left, TAG_RIGHT, s->comm, &s->req[0]);
        MPI_Irecv(from_right, c, MPI_BYTE, s->right, TAG_LEFT, s->comm, &s->req[1]);
        MPI_Isend(to_right, c, MPI_BYTE, s->right, TAG_RIGHT, s->comm, &s->req[2]);
        MPI_Isend(to_left, c, MPI_BYTE, s->left, TAG_LEFT, s->comm, &s->req[3]);
        MPI_Waitall(4, s->req, MPI_STATUSES_IGNORE);
    }
    return fl_now() - t0;
}

static int ring_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    int st = fl_pattern_point(pt, shape, pt->layout ? ring_fault(pt->layout, ctx->nranks) : NULL);
    if (st != FL_OK)
        return st;
    ring_state *s = fl_alloc(sizeof *s);
    s->comm = ctx->comm;
    s->rank = ctx->rank;
    s->nranks = ctx->nranks;
    s->right = pt->layout->peer[ctx->rank];
    for (int q = 0; q < ctx->nranks; q++)
        if (pt->layout->peer[q] == ctx->rank)
            s->left = q;
    s->count = (int)pt->size;
    s->sbuf = fl_alloc(2 * (size_t)pt->size);
    s->rbuf = fl_alloc(2 * (size_t)pt->size);
    s->req = fl_alloc(4 * sizeof *s->req);
    s->seed = (uint64_t)pt->size * 0x100000001b3ULL;
    const int irecv = fl_param_is(ctx->opts, "method", "irecv");
    s->loop = irecv ? irecv_loop : sendrecv_loop;
    shape->sent_bytes = shape->recv_bytes = 2 * pt->size;
    shape->messages = 2;
    shape->buffers = 1; /* HPCC's four buffers, the same every op */
    shape->working_set = 2 * pt->size;
    shape->timed = 1;
    snprintf(shape->info, FL_INFO_LEN, "{\"method\":\"%s\"}", irecv ? "irecv" : "sendrecv");
    *state = s;
    return FL_OK;
}

/* HPCC's ring loops run from i_loop = -1 too (ring_lat_bw_loop): one ring
 * iteration untimed, then the timed ones. */
static double ring_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ring_state *s = state;
    (void)ctx;
    s->loop(s, 1);
    return s->loop(s, iters);
}

/* The seed of the message from `from` to `to` going right (0) or left (1). */
static uint64_t ring_seed(const ring_state *s, int from, int to, int left)
{
    return s->seed + ((uint64_t)from * (uint64_t)s->nranks + (uint64_t)to) * 2u + (uint64_t)left;
}

/* One op through the method's loop: each message its own pattern, each
 * received one checked against what its sender filled in. */
static int64_t ring_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ring_state *s = state;
    const size_t c = (size_t)s->count;
    fl_fill(s->sbuf, c, ring_seed(s, s->rank, s->right, 0));
    fl_fill(s->sbuf + c, c, ring_seed(s, s->rank, s->left, 1));
    memset(s->rbuf, 0, 2 * c);
    MPI_Barrier(ctx->comm);
    ring_measure(ctx, s, 1);
    int64_t bad = fl_check(s->rbuf, c, ring_seed(s, s->left, s->rank, 0)) +
                  fl_check(s->rbuf + c, c, ring_seed(s, s->right, s->rank, 1));
    *checked += 2 * (int64_t)c;
    s->seed += 2u * (uint64_t)s->nranks * (uint64_t)s->nranks;
    return bad;
}

static void ring_teardown(const fl_ctx *ctx, void *state)
{
    ring_state *s = state;
    (void)ctx;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s);
}

const fl_kernel fl_message_ring_kernels[] = {
    {.name = "message.cross_pingpong", .setup = cross_setup, .measure = cross_measure,
     .verify = cross_verify, .teardown = cross_teardown},
    {.name = "message.ring", .setup = ring_setup, .measure = ring_measure, .verify = ring_verify,
     .teardown = ring_teardown},
    {.name = NULL},
};
