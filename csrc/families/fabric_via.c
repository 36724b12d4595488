/* Family "fabric", the VI Architecture experiments (seed 002) on VIA's
 * descendant, between ranks 0 (sender, timed) and 1 (receiver), as via.c
 * tells; message_conns.c and message_scatter.c are the MPI forms.
 *
 * - conns: C endpoints per side, op i on endpoint i % C. The receiver
 *   learns which endpoint holds data from one completion queue shared by
 *   all C (check=cq: the entry's context names the endpoint) or by reading
 *   each endpoint's own queue in turn (check=scan): seed 002 Table 2.
 * - scatter: fabric.stream's window (the pair loop pair_stream) of messages
 *   of `segments` segments of SIZE bytes, landing every other block of the receiver's region:
 *   scattered by the provider (one fi_trecvv with an iovec per segment, up
 *   to its rx iov_limit) or received contiguously and unpacked by the
 *   program (mode=copy): seed 002 Fig. 4 and 5. */
#include "fabric.h"
#include "via.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    fab_run *run;
    fab_dom *d;
    int role, peer, conns, scan;
    size_t size;
    int64_t buffers;
    fab_net *nets;             /* one endpoint per connection */
    struct fid_cq *shared;     /* check=cq: every endpoint's receive queue */
    char *sbuf, *rbuf;
    fab_mr *smr, *rmr;         /* per endpoint (FI_MR_ENDPOINT binds a region to one) */
    int64_t *op;               /* receiver: the op each endpoint's receive is for */
    struct fi_context2 *fctx;  /* per endpoint, and two for the ack */
} conns_state;

static int via_init(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_MSG, 1);
}

static int conns_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                       fl_shape *shape)
{
    fab_run *r = bs;
    int st = fab_skip(r, shape);
    if (st != FL_OK)
        return st;
    conns_state *s = fl_alloc(sizeof *s);
    s->run = r;
    s->d = &r->dom;
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->peer = fl_peer(ctx);
    s->conns = (int)pt->conns;
    s->scan = fl_param_is(ctx->opts, "check", "scan");
    s->size = (size_t)pt->size;
    s->buffers = pt->buffers;
    s->nets = fl_alloc(sizeof *s->nets * (size_t)s->conns);
    s->smr = fl_alloc(sizeof *s->smr * (size_t)s->conns);
    s->rmr = fl_alloc(sizeof *s->rmr * (size_t)s->conns);
    s->op = fl_alloc(sizeof *s->op * (size_t)s->conns);
    s->fctx = fl_alloc(sizeof *s->fctx * (size_t)(s->conns + 2));
    s->sbuf = fl_alloc(s->size * (size_t)s->buffers);
    s->rbuf = fl_alloc(s->size * (size_t)s->buffers);
    if (!s->scan)
        s->shared = fab_cq_open(s->d);
    char *linked = fl_alloc((size_t)ctx->nranks);
    if (s->role != IDLE)
        linked[s->peer] = 1;
    for (int k = 0; k < s->conns; k++) {
        fab_net_open(ctx, s->d, &s->nets[k], linked, NULL, s->shared);
        fab_mr_reg(s->d, &s->nets[k], s->sbuf, s->size * (size_t)s->buffers, FI_SEND, &s->smr[k]);
        fab_mr_reg(s->d, &s->nets[k], s->rbuf, s->size * (size_t)s->buffers, FI_RECV, &s->rmr[k]);
    }
    fl_free(linked);
    shape->bytes_per_op = pt->size;
    shape->timed = s->role == SENDER;
    shape->batch_multiple = rounds_multiple(s->conns);
    int n = fab_info_begin(r, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n,
             ",\"check\":\"%s\",\"conns\":%d,\"buffers\":%lld}", s->scan ? "scan" : "cq",
             s->conns, (long long)pt->buffers);
    *state = s;
    return FL_OK;
}

