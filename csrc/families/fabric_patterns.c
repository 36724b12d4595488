/* Family "fabric", traffic patterns: libfabric among many ranks at once,
 * each rank following the role and peer its layout gives it (Python decides
 * layouts: suite/patterns.py), as message_patterns.c and
 * deposit_patterns.c do over MPI.
 *
 * - bibw ("bipairs"): both ranks of a pair send a window at each other at
 *   once, then a zero-byte ack each way (pair_exchange).
 * - saturation ("pairs"): pairs run fabric.stream's protocol side by side
 *   (pair_stream).
 * - hotspot_put ("hotspot"): senders fi_write windows into the target, each
 *   into its own region; the target is passive (not timed) but progresses
 *   its provider until every sender's "done" arrives.
 *
 * rdm endpoints are opened once per run; msg endpoints connect the pairs of
 * each point's layout. Cache state as pair.h: op i uses slot
 * (next + i) % buffers. */
#include "fabric.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    fab_pair f;
    fab_net own;          /* msg: this point's connections */
    uint64_t flags;       /* hotspot_put: op flags of fi_writemsg */
    fab_remote *remote;   /* hotspot_put: every rank's region */
    uint64_t region;      /* hotspot sender: its region's offset in the target's */
    int nsrc, *src;       /* hotspot target: its senders, in rank order; its
                           * region holds one of `buffers` slots per sender */
} fp_state;

/* ---- setup (layouts: layouts.c) ---- */

static int fp_init_msg(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_MSG, 0);
}

static int fp_init_rma(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_RMA, 0);
}

/* The endpoints of the point: the run's (rdm), or msg connections to the
 * peer and, for a hotspot target, to every sender. */
static void fp_net(const fl_ctx *ctx, fp_state *s, const fl_layout *l)
{
    if (s->f.run->open)
        return;
    char *linked = fl_alloc((size_t)ctx->nranks);
    if (s->f.p.peer >= 0)
        linked[s->f.p.peer] = 1;
    for (int q = 0; q < ctx->nranks; q++)
        if (l->role[q] != FL_IDLE && l->peer[q] == ctx->rank)
            linked[q] = 1;
    fab_net_open(ctx, s->f.d, &s->own, linked, NULL, NULL);
    fl_free(linked);
    s->f.n = &s->own;
}

/* The state of a point whose layout passes `fault`, or an error or skip. */
static int fp_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, fl_shape *shape,
                    const char *(*fault)(const fl_layout *, int), fp_state **out)
{
    const fl_layout *l = pt->layout;
    const char *bad = l ? fault(l, ctx->nranks) : "a pattern benchmark needs a layout (--layouts)";
    if (bad) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", bad);
        return FL_ERROR;
    }
    int st = fab_skip(bs, shape);
    if (st == FL_OK)
        st = pair_check_buffers(pt, pt->size, ctx->nranks, shape);
    if (st != FL_OK)
        return st;
    fp_state *s = fl_alloc(sizeof *s);
    const int window = (int)fl_param_int(ctx->opts, "window");
    pair_init_layout(&s->f.p, ctx, pt, window);
    fab_pair_open(&s->f, bs, 2 * (int64_t)window + ctx->nranks + 2);
    fp_net(ctx, s, l);
    shape->batch_multiple = window; /* samples are whole windows */
    shape->timed = s->f.p.role != FL_IDLE;
    *out = s;
    return FL_OK;
}

static size_t region(const fp_state *s)
{
    return s->f.p.count * (size_t)s->f.p.buffers;
}

static void fp_info(const fp_state *s, fl_shape *shape, const char *extra)
{
    int n = fab_info_begin(s->f.run, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, "%s,\"window\":%d,\"buffers\":%lld}",
             extra, s->f.p.window, (long long)s->f.p.buffers);
}

