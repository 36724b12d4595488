/* Family "message": the halo exchange of IMB-P2P's Stencil2D and Stencil3D
 * (imb_p2p_stencil2d.c, imb_p2p_stencil3d.c). Every rank sits on IMB's
 * periodic grid of the run's ranks (halo.h) and exchanges SIZE bytes with
 * each of its 4 (2-D) or 6 (3-D) neighbours: one op posts a receive from
 * every neighbour, then a send to every neighbour (tag 0, as IMB), then
 * waits for all of them. With touch=on, as IMB's defaults -msgwr and
 * -msgrd, each op first writes one byte per cache line of every send
 * buffer and afterwards reads one per line of every receive buffer.
 *
 * The buffers are IMB's, one send and one receive buffer per neighbour,
 * the same every op. Every rank sends 2 x dims messages of SIZE bytes per
 * op: the runner sums them over the ranks, so the point's bandwidth is
 * IMB's Mbytes/sec (all messages x size / slowest rank's time) and its
 * message rate IMB's Msg/sec (docs/halo.md). */
#include "halo.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define CACHE_LINE 64 /* IMB_P2P_CACHE_LINE_LEN */

typedef struct {
    MPI_Comm comm;
    int dims, nb, len[HALO_MAX_DIMS];
    int peer[2 * HALO_MAX_DIMS];
    int count;
    int touch;
    char *sbuf, *rbuf;     /* nb slots of count bytes each */
    MPI_Request *req;      /* 2 nb */
    size_t dummy;          /* what the touches read, kept so that they run */
} halo_state;

static inline char *slot(char *base, const halo_state *s, int i)
{
    return base + (size_t)i * (size_t)s->count;
}

static int halo_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape, int dims)
{
    int len[HALO_MAX_DIMS];
    int st = fl_pattern_point(pt, shape, NULL);
    if (st != FL_OK)
        return st;
    if (halo_grid(ctx->nranks, dims, len) != 0) {
        snprintf(shape->note, FL_NOTE_LEN, "IMB-P2P's Stencil%dD has no grid of %d ranks", dims, ctx->nranks);
        return FL_ERROR;
    }
    halo_state *s = fl_alloc(sizeof *s);
    s->comm = ctx->comm, s->dims = dims, s->nb = 2 * dims, s->count = (int)pt->size;
    memcpy(s->len, len, sizeof len);
    s->touch = fl_param_is(ctx->opts, "touch", "on");
    halo_neighbours(ctx->rank, dims, len, s->peer);
    s->sbuf = fl_alloc((size_t)s->nb * (size_t)pt->size);
    s->rbuf = fl_alloc((size_t)s->nb * (size_t)pt->size);
    s->req = fl_alloc(sizeof *s->req * 2 * (size_t)s->nb);
    shape->sent_bytes = shape->recv_bytes = s->nb * pt->size;
    shape->messages = s->nb;
    shape->timed = 1;
    shape->buffers = 1;
    shape->working_set = s->nb * pt->size;
    snprintf(shape->info, FL_INFO_LEN, "{\"grid\":[%d,%d,%d],\"neighbours\":%d,\"touch\":%s}", len[0], len[1],
             dims == 3 ? len[2] : 1, s->nb, s->touch ? "true" : "false");
    *state = s;
    return FL_OK;
}

static int stencil2d_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return halo_setup(ctx, pt, state, shape, 2);
}

static int stencil3d_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return halo_setup(ctx, pt, state, shape, 3);
}

static void halo_teardown(const fl_ctx *ctx, void *state)
{
    halo_state *s = state;
    (void)ctx;
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->req);
    fl_free(s);
}

/* ---- measure ---- */

/* One exchange: IMB's loop body (touch, receives, sends, wait-all, touch). */
static inline void halo_once(halo_state *s, int touch)
{
    if (touch)
        for (int i = 0; i < s->nb; i++)
            for (int b = 0; b < s->count; b += CACHE_LINE)
                slot(s->sbuf, s, i)[b] = (char)s->dummy++;
    for (int i = 0; i < s->nb; i++)
        MPI_Irecv(slot(s->rbuf, s, i), s->count, MPI_BYTE, s->peer[i], 0, s->comm, &s->req[i]);
    for (int i = 0; i < s->nb; i++)
        MPI_Isend(slot(s->sbuf, s, i), s->count, MPI_BYTE, s->peer[i], 0, s->comm, &s->req[s->nb + i]);
    MPI_Waitall(2 * s->nb, s->req, MPI_STATUSES_IGNORE);
    if (touch)
        for (int i = 0; i < s->nb; i++)
            for (int b = 0; b < s->count; b += CACHE_LINE)
                s->dummy += (size_t)slot(s->rbuf, s, i)[b];
}

static double halo_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    halo_state *s = state;
    (void)ctx;
    double t = fl_now();
    for (int64_t i = 0; i < iters; i++)
        halo_once(s, s->touch);
    return fl_now() - t;
}

/* ---- verify: one exchange of patterned blocks, each receive checked
 * against the sender's block by halo.h's order rule (no touch: it would
 * write into the pattern) ---- */

static int64_t halo_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    halo_state *s = state;
    int64_t bad = 0;
    for (int i = 0; i < s->nb; i++) {
        fl_fill(slot(s->sbuf, s, i), (size_t)s->count, halo_seed(ctx->rank, s->peer[i], halo_ordinal(s->peer, i)));
        memset(slot(s->rbuf, s, i), 0, (size_t)s->count);
    }
    MPI_Barrier(s->comm);
    halo_once(s, 0);
    for (int i = 0; i < s->nb; i++)
        bad += fl_check(slot(s->rbuf, s, i), (size_t)s->count,
                        halo_seed(s->peer[i], ctx->rank, halo_ordinal(s->peer, i)));
    *checked += (int64_t)s->nb * s->count;
    return bad;
}

const fl_kernel fl_message_halo_kernels[] = {
    {.name = "message.stencil2d", .setup = stencil2d_setup, .measure = halo_measure, .verify = halo_verify,
     .teardown = halo_teardown},
    {.name = "message.stencil3d", .setup = stencil3d_setup, .measure = halo_measure, .verify = halo_verify,
     .teardown = halo_teardown},
    {.name = NULL},
};
