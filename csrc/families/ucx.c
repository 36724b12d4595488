/* Family "ucx": UCX's UCP API below MPI (ucx_plumbing.h). Tagged send and
 * receive between ranks 0 (sender, timed) and 1 as message.c does it
 * through MPI, the bibw pattern of message_patterns.c (the pair loops of
 * pair.h over the UCP transport below), put and get windows completed by an
 * endpoint flush as deposit.c's flush mode, and memory mapping on rank 0.
 *
 * Cache state, as pair.h tells: send and receive regions of `buffers`
 * slots of `size` bytes per side, both mapped with the context (and handed
 * to every op as its memory handle), op i on slot (next + i) % buffers:
 * a window's sends share the rotation and its puts and gets take a slot
 * each unless window_buffers says otherwise, and a verified window carries
 * one pattern per flow.
 *
 * Put and get need no help from the target on transports that reach its
 * memory directly (cma, knem, RDMA), but UCP emulates them with active
 * messages elsewhere (tcp), and those the target must progress. So the
 * target's measure polls its worker until the origin's zero-byte "done"
 * tag, which the origin sends after the flush of its last window, inside
 * its time; the target is not timed. */
#include "ucx_plumbing.h"
#include "pair.h"

#include <stdio.h>
#include <stdlib.h>

enum { TAG_DATA = 1, TAG_ACK, TAG_DONE };
#define TAG_ALL ((ucp_tag_t)-1)

typedef struct {
    pair_state p;
    ucx_run *run;
    ucp_worker_h worker;
    ucp_ep_h ep;
    ucx_region sreg, rreg;   /* the pair's regions; rma: origin's and target's */
    ucp_request_param_t sp, rp, plain; /* with the send / receive memh; none */
    void **req;              /* 2 x window: an exchange's receives and sends */
    uint64_t raddr;          /* rma origin: the target's region */
    ucp_rkey_h rkey;
    char ack_in, ack_out;
} ucx_state;

/* A tag names what it carries and the rank that sends it, so flows never mix. */
static inline ucp_tag_t tag(int what, int from)
{
    return (ucp_tag_t)what << 32 | (ucp_tag_t)(unsigned)from;
}

/* ---- init, setup, teardown ---- */

static int ucx_init(const fl_ctx *ctx, void **bench_state)
{
    return ucx_start(ctx, bench_state, 1);
}

/* mr_reg: without UCP's registration cache, every ucp_mem_map registers. */
static int mr_init(const fl_ctx *ctx, void **bench_state)
{
    return ucx_start(ctx, bench_state, 0);
}

static void ucx_fini(const fl_ctx *ctx, void *bench_state)
{
    ucx_stop(ctx, bench_state);
}

/* FL_SKIP with the reason when the run has no context. */
static int ucx_skip(const ucx_run *r, fl_shape *shape)
{
    if (r->context)
        return FL_OK;
    snprintf(shape->note, FL_NOTE_LEN, "%s", r->failed);
    return FL_SKIP;
}

static ucx_state *ucx_new(ucx_run *r)
{
    ucx_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("ucx: out of memory");
    s->run = r;
    s->worker = r->worker;
    return s;
}

/* The state of a point, the pair's role and peer by rank (or, `layout`,
 * from the point's layout), regions of `buffers` slots mapped on the
 * active ranks; FL_SKIP without a context, FL_ERROR when the endpoint or
 * the footprint cannot be had. */
static int ucx_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, int window, int layout,
                     void **state, fl_shape *shape)
{
    int st = ucx_skip(bs, shape);
    if (st == FL_OK)
        st = pair_check_buffers(pt, pt->size, 2, shape);
    if (st != FL_OK)
        return st;
    ucx_state *s = ucx_new(bs);
    pair_state *p = &s->p;
    *state = s;
    if (layout)
        pair_init_layout(p, ctx, pt, window);
    else
        pair_init(p, ctx, pt, window);
    if (p->role == FL_IDLE)
        return FL_OK;
    if (!(s->ep = ucx_ep(s->run, p->peer, shape->note)))
        return FL_ERROR;
    ucx_map(s->run, p->count * (size_t)p->buffers, &s->sreg);
    ucx_map(s->run, p->count * (size_t)p->buffers, &s->rreg);
    p->sbuf = s->sreg.base;
    p->rbuf = s->rreg.base;
    s->sp = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->sreg.memh};
    s->rp = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->rreg.memh};
    s->req = fl_alloc(2 * (size_t)window * sizeof *s->req);
    return FL_OK;
}

