/* Family "fabric", message rate over several endpoints, as perftest's
 * ib_send_bw -q Q (several queue pairs per process): ranks 0 (sender,
 * timed) and 1 (receiver) each open Q endpoints of their own (a fab_net
 * each: endpoint, address vector and completion queues), endpoint k of one
 * joined to endpoint k of the other.
 *
 * An op is one message of SIZE bytes. A window is W messages on every
 * endpoint, Q x W ops: the sender posts endpoint 0's W sends, then endpoint
 * 1's, ... (fi_tinject up to the inject size under path=auto, as
 * fabric.stream), waits for every send's completion and for the
 * receiver's zero-byte ack, which the receiver sends once all Q x W
 * receives it pre-posted have completed; the sender posts the ack's
 * receive before the window. So a sample is the time from the first post
 * to the last completion of its windows, and the point's message rate
 * (schema/records.py: messages_per_op / median) is perftest's MsgRate,
 * messages over that time; its bandwidth is perftest's BW average
 * (size x messages over the time).
 *
 * Op i of a measure call uses slot (next + i) % buffers on both sides;
 * endpoint k's messages travel on a tag of its own (fabric_via.c's
 * conn_tag: a provider may match the receives of a domain's endpoints in
 * one context). */
#include "fabric_plumbing.h"
#include "pair.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    pair_state p;               /* window: W, messages per endpoint */
    fab_run *run;
    fab_dom *d;
    int q;                      /* endpoints */
    int inject;
    fab_net *nets;              /* q */
    fab_mr *smr, *rmr;          /* q: FI_MR_ENDPOINT binds a region to one endpoint */
    struct fi_context2 *fctx;   /* q x W, and two for the ack */
} rate_state;

static int rate_init(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_MSG, 1);
}

static inline uint64_t rate_tag(int k)
{
    return FAB_TAG_DATA | (uint64_t)k << 8;
}

static int rate_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape)
{
    fab_run *r = bs;
    int st = fab_skip(r, shape);
    if (st == FL_OK)
        st = pair_check_buffers(pt, pt->size, 1, shape);
    if (st != FL_OK)
        return st;
    rate_state *s = fl_alloc(sizeof *s);
    const int q = (int)fl_param_int(ctx->opts, "endpoints");
    const int w = (int)fl_param_int(ctx->opts, "window");
    pair_init(&s->p, ctx, pt, w);
    s->run = r;
    s->d = &r->dom;
    s->q = q;
    s->inject = fab_use_inject(ctx, s->d, pt->size, shape->note);
    if (s->inject < 0) {
        fl_free(s);
        return FL_SKIP;
    }
    s->nets = fl_alloc(sizeof *s->nets * (size_t)q);
    s->smr = fl_alloc(sizeof *s->smr * (size_t)q);
    s->rmr = fl_alloc(sizeof *s->rmr * (size_t)q);
    s->fctx = fl_alloc(sizeof *s->fctx * ((size_t)q * (size_t)w + 2));
    const size_t bytes = s->p.count * (size_t)s->p.buffers;
    if (s->p.role == FL_SENDER)
        s->p.sbuf = fl_alloc(bytes);
    else if (s->p.role == FL_RECEIVER)
        s->p.rbuf = fl_alloc(bytes);
    char *linked = fl_alloc((size_t)ctx->nranks);
    if (s->p.role != FL_IDLE)
        linked[s->p.peer] = 1;
    for (int k = 0; k < q; k++) {
        fab_net_open(ctx, s->d, &s->nets[k], linked, NULL, NULL);
        if (s->p.role == FL_SENDER)
            fab_mr_reg(s->d, &s->nets[k], s->p.sbuf, bytes, FI_SEND, &s->smr[k]);
        else if (s->p.role == FL_RECEIVER)
            fab_mr_reg(s->d, &s->nets[k], s->p.rbuf, bytes, FI_RECV, &s->rmr[k]);
    }
    fl_free(linked);
    *state = s;
    shape->bytes_per_op = pt->size;
    shape->timed = ctx->rank == 0;
    shape->batch_multiple = (int64_t)q * w; /* samples are whole windows */
    int n = fab_info_begin(r, shape);
    snprintf(shape->info + n, FL_INFO_LEN - (size_t)n,
             ",\"path\":\"%s\",\"endpoints\":%d,\"window\":%d,\"messages_per_op\":1,"
             "\"buffers\":%lld}", s->inject ? "inject" : "send", q, w, (long long)pt->buffers);
    return FL_OK;
}

