/* Family "fabric", atomics: rank 0 (origin, timed) updates one 8-byte word
 * in rank 1's registered region (target, passive), as fabtests'
 * fi_rdm_atomic times them: one op on FI_UINT64, then the wait for its
 * completion, latency per op.
 *
 * - op=add: fi_atomic FI_SUM of 1;
 * - op=fetch_add: fi_fetch_atomic FI_SUM of 1, the old value fetched;
 * - op=cswap: fi_compare_atomic FI_CSWAP, comparing with the value the word
 *   holds after the ops so far and swapping in the next, so that every op
 *   succeeds.
 *
 * Every op adds one to the word, so after k ops from a start value v it
 * holds v + k and op j fetched v + j: verify checks both. The provider
 * must offer FI_ATOMIC (init asks fi_getinfo for it) and the op on
 * FI_UINT64 (fi_atomicvalid and its kin, at setup); else the point is
 * skipped with the reason. The target drives its provider's progress until
 * the origin's zero-byte "done", sent after the clock stops. */
#include "fabric_plumbing.h"
#include "pair.h"

#include <rdma/fi_atomic.h>
#include <stdio.h>
#include <string.h>

/* Fetched values kept per measure call, in turn: verify's ops all fit. */
enum { AT_RESULTS = 64, AT_VERIFY_OPS = 32 };

typedef enum { AT_ADD, AT_FETCH_ADD, AT_CSWAP } at_op;

typedef struct {
    pair_state p;
    fab_run *run;
    fab_dom *d;
    fab_net *n;
    at_op op;
    /* origin: the operand, the compare value and AT_RESULTS fetched values
     * (one registered page); target: the word (another) */
    uint64_t *local, *word;
    fab_mr lmr, wmr;
    fab_remote *remote;        /* every rank's word */
    uint64_t expect;           /* origin: what the word holds before the next op */
    struct fi_context2 fctx[2];/* the op's, and "done"'s */
} at_state;

static const char *const at_names[] = {[AT_ADD] = "fi_atomic", [AT_FETCH_ADD] = "fi_fetch_atomic",
                                       [AT_CSWAP] = "fi_compare_atomic"};

static int at_init(const fl_ctx *ctx, void **bs)
{
    return fab_run_init(ctx, bs, FAB_NEED_ATOMIC, 1);
}

/* Does the provider do this op on FI_UINT64 through the endpoint? */
static int at_valid(struct fid_ep *ep, at_op op)
{
    size_t count = 0;
    int rc = op == AT_ADD ? fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count)
             : op == AT_FETCH_ADD ? fi_fetch_atomicvalid(ep, FI_UINT64, FI_SUM, &count)
                                  : fi_compare_atomicvalid(ep, FI_UINT64, FI_CSWAP, &count);
    return rc == 0 && count >= 1;
}

static int at_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    fab_run *r = bs;
    int st = fab_skip(r, shape);
    if (st != FL_OK)
        return st;
    const at_op op = fl_param_is(ctx->opts, "op", "add") ? AT_ADD
                     : fl_param_is(ctx->opts, "op", "fetch_add") ? AT_FETCH_ADD : AT_CSWAP;
    if (pt->size != 8) { /* footprint.py: atomic_limit */
        snprintf(shape->note, FL_NOTE_LEN, "atomics update one 8-byte word: size 8 only");
        return FL_SKIP;
    }
    /* the origin's answer, on every rank: setup returns one status everywhere */
    int valid = ctx->rank == 0 ? at_valid(fab_ep(&r->net, 1), op) : 1;
    MPI_Bcast(&valid, 1, MPI_INT, 0, ctx->comm);
    if (!valid) {
        snprintf(shape->note, FL_NOTE_LEN, "provider %s has no %s on FI_UINT64",
                 r->dom.info->fabric_attr->prov_name, at_names[op]);
        return FL_SKIP;
    }
    at_state *s = fl_alloc(sizeof *s);
    pair_init(&s->p, ctx, pt, 1);
    s->run = r;
    s->d = &r->dom;
    s->n = &r->net;
    s->op = op;
    if (s->p.role == FL_SENDER) {
        s->local = fl_alloc((2 + AT_RESULTS) * sizeof *s->local);
        fab_mr_reg(s->d, s->n, s->local, (2 + AT_RESULTS) * sizeof *s->local,
                   FI_READ | FI_WRITE, &s->lmr);
    } else if (s->p.role == FL_RECEIVER) {
        s->word = fl_alloc(sizeof *s->word);
        fab_mr_reg(s->d, s->n, s->word, sizeof *s->word, FI_REMOTE_READ | FI_REMOTE_WRITE, &s->wmr);
    }
    s->remote = fl_alloc(sizeof *s->remote * (size_t)ctx->nranks);
    fab_mr_share(ctx, &s->wmr, s->remote);
    *state = s;
    shape->bytes_per_op = 8;
    shape->timed = ctx->rank == 0;
    shape->buffers = 1;
    shape->working_set = 8;
    int k = fab_info_begin(r, shape);
    snprintf(shape->info + k, FL_INFO_LEN - (size_t)k,
             ",\"op\":\"%s\",\"datatype\":\"FI_UINT64\",\"buffers\":1}", at_names[op]);
    return FL_OK;
}

