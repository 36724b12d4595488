/* Family "coll": MPI's neighbourhood collectives (MPI_Neighbor_allgather,
 * _allgatherv, _alltoall, _alltoallv, _alltoallw) on a distributed graph
 * communicator of every rank (MPI_Dist_graph_create_adjacent, reorder 0),
 * in the blocking, the non-blocking (MPI_Ineighbor_* + MPI_Wait) or the
 * persistent form (MPI 4's MPI_Neighbor_*_init once at setup, MPI_Start +
 * MPI_Wait per op).
 *
 * The neighbourhood (param `neighborhood`), as OSU builds it
 * (osu_util_mpi.c, omb_neighborhood_create):
 * - cart: a periodic grid of DIM dimensions from MPI_Dims_create, every rank
 *   within RADIUS steps in each dimension ((2 RADIUS + 1)^DIM - 1 of them,
 *   diagonals included), in OSU's order (the displacement from -RADIUS to
 *   +RADIUS, the last dimension fastest); OSU's bound RADIUS <= (the
 *   smallest side - 1) / 2 keeps them distinct;
 * - graph: the edges of a graph file (docs/halo.md; suite/halo.py reads and
 *   checks it before launch): rank a's destinations are the b of its lines
 *   "a b", its sources the a of the lines "a b" with b = this rank, in file
 *   order, as OSU reads its adjacency file;
 * - stencil2d, stencil3d: IMB-P2P's grid and its 4 or 6 neighbours (halo.h),
 *   the exchange of message.stencil2d/3d as one call.
 *
 * SIZE is one block, the bytes sent to (alltoall) or gathered from
 * (allgather) each neighbour. An op is one call, timed from after the
 * barrier before it (sync=barrier, OSU's barrier between ops) to its
 * return; the runner keeps the slowest rank. Every rank reports its sends
 * (outdegree x SIZE bytes, outdegree messages), so the point's bytes and
 * messages are the same as the stencil's over the same neighbours. */
#include "coll.h"
#include "halo.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEGREE 65536   /* suite/halo.py MAX_DEGREE */
#define LINE_MAX_LEN 256

typedef struct nbr_state nbr_state;
/* One call of the operation in `form` (coll.h's FORM_*): blocking, posted into *req, or
 * MPI 4's persistent request initialised into *req. */
typedef int (*nbr_call_fn)(nbr_state *s, int form, MPI_Request *req);

struct nbr_state {
    MPI_Comm graph;
    int rank, indeg, outdeg;
    int *src, *dst;
    int count, form, sync, gathers;
    MPI_Request preq;        /* the persistent form's request */
    nbr_call_fn call;
    char *sbuf, *rbuf;
    int *scounts, *sdispls, *rcounts, *rdispls;  /* the v and w forms */
    MPI_Aint *swdispls, *rwdispls;               /* the w form: byte displacements */
    MPI_Datatype *stypes, *rtypes;
    int *weights;                                /* all 1, as OSU's */
};

/* ---- the neighbourhoods ---- */

/* OSU's Cartesian neighbourhood: FL_OK, or FL_ERROR and a note. */
static int cart_neighbours(nbr_state *s, int n, int d, int r, fl_shape *shape)
{
    int dims[8] = {0}, me[8], disp[8], at[8], deg = 1, smallest = n;
    MPI_Dims_create(n, d, dims);
    for (int i = 0; i < d; i++) {
        smallest = dims[i] < smallest ? dims[i] : smallest;
        deg *= 2 * r + 1;
        if (deg > MAX_DEGREE + 1) {
            snprintf(shape->note, FL_NOTE_LEN, "(2 x radius + 1)^dim - 1 neighbours exceed %d", MAX_DEGREE);
            return FL_ERROR;
        }
    }
    if (r > (smallest - 1) / 2) {
        snprintf(shape->note, FL_NOTE_LEN, "radius %d exceeds (%d - 1) / 2, the smallest side of the %d ranks' "
                 "grid in %d dimensions", r, smallest, n, d);
        return FL_ERROR;
    }
    s->indeg = s->outdeg = deg - 1;
    s->src = fl_alloc(sizeof(int) * (size_t)deg);
    s->dst = fl_alloc(sizeof(int) * (size_t)deg);
    for (int i = d - 1, q = s->rank; i >= 0; i--) /* row-major: MPI_Cart_create's order */
        me[i] = q % dims[i], q /= dims[i];
    for (int i = 0; i < d; i++)
        disp[i] = -r;
    for (int k = 0;;) {
        int q = 0;
        for (int i = 0; i < d; i++)
            at[i] = ((me[i] + disp[i]) % dims[i] + dims[i]) % dims[i], q = q * dims[i] + at[i];
        if (q != s->rank)
            s->src[k] = s->dst[k] = q, k++;
        int i = d - 1;
        while (i >= 0 && disp[i] == r)
            disp[i--] = -r;
        if (i < 0)
            break;
        disp[i]++;
    }
    return FL_OK;
}