static void conns_teardown(const fl_ctx *ctx, void *state)
{
    conns_state *s = state;
    (void)ctx;
    for (int k = 0; k < s->conns; k++) {
        fab_mr_close(&s->smr[k]);
        fab_mr_close(&s->rmr[k]);
        fab_net_close(&s->nets[k]);
    }
    if (s->shared)
        fab_close(&s->shared->fid);
    fl_free(s->nets);
    fl_free(s->smr);
    fl_free(s->rmr);
    fl_free(s->op);
    fl_free(s->fctx);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s);
}

/* Endpoint k's data tag: a provider may match the receives of all the
 * endpoints of a domain in one shared context (tcp's rdm endpoints do), and
 * the peer's address alone, the same index in every endpoint's address
 * vector, would then let endpoint j's receive take endpoint k's message. */
static inline uint64_t conn_tag(int k)
{
    return FAB_TAG_DATA | (uint64_t)k << 8;
}

/* Op i on endpoint i % C; an endpoint's next send waits for its previous
 * one, so at most C are outstanding. Then the receiver's ack. */
static void conns_send(conns_state *s, int64_t iters)
{
    fab_ctrl_post(s->d, &s->nets[0], s->peer, &s->fctx[s->conns]);
    for (int64_t i = 0; i < iters; i++) {
        const int k = (int)(i % s->conns);
        fab_net *n = &s->nets[k];
        fab_wait_tx(n, 0);
        fab_send(s->d, n, s->peer, fl_slot(s->sbuf, (int64_t)s->size, s->buffers, i), s->size,
                 s->smr[k].desc, conn_tag(k), &s->fctx[k]);
    }
    for (int k = 0; k < s->conns; k++)
        fab_wait_tx(&s->nets[k], 0);
    fab_wait_rx(&s->nets[0], 0);
}

/* Endpoint k's receive is for op k, then k + C, ...: re-posted while ops
 * are due. A full queue (-FI_EAGAIN) is progressed by reading no entry, so
 * that every completion is left to the loop that tells the endpoints apart. */
static inline void conns_post(conns_state *s, int k, int64_t iters)
{
    fab_net *n = &s->nets[k];
    if (s->op[k] >= iters)
        return;
    void *buf = fl_slot(s->rbuf, (int64_t)s->size, s->buffers, s->op[k]);
    ssize_t rc;
    while ((rc = s->d->tagged ? fi_trecv(n->ep ? n->ep : n->eps[s->peer], buf, s->size,
                                         s->rmr[k].desc, fab_addr(n, s->peer), conn_tag(k), 0,
                                         &s->fctx[k])
                              : fi_recv(n->ep ? n->ep : n->eps[s->peer], buf, s->size,
                                        s->rmr[k].desc, fab_addr(n, s->peer), &s->fctx[k])) ==
           -FI_EAGAIN)
        fi_cq_read(n->rxcq, NULL, 0);
    if (rc)
        fab_fail((int)rc, "fi_trecv");
    n->rx_posted++;
}

/* check=cq: one queue; each entry's context is the endpoint's fi_context2. */
static void conns_recv_cq(conns_state *s, int64_t iters)
{
    struct fi_cq_entry e[16];
    for (int64_t left = iters; left > 0;) {
        ssize_t r = fi_cq_read(s->shared, e, 16);
        if (r == -FI_EAGAIN)
            continue;
        if (r < 0)
            fab_cq_fail(s->shared, r, "fi_cq_read");
        for (ssize_t x = 0; x < r; x++) {
            const int k = (int)((struct fi_context2 *)e[x].op_context - s->fctx);
            s->op[k] += s->conns;
            conns_post(s, k, iters);
        }
        left -= r;
    }
}

/* check=scan: each endpoint's own queue read in turn. */
static void conns_recv_scan(conns_state *s, int64_t iters, int n)
{
    struct fi_cq_entry e;
    for (int64_t left = iters, k = 0; left > 0; k = k + 1 == n ? 0 : k + 1) {
        ssize_t r = fi_cq_read(s->nets[k].rxcq, &e, 1);
        if (r == -FI_EAGAIN)
            continue;
        if (r < 0)
            fab_cq_fail(s->nets[k].rxcq, r, "fi_cq_read");
        left--;
        s->op[k] += s->conns;
        conns_post(s, (int)k, iters);
    }
}

