/* Family "fabric": libfabric below MPI between ranks 0 (sender or origin,
 * timed) and 1 (receiver or target); other ranks idle. The provider and
 * endpoints are opened once per run (fabric_plumbing.c), buffers registered
 * per point; every timed op is a libfabric call.
 *
 * - pingpong, stream: message.c's protocols, the pair loops (pair.h) over
 *   fi_tsend/fi_trecv (fi_send where the provider lacks FI_TAGGED); sends
 *   of at most the inject size go through fi_tinject under path=auto
 *   (path=inject|send forces one way). completion=block waits in
 *   fi_cq_sread on a queue with a wait object: seed 002's blocking against
 *   polling completion.
 * - put_lat, put_bw, get_bw: fi_write/fi_read of a window into (from) the
 *   target's registered region, then its completions; complete=delivery
 *   asks FI_DELIVERY_COMPLETE (the data is at the target), transmit
 *   FI_TRANSMIT_COMPLETE (the source may be reused). The target is passive
 *   but drives its provider's progress until the origin's zero-byte "done"
 *   message, sent after the clock stops.
 * - mr_reg: rank 0 registers and closes a region (fi_mr_reg, fi_close).
 *
 * Cache state as pair.h tells: op i uses slot (next + i) % buffers. */
#include "fabric.h"

#include <stdio.h>

/* ---- the pair of a libfabric point (fabric.h), on the plumbing's regions ---- */

void fab_pair_open(fab_pair *f, fab_run *r, int64_t contexts)
{
    f->run = r;
    f->d = &r->dom;
    f->n = &r->net;
    f->block = r->dom.block;
    f->fctx = contexts > 0 ? fl_alloc(sizeof *f->fctx * (size_t)contexts) : NULL;
}

char *fab_pair_region(fab_pair *f, uint64_t access, fab_mr *mr)
{
    const size_t bytes = f->p.count * (size_t)f->p.buffers;
    char *base = fl_alloc(bytes);
    fab_mr_reg(f->d, f->n, base, bytes, access, mr);
    return base;
}

void fab_pair_close(fab_pair *f)
{
    fab_mr_close(&f->smr);
    fab_mr_close(&f->rmr);
    fl_free(f->p.sbuf);
    fl_free(f->p.rbuf);
    fl_free(f->fctx);
}

typedef struct {
    fab_pair f;
    int read;               /* RMA: fi_read, else fi_write */
    uint64_t flags;         /* RMA op flags: FI_COMPLETION and the completion asked */
    fab_remote *remote;     /* RMA: every rank's region */
} fab_state;

/* The state of a point: regions of `buffers` slots on ranks 0 and 1,
 * registered for `saccess` and `raccess`. */
static int fab_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, fl_shape *shape,
                     int64_t window, uint64_t saccess, uint64_t raccess, fab_state **out)
{
    int st = fab_skip(bs, shape);
    if (st == FL_OK)
        st = pair_check_buffers(pt, pt->size, 1, shape);
    if (st != FL_OK)
        return st;
    fab_state *s = fl_alloc(sizeof *s);
    pair_state *p = &s->f.p;
    pair_init(p, ctx, pt, (int)window);
    fab_pair_open(&s->f, bs, 2 * window + 2);
    if (p->role != FL_IDLE) {
        p->sbuf = fab_pair_region(&s->f, saccess, &s->f.smr);
        p->rbuf = fab_pair_region(&s->f, raccess, &s->f.rmr);
    }
    shape->timed = ctx->rank == 0;
    *out = s;
    return FL_OK;
}

static void fab_teardown(const fl_ctx *ctx, void *state)
{
    fab_state *s = state;
    (void)ctx;
    fab_pair_close(&s->f);
    fl_free(s->remote);
    fl_free(s);
}

/* ---- send/receive: pingpong, stream ---- */

static int sr_init(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_MSG, 1);
}

static int sr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape, int64_t window, int legs)
{
    fab_state *s;
    int st = fab_begin(ctx, bs, pt, shape, window, FI_SEND, FI_RECV, &s);
    if (st != FL_OK)
        return st;
    s->f.inject = fab_use_inject(ctx, s->f.d, pt->size, shape->note);
    if (s->f.inject < 0) {
        fab_teardown(ctx, s);
        return FL_SKIP;
    }
    *state = s;
    shape->bytes_per_op = legs * pt->size;
    if (legs == 1)
        shape->batch_multiple = window; /* samples are whole windows */
    int n = fab_info_begin(s->f.run, shape);
    const char *completion = fl_param_find(ctx->opts, "completion");
    n += snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"path\":\"%s\"",
                  s->f.inject ? "inject" : "send");
    if (completion)
        n += snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"completion\":\"%s\"",
                      completion);
    if (legs == 1)
        n += snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"window\":%lld",
                      (long long)window);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"buffers\":%lld}",
             (long long)pt->buffers);
    return FL_OK;
}