/* The graph file's edges of this rank: FL_OK, or FL_ERROR and a note. */
static int graph_neighbours(nbr_state *s, const char *path, int n, fl_shape *shape)
{
    char line[LINE_MAX_LEN];
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(shape->note, FL_NOTE_LEN, "cannot open the graph file");
        return FL_ERROR;
    }
    for (int pass = 0; pass < 2; pass++) {
        int in = 0, out = 0;
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            int a, b;
            if (line[strspn(line, " \t")] == '#' || sscanf(line, "%d%*[ ,\t]%d", &a, &b) != 2)
                continue; /* comments and blank lines; suite/halo.py refused anything else */
            if (a < 0 || b < 0 || a >= n || b >= n) {
                fclose(f);
                snprintf(shape->note, FL_NOTE_LEN, "the graph file names rank %d of %d", a < 0 || a >= n ? a : b, n);
                return FL_ERROR;
            }
            if (a == s->rank && out < MAX_DEGREE) {
                if (pass)
                    s->dst[out] = b;
                out++;
            }
            if (b == s->rank && in < MAX_DEGREE) {
                if (pass)
                    s->src[in] = a;
                in++;
            }
        }
        if (!pass) {
            s->indeg = in, s->outdeg = out;
            s->src = fl_alloc(sizeof(int) * (size_t)(in > 0 ? in : 1));
            s->dst = fl_alloc(sizeof(int) * (size_t)(out > 0 ? out : 1));
        }
    }
    fclose(f);
    return FL_OK;
}

/* IMB-P2P's grid and neighbours, both ways. */
static int stencil_neighbours(nbr_state *s, int n, int dims, fl_shape *shape)
{
    int len[HALO_MAX_DIMS];
    if (halo_grid(n, dims, len) != 0) {
        snprintf(shape->note, FL_NOTE_LEN, "IMB-P2P's Stencil%dD has no grid of %d ranks", dims, n);
        return FL_ERROR;
    }
    s->indeg = s->outdeg = 2 * dims;
    s->src = fl_alloc(sizeof(int) * 2 * HALO_MAX_DIMS);
    s->dst = fl_alloc(sizeof(int) * 2 * HALO_MAX_DIMS);
    halo_neighbours(s->rank, dims, len, s->src);
    memcpy(s->dst, s->src, sizeof(int) * 2 * (size_t)dims);
    return FL_OK;
}

static int neighbourhood(nbr_state *s, const fl_ctx *ctx, fl_shape *shape)
{
    const fl_opts *o = ctx->opts;
    if (fl_param_is(o, "neighborhood", "graph"))
        return graph_neighbours(s, fl_param(o, "graph"), ctx->nranks, shape);
    if (fl_param_is(o, "neighborhood", "stencil2d") || fl_param_is(o, "neighborhood", "stencil3d"))
        return stencil_neighbours(s, ctx->nranks, fl_param_is(o, "neighborhood", "stencil2d") ? 2 : 3, shape);
    return cart_neighbours(s, ctx->nranks, (int)fl_param_int(o, "dim"), (int)fl_param_int(o, "radius"), shape);
}

/* ---- setup ---- */

