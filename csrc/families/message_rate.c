/* Family "message", message rate: many pairs stream windows at once, timed
 * exactly as the two anchors that print a message rate time them
 * (docs/message-rate.md). Pair k is (k, k + N/2), every pair active
 * (suite/patterns.py, "pairs" and "bipairs").
 *
 * - mbw_mr: OSU's osu_mbw_mr (c/mpi/pt2pt/standard/osu_mbw_mr.c, calc_bw):
 *   before every window a barrier of all ranks, untimed; then the sender
 *   posts W MPI_Isend, MPI_Waitall, and receives a 1-byte ack; the receiver
 *   posts W MPI_Irecv, MPI_Waitall, and sends the ack. Only the senders
 *   time, the window alone, and OSU divides the bytes of all pairs by the
 *   senders' mean time: the shape says so (fl_shape.mean_timed), and the
 *   runner makes each sample the mean over the timed ranks.
 * - uniband: IMB-MPI1's Uniband (src_c/IMB_bandwidth.c, IMB_uni_bandwidth):
 *   the same window and 1-byte ack, windows back to back with no barrier
 *   between them, every rank timed and the slowest rank's time taken
 *   (IMB_output.c: timing[MAX]).
 * - biband: IMB-MPI1's Biband (IMB_bi_bandwidth): both ranks of a pair post
 *   W receives, then W sends, MPI_Waitall on all 2W, and the upper rank acks
 *   the lower one with 1 byte; every rank timed, the slowest rank's time.
 *
 * The loops are pair.h's (pair_stream, pair_exchange) over msg_ops with the
 * anchors' acks: 1 byte (MPI_CHAR), one way. Buffers as message.saturation:
 * a window's messages share the cache state's rotation (window_buffers). */
#include "message.h"

#include <stdio.h>

typedef struct {
    msg_pair m;
} rate_state;

/* ---- the anchors' acks: one byte, one way ---- */

static inline void rate_ack_recv(pair_state *p)
{
    msg_pair *m = msg_of(p);
    MPI_Recv(&m->ack_in, 1, MPI_CHAR, p->peer, MSG_TAG_ACK, m->comm, MPI_STATUS_IGNORE);
}

static inline void rate_ack_send(pair_state *p)
{
    msg_pair *m = msg_of(p);
    MPI_Send(&m->ack_out, 1, MPI_CHAR, p->peer, MSG_TAG_ACK, m->comm);
}

/* Biband: the lower rank of a pair waits for the upper one's ack. */
static inline void rate_ack_one_way(pair_state *p)
{
    if (p->rank < p->peer)
        rate_ack_recv(p);
    else
        rate_ack_send(p);
}

static const pair_ops rate_ops = {
    .post_send = msg_post_send, .post_recv = msg_post_recv, .wait_sends = msg_wait,
    .wait_recvs = msg_wait, .wait_all = msg_wait_all, .ack_recv = rate_ack_recv,
    .ack_send = rate_ack_send, .ack_swap = rate_ack_one_way,
};

/* ---- setup ---- */

/* A point of `window` messages per flow on the layout `fault` accepts:
 * regions and requests by role (as message.saturation and message.bibw),
 * which ranks time, and how a sample reduces over them. */
static int rate_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape,
                      const char *(*fault)(const fl_layout *, int), int senders_only,
                      const char *rule)
{
    const int64_t window = fl_param_int(ctx->opts, "window"), size = pt->size;
    int st = fl_pattern_point(pt, shape, pt->layout ? fault(pt->layout, ctx->nranks) : NULL);
    if (st == FL_OK)
        st = pair_check_buffers(pt, size, 1, shape);
    if (st != FL_OK)
        return st;
    rate_state *s = fl_alloc(sizeof *s);
    pair_state *p = &s->m.p;
    pair_init_layout(p, ctx, pt, (int)window);
    s->m.comm = ctx->comm;
    const int sends = p->role == FL_BOTH || p->role == FL_SENDER;
    const int receives = p->role == FL_BOTH || p->role == FL_RECEIVER;
    if (sends) {
        p->sbuf = fl_alloc((size_t)p->buffers * (size_t)size);
        shape->sent_bytes = size;
        shape->messages = 1;
    }
    if (receives) {
        p->rbuf = fl_alloc((size_t)p->buffers * (size_t)size);
        shape->recv_bytes = size;
    }
    if (sends || receives)
        s->m.req = fl_alloc(sizeof *s->m.req * (size_t)(sends + receives) * (size_t)window);
    shape->batch_multiple = window; /* samples are whole windows */
    shape->timed = senders_only ? sends : p->role != FL_IDLE;
    shape->mean_timed = senders_only;
    snprintf(shape->info, FL_INFO_LEN, "{\"window\":%lld,\"buffers\":%lld,\"rule\":\"%s\"}",
             (long long)window, (long long)pt->buffers, rule);
    *state = s;
    return FL_OK;
}

static int mbw_mr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    (void)bs;
    return rate_setup(ctx, pt, state, shape, fl_pairs_fault, 1, "osu_mbw_mr");
}

static int uniband_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    (void)bs;
    return rate_setup(ctx, pt, state, shape, fl_pairs_fault, 0, "IMB Uniband");
}

static int biband_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    (void)bs;
    return rate_setup(ctx, pt, state, shape, fl_exchange_fault, 0, "IMB Biband");
}

static void rate_teardown(const fl_ctx *ctx, void *state)
{
    rate_state *s = state;
    (void)ctx;
    fl_free(s->m.p.sbuf);
    fl_free(s->m.p.rbuf);
    fl_free(s->m.req);
    fl_free(s);
}

/* ---- measure ---- */

/* osu_mbw_mr: a barrier of every rank before each window, outside the
 * time; the seconds of the windows alone, summed (OSU's t += t_end -
 * t_start). Idle ranks take part in the barriers only. */
static double mbw_mr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    pair_state *p = state;
    const int w = p->window;
    double t = 0.0;
    for (int64_t d = 0; d < iters; d += w) {
        MPI_Barrier(ctx->comm);
        t += pair_stream(p, &rate_ops, pair_window_len(iters, d, w));
    }
    return t;
}

/* Uniband: windows back to back, one time around all of them. */
static double uniband_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &rate_ops, iters);
}

/* Biband: the pair's exchange with IMB's one-way ack. */
static double biband_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_exchange(state, &rate_ops, iters);
}

/* ---- verify: one window of patterned data (pair_verify_window) ---- */

static int64_t mbw_mr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_window(ctx, state, mbw_mr_measure, checked);
}

static int64_t uniband_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_window(ctx, state, uniband_measure, checked);
}

static int64_t biband_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_window(ctx, state, biband_measure, checked);
}

const fl_kernel fl_message_rate_kernels[] = {
    {.name = "message.mbw_mr", .setup = mbw_mr_setup, .measure = mbw_mr_measure,
     .verify = mbw_mr_verify, .teardown = rate_teardown},
    {.name = "message.uniband", .setup = uniband_setup, .measure = uniband_measure,
     .verify = uniband_verify, .teardown = rate_teardown},
    {.name = "message.biband", .setup = biband_setup, .measure = biband_measure,
     .verify = biband_verify, .teardown = rate_teardown},
    {.name = NULL},
};
