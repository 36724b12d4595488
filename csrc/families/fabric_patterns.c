/* Family "fabric", traffic patterns: libfabric among many ranks at once,
 * each rank following the role and peer its layout gives it (Python decides
 * layouts: measure/patterns.py), as message_patterns.c and
 * deposit_patterns.c do over MPI.
 *
 * - bibw ("bipairs"): both ranks of a pair send a window at each other at
 *   once, then a zero-byte ack each way.
 * - saturation ("pairs"): pairs run fabric.stream's protocol side by side.
 * - hotspot_put ("hotspot"): senders fi_write windows into the target, each
 *   into its own region; the target is passive (not timed) but progresses
 *   its provider until every sender's "done" arrives.
 *
 * rdm endpoints are opened once per run; msg endpoints connect the pairs of
 * each point's layout. Cache state: op i uses slot (next + i) % buffers. */
#include "fabric.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    fab_run *run;
    fab_dom *d;
    fab_net *n;
    fab_net own;          /* msg: this point's connections */
    char role;            /* FL_* role letter */
    int peer, rank, nranks, window, inject;
    uint64_t flags;       /* hotspot_put: op flags of fi_writemsg */
    size_t count;
    int64_t buffers, next;
    char *sbuf, *rbuf;    /* hotspot target: one region of `buffers` slots per sender */
    fab_mr smr, rmr;
    fab_remote *remote;   /* hotspot_put: every rank's region */
    uint64_t region;      /* hotspot sender: its region's offset in the target's */
    int nsrc, *src;       /* hotspot target: its senders, in rank order */
    struct fi_context2 *fctx; /* 2 x window + nranks + 2 */
    uint64_t seed;
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
    if (s->run->open) {
        s->n = &s->run->net;
        return;
    }
    char *linked = fl_alloc((size_t)ctx->nranks);
    if (s->peer >= 0)
        linked[s->peer] = 1;
    for (int q = 0; q < ctx->nranks; q++)
        if (l->role[q] != FL_IDLE && l->peer[q] == ctx->rank)
            linked[q] = 1;
    fab_net_open(ctx, s->d, &s->own, linked, NULL, NULL);
    fl_free(linked);
    s->n = &s->own;
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
    if (st != FL_OK)
        return st;
    if (pt->buffers < 1 || (pt->size > 0 && pt->buffers > INT64_MAX / pt->size / ctx->nranks)) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
                 (long long)pt->buffers);
        return FL_ERROR;
    }
    fp_state *s = fl_alloc(sizeof *s);
    s->run = bs;
    s->d = &s->run->dom;
    s->role = l->role[ctx->rank];
    s->peer = s->role == FL_IDLE ? -1 : l->peer[ctx->rank];
    s->rank = ctx->rank;
    s->nranks = ctx->nranks;
    s->window = (int)fl_param_int(ctx->opts, "window");
    s->count = (size_t)pt->size;
    s->buffers = pt->buffers;
    s->seed = (uint64_t)pt->size * 0x100000001b3ULL + 17;
    s->fctx = fl_alloc(sizeof *s->fctx * (size_t)(2 * s->window + ctx->nranks + 2));
    fp_net(ctx, s, l);
    shape->batch_multiple = s->window; /* samples are whole windows */
    shape->timed = s->role != FL_IDLE;
    *out = s;
    return FL_OK;
}

static size_t region(const fp_state *s)
{
    return s->count * (size_t)s->buffers;
}