static void nbr_buffers(nbr_state *s)
{
    const size_t in = (size_t)(s->indeg > 0 ? s->indeg : 1), out = (size_t)(s->outdeg > 0 ? s->outdeg : 1);
    s->sbuf = fl_alloc((s->gathers ? 1 : out) * (size_t)s->count);
    s->rbuf = fl_alloc(in * (size_t)s->count);
    s->scounts = fl_alloc(sizeof(int) * out), s->sdispls = fl_alloc(sizeof(int) * out);
    s->rcounts = fl_alloc(sizeof(int) * in), s->rdispls = fl_alloc(sizeof(int) * in);
    s->swdispls = fl_alloc(sizeof(MPI_Aint) * out), s->rwdispls = fl_alloc(sizeof(MPI_Aint) * in);
    s->stypes = fl_alloc(sizeof(MPI_Datatype) * out), s->rtypes = fl_alloc(sizeof(MPI_Datatype) * in);
    s->weights = fl_alloc(sizeof(int) * (in > out ? in : out));
    for (size_t i = 0; i < (in > out ? in : out); i++)
        s->weights[i] = 1;
    for (int i = 0; i < s->outdeg; i++) {
        s->scounts[i] = s->count, s->sdispls[i] = i * s->count;
        s->swdispls[i] = (MPI_Aint)i * s->count, s->stypes[i] = MPI_BYTE;
    }
    for (int i = 0; i < s->indeg; i++) {
        s->rcounts[i] = s->count, s->rdispls[i] = i * s->count;
        s->rwdispls[i] = (MPI_Aint)i * s->count, s->rtypes[i] = MPI_BYTE;
    }
}

static int nbr_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape, nbr_call_fn call,
                     int gathers)
{
    int st = fl_pattern_point(pt, shape, NULL);
    if (st != FL_OK)
        return st;
    nbr_state *s = fl_alloc(sizeof *s);
    s->rank = ctx->rank, s->call = call, s->gathers = gathers, s->count = (int)pt->size;
    s->form = fl_param_is(ctx->opts, "form", "nonblocking")  ? FORM_NONBLOCKING
              : fl_param_is(ctx->opts, "form", "persistent") ? FORM_PERSISTENT
                                                             : FORM_BLOCKING;
    s->preq = MPI_REQUEST_NULL;
    if (s->form == FORM_PERSISTENT && !COLL_PERSISTENT) {
        snprintf(shape->note, FL_NOTE_LEN, "this MPI offers no persistent neighbourhood collectives (MPI 4)");
        fl_free(s);
        return FL_SKIP;
    }
    s->sync = !fl_param_is(ctx->opts, "sync", "none");
    s->graph = MPI_COMM_NULL;
    st = neighbourhood(s, ctx, shape);
    int worst = st; /* the graph file may fail on one rank alone: all agree */
    MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MIN, ctx->comm);
    int64_t blocks = (int64_t)(s->indeg > s->outdeg ? s->indeg : s->outdeg) * pt->size;
    int big = worst == FL_OK && blocks > INT_MAX, any = 0;
    MPI_Allreduce(&big, &any, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (worst != FL_OK || any) {
        if (worst == FL_OK)
            snprintf(shape->note, FL_NOTE_LEN, "degree x size above INT_MAX bytes (an MPI int displacement)");
        else if (st == FL_OK)
            snprintf(shape->note, FL_NOTE_LEN, "another rank's neighbourhood failed");
        fl_free(s->src), fl_free(s->dst), fl_free(s);
        return worst != FL_OK ? FL_ERROR : FL_SKIP;
    }
    nbr_buffers(s);
    MPI_Dist_graph_create_adjacent(ctx->comm, s->indeg, s->src, s->weights, s->outdeg, s->dst, s->weights,
                                   MPI_INFO_NULL, 0, &s->graph);
    if (s->form == FORM_PERSISTENT && call(s, FORM_PERSISTENT, &s->preq) != MPI_SUCCESS)
        fl_die("a persistent neighbourhood collective's init failed");
    shape->sent_bytes = (int64_t)s->outdeg * pt->size;
    shape->recv_bytes = (int64_t)s->indeg * pt->size;
    shape->messages = s->outdeg;
    shape->timed = 1;
    shape->buffers = 1;
    shape->working_set = blocks;
    shape->self_synced = s->sync;
    snprintf(shape->info, FL_INFO_LEN, "{\"neighborhood\":\"%s\",\"indegree\":%d,\"outdegree\":%d,\"form\":\"%s\","
             "\"sync\":\"%s\"}", fl_param(ctx->opts, "neighborhood"), s->indeg, s->outdeg,
             fl_param(ctx->opts, "form"), s->sync ? "barrier" : "none");
    *state = s;
    return FL_OK;
}