/* info: library, tls, lanes (of rank 0's endpoint: rank 0 writes the
 * record), then window and buffers. */
static void pair_info(const ucx_state *s, int windowed, const fl_point *pt, fl_shape *shape)
{
    char extra[96];
    int n = windowed ? snprintf(extra, sizeof extra, ",\"window\":%d", s->p.window) : 0;
    snprintf(extra + n, sizeof extra - (size_t)n, ",\"buffers\":%lld", (long long)pt->buffers);
    ucx_info(s->run, s->ep, extra, shape->info);
}

/* Ranks 0 (sender or origin) and 1; `legs` 2 for a round trip. */
static int pair_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape, int window, int legs)
{
    int st = ucx_begin(ctx, bs, pt, window, 0, state, shape);
    if (st != FL_OK)
        return st;
    shape->bytes_per_op = legs * pt->size;
    shape->timed = ctx->rank == 0;
    if (legs == 1)
        shape->batch_multiple = window; /* samples are whole windows */
    pair_info(*state, legs == 1, pt, shape);
    return FL_OK;
}

static int pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    return pair_setup(ctx, bs, pt, state, shape, 1, 2);
}

static int window_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    return pair_setup(ctx, bs, pt, state, shape, (int)fl_param_int(ctx->opts, "window"), 1);
}

/* put_bw, get_bw: the origin learns the target's receive region and key. */
static int rma_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                     fl_shape *shape)
{
    int st = window_setup(ctx, bs, pt, state, shape);
    ucx_state *s = *state;
    if (st != FL_OK || s->p.role == FL_IDLE)
        return st;
    ucx_swap_key(s->run, ctx->comm, s->p.role == FL_SENDER, s->p.peer, s->ep, &s->rreg,
                 &s->raddr, &s->rkey);
    return FL_OK;
}

/* bibw: the bipairs layout, every active rank 'b' with a 'b' peer naming it. */
static int exchange_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    const fl_layout *l = pt->layout;
    for (int q = 0; l && q < ctx->nranks; q++) {
        int p = l->peer[q];
        if (l->role[q] != FL_IDLE && !(l->role[q] == FL_BOTH && p >= 0 && p < ctx->nranks &&
                                       p != q && l->role[p] == FL_BOTH && l->peer[p] == q))
            l = NULL;
    }
    if (!l) {
        snprintf(shape->note, FL_NOTE_LEN,
                 "layout: every active rank must be 'b' with a 'b' peer that names it back");
        return FL_ERROR;
    }
    int both = l->role[ctx->rank] == FL_BOTH, w = (int)fl_param_int(ctx->opts, "window");
    int st = ucx_begin(ctx, bs, pt, w, 1, state, shape);
    if (st != FL_OK)
        return st;
    shape->batch_multiple = w;
    shape->timed = both;
    if (both) {
        shape->sent_bytes = shape->recv_bytes = pt->size;
        shape->messages = 1;
    }
    pair_info(*state, 1, pt, shape);
    return FL_OK;
}

static void ucx_teardown(const fl_ctx *ctx, void *state)
{
    ucx_state *s = state;
    (void)ctx;
    if (s->rkey)
        ucp_rkey_destroy(s->rkey);
    ucx_unmap(s->run, &s->sreg);
    ucx_unmap(s->run, &s->rreg);
    fl_free(s->req);
    free(s);
}

/* ---- the UCP transport of the pair loops: tagged messages ---- */

static inline ucx_state *ucx_of(pair_state *p)
{
    return (ucx_state *)p;
}

static inline void *tsend(ucx_state *s, const void *buf, size_t n, int what,
                         const ucp_request_param_t *prm)
{
    return ucx_check(ucp_tag_send_nbx(s->ep, buf, n, tag(what, s->p.rank), prm),
                     "ucp_tag_send_nbx");
}

static inline void *trecv(ucx_state *s, void *buf, size_t n, int what,
                         const ucp_request_param_t *prm)
{
    return ucx_check(ucp_tag_recv_nbx(s->worker, buf, n, tag(what, s->p.peer), TAG_ALL, prm),
                     "ucp_tag_recv_nbx");
}