static void fp_info(const fp_state *s, fl_shape *shape, const char *extra)
{
    int n = fab_info_begin(s->run, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, "%s,\"window\":%d,\"buffers\":%lld}",
             extra, s->window, (long long)s->buffers);
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
    *state = s;
    s->inject = inject;
    if (s->role == FL_BOTH || s->role == FL_SENDER) {
        s->sbuf = fl_alloc(region(s));
        fab_mr_reg(s->d, s->n, s->sbuf, region(s), FI_SEND, &s->smr);
        shape->sent_bytes = pt->size;
        shape->messages = 1;
    }
    if (s->role == FL_BOTH || s->role == FL_RECEIVER) {
        s->rbuf = fl_alloc(region(s));
        fab_mr_reg(s->d, s->n, s->rbuf, region(s), FI_RECV, &s->rmr);
        shape->recv_bytes = pt->size;
    }
    fp_info(s, shape, s->inject ? ",\"path\":\"inject\"" : ",\"path\":\"send\"");
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
    const int delivery = fl_param_is(ctx->opts, "complete", "delivery");
    s->flags = FI_COMPLETION | (delivery ? FI_DELIVERY_COMPLETE : FI_TRANSMIT_COMPLETE);
    s->src = fl_alloc(sizeof *s->src * (size_t)ctx->nranks);
    for (int q = 0; q < ctx->nranks; q++)
        if (l->role[q] == FL_SENDER && l->peer[q] == s->peer && q < ctx->rank)
            s->region += region(s); /* a sender's place among its target's senders */
    if (s->role == FL_SENDER) {
        s->sbuf = fl_alloc(region(s));
        fab_mr_reg(s->d, s->n, s->sbuf, region(s), FI_WRITE, &s->smr);
        shape->sent_bytes = pt->size;
        shape->messages = 1;
    } else if (s->role == FL_TARGET) {
        for (int q = 0; q < ctx->nranks; q++)
            if (l->role[q] == FL_SENDER && l->peer[q] == ctx->rank)
                s->src[s->nsrc++] = q;
        s->rbuf = fl_alloc(region(s) * (size_t)(s->nsrc > 0 ? s->nsrc : 1));
        fab_mr_reg(s->d, s->n, s->rbuf, region(s) * (size_t)(s->nsrc > 0 ? s->nsrc : 1),
                   FI_REMOTE_WRITE, &s->rmr);
        shape->recv_bytes = (int64_t)s->nsrc * pt->size;
        shape->timed = 0; /* passive: the data moves without its loop */
    }
    s->remote = fl_alloc(sizeof *s->remote * (size_t)ctx->nranks);
    fab_mr_share(ctx, &s->rmr, s->remote);
    *state = s;
    fp_info(s, shape, delivery ? ",\"complete\":\"delivery\",\"regions\":\"per_sender\""
                               : ",\"complete\":\"transmit\",\"regions\":\"per_sender\"");
    return FL_OK;
}

static void fp_teardown(const fl_ctx *ctx, void *state)
{
    fp_state *s = state;
    (void)ctx;
    fab_mr_close(&s->smr);
    fab_mr_close(&s->rmr);
    if (s->n == &s->own)
        fab_net_close(&s->own);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->remote);
    fl_free(s->src);
    fl_free(s->fctx);
    fl_free(s);
}

/* ---- measure ---- */

static inline char *sslot(const fp_state *s, int64_t i)
{
    return fl_slot(s->sbuf, (int64_t)s->count, s->buffers, s->next + i);
}

static inline char *rslot(const fp_state *s, int64_t i)
{
    return fl_slot(s->rbuf, (int64_t)s->count, s->buffers, s->next + i);
}

static inline int window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

static inline double finish(fp_state *s, int64_t iters, double t0)
{
    double t = fl_now() - t0;
    s->next += iters;
    return t;
}

/* Sends ops d..d+k-1 to the peer; op j's context is fctx[first + j]. */
static inline void send_window(fp_state *s, int64_t d, int k, int first)
{
    for (int j = 0; j < k; j++)
        if (s->inject)
            fab_inject(s->d, s->n, s->peer, sslot(s, d + j), s->count, FAB_TAG_DATA);
        else
            fab_send(s->d, s->n, s->peer, sslot(s, d + j), s->count, s->smr.desc, FAB_TAG_DATA,
                     &s->fctx[first + j]);
}

static inline void recv_window(fp_state *s, int64_t d, int k)
{
    for (int j = 0; j < k; j++)
        fab_recv(s->d, s->n, s->peer, rslot(s, d + j), s->count, s->rmr.desc, FAB_TAG_DATA,
                 &s->fctx[j]);
}

/* bibw: W receives posted, W sends, all complete, then an ack each way. */
static double bibw_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fp_state *s = state;
    const int w = s->window;
    (void)ctx;
    if (s->role != FL_BOTH)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += w) {
        const int k = window_len(iters, d, w);
        recv_window(s, d, k);
        send_window(s, d, k, w);
        fab_wait_tx(s->n, 0);
        fab_wait_rx(s->n, 0);
        fab_ctrl_post(s->d, s->n, s->peer, &s->fctx[2 * w]);
        fab_ctrl_send(s->d, s->n, s->peer, &s->fctx[2 * w + 1]);
        fab_wait_rx(s->n, 0);
        fab_wait_tx(s->n, 0);
    }
    return finish(s, iters, t0);
}