static void nbr_teardown(const fl_ctx *ctx, void *state)
{
    nbr_state *s = state;
    (void)ctx;
    if (s->preq != MPI_REQUEST_NULL)
        MPI_Request_free(&s->preq);
    MPI_Comm_free(&s->graph);
    void *held[] = {s->src, s->dst, s->sbuf, s->rbuf, s->scounts, s->sdispls, s->rcounts, s->rdispls,
                    s->swdispls, s->rwdispls, s->stypes, s->rtypes, s->weights, s};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        fl_free(held[i]);
}

/* ---- the calls ---- */

static int allgather_call(nbr_state *s, int form, MPI_Request *req)
{
#if COLL_PERSISTENT
    if (form == FORM_PERSISTENT)
        return MPI_Neighbor_allgather_init(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->count, MPI_BYTE, s->graph, MPI_INFO_NULL, req);
#endif
    return form == FORM_NONBLOCKING ? MPI_Ineighbor_allgather(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->count, MPI_BYTE, s->graph, req)
                                    : MPI_Neighbor_allgather(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->count, MPI_BYTE, s->graph);
}

static int allgatherv_call(nbr_state *s, int form, MPI_Request *req)
{
#if COLL_PERSISTENT
    if (form == FORM_PERSISTENT)
        return MPI_Neighbor_allgatherv_init(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->rcounts, s->rdispls, MPI_BYTE, s->graph, MPI_INFO_NULL, req);
#endif
    return form == FORM_NONBLOCKING ? MPI_Ineighbor_allgatherv(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->rcounts, s->rdispls, MPI_BYTE, s->graph, req)
                                    : MPI_Neighbor_allgatherv(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->rcounts, s->rdispls, MPI_BYTE, s->graph);
}

static int alltoall_call(nbr_state *s, int form, MPI_Request *req)
{
#if COLL_PERSISTENT
    if (form == FORM_PERSISTENT)
        return MPI_Neighbor_alltoall_init(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->count, MPI_BYTE, s->graph, MPI_INFO_NULL, req);
#endif
    return form == FORM_NONBLOCKING ? MPI_Ineighbor_alltoall(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->count, MPI_BYTE, s->graph, req)
                                    : MPI_Neighbor_alltoall(s->sbuf, s->count, MPI_BYTE, s->rbuf, s->count, MPI_BYTE, s->graph);
}

static int alltoallv_call(nbr_state *s, int form, MPI_Request *req)
{
#if COLL_PERSISTENT
    if (form == FORM_PERSISTENT)
        return MPI_Neighbor_alltoallv_init(s->sbuf, s->scounts, s->sdispls, MPI_BYTE, s->rbuf, s->rcounts, s->rdispls, MPI_BYTE, s->graph, MPI_INFO_NULL, req);
#endif
    return form == FORM_NONBLOCKING ? MPI_Ineighbor_alltoallv(s->sbuf, s->scounts, s->sdispls, MPI_BYTE, s->rbuf, s->rcounts, s->rdispls, MPI_BYTE, s->graph, req)
                                    : MPI_Neighbor_alltoallv(s->sbuf, s->scounts, s->sdispls, MPI_BYTE, s->rbuf, s->rcounts, s->rdispls, MPI_BYTE, s->graph);
}