static void conns_recv(conns_state *s, int64_t iters)
{
    const int n = iters < s->conns ? (int)iters : s->conns;
    for (int k = 0; k < n; k++) {
        s->op[k] = k;
        conns_post(s, k, iters);
    }
    if (s->scan)
        conns_recv_scan(s, iters, n);
    else
        conns_recv_cq(s, iters);
    for (int k = 0; k < n; k++) /* every receive was counted above */
        s->nets[k].rx_done = s->nets[k].rx_posted;
    fab_ctrl_send(s->d, &s->nets[0], s->peer, &s->fctx[s->conns + 1]);
    fab_wait_tx(&s->nets[0], 0);
}

static double conns_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    conns_state *s = state;
    (void)ctx;
    double t0 = fl_now();
    if (s->role == SENDER)
        conns_send(s, iters);
    else if (s->role == RECEIVER)
        conns_recv(s, iters);
    return fl_now() - t0;
}

/* One message on every endpoint (via.c). */
static int64_t conns_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    conns_state *s = state;
    return verify_conns(ctx, s, conns_measure, s->role, s->conns, (int64_t)s->size, s->buffers,
                        s->sbuf, s->rbuf, checked);
}

/* ---- scatter ---- */

typedef struct {
    fab_pair f;
    scatter_msg sc;
    fab_mr gmr;                    /* the staging slots' registration */
    struct iovec *iov;             /* segments per message of a window */
    void **desc;                   /* segments, all rmr's */
} scatter_state;

/* Where the provider cannot scatter `segments` entries, say so. */
static int scatter_limit(const fab_dom *d, const scatter_msg *sc, fl_shape *shape)
{
    const size_t limit = d->info->rx_attr->iov_limit;
    if (sc->copy || (size_t)sc->segments <= limit)
        return FL_OK;
    snprintf(shape->note, FL_NOTE_LEN, "provider %s receives into at most %zu iovec entries; "
             "%lld asked", d->info->fabric_attr->prov_name, limit, (long long)sc->segments);
    return FL_SKIP;
}

/* The sender's slots; the receiver's blocks (and staging slots), each
 * region registered, and the iovec of every receive of a window. */
static void scatter_regions(scatter_state *s)
{
    pair_state *p = &s->f.p;
    const size_t bytes = p->count * (size_t)p->buffers;
    const int64_t segments = s->sc.segments;
    if (p->role == FL_SENDER) {
        p->sbuf = fab_pair_region(&s->f, FI_SEND, &s->f.smr);
    } else if (p->role == FL_RECEIVER) {
        p->rbuf = fl_alloc(2 * bytes);
        fab_mr_reg(s->f.d, s->f.n, p->rbuf, 2 * bytes, FI_RECV, &s->f.rmr);
        if (s->sc.copy) {
            s->sc.stage = fl_alloc(bytes);
            fab_mr_reg(s->f.d, s->f.n, s->sc.stage, bytes, FI_RECV, &s->gmr);
        }
        s->iov = fl_alloc(sizeof *s->iov * (size_t)(segments * p->window));
        s->desc = fl_alloc(sizeof *s->desc * (size_t)segments);
        for (int64_t j = 0; j < segments; j++)
            s->desc[j] = s->f.rmr.desc;
    }
}