/* bibw, saturation: send and receive regions by role. */
static int sr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape, const char *(*fault)(const fl_layout *, int))
{
    fab_run *r = bs;
    fp_state *s;
    int inject = r->dom.why[0] ? 0 : fab_use_inject(ctx, &r->dom, pt->size, shape->note);
    if (inject < 0)
        return FL_SKIP;
    int st = fp_begin(ctx, bs, pt, shape, fault, &s);
    if (st != FL_OK)
        return st;
    pair_state *p = &s->f.p;
    *state = s;
    s->f.inject = inject;
    if (p->role == FL_BOTH || p->role == FL_SENDER) {
        p->sbuf = fab_pair_region(&s->f, FI_SEND, &s->f.smr);
        shape->sent_bytes = pt->size;
        shape->messages = 1;
    }
    if (p->role == FL_BOTH || p->role == FL_RECEIVER) {
        p->rbuf = fab_pair_region(&s->f, FI_RECV, &s->f.rmr);
        shape->recv_bytes = pt->size;
    }
    fp_info(s, shape, s->f.inject ? ",\"path\":\"inject\"" : ",\"path\":\"send\"");
    return FL_OK;
}

static int bibw_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape)
{
    return sr_setup(ctx, bs, pt, state, shape, fl_exchange_fault);
}

static int saturation_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                            fl_shape *shape)
{
    return sr_setup(ctx, bs, pt, state, shape, fl_pairs_fault);
}

/* hotspot_put: a sender's source slots; the target's regions, one per
 * sender in rank order, whose keys every rank learns. */
static int hotspot_put_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                             fl_shape *shape)
{
    fp_state *s;
    const fl_layout *l = pt->layout;
    int st = fp_begin(ctx, bs, pt, shape, fl_hotspot_fault, &s);
    if (st != FL_OK)
        return st;
    pair_state *p = &s->f.p;
    const int delivery = fl_param_is(ctx->opts, "complete", "delivery");
    s->flags = FI_COMPLETION | (delivery ? FI_DELIVERY_COMPLETE : FI_TRANSMIT_COMPLETE);
    s->src = fl_alloc(sizeof *s->src * (size_t)ctx->nranks);
    for (int q = 0; q < ctx->nranks; q++)
        if (l->role[q] == FL_SENDER && l->peer[q] == p->peer && q < ctx->rank)
            s->region += region(s); /* a sender's place among its target's senders */
    if (p->role == FL_SENDER) {
        p->sbuf = fab_pair_region(&s->f, FI_WRITE, &s->f.smr);
        shape->sent_bytes = pt->size;
        shape->messages = 1;
    } else if (p->role == FL_TARGET) {
        for (int q = 0; q < ctx->nranks; q++)
            if (l->role[q] == FL_SENDER && l->peer[q] == ctx->rank)
                s->src[s->nsrc++] = q;
        const size_t bytes = region(s) * (size_t)(s->nsrc > 0 ? s->nsrc : 1);
        p->rbuf = fl_alloc(bytes);
        fab_mr_reg(s->f.d, s->f.n, p->rbuf, bytes, FI_REMOTE_WRITE, &s->f.rmr);
        shape->working_set = (int64_t)bytes;
        shape->recv_bytes = (int64_t)s->nsrc * pt->size;
        shape->timed = 0; /* passive: the data moves without its loop */
    }
    s->remote = fl_alloc(sizeof *s->remote * (size_t)ctx->nranks);
    fab_mr_share(ctx, &s->f.rmr, s->remote);
    *state = s;
    fp_info(s, shape, delivery ? ",\"complete\":\"delivery\",\"regions\":\"per_sender\""
                               : ",\"complete\":\"transmit\",\"regions\":\"per_sender\"");
    return FL_OK;
}

static void fp_teardown(const fl_ctx *ctx, void *state)
{
    fp_state *s = state;
    (void)ctx;
    fab_pair_close(&s->f);
    if (s->f.n == &s->own)
        fab_net_close(&s->own);
    fl_free(s->remote);
    fl_free(s->src);
    fl_free(s);
}

/* ---- measure ---- */

/* bibw: W receives posted, W sends, all complete, then an ack each way. */
static double bibw_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_exchange(state, &fab_ops, iters);
}