static inline void ucx_post_send(pair_state *p, int64_t i, int j)
{
    ucx_state *s = ucx_of(p);
    s->req[j] = tsend(s, pair_sslot(p, i), p->count, TAG_DATA, &s->sp);
}

static inline void ucx_post_recv(pair_state *p, int64_t i, int j)
{
    ucx_state *s = ucx_of(p);
    s->req[j] = trecv(s, pair_rslot(p, i), p->count, TAG_DATA, &s->rp);
}

static inline void ucx_wait_sends(pair_state *p, int64_t d, int n)
{
    (void)d;
    ucx_wait_all(ucx_of(p)->worker, ucx_of(p)->req, n, "send");
}

static inline void ucx_wait_recvs(pair_state *p, int64_t d, int n)
{
    (void)d;
    ucx_wait_all(ucx_of(p)->worker, ucx_of(p)->req, n, "receive");
}

static inline void ucx_wait_exchange(pair_state *p, int64_t d, int n)
{
    (void)d;
    ucx_wait_all(ucx_of(p)->worker, ucx_of(p)->req, 2 * n, "exchange");
}

static inline void ucx_send_done(pair_state *p, int64_t i)
{
    ucx_state *s = ucx_of(p);
    ucx_wait(s->worker, tsend(s, pair_sslot(p, i), p->count, TAG_DATA, &s->sp), "send");
}

static inline void ucx_recv_done(pair_state *p, int64_t i)
{
    ucx_state *s = ucx_of(p);
    ucx_wait(s->worker, trecv(s, pair_rslot(p, i), p->count, TAG_DATA, &s->rp), "receive");
}

static inline void ucx_ack_recv(pair_state *p)
{
    ucx_state *s = ucx_of(p);
    ucx_wait(s->worker, trecv(s, &s->ack_in, 0, TAG_ACK, &s->plain), "ack");
}

static inline void ucx_ack_send(pair_state *p)
{
    ucx_state *s = ucx_of(p);
    ucx_wait(s->worker, tsend(s, &s->ack_out, 0, TAG_ACK, &s->plain), "ack");
}

static inline void ucx_ack_swap(pair_state *p)
{
    ucx_state *s = ucx_of(p);
    s->req[0] = trecv(s, &s->ack_in, 0, TAG_ACK, &s->plain);
    s->req[1] = tsend(s, &s->ack_out, 0, TAG_ACK, &s->plain);
    ucx_wait_all(s->worker, s->req, 2, "ack");
}

static const pair_ops ucx_ops = {
    .post_send = ucx_post_send, .post_recv = ucx_post_recv, .wait_sends = ucx_wait_sends,
    .wait_recvs = ucx_wait_recvs, .wait_all = ucx_wait_exchange, .send = ucx_send_done,
    .recv = ucx_recv_done, .ack_recv = ucx_ack_recv, .ack_send = ucx_ack_send,
    .ack_swap = ucx_ack_swap,
};

static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_round_trip(state, &ucx_ops, iters);
}

static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &ucx_ops, iters);
}

static double exchange_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_exchange(state, &ucx_ops, iters);
}

static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_round_trip(ctx, state, pingpong_measure, checked);
}

static int64_t stream_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_window(ctx, state, stream_measure, checked);
}

static int64_t exchange_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_window(ctx, state, exchange_measure, checked);
}

/* ---- put and get ---- */

typedef ucs_status_ptr_t (*rma_op)(ucp_ep_h, void *, size_t, uint64_t, ucp_rkey_h,
                                   const ucp_request_param_t *);

static ucs_status_ptr_t put_op(ucp_ep_h ep, void *buf, size_t n, uint64_t raddr, ucp_rkey_h rkey,
                               const ucp_request_param_t *prm)
{
    return ucp_put_nbx(ep, buf, n, raddr, rkey, prm);
}

/* The origin's windows: each op on the next slot of both regions, its
 * request let go at once (the flush completes it), one flush per window;
 * then "done" to the target. The target polls until "done". */
