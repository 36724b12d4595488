/* Family "fabric": libfabric below MPI between ranks 0 (sender or origin,
 * timed) and 1 (receiver or target); other ranks idle. The provider and
 * endpoints are opened once per run (fabric_plumbing.c), buffers registered per
 * point; every timed op is a libfabric call.
 *
 * - pingpong, stream: message.c's protocols over fi_tsend/fi_trecv (fi_send
 *   where the provider lacks FI_TAGGED); sends of at most the inject size go
 *   through fi_tinject under path=auto (path=inject|send forces one way).
 *   completion=block waits in fi_cq_sread on a queue with a wait object:
 *   seed 002's blocking against polling completion.
 * - put_lat, put_bw, get_bw: fi_write/fi_read of a window into (from) the
 *   target's registered region, then its completions; complete=delivery
 *   asks FI_DELIVERY_COMPLETE (the data is at the target), transmit
 *   FI_TRANSMIT_COMPLETE (the source may be reused). The target is passive
 *   but drives its provider's progress until the origin's zero-byte "done"
 *   message, sent after the clock stops.
 * - mr_reg: rank 0 registers and closes a region (fi_mr_reg, fi_close).
 *
 * Cache state as message.c: op i uses slot (next + i) % buffers. */
#include "fabric.h"

#include <stdio.h>
#include <string.h>

enum { IDLE, SENDER, RECEIVER };

typedef struct {
    fab_run *run;
    fab_dom *d;
    fab_net *n;
    int role, peer, inject, block, window, read;
    uint64_t flags;         /* RMA op flags: FI_COMPLETION and the completion asked */
    size_t count;
    int64_t buffers, next;
    char *sbuf, *rbuf;      /* RMA: origin's local region, target's exposed one */
    fab_mr smr, rmr;
    fab_remote *remote;     /* RMA: every rank's region */
    struct fi_context2 *fctx; /* window + 2: each outstanding op has its own */
    uint64_t seed;
} fab_state;

static inline char *sslot(const fab_state *s, int64_t i)
{
    return fl_slot(s->sbuf, (int64_t)s->count, s->buffers, s->next + i);
}

static inline char *rslot(const fab_state *s, int64_t i)
{
    return fl_slot(s->rbuf, (int64_t)s->count, s->buffers, s->next + i);
}

static inline double finish(fab_state *s, int64_t iters, double t0)
{
    double t = fl_now() - t0;
    s->next += iters;
    return t;
}

/* The state of a point: regions of `buffers` slots on ranks 0 and 1,
 * registered for `saccess` and `raccess`. */
static int fab_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, fl_shape *shape,
                     int64_t window, uint64_t saccess, uint64_t raccess, fab_state **out)
{
    fab_run *r = bs;
    int st = fab_skip(r, shape);
    if (st != FL_OK)
        return st;
    if (pt->buffers < 1 || (pt->size > 0 && pt->buffers > INT64_MAX / pt->size)) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
                 (long long)pt->buffers);
        return FL_ERROR;
    }
    fab_state *s = fl_alloc(sizeof *s);
    s->run = r;
    s->d = &r->dom;
    s->n = &r->net;
    s->block = r->dom.block;
    s->window = (int)window;
    s->count = (size_t)pt->size;
    s->buffers = pt->buffers;
    s->seed = (uint64_t)pt->size * 0x100000001b3ULL;
    if (ctx->rank < 2) {
        s->role = ctx->rank == 0 ? SENDER : RECEIVER;
        s->peer = fl_peer(ctx);
        s->sbuf = fl_alloc(s->count * (size_t)s->buffers);
        s->rbuf = fl_alloc(s->count * (size_t)s->buffers);
        s->fctx = fl_alloc(sizeof *s->fctx * (size_t)(window + 2));
        fab_mr_reg(s->d, s->n, s->sbuf, s->count * (size_t)s->buffers, saccess, &s->smr);
        fab_mr_reg(s->d, s->n, s->rbuf, s->count * (size_t)s->buffers, raccess, &s->rmr);
    }
    shape->timed = ctx->rank == 0;
    *out = s;
    return FL_OK;
}