static int scatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                         fl_shape *shape)
{
    fab_run *r = bs;
    scatter_msg sc;
    int st = fab_skip(r, shape);
    if (st == FL_OK)
        st = scatter_message(ctx, pt, shape, &sc);
    if (st == FL_OK)
        st = scatter_limit(&r->dom, &sc, shape);
    if (st != FL_OK)
        return st;
    scatter_state *s = fl_alloc(sizeof *s);
    pair_state *p = &s->f.p;
    const int window = (int)fl_param_int(ctx->opts, "window");
    scatter_pair_init(p, ctx, pt, &sc, window);
    fab_pair_open(&s->f, r, 2 * (int64_t)window + 2);
    s->sc = sc;
    scatter_regions(s);
    shape->bytes_per_op = (int64_t)p->count;
    shape->buffers = p->buffers;
    shape->working_set = (int64_t)p->count * p->buffers;
    shape->timed = p->role == FL_SENDER;
    shape->batch_multiple = window;
    int n = fab_info_begin(r, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n,
             ",\"mode\":\"%s\",\"segments\":%lld,\"window\":%d,\"buffers\":%lld}",
             sc.copy ? "copy" : "iovec", (long long)sc.segments, window, (long long)p->buffers);
    *state = s;
    return FL_OK;
}

static void scatter_teardown(const fl_ctx *ctx, void *state)
{
    scatter_state *s = state;
    (void)ctx;
    fab_pair_close(&s->f);
    fab_mr_close(&s->gmr);
    fl_free(s->sc.stage);
    fl_free(s->iov);
    fl_free(s->desc);
    fl_free(s);
}

/* Receive j of a window: op i scattered by the provider into its block, or
 * contiguous into its staging slot. */
static inline void scatter_post_recv(pair_state *p, int64_t i, int j)
{
    scatter_state *s = (scatter_state *)p;
    fab_pair *f = &s->f;
    const int64_t segments = s->sc.segments, seg = s->sc.seg;
    if (s->sc.copy) {
        fab_recv(f->d, f->n, p->peer, scatter_stage(p, &s->sc, i), p->count, s->gmr.desc,
                 FAB_TAG_DATA, &f->fctx[j]);
        return;
    }
    struct iovec *iov = s->iov + (size_t)j * (size_t)segments;
    char *at = scatter_block(p, i);
    for (int64_t x = 0; x < segments; x++)
        iov[x] = (struct iovec){at + 2 * x * seg, (size_t)seg};
    struct fid_ep *ep = fab_ep(f->n, p->peer);
    fi_addr_t a = fab_addr(f->n, p->peer);
    if (f->d->tagged)
        FAB_POST(f->n, fi_trecvv(ep, iov, s->desc, (size_t)segments, a, FAB_TAG_DATA, 0,
                                 &f->fctx[j]), "fi_trecvv");
    else
        FAB_POST(f->n, fi_recvv(ep, iov, s->desc, (size_t)segments, a, &f->fctx[j]), "fi_recvv");
    f->n->rx_posted++;
}

static inline void scatter_wait_recvs(pair_state *p, int64_t d, int n)
{
    fab_wait_recvs(p, d, n);
    scatter_unpack(p, &((scatter_state *)p)->sc, d, n);
}

/* fabric.stream's transport (never fi_inject: inject stays 0) with the
 * scattering receive. */
static const pair_ops fab_scatter_ops = {
    .post_send = fab_post_send, .post_recv = scatter_post_recv, .wait_sends = fab_wait_sends,
    .wait_recvs = scatter_wait_recvs, .ack_ready = fab_ack_ready, .ack_recv = fab_ack_recv,
    .ack_send = fab_ack_send,
};

static double scatter_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return pair_stream(state, &fab_scatter_ops, iters);
}

static int64_t scatter_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    scatter_state *s = state;
    return verify_scatter(ctx, state, scatter_measure, &s->sc, checked);
}

const fl_kernel fl_fabric_via_kernels[] = {
    {.name = "fabric.conns", .init = via_init, .fini = fab_run_fini, .setup = conns_setup,
     .measure = conns_measure, .verify = conns_verify, .teardown = conns_teardown},
    {.name = "fabric.scatter", .init = via_init, .fini = fab_run_fini, .setup = scatter_setup,
     .measure = scatter_measure, .verify = scatter_verify, .teardown = scatter_teardown},
    {.name = NULL},
};
