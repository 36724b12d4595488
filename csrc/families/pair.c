/* pair: the set-up and the verify passes of the loops in pair.h. */
#include "pair.h"

#include <stdio.h>
#include <string.h>

static void pair_fill_in(pair_state *p, const fl_ctx *ctx, const fl_point *pt, int window)
{
    memset(p, 0, sizeof *p);
    p->rank = ctx->rank;
    p->nranks = ctx->nranks;
    p->count = (size_t)pt->size;
    p->window = window;
    p->buffers = pt->buffers;
    p->seed = (uint64_t)pt->size * 0x100000001b3ULL;
}

void pair_init(pair_state *p, const fl_ctx *ctx, const fl_point *pt, int window)
{
    pair_fill_in(p, ctx, pt, window);
    p->role = ctx->rank == 0 ? FL_SENDER : ctx->rank == 1 ? FL_RECEIVER : FL_IDLE;
    p->peer = fl_peer(ctx);
}

void pair_init_layout(pair_state *p, const fl_ctx *ctx, const fl_point *pt, int window)
{
    pair_fill_in(p, ctx, pt, window);
    p->role = pt->layout->role[ctx->rank];
    p->peer = p->role == FL_IDLE ? -1 : pt->layout->peer[ctx->rank];
}

int pair_check_buffers(const fl_point *pt, int64_t unit, int64_t regions, fl_shape *shape)
{
    if (pt->buffers >= 1 && (unit <= 0 || pt->buffers <= INT64_MAX / unit / regions))
        return FL_OK;
    snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
             (long long)pt->buffers);
    return FL_ERROR;
}

static int sends(const pair_state *p)
{
    return p->role == FL_SENDER || p->role == FL_BOTH;
}

static int receives(const pair_state *p)
{
    return p->role == FL_RECEIVER || p->role == FL_BOTH;
}

/* The distinct slots one window uses. */
static int64_t window_slots(const pair_state *p)
{
    return p->window < p->buffers ? p->window : p->buffers;
}

int64_t pair_verify_round_trip(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure,
                               int64_t *checked)
{
    if (p->role == FL_IDLE)
        return 0;
    p->next = 0;
    fl_fill(pair_sslot(p, 0), p->count, pair_flow_seed(p, p->rank, p->peer));
    memset(pair_rslot(p, 0), 0, p->count);
    measure(ctx, p, 1);
    p->next = 0; /* back to the slots the round trip used */
    int64_t bad = fl_check(pair_rslot(p, 0), p->count, pair_flow_seed(p, p->peer, p->rank));
    *checked += (int64_t)p->count;
    pair_next_pass(p);
    return bad;
}

void pair_verify_begin(pair_state *p)
{
    p->next = 0;
    for (int64_t k = 0; k < window_slots(p); k++) {
        if (sends(p))
            fl_fill(pair_sslot(p, k), p->count, pair_flow_seed(p, p->rank, p->peer));
        if (receives(p))
            memset(pair_rslot(p, k), 0, p->count);
    }
}

int64_t pair_verify_end(pair_state *p, int64_t *checked)
{
    int64_t bad = 0;
    p->next = 0; /* back to the slots the window used */
    for (int64_t k = 0; receives(p) && k < window_slots(p); k++) {
        bad += fl_check(pair_rslot(p, k), p->count, pair_flow_seed(p, p->peer, p->rank));
        *checked += (int64_t)p->count;
    }
    pair_next_pass(p);
    return bad;
}

int64_t pair_verify_window(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure,
                           int64_t *checked)
{
    pair_verify_begin(p);
    measure(ctx, p, p->window);
    return pair_verify_end(p, checked);
}

int64_t pair_verify_slots(const fl_ctx *ctx, pair_state *p, void *state, fl_measure_fn measure,
                          int64_t ops, int64_t *checked)
{
    const int64_t slots = ops < p->buffers ? ops : p->buffers;
    int64_t bad = 0;
    p->next = 0;
    for (int64_t k = 0; k < slots; k++) {
        if (sends(p))
            fl_fill(pair_sslot(p, k), p->count, p->seed + (uint64_t)k);
        if (receives(p))
            memset(pair_rslot(p, k), 0, p->count);
    }
    measure(ctx, state, ops);
    p->next = 0;
    for (int64_t k = 0; receives(p) && k < slots; k++) {
        bad += fl_check(pair_rslot(p, k), p->count, p->seed + (uint64_t)k);
        *checked += (int64_t)p->count;
    }
    p->seed += (uint64_t)slots;
    return bad;
}

int64_t pair_verify_rma(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure, int get,
                        int64_t *checked)
{
    const char source = get ? FL_RECEIVER : FL_SENDER;
    char *mine = p->role == FL_SENDER ? p->sbuf : p->rbuf;
    int64_t bad = 0;
    for (int64_t k = 0; p->role != FL_IDLE && k < window_slots(p); k++) {
        if (p->role == source)
            fl_fill(mine + (size_t)k * p->count, p->count, p->seed);
        else
            memset(mine + (size_t)k * p->count, 0, p->count);
    }
    MPI_Barrier(ctx->comm);
    if (p->role == FL_IDLE)
        return 0;
    p->next = 0;
    measure(ctx, p, p->window);
    p->next = 0;
    for (int64_t k = 0; p->role != source && k < window_slots(p); k++) {
        bad += fl_check(mine + (size_t)k * p->count, p->count, p->seed);
        *checked += (int64_t)p->count;
    }
    pair_next_pass(p);
    return bad;
}