static inline double rma_time(ucx_state *s, int64_t iters, rma_op op)
{
    pair_state *p = &s->p;
    const size_t c = p->count;
    double t0 = fl_now();
    if (p->role == FL_SENDER) {
        for (int64_t d = 0; d < iters; d += p->window) {
            const int n = pair_window_len(iters, d, p->window);
            for (int j = 0; j < n; j++) {
                size_t at = (size_t)((p->next + d + j) % p->buffers) * c;
                void *req = ucx_check(op(s->ep, p->sbuf + at, c, s->raddr + at, s->rkey, &s->sp),
                                      "rma");
                if (req)
                    ucp_request_free(req);
            }
            ucx_wait(s->worker, ucp_ep_flush_nbx(s->ep, &s->plain), "ucp_ep_flush_nbx");
        }
        ucx_wait(s->worker, tsend(s, &s->ack_out, 0, TAG_DONE, &s->plain), "done");
    } else if (p->role == FL_RECEIVER) {
        ucx_wait(s->worker, trecv(s, &s->ack_in, 0, TAG_DONE, &s->plain), "done");
    }
    return pair_finish(p, iters, t0);
}

static double put_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rma_time(state, iters, put_op);
}

static double get_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rma_time(state, iters, ucp_get_nbx);
}

/* One whole window from slot 0 (pair_verify_rma). */
static int64_t put_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_rma(ctx, state, put_measure, 0, checked);
}

static int64_t get_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_rma(ctx, state, get_measure, 1, checked);
}

/* ---- mr_reg: rank 0 maps and unmaps one SIZE-byte buffer per op ---- */

static int mr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    int st = ucx_skip(bs, shape);
    if (st != FL_OK)
        return st;
    ucx_state *s = ucx_new(bs);
    pair_state *p = &s->p;
    *state = s;
    p->role = ctx->rank == 0 ? FL_SENDER : FL_IDLE;
    p->count = (size_t)pt->size;
    p->seed = (uint64_t)pt->size * 0x100000001b3ULL + 31;
    if (p->role == FL_SENDER)
        p->sbuf = fl_alloc(p->count); /* mapped per op, not here */
    shape->timed = p->role == FL_SENDER;
    shape->buffers = 1;
    ucx_info(s->run, NULL, ",\"rcache\":\"off\",\"buffers\":1", shape->info);
    return FL_OK;
}

static double mr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ucx_state *s = state;
    ucp_context_h c = s->run->context;
    ucp_mem_map_params_t prm = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                              UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                                .address = s->p.sbuf, .length = s->p.count};
    ucp_mem_h memh;
    (void)ctx;
    if (s->p.role != FL_SENDER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        ucs_status_t st = ucp_mem_map(c, &prm, &memh);
        if (st != UCS_OK)
            ucx_fail("ucp_mem_map", st);
        if ((st = ucp_mem_unmap(c, memh)) != UCS_OK)
            ucx_fail("ucp_mem_unmap", st);
    }
    return fl_now() - t0;
}

/* Registration must leave the data as it was: a patterned buffer through one op. */
static int64_t mr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    pair_state *p = state;
    if (p->role != FL_SENDER)
        return 0;
    fl_fill(p->sbuf, p->count, p->seed);
    mr_measure(ctx, state, 1);
    *checked += (int64_t)p->count;
    return fl_check(p->sbuf, p->count, p->seed++);
}

static void mr_teardown(const fl_ctx *ctx, void *state)
{
    ucx_state *s = state;
    (void)ctx;
    fl_free(s->p.sbuf);
    free(s);
}

const fl_kernel fl_ucx_kernels[] = {
    {.name = "ucx.pingpong", .init = ucx_init, .fini = ucx_fini, .setup = pingpong_setup,
     .measure = pingpong_measure, .verify = pingpong_verify, .teardown = ucx_teardown},
    {.name = "ucx.stream", .init = ucx_init, .fini = ucx_fini, .setup = window_setup,
     .measure = stream_measure, .verify = stream_verify, .teardown = ucx_teardown},
    {.name = "ucx.bibw", .init = ucx_init, .fini = ucx_fini, .setup = exchange_setup,
     .measure = exchange_measure, .verify = exchange_verify, .teardown = ucx_teardown},
    {.name = "ucx.put_bw", .init = ucx_init, .fini = ucx_fini, .setup = rma_setup,
     .measure = put_measure, .verify = put_verify, .teardown = ucx_teardown},
    {.name = "ucx.get_bw", .init = ucx_init, .fini = ucx_fini, .setup = rma_setup,
     .measure = get_measure, .verify = get_verify, .teardown = ucx_teardown},
    {.name = "ucx.mr_reg", .init = mr_init, .fini = ucx_fini, .setup = mr_setup,
     .measure = mr_measure, .verify = mr_verify, .teardown = mr_teardown},
    {.name = NULL},
};