static void rate_teardown(const fl_ctx *ctx, void *state)
{
    rate_state *s = state;
    (void)ctx;
    for (int k = 0; k < s->q; k++) {
        fab_mr_close(&s->smr[k]);
        fab_mr_close(&s->rmr[k]);
        fab_net_close(&s->nets[k]);
    }
    fl_free(s->nets);
    fl_free(s->smr);
    fl_free(s->rmr);
    fl_free(s->fctx);
    fl_free(s->p.sbuf);
    fl_free(s->p.rbuf);
    fl_free(s);
}

/* Sender: ops d..d+n-1 of a window, endpoint k taking its share in turn. */
static inline void rate_send_window(rate_state *s, int64_t d, int n)
{
    pair_state *p = &s->p;
    for (int k = 0, j = 0; k < s->q; k++) {
        fab_net *net = &s->nets[k];
        for (int m = 0; m < p->window && j < n; m++, j++) {
            if (s->inject)
                fab_inject(s->d, net, p->peer, pair_sslot(p, d + j), p->count, rate_tag(k));
            else
                fab_send(s->d, net, p->peer, pair_sslot(p, d + j), p->count, s->smr[k].desc,
                         rate_tag(k), &s->fctx[j]);
        }
    }
    for (int k = 0; k < s->q; k++)
        fab_wait_tx(&s->nets[k], 0);
}

static inline void rate_recv_window(rate_state *s, int64_t d, int n)
{
    pair_state *p = &s->p;
    for (int k = 0, j = 0; k < s->q; k++)
        for (int m = 0; m < p->window && j < n; m++, j++)
            fab_recv(s->d, &s->nets[k], p->peer, pair_rslot(p, d + j), p->count, s->rmr[k].desc,
                     rate_tag(k), &s->fctx[j]);
    for (int k = 0; k < s->q; k++)
        fab_wait_rx(&s->nets[k], 0);
}

/* The sender's wait for the receiver's ack on endpoint 0, progressing every
 * endpoint meanwhile: a provider that moves data only while its queues are
 * read (udp;ofi_rxd) still holds injected sends, which have no completion
 * to wait for, on the other endpoints. */
static inline void rate_wait_ack(rate_state *s)
{
    fab_net *n0 = &s->nets[0];
    while (n0->rx_done < n0->rx_posted) {
        for (int k = 0; k < s->q; k++)
            fab_drain(s->nets[k].txcq, &s->nets[k].tx_done);
        fab_drain(n0->rxcq, &n0->rx_done);
    }
}

/* Windows of Q x W messages, each acked on endpoint 0 (fabric.stream's
 * protocol over Q endpoints). The ack goes as a send with a completion,
 * not an inject, so the receiver progresses its provider until it is out. */
static double rate_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    rate_state *s = state;
    pair_state *p = &s->p;
    fab_net *n0 = &s->nets[0];
    const int qw = s->q * p->window;
    const size_t ack = (size_t)qw;
    (void)ctx;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters && p->role != FL_IDLE; d += qw) {
        const int n = pair_window_len(iters, d, qw);
        if (p->role == FL_SENDER) {
            fab_ctrl_post(s->d, n0, p->peer, &s->fctx[ack]);
            rate_send_window(s, d, n);
            rate_wait_ack(s);
        } else {
            rate_recv_window(s, d, n);
            fab_send(s->d, n0, p->peer, n0->ctrl, 0, n0->ctrl_desc, FAB_TAG_CTRL,
                     &s->fctx[ack + 1]);
            fab_wait_tx(n0, 0);
        }
    }
    return pair_finish(p, iters, t0);
}

/* One window of every endpoint (Q x W messages) from slot 0, each slot with a pattern of its own. */
static int64_t rate_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    rate_state *s = state;
    return pair_verify_slots(ctx, &s->p, s, rate_measure, (int64_t)s->q * s->p.window, checked);
}

const fl_kernel fl_fabric_rate_kernels[] = {
    {.name = "fabric.msg_rate", .init = rate_init, .fini = fab_run_fini, .setup = rate_setup,
     .measure = rate_measure, .verify = rate_verify, .teardown = rate_teardown},
    {.name = NULL},
};