/* saturation: fabric.stream's window and ack per pair. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &fab_ops, iters);
}

/* hotspot_put: a sender's op i: slot i of its region to slot i of its
 * region at the target, with the context of its place j in the window. */
static inline void hotspot_write(fp_state *s, const fab_remote *t, int64_t i, int j)
{
    fab_pair *f = &s->f;
    const uint64_t off = (uint64_t)((f->p.next + i) % f->p.buffers) * f->p.count;
    struct iovec iov = {f->p.sbuf + off, f->p.count};
    struct fi_rma_iov rma = {t->base + s->region + off, f->p.count, t->key};
    struct fi_msg_rma m = {.msg_iov = &iov, .desc = &f->smr.desc, .iov_count = 1,
                           .addr = fab_addr(f->n, f->p.peer), .rma_iov = &rma,
                           .rma_iov_count = 1, .context = &f->fctx[j]};
    FAB_POST(f->n, fi_writemsg(fab_ep(f->n, f->p.peer), &m, s->flags), "fi_writemsg");
    f->n->tx_posted++;
}

/* hotspot_put: a sender's windows of fi_write into its region of the
 * target, then "done" once the clock stops; the target waits for every
 * sender's "done", progressing its provider meanwhile. */
static double hotspot_put_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fp_state *s = state;
    pair_state *p = &s->f.p;
    (void)ctx;
    if (p->role == FL_TARGET) {
        for (int k = 0; k < s->nsrc; k++)
            fab_ctrl_post(s->f.d, s->f.n, s->src[k], &s->f.fctx[k]);
        fab_wait_recvs(p, 0, s->nsrc);
        return 0.0;
    }
    if (p->role != FL_SENDER)
        return 0.0;
    const fab_remote t = s->remote[p->peer];
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += p->window) {
        const int k = pair_window_len(iters, d, p->window);
        for (int j = 0; j < k; j++)
            hotspot_write(s, &t, d + j, j);
        fab_wait_sends(p, d, k);
    }
    double e = pair_finish(p, iters, t0);
    fab_ack_send(p);
    return e;
}

/* ---- verify: one window of patterned data ---- */

static int64_t bibw_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, bibw_measure, checked);
}

static int64_t stream_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return pair_verify_window(ctx, st, stream_measure, checked);
}

/* Senders fill every slot the window uses with their flow's pattern; the
 * target zeroes every sender's region and, after every "done", checks
 * each distinct slot once. The barrier orders the stores before the
 * window. */
static int64_t hotspot_put_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    fp_state *s = state;
    pair_state *p = &s->f.p;
    const int64_t slots = p->window < p->buffers ? p->window : p->buffers;
    int64_t bad = 0;
    pair_verify_begin(p);
    if (p->role == FL_TARGET)
        memset(p->rbuf, 0, region(s) * (size_t)s->nsrc);
    MPI_Barrier(ctx->comm);
    hotspot_put_measure(ctx, state, p->window);
    p->next = 0;
    for (int q = 0; p->role == FL_TARGET && q < s->nsrc; q++)
        for (int64_t k = 0; k < slots; k++) {
            bad += fl_check(p->rbuf + region(s) * (size_t)q + (size_t)k * p->count, p->count,
                            pair_flow_seed(p, s->src[q], p->rank));
            *checked += (int64_t)p->count;
        }
    return bad + pair_verify_end(p, checked);
}

const fl_kernel fl_fabric_pattern_kernels[] = {
    {.name = "fabric.bibw", .init = fp_init_msg, .fini = fab_run_fini, .setup = bibw_setup,
     .measure = bibw_measure, .verify = bibw_verify, .teardown = fp_teardown},
    {.name = "fabric.saturation", .init = fp_init_msg, .fini = fab_run_fini,
     .setup = saturation_setup, .measure = stream_measure, .verify = stream_verify,
     .teardown = fp_teardown},
    {.name = "fabric.hotspot_put", .init = fp_init_rma, .fini = fab_run_fini,
     .setup = hotspot_put_setup, .measure = hotspot_put_measure, .verify = hotspot_put_verify,
     .teardown = fp_teardown},
    {.name = NULL},
};