static int alltoallw_call(nbr_state *s, int form, MPI_Request *req)
{
#if COLL_PERSISTENT
    if (form == FORM_PERSISTENT)
        return MPI_Neighbor_alltoallw_init(s->sbuf, s->scounts, s->swdispls, s->stypes, s->rbuf, s->rcounts, s->rwdispls, s->rtypes, s->graph, MPI_INFO_NULL, req);
#endif
    return form == FORM_NONBLOCKING ? MPI_Ineighbor_alltoallw(s->sbuf, s->scounts, s->swdispls, s->stypes, s->rbuf, s->rcounts, s->rwdispls, s->rtypes, s->graph, req)
                                    : MPI_Neighbor_alltoallw(s->sbuf, s->scounts, s->swdispls, s->stypes, s->rbuf, s->rcounts, s->rwdispls, s->rtypes, s->graph);
}

/* ---- measure ---- */

static inline void nbr_once(nbr_state *s)
{
    MPI_Request q;
    if (s->form == FORM_PERSISTENT) {
        MPI_Start(&s->preq);
        MPI_Wait(&s->preq, MPI_STATUS_IGNORE);
    } else if (s->form == FORM_NONBLOCKING) {
        s->call(s, FORM_NONBLOCKING, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        s->call(s, FORM_BLOCKING, NULL);
    }
}

static double nbr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    nbr_state *s = state;
    (void)ctx;
    double elapsed = 0, t = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        if (s->sync) {
            MPI_Barrier(s->graph);
            t = fl_now();
        }
        nbr_once(s);
        if (s->sync)
            elapsed += fl_now() - t;
    }
    return s->sync ? elapsed : fl_now() - t;
}

/* ---- verify: patterned blocks, each received block against its sender's
 * (allgather: the sender's one block; alltoall: its block for this rank,
 * by halo.h's order rule) ---- */

static int64_t nbr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    nbr_state *s = state;
    int64_t bad = 0;
    (void)ctx;
    if (s->gathers)
        fl_fill(s->sbuf, (size_t)s->count, halo_seed(s->rank, -1, 0));
    for (int j = 0; !s->gathers && j < s->outdeg; j++)
        fl_fill(s->sbuf + (size_t)j * s->count, (size_t)s->count, halo_seed(s->rank, s->dst[j], halo_ordinal(s->dst, j)));
    memset(s->rbuf, 0, (size_t)(s->indeg > 0 ? s->indeg : 1) * (size_t)s->count);
    MPI_Barrier(s->graph);
    nbr_once(s);
    for (int i = 0; i < s->indeg; i++)
        bad += fl_check(s->rbuf + (size_t)i * s->count, (size_t)s->count,
                        s->gathers ? halo_seed(s->src[i], -1, 0) : halo_seed(s->src[i], s->rank, halo_ordinal(s->src, i)));
    *checked += (int64_t)s->indeg * s->count;
    return bad;
}

/* ---- one setup per operation ---- */

static int allgather_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return nbr_setup(ctx, pt, state, shape, allgather_call, 1);
}

static int allgatherv_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return nbr_setup(ctx, pt, state, shape, allgatherv_call, 1);
}

static int alltoall_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return nbr_setup(ctx, pt, state, shape, alltoall_call, 0);
}

static int alltoallv_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return nbr_setup(ctx, pt, state, shape, alltoallv_call, 0);
}

static int alltoallw_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return nbr_setup(ctx, pt, state, shape, alltoallw_call, 0);
}

const fl_kernel fl_coll_neighbor_kernels[] = {
    {.name = "coll.neighbor_allgather", .setup = allgather_setup, .measure = nbr_measure, .verify = nbr_verify,
     .teardown = nbr_teardown},
    {.name = "coll.neighbor_allgatherv", .setup = allgatherv_setup, .measure = nbr_measure, .verify = nbr_verify,
     .teardown = nbr_teardown},
    {.name = "coll.neighbor_alltoall", .setup = alltoall_setup, .measure = nbr_measure, .verify = nbr_verify,
     .teardown = nbr_teardown},
    {.name = "coll.neighbor_alltoallv", .setup = alltoallv_setup, .measure = nbr_measure, .verify = nbr_verify,
     .teardown = nbr_teardown},
    {.name = "coll.neighbor_alltoallw", .setup = alltoallw_setup, .measure = nbr_measure, .verify = nbr_verify,
     .teardown = nbr_teardown},
    {.name = NULL},
};