static int pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    return sr_setup(ctx, bs, pt, state, shape, 1, 2);
}

/* Each rank posts its receive before the leg ahead of it (fab_ops). */
static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_round_trip(state, &fab_ops, iters);
}

static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_round_trip(ctx, state, pingpong_measure, checked);
}

static int stream_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    return sr_setup(ctx, bs, pt, state, shape, fl_param_int(ctx->opts, "window"), 1);
}

/* A window of sends against pre-posted receives, one zero-byte ack per
 * window, whose receive the sender posts before the window. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &fab_ops, iters);
}

static int64_t stream_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return pair_verify_window(ctx, state, stream_measure, checked);
}

/* ---- RMA: put_lat, put_bw, get_bw ---- */

static int rma_init(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_RMA, 1);
}

static int rma_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                     fl_shape *shape, int64_t window, int read)
{
    fab_state *s;
    const int delivery = fl_param_is(ctx->opts, "complete", "delivery");
    int st = fab_begin(ctx, bs, pt, shape, window, FI_WRITE | FI_READ,
                       FI_REMOTE_WRITE | FI_REMOTE_READ, &s);
    if (st != FL_OK)
        return st;
    s->read = read;
    s->flags = FI_COMPLETION | (read ? 0 : delivery ? FI_DELIVERY_COMPLETE : FI_TRANSMIT_COMPLETE);
    s->remote = fl_alloc(sizeof *s->remote * (size_t)ctx->nranks);
    fab_mr_share(ctx, &s->f.rmr, s->remote);
    *state = s;
    shape->bytes_per_op = pt->size;
    shape->batch_multiple = window;
    int n = fab_info_begin(s->f.run, shape);
    n += snprintf(shape->info + n, FL_INFO_LEN - (size_t)n,
                  ",\"op\":\"%s\",\"complete\":\"%s\",\"window\":%lld",
                  read ? "fi_read" : "fi_write", read ? "read" : delivery ? "delivery" : "transmit",
                  (long long)window);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"buffers\":%lld}",
             (long long)pt->buffers);
    return FL_OK;
}

static int put_lat_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    return rma_setup(ctx, bs, pt, state, shape, 1, 0);
}

static int put_bw_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    return rma_setup(ctx, bs, pt, state, shape, fl_param_int(ctx->opts, "window"), 0);
}

static int get_bw_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    return rma_setup(ctx, bs, pt, state, shape, fl_param_int(ctx->opts, "window"), 1);
}

/* Op i (the j-th of its window): slot i of the origin's region to (from)
 * slot i of the target's. */
static inline void rma_op(fab_state *s, int64_t i, int j)
{
    fab_pair *f = &s->f;
    const uint64_t off = (uint64_t)((f->p.next + i) % f->p.buffers) * f->p.count;
    const fab_remote t = s->remote[f->p.peer];
    struct iovec iov = {f->p.sbuf + off, f->p.count};
    struct fi_rma_iov rma = {t.base + off, f->p.count, t.key};
    struct fi_msg_rma m = {.msg_iov = &iov, .desc = &f->smr.desc, .iov_count = 1,
                           .addr = fab_addr(f->n, f->p.peer), .rma_iov = &rma,
                           .rma_iov_count = 1, .context = &f->fctx[j]};
    struct fid_ep *ep = fab_ep(f->n, f->p.peer);
    if (s->read)
        FAB_POST(f->n, fi_readmsg(ep, &m, s->flags), "fi_readmsg");
    else
        FAB_POST(f->n, fi_writemsg(ep, &m, s->flags), "fi_writemsg");
    f->n->tx_posted++;
}

/* The origin's windows, then "done" (an ack) to the target once the clock
 * stops; the target progresses its provider until "done" arrives. */
static double rma_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fab_state *s = state;
    pair_state *p = &s->f.p;
    (void)ctx;
    if (p->role == FL_RECEIVER) {
        fab_ack_ready(p);
        fab_ack_recv(p);
        return 0.0;
    }
    if (p->role != FL_SENDER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += p->window) {
        const int k = pair_window_len(iters, d, p->window);
        for (int j = 0; j < k; j++)
            rma_op(s, d + j, j);
        fab_wait_sends(p, d, k);
    }
    double t = pair_finish(p, iters, t0);
    fab_ack_send(p);
    return t;
}