static void at_teardown(const fl_ctx *ctx, void *state)
{
    at_state *s = state;
    (void)ctx;
    fab_mr_close(&s->lmr);
    fab_mr_close(&s->wmr);
    fl_free(s->local);
    fl_free(s->word);
    fl_free(s->remote);
    fl_free(s);
}

/* Op j of a measure call, posted: the operand is local[0], the compare
 * value local[1], the fetched value lands in local[2 + j % AT_RESULTS]. */
static inline void at_post(at_state *s, int64_t j)
{
    const fab_remote t = s->remote[s->p.peer];
    struct fid_ep *ep = fab_ep(s->n, s->p.peer);
    const fi_addr_t a = fab_addr(s->n, s->p.peer);
    void *desc = s->lmr.desc, *res = &s->local[2 + j % AT_RESULTS];
    if (s->op == AT_ADD)
        FAB_POST(s->n, fi_atomic(ep, &s->local[0], 1, desc, a, t.base, t.key, FI_UINT64, FI_SUM,
                                 &s->fctx[0]), "fi_atomic");
    else if (s->op == AT_FETCH_ADD)
        FAB_POST(s->n, fi_fetch_atomic(ep, &s->local[0], 1, desc, res, desc, a, t.base, t.key,
                                       FI_UINT64, FI_SUM, &s->fctx[0]), "fi_fetch_atomic");
    else
        FAB_POST(s->n, fi_compare_atomic(ep, &s->local[0], 1, desc, &s->local[1], desc, res, desc,
                                         a, t.base, t.key, FI_UINT64, FI_CSWAP, &s->fctx[0]),
                 "fi_compare_atomic");
    s->n->tx_posted++;
}

/* The origin: one op, then its completion, `iters` times; then "done" to
 * the target, which progresses its provider until it arrives. */
static double at_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    at_state *s = state;
    (void)ctx;
    if (s->p.role == FL_RECEIVER) {
        fab_ctrl_post(s->d, s->n, s->p.peer, &s->fctx[1]);
        fab_wait_rx(s->n, 0);
        return 0.0;
    }
    if (s->p.role != FL_SENDER)
        return 0.0;
    uint64_t *operand = &s->local[0], *compare = &s->local[1];
    *operand = 1;
    double t0 = fl_now();
    for (int64_t j = 0; j < iters; j++) {
        if (s->op == AT_CSWAP) { /* swap the expected value for the next */
            *compare = s->expect;
            *operand = s->expect + 1;
        }
        at_post(s, j);
        fab_wait_tx(s->n, 0);
        s->expect++;
    }
    double t = pair_finish(&s->p, iters, t0);
    fab_ctrl_send(s->d, s->n, s->p.peer, &s->fctx[1]);
    fab_wait_tx(s->n, 0);
    return t;
}

/* The word starts at a value of the pass's own; after AT_VERIFY_OPS ops
 * the origin checks every fetched value and the target its word. An
 * fi_atomic's completion may come before the target applies it, so the
 * target progresses its provider until the word holds the count (at most
 * a second) before it compares. */
static int64_t at_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    at_state *s = state;
    const uint64_t start = s->p.seed * 0x9e3779b97f4a7c15ULL >> 8;
    int64_t bad = 0;
    if (s->p.role == FL_RECEIVER)
        *s->word = start;
    if (s->p.role == FL_SENDER) {
        s->expect = start;
        memset(&s->local[2], 0, AT_RESULTS * sizeof *s->local);
    }
    MPI_Barrier(ctx->comm);
    at_measure(ctx, s, AT_VERIFY_OPS);
    if (s->p.role == FL_SENDER && s->op != AT_ADD)
        for (int j = 0; j < AT_VERIFY_OPS; j++, *checked += 8)
            bad += s->local[2 + j] != start + (uint64_t)j;
    if (s->p.role == FL_RECEIVER) {
        const uint64_t want = start + AT_VERIFY_OPS;
        for (double t0 = fl_now(); *(volatile uint64_t *)s->word != want && fl_now() - t0 < 1.0;)
            fab_drain(s->n->rxcq, &s->n->rx_done);
        bad += *s->word != want;
        *checked += 8;
    }
    s->p.seed++;
    return bad;
}

const fl_kernel fl_fabric_atomic_kernels[] = {
    {.name = "fabric.atomic", .init = at_init, .fini = fab_run_fini, .setup = at_setup,
     .measure = at_measure, .verify = at_verify, .teardown = at_teardown},
    {.name = NULL},
};