static void fab_teardown(const fl_ctx *ctx, void *state)
{
    fab_state *s = state;
    (void)ctx;
    fab_mr_close(&s->smr);
    fab_mr_close(&s->rmr);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->fctx);
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
    s->inject = fab_use_inject(ctx, s->d, pt->size, shape->note);
    if (s->inject < 0) {
        fab_teardown(ctx, s);
        return FL_SKIP;
    }
    *state = s;
    shape->bytes_per_op = legs * pt->size;
    if (legs == 1)
        shape->batch_multiple = window; /* samples are whole windows */
    int n = fab_info_begin(s->run, shape);
    const char *completion = fl_param_find(ctx->opts, "completion");
    n += snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"path\":\"%s\"",
                  s->inject ? "inject" : "send");
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

/* One message of slot i to the peer: injected, or sent and completed. */
static inline void pp_send(fab_state *s, int64_t i)
{
    if (s->inject) {
        fab_inject(s->d, s->n, s->peer, sslot(s, i), s->count, FAB_TAG_DATA);
        return;
    }
    fab_send(s->d, s->n, s->peer, sslot(s, i), s->count, s->smr.desc, FAB_TAG_DATA, &s->fctx[1]);
    fab_wait_tx(s->n, s->block);
}

static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fab_state *s = state;
    (void)ctx;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t i = 0; i < iters; i++) {
            fab_recv(s->d, s->n, s->peer, rslot(s, i), s->count, s->rmr.desc, FAB_TAG_DATA,
                     &s->fctx[0]);
            pp_send(s, i);
            fab_wait_rx(s->n, s->block);
        }
    else if (s->role == RECEIVER)
        for (int64_t i = 0; i < iters; i++) {
            fab_recv(s->d, s->n, s->peer, rslot(s, i), s->count, s->rmr.desc, FAB_TAG_DATA,
                     &s->fctx[0]);
            fab_wait_rx(s->n, s->block);
            pp_send(s, i);
        }
    return finish(s, iters, t0);
}

/* One round trip (slot 0) with patterned data both ways; each side checks
 * what it got. */
static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    fab_state *s = state;
    if (s->role == IDLE)
        return 0;
    s->next = 0;
    int64_t bad = fl_verify_round_trip(ctx, state, pingpong_measure, sslot(s, 0), rslot(s, 0),
                                       (size_t)s->count, s->peer, s->seed, checked);
    s->next = 0; /* back to the slots the round trip used */
    s->seed += 4;
    return bad;
}

static int stream_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    return sr_setup(ctx, bs, pt, state, shape, fl_param_int(ctx->opts, "window"), 1);
}

static inline int window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

/* A window of sends against pre-posted receives, one zero-byte ack per window. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fab_state *s = state;
    fab_net *n = s->n;
    const int w = s->window;
    (void)ctx;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t d = 0; d < iters; d += w) {
            const int k = window_len(iters, d, w);
            fab_ctrl_post(s->d, n, s->peer, &s->fctx[w]);
            for (int j = 0; j < k; j++)
                if (s->inject)
                    fab_inject(s->d, n, s->peer, sslot(s, d + j), s->count, FAB_TAG_DATA);
                else
                    fab_send(s->d, n, s->peer, sslot(s, d + j), s->count, s->smr.desc,
                             FAB_TAG_DATA, &s->fctx[j]);
            fab_wait_tx(n, s->block);
            fab_wait_rx(n, s->block);
        }
    else if (s->role == RECEIVER)
        for (int64_t d = 0; d < iters; d += w) {
            const int k = window_len(iters, d, w);
            for (int j = 0; j < k; j++)
                fab_recv(s->d, n, s->peer, rslot(s, d + j), s->count, s->rmr.desc, FAB_TAG_DATA,
                         &s->fctx[j]);
            fab_wait_rx(n, s->block);
            fab_ctrl_send(s->d, n, s->peer, &s->fctx[w + 1]);
            fab_wait_tx(n, s->block);
        }
    return finish(s, iters, t0);
}

/* One full window of patterned messages, all with one seed; the receiver
 * checks every distinct slot it wrote once. */
static int64_t stream_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    fab_state *s = state;
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    int64_t bad = 0;
    if (s->role == IDLE)
        return 0;
    s->next = 0;
    for (int64_t k = 0; k < slots; k++)
        if (s->role == SENDER)
            fl_fill(sslot(s, k), s->count, s->seed);
        else
            memset(rslot(s, k), 0, s->count);
    stream_measure(ctx, state, s->window);
    s->next = 0;
    if (s->role == RECEIVER) {
        for (int64_t k = 0; k < slots; k++)
            bad += fl_check(rslot(s, k), s->count, s->seed);
        *checked += (int64_t)s->count * slots;
    }
    s->seed++;
    return bad;
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
    fab_mr_share(ctx, &s->rmr, s->remote);
    *state = s;
    shape->bytes_per_op = pt->size;
    shape->batch_multiple = window;
    int n = fab_info_begin(s->run, shape);
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