/* saturation: fabric.stream's window and ack per pair. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fp_state *s = state;
    const int w = s->window;
    (void)ctx;
    if (s->role != FL_SENDER && s->role != FL_RECEIVER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += w) {
        const int k = window_len(iters, d, w);
        if (s->role == FL_SENDER) {
            fab_ctrl_post(s->d, s->n, s->peer, &s->fctx[2 * w]);
            send_window(s, d, k, 0);
        } else {
            recv_window(s, d, k);
        }
        fab_wait_tx(s->n, 0);
        fab_wait_rx(s->n, 0);
        if (s->role == FL_RECEIVER)
            fab_ctrl_send(s->d, s->n, s->peer, &s->fctx[2 * w + 1]);
    }
    fab_wait_tx(s->n, 0);
    return finish(s, iters, t0);
}

/* hotspot_put: a sender's windows of fi_write into its region of the
 * target, then "done" once the clock stops; the target waits for every
 * sender's "done", progressing its provider meanwhile. */
static double hotspot_put_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fp_state *s = state;
    const int w = s->window;
    (void)ctx;
    if (s->role == FL_TARGET) {
        for (int k = 0; k < s->nsrc; k++)
            fab_ctrl_post(s->d, s->n, s->src[k], &s->fctx[k]);
        fab_wait_rx(s->n, 0);
        return 0.0;
    }
    if (s->role != FL_SENDER)
        return 0.0;
    const fab_remote t = s->remote[s->peer];
    struct fid_ep *ep = fab_ep(s->n, s->peer);
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += w) {
        const int k = window_len(iters, d, w);
        for (int j = 0; j < k; j++) {
            const uint64_t off = (uint64_t)((s->next + d + j) % s->buffers) * s->count;
            struct iovec iov = {s->sbuf + off, s->count};
            struct fi_rma_iov rma = {t.base + s->region + off, s->count, t.key};
            struct fi_msg_rma m = {.msg_iov = &iov, .desc = &s->smr.desc, .iov_count = 1,
                                   .addr = fab_addr(s->n, s->peer), .rma_iov = &rma,
                                   .rma_iov_count = 1, .context = &s->fctx[j]};
            FAB_POST(s->n, fi_writemsg(ep, &m, s->flags), "fi_writemsg");
            s->n->tx_posted++;
        }
        fab_wait_tx(s->n, 0);
    }
    double e = finish(s, iters, t0);
    fab_ctrl_send(s->d, s->n, s->peer, &s->fctx[w]);
    fab_wait_tx(s->n, 0);
    return e;
}

/* ---- verify: one window of patterned data ---- */

static inline uint64_t flow_seed(const fp_state *s, int from, int to)
{
    return s->seed + (uint64_t)from * (uint64_t)s->nranks + (uint64_t)to;
}

/* Senders fill every slot the window uses with their flow's pattern;
 * receivers (a hotspot target: every sender's region) zero them, then
 * check each distinct slot once. */
static int64_t fp_verify(const fl_ctx *ctx, void *state, int64_t *checked,
                         double (*measure)(const fl_ctx *, void *, int64_t))
{
    fp_state *s = state;
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    const int sends = s->role == FL_BOTH || s->role == FL_SENDER;
    const int receives = s->role == FL_BOTH || s->role == FL_RECEIVER;
    int64_t bad = 0;
    s->next = 0;
    for (int64_t k = 0; k < slots; k++) {
        if (sends)
            fl_fill(sslot(s, k), s->count, flow_seed(s, s->rank, s->peer));
        if (receives)
            memset(rslot(s, k), 0, s->count);
    }
    if (s->role == FL_TARGET)
        memset(s->rbuf, 0, region(s) * (size_t)s->nsrc);
    MPI_Barrier(ctx->comm);
    measure(ctx, state, s->window);
    s->next = 0;
    for (int64_t k = 0; receives && k < slots; k++) {
        bad += fl_check(rslot(s, k), s->count, flow_seed(s, s->peer, s->rank));
        *checked += (int64_t)s->count;
    }
    for (int q = 0; s->role == FL_TARGET && q < s->nsrc; q++)
        for (int64_t k = 0; k < slots; k++) {
            bad += fl_check(s->rbuf + region(s) * (size_t)q + (size_t)k * s->count, s->count,
                            flow_seed(s, s->src[q], s->rank));
            *checked += (int64_t)s->count;
        }
    s->seed += (uint64_t)s->nranks * (uint64_t)s->nranks;
    return bad;
}

static int64_t bibw_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return fp_verify(ctx, st, checked, bibw_measure);
}

static int64_t stream_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return fp_verify(ctx, st, checked, stream_measure);
}

static int64_t hotspot_put_verify(const fl_ctx *ctx, void *st, int64_t *checked)
{
    return fp_verify(ctx, st, checked, hotspot_put_measure);
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
