/* fabric: what the libfabric kernels (fabric.c, fabric_patterns.c,
 * fabric_via.c) share above the plumbing (fabric_plumbing.h): the libfabric
 * transport of the pair loops (pair.h). */
#ifndef FL_FABRIC_H
#define FL_FABRIC_H

#include "fabric_plumbing.h"
#include "pair.h"

/* ---- the libfabric transport of the pair loops ---- */

/* A rank's state in the libfabric loops; a kernel's own state starts with it.
 * Every outstanding op passes its own context: a window's receives take
 * fctx[0..n-1], its sends fctx[0..2n-1] (pair.h), the two acks fctx[2w]
 * and fctx[2w + 1]. */
typedef struct {
    pair_state p;
    fab_run *run;
    fab_dom *d;
    fab_net *n;
    int inject;               /* the point's sends go through fi_inject */
    int block;                /* completion=block: wait in fi_cq_sread */
    fab_mr smr, rmr;          /* the pair's send and receive regions */
    struct fi_context2 *fctx; /* 2 x window + 2 at least */
} fab_pair;

/* The pair on the run's provider and endpoints (a kernel with endpoints of
 * its own points n at them), with `contexts` contexts (0: none). */
void fab_pair_open(fab_pair *f, fab_run *r, int64_t contexts);
/* A region of the pair's `buffers` slots of count bytes, registered for
 * `access` (FI_SEND, FI_RECV, ...). */
char *fab_pair_region(fab_pair *f, uint64_t access, fab_mr *mr);
/* The regions, their registrations and the contexts. */
void fab_pair_close(fab_pair *f);

static inline fab_pair *fab_of(pair_state *p)
{
    return (fab_pair *)p;
}

static inline void fab_post_send(pair_state *p, int64_t i, int j)
{
    fab_pair *f = fab_of(p);
    if (f->inject)
        fab_inject(f->d, f->n, p->peer, pair_sslot(p, i), p->count, FAB_TAG_DATA);
    else
        fab_send(f->d, f->n, p->peer, pair_sslot(p, i), p->count, f->smr.desc, FAB_TAG_DATA,
                 &f->fctx[j]);
}

static inline void fab_post_recv(pair_state *p, int64_t i, int j)
{
    fab_pair *f = fab_of(p);
    fab_recv(f->d, f->n, p->peer, pair_rslot(p, i), p->count, f->rmr.desc, FAB_TAG_DATA,
             &f->fctx[j]);
}

/* Completions are counted per queue, so a wait is for all posted so far. */
static inline void fab_wait_sends(pair_state *p, int64_t d, int n)
{
    (void)d, (void)n;
    fab_wait_tx(fab_of(p)->n, fab_of(p)->block);
}

static inline void fab_wait_recvs(pair_state *p, int64_t d, int n)
{
    (void)d, (void)n;
    fab_wait_rx(fab_of(p)->n, fab_of(p)->block);
}

static inline void fab_wait_all(pair_state *p, int64_t d, int n)
{
    fab_wait_sends(p, d, n);
    fab_wait_recvs(p, d, n);
}

/* A round trip's legs: the receive is posted ahead of the send that
 * precedes it, so the reply finds it; a send is done before the next leg
 * (after fi_inject, at once). */
static inline void fab_send_done(pair_state *p, int64_t i)
{
    fab_post_send(p, i, 1);
    fab_wait_sends(p, i, 1);
}

static inline void fab_recv_ahead(pair_state *p, int64_t i)
{
    fab_post_recv(p, i, 0);
}

static inline void fab_recv_done(pair_state *p, int64_t i)
{
    fab_wait_recvs(p, i, 1);
}

/* The sender posts the ack's receive before its window, so the ack finds it. */
static inline void fab_ack_ready(pair_state *p)
{
    fab_pair *f = fab_of(p);
    fab_ctrl_post(f->d, f->n, p->peer, &f->fctx[2 * p->window]);
}

static inline void fab_ack_recv(pair_state *p)
{
    fab_wait_recvs(p, 0, 1);
}

static inline void fab_ack_send(pair_state *p)
{
    fab_pair *f = fab_of(p);
    fab_ctrl_send(f->d, f->n, p->peer, &f->fctx[2 * p->window + 1]);
    fab_wait_sends(p, 0, 1);
}

static inline void fab_ack_swap(pair_state *p)
{
    fab_pair *f = fab_of(p);
    fab_ack_ready(p);
    fab_ctrl_send(f->d, f->n, p->peer, &f->fctx[2 * p->window + 1]);
    fab_wait_recvs(p, 0, 1);
    fab_wait_sends(p, 0, 1);
}

static const pair_ops fab_ops = {
    .post_send = fab_post_send, .post_recv = fab_post_recv, .wait_sends = fab_wait_sends,
    .wait_recvs = fab_wait_recvs, .wait_all = fab_wait_all, .send = fab_send_done,
    .recv = fab_recv_done, .recv_ahead = fab_recv_ahead, .ack_ready = fab_ack_ready,
    .ack_recv = fab_ack_recv, .ack_send = fab_ack_send, .ack_swap = fab_ack_swap,
};

#endif