/* One window from slot 0 (pair_verify_rma); "done" follows the ops on the
 * same endpoint, so the target checks after it. */
static int64_t rma_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    fab_state *s = state;
    return pair_verify_rma(ctx, state, rma_measure, s->read, checked);
}

/* ---- mr_reg: rank 0 alone ---- */

/* Registration for RMA where the provider offers it, else for send/receive. */
static int mr_init(const fl_ctx *ctx, void **bs)
{
    fab_run_init(ctx, bs, FAB_NEED_RMA, 1);
    fab_run *r = *bs;
    if (!r->dom.why[0])
        return FL_OK;
    fab_run_fini(ctx, r);
    return fab_run_init(ctx, bs, FAB_NEED_MSG, 1);
}

static uint64_t mr_access(const fab_dom *d)
{
    return d->rma ? FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE
                  : FI_SEND | FI_RECV;
}

static int mr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    fab_run *r = bs;
    int st = fab_skip(r, shape);
    if (st != FL_OK)
        return st;
    fab_state *s = fl_alloc(sizeof *s);
    pair_state *p = &s->f.p;
    fab_pair_open(&s->f, r, 0);
    p->count = (size_t)pt->size;
    p->role = ctx->rank == 0 ? FL_SENDER : FL_IDLE;
    if (p->role == FL_SENDER)
        p->sbuf = fl_alloc(p->count);
    p->seed = (uint64_t)pt->size * 0x9e3779b9ULL;
    *state = s;
    shape->bytes_per_op = 0;
    shape->timed = ctx->rank == 0;
    shape->buffers = 1;
    int n = fab_info_begin(r, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"access\":\"%s\",\"buffers\":1}",
             r->dom.rma ? "send|recv|read|write|remote_read|remote_write" : "send|recv");
    return FL_OK;
}

/* fi_mr_reg then fi_close of the same region, with one requested key. */
static double mr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fab_state *s = state;
    const pair_state *p = &s->f.p;
    const fab_dom *d = s->f.d;
    struct fid_mr *mr;
    const uint64_t access = mr_access(d), key = d->next_key;
    (void)ctx;
    if (p->role != FL_SENDER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        int rc = fi_mr_reg(d->domain, p->sbuf, p->count ? p->count : 1, access, 0, key, 0, &mr,
                           NULL);
        if (rc)
            fab_fail(rc, "fi_mr_reg");
        if ((rc = fi_close(&mr->fid)))
            fab_fail(rc, "fi_close");
    }
    return fl_now() - t0;
}

/* Registration leaves the region's contents as they were. */
static int64_t mr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    fab_state *s = state;
    pair_state *p = &s->f.p;
    if (p->role != FL_SENDER)
        return 0;
    fl_fill(p->sbuf, p->count, p->seed);
    mr_measure(ctx, state, 1);
    *checked += (int64_t)p->count;
    return fl_check(p->sbuf, p->count, p->seed);
}

const fl_kernel fl_fabric_kernels[] = {
    {.name = "fabric.pingpong", .init = sr_init, .fini = fab_run_fini, .setup = pingpong_setup,
     .measure = pingpong_measure, .verify = pingpong_verify, .teardown = fab_teardown},
    {.name = "fabric.stream", .init = sr_init, .fini = fab_run_fini, .setup = stream_setup,
     .measure = stream_measure, .verify = stream_verify, .teardown = fab_teardown},
    {.name = "fabric.put_lat", .init = rma_init, .fini = fab_run_fini, .setup = put_lat_setup,
     .measure = rma_measure, .verify = rma_verify, .teardown = fab_teardown},
    {.name = "fabric.put_bw", .init = rma_init, .fini = fab_run_fini, .setup = put_bw_setup,
     .measure = rma_measure, .verify = rma_verify, .teardown = fab_teardown},
    {.name = "fabric.get_bw", .init = rma_init, .fini = fab_run_fini, .setup = get_bw_setup,
     .measure = rma_measure, .verify = rma_verify, .teardown = fab_teardown},
    {.name = "fabric.mr_reg", .init = mr_init, .fini = fab_run_fini, .setup = mr_setup,
     .measure = mr_measure, .verify = mr_verify, .teardown = fab_teardown},
    {.name = NULL},
};