/* Op i: slot i of the origin's region to (from) slot i of the target's. */
static inline void rma_op(fab_state *s, int64_t i, void *fctx)
{
    const int64_t slot = (s->next + i) % s->buffers;
    const uint64_t off = (uint64_t)slot * s->count;
    struct iovec iov = {s->sbuf + off, s->count};
    struct fi_rma_iov rma = {s->remote[s->peer].base + off, s->count, s->remote[s->peer].key};
    struct fi_msg_rma m = {.msg_iov = &iov, .desc = &s->smr.desc, .iov_count = 1,
                           .addr = fab_addr(s->n, s->peer), .rma_iov = &rma,
                           .rma_iov_count = 1, .context = fctx};
    struct fid_ep *ep = fab_ep(s->n, s->peer);
    if (s->read)
        FAB_POST(s->n, fi_readmsg(ep, &m, s->flags), "fi_readmsg");
    else
        FAB_POST(s->n, fi_writemsg(ep, &m, s->flags), "fi_writemsg");
    s->n->tx_posted++;
}

/* The origin's windows, then "done" to the target once the clock stops;
 * the target progresses its provider until "done" arrives. */
static double rma_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fab_state *s = state;
    const int w = s->window;
    (void)ctx;
    if (s->role == RECEIVER) {
        fab_ctrl_post(s->d, s->n, s->peer, &s->fctx[w]);
        fab_wait_rx(s->n, 0);
        return 0.0;
    }
    if (s->role != SENDER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += w) {
        const int k = window_len(iters, d, w);
        for (int j = 0; j < k; j++)
            rma_op(s, d + j, &s->fctx[j]);
        fab_wait_tx(s->n, 0);
    }
    double t = finish(s, iters, t0);
    fab_ctrl_send(s->d, s->n, s->peer, &s->fctx[w + 1]);
    fab_wait_tx(s->n, 0);
    return t;
}

/* One window from slot 0, every op with one pattern: the source fills the
 * slots, the destination zeroes them; after "done" (which follows the ops
 * on the same endpoint) the destination checks each distinct slot once. */
static int64_t rma_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    fab_state *s = state;
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    const int source = s->read ? RECEIVER : SENDER;
    char *region = s->role == SENDER ? s->sbuf : s->rbuf;
    int64_t bad = 0;
    if (s->role == IDLE)
        return 0;
    for (int64_t k = 0; k < slots; k++)
        if (s->role == source)
            fl_fill(region + k * (int64_t)s->count, s->count, s->seed);
        else
            memset(region + k * (int64_t)s->count, 0, s->count);
    s->next = 0;
    MPI_Barrier(ctx->comm);
    rma_measure(ctx, state, s->window);
    s->next = 0;
    if (s->role != source) {
        for (int64_t k = 0; k < slots; k++)
            bad += fl_check(region + k * (int64_t)s->count, s->count, s->seed);
        *checked += (int64_t)s->count * slots;
    }
    s->seed++;
    return bad;
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
    s->run = r;
    s->d = &r->dom;
    s->n = &r->net;
    s->count = (size_t)pt->size;
    s->role = ctx->rank == 0 ? SENDER : IDLE;
    if (s->role == SENDER)
        s->sbuf = fl_alloc(s->count);
    s->seed = (uint64_t)pt->size * 0x9e3779b9ULL;
    *state = s;
    shape->bytes_per_op = 0;
    shape->timed = ctx->rank == 0;
    int n = fab_info_begin(r, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n, ",\"access\":\"%s\",\"buffers\":1}",
             r->dom.rma ? "send|recv|read|write|remote_read|remote_write" : "send|recv");
    return FL_OK;
}

/* fi_mr_reg then fi_close of the same region, with one requested key. */
static double mr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    fab_state *s = state;
    struct fid_mr *mr;
    const uint64_t access = mr_access(s->d), key = s->d->next_key;
    (void)ctx;
    if (s->role != SENDER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        int rc = fi_mr_reg(s->d->domain, s->sbuf, s->count ? s->count : 1, access, 0, key, 0,
                           &mr, NULL);
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
    if (s->role != SENDER)
        return 0;
    fl_fill(s->sbuf, s->count, s->seed);
    mr_measure(ctx, state, 1);
    *checked += (int64_t)s->count;
    return fl_check(s->sbuf, s->count, s->seed);
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
