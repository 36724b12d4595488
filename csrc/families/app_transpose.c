/* Family "app": app.transpose, seed 000's distributed array transpose.
 *
 * An M x M array A of 8-byte words is distributed by row blocks over the
 * active ranks (app.h); B = A^T is distributed the same way, so rank r owns
 * B's rows lo(r)..lo(r+1)-1, i.e. A's columns of its block, and receives
 * from every rank s the block A[rows of s][columns of r], transposed. This
 * is an all-to-all personalized exchange of strided data, and seed 000
 * (Kurmann and Stricker) compares three ways of doing it:
 *
 * - packed: copy each destination's block into a contiguous buffer (pack),
 *   MPI_Alltoall (MPI_Alltoallv when M is not a multiple of N), then
 *   transpose every received block into B (unpack);
 * - datatype: MPI derived datatypes describe both sides, a vector of A's
 *   rows and a column-at-a-time placement into B, and MPI_Alltoallw moves
 *   them: the library does the packing and the strided stores;
 * - deposit: one-sided, each rank writes its blocks straight into the
 *   targets' B: stores through a shared-memory window when every active
 *   rank shares this node (deposit=auto|stores), else MPI_Put with the same
 *   datatypes between two fences (deposit=put).
 *
 * Each op is one whole transpose, timed by phase: pack, exchange, unpack for
 * packed; exchange alone for the others. A[i][j] = i M + j + 1, so B is
 * checked element by element (verify). */
#include "app.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TILE = 32 }; /* words per side of a tile of the local transposes: 8 KiB of each array */

typedef struct tr_state tr_state;
typedef void (*tr_op)(tr_state *s, double *t);

struct tr_state {
    app_common a;          /* first: app_phases reads it */
    tr_op op;
    int64_t m, h, lo;      /* side, this rank's rows, its first row */
    int64_t *rows, *los;   /* per active rank */
    uint64_t *A, *B;
    uint64_t *sbuf, *rbuf; /* packed */
    int *scount, *sdispl, *rcount, *rdispl; /* packed, in words */
    int even;              /* every block the same size: MPI_Alltoall */
    int schedule;          /* packed: APP_COLLECTIVE, APP_CONCURRENT or a pairwise one (app.h) */
    MPI_Datatype *stype, *rtype, *ttype; /* datatype and put: per peer */
    int *ones, *sbytes, *rbytes, *zeros;
    MPI_Win win;
    int has_win;
    uint64_t **peer_B;     /* stores: every active rank's B */
};

/* ---- the local pieces ---- */

/* dst[j * dld + i] = src[i * sld + j] for i < rows, j < cols, tile by tile. */
static void transpose_block(uint64_t *restrict dst, int64_t dld, const uint64_t *restrict src,
                            int64_t sld, int64_t rows, int64_t cols)
{
    for (int64_t i0 = 0; i0 < rows; i0 += TILE)
        for (int64_t j0 = 0; j0 < cols; j0 += TILE) {
            int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows;
            int64_t j1 = j0 + TILE < cols ? j0 + TILE : cols;
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++)
                    dst[j * dld + i] = src[i * sld + j];
        }
}

static void pack(tr_state *s)
{
    for (int d = 0; d < s->a.n; d++) {
        uint64_t *out = s->sbuf + s->sdispl[d];
        for (int64_t i = 0; i < s->h; i++)
            memcpy(out + i * s->rows[d], s->A + i * s->m + s->los[d],
                   (size_t)s->rows[d] * sizeof *out);
    }
}

/* The block from rank q (rows(q) x h, row-major) into B's columns of q's rows. */
static void unpack(tr_state *s)
{
    for (int q = 0; q < s->a.n; q++)
        transpose_block(s->B + s->los[q], s->m, s->rbuf + s->rdispl[q], s->h, s->rows[q], s->h);
}

/* ---- the three ways, one op each ---- */

static void packed_op(tr_state *s, double *t)
{
    double *ph = s->a.phase;
    pack(s);
    MPI_Barrier(s->a.comm); /* packing ends when every rank has packed: the exchange times the collective alone */
    ph[0] += app_tick(t);
    if (s->even && s->schedule == APP_COLLECTIVE)
        MPI_Alltoall(s->sbuf, s->scount[0], MPI_UINT64_T, s->rbuf, s->rcount[0], MPI_UINT64_T, s->a.comm);
    else
        app_alltoallv(&s->a, s->schedule, s->sbuf, s->scount, s->sdispl, s->rbuf, s->rcount, s->rdispl,
                      MPI_UINT64_T);
    ph[1] += app_tick(t);
    unpack(s);
    ph[2] += app_tick(t);
}

static void datatype_op(tr_state *s, double *t)
{
    MPI_Alltoallw(s->A, s->ones, s->sbytes, s->stype, s->B, s->ones, s->rbytes, s->rtype, s->a.comm);
    s->a.phase[0] += app_tick(t);
}

static void put_op(tr_state *s, double *t)
{
    MPI_Win_fence(0, s->win);
    for (int d = 0; d < s->a.n; d++)
        MPI_Put(s->A + s->los[d], 1, s->stype[d], d, (MPI_Aint)s->lo, 1, s->ttype[d], s->win);
    MPI_Win_fence(0, s->win);
    s->a.phase[0] += app_tick(t);
}

/* Stores into every rank's B through the shared window, between two
 * barriers with a memory synchronisation on each side (MPI-3.1 sec. 11.7:
 * the separate-ranks pattern of MPI_Win_sync with process synchronisation). */
static void stores_op(tr_state *s, double *t)
{
    MPI_Win_sync(s->win);
    MPI_Barrier(s->a.comm);
    for (int d = 0; d < s->a.n; d++)
        transpose_block(s->peer_B[d] + s->lo, s->m, s->A + s->los[d], s->m, s->h, s->rows[d]);
    MPI_Win_sync(s->win);
    MPI_Barrier(s->a.comm);
    s->a.phase[0] += app_tick(t);
}

/* ---- setup ---- */

static void transpose_teardown(const fl_ctx *ctx, void *state);

/* A's block for rank d: h rows of rows(d) words at a stride of M. */
static MPI_Datatype rows_type(const tr_state *s, int d)
{
    MPI_Datatype t;
    MPI_Type_vector((int)s->h, (int)s->rows[d], (int)s->m, MPI_UINT64_T, &t);
    MPI_Type_commit(&t);
    return t;
}

/* A block of `rows` x `cols` words arriving row by row, placed transposed
 * into B: element (i, j) at B[j][i]; one column of B per row of the block,
 * each column's extent cut to one word so the next row lands beside it. */
static MPI_Datatype transposed_type(const tr_state *s, int64_t rows, int64_t cols)
{
    MPI_Datatype col, col1, t;
    MPI_Type_vector((int)cols, 1, (int)s->m, MPI_UINT64_T, &col);
    MPI_Type_create_resized(col, 0, sizeof(uint64_t), &col1);
    MPI_Type_contiguous((int)rows, col1, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&col);
    MPI_Type_free(&col1);
    return t;
}

static void packed_setup(tr_state *s)
{
    int n = s->a.n;
    s->sbuf = fl_alloc((size_t)(s->h * s->m) * sizeof *s->sbuf);
    s->rbuf = fl_alloc((size_t)(s->h * s->m) * sizeof *s->rbuf);
    s->scount = fl_alloc(sizeof(int) * 4 * (size_t)n);
    s->sdispl = s->scount + n, s->rcount = s->scount + 2 * n, s->rdispl = s->scount + 3 * n;
    for (int d = 0, off = 0, roff = 0; d < n; d++) {
        s->scount[d] = (int)(s->h * s->rows[d]);
        s->rcount[d] = (int)(s->rows[d] * s->h);
        s->sdispl[d] = off, s->rdispl[d] = roff;
        off += s->scount[d], roff += s->rcount[d];
    }
    s->even = s->m % n == 0;
    s->op = packed_op;
}

static void typed_setup(tr_state *s, int put)
{
    int n = s->a.n;
    s->stype = fl_alloc(sizeof(MPI_Datatype) * 3 * (size_t)n);
    s->rtype = s->stype + n, s->ttype = s->stype + 2 * n;
    s->ones = fl_alloc(sizeof(int) * 3 * (size_t)n);
    s->sbytes = s->ones + n, s->rbytes = s->ones + 2 * n;
    for (int q = 0; q < n; q++) {
        s->ones[q] = 1;
        s->stype[q] = rows_type(s, q);
        s->sbytes[q] = (int)(s->los[q] * 8);
        s->rtype[q] = transposed_type(s, s->rows[q], s->h);   /* q's rows, my columns */
        s->rbytes[q] = (int)(s->los[q] * 8);
        s->ttype[q] = put ? transposed_type(s, s->h, s->rows[q]) : MPI_DATATYPE_NULL;
    }
}

static void window_setup(tr_state *s, int stores)
{
    MPI_Aint bytes = fl_win_bytes((MPI_Aint)(s->h * s->m * 8));
    if (!stores) {
        fl_win_allocate(bytes, 8, MPI_INFO_NULL, s->a.comm, 0, &s->B, &s->win);
        s->has_win = 1;
        memset(s->B, 0, (size_t)bytes);
        typed_setup(s, 1);
        s->op = put_op;
        return;
    }
    fl_win_allocate(bytes, 8, MPI_INFO_NULL, s->a.comm, 1, &s->B, &s->win);
    s->has_win = 1;
    memset(s->B, 0, (size_t)bytes);
    s->peer_B = fl_alloc(sizeof *s->peer_B * (size_t)s->a.n);
    for (int q = 0; q < s->a.n; q++) {
        MPI_Aint size;
        int unit;
        MPI_Win_shared_query(s->win, q, &size, &unit, &s->peer_B[q]);
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    s->op = stores_op;
}

/* Which deposit: stores where every active rank shares this node. */
static int deposit_stores(const fl_ctx *ctx, const tr_state *s, fl_shape *shape)
{
    const char *how = fl_param(ctx->opts, "deposit");
    int shared = s->a.node_shared;
    if (strcmp(how, "stores") == 0 && !shared) {
        snprintf(shape->note, FL_NOTE_LEN, "deposit=stores needs every active rank on one memory node");
        return -1;
    }
    return strcmp(how, "put") != 0 && shared;
}

static const char *exchange_name(const tr_state *s, const char *mode)
{
    if (strcmp(mode, "packed") == 0 && s->schedule != APP_COLLECTIVE)
        return app_schedule_name(s->schedule);
    if (strcmp(mode, "packed") == 0)
        return s->even ? "MPI_Alltoall" : "MPI_Alltoallv";
    if (strcmp(mode, "datatype") == 0)
        return "MPI_Alltoallw";
    return s->op == stores_op ? "stores" : "MPI_Put";
}

/* Every rank's block arithmetic and A = (i M + j + 1). */
static void arrays_setup(tr_state *s, int64_t m)
{
    int n = s->a.n;
    s->m = m;
    s->h = app_count(m, s->a.rank, n);
    s->lo = app_lo(m, s->a.rank, n);
    s->rows = fl_alloc(sizeof(int64_t) * 2 * (size_t)n);
    s->los = s->rows + n;
    for (int q = 0; q < n; q++)
        s->rows[q] = app_count(m, q, n), s->los[q] = app_lo(m, q, n);
    s->A = fl_alloc((size_t)(s->h * m) * sizeof *s->A);
    for (int64_t i = 0; i < s->h; i++)
        for (int64_t j = 0; j < m; j++)
            s->A[i * m + j] = (uint64_t)((s->lo + i) * m + j + 1);
}

static int transpose_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                           fl_shape *shape)
{
    (void)bs;
    const char *mode = fl_param(ctx->opts, "mode");
    const int64_t m = pt->size;
    const int n = pt->layout ? pt->layout->active : 1;
    shape->phase_names = strcmp(mode, "packed") == 0 ? "pack,exchange,unpack" : "exchange";
    if (m < n) {
        snprintf(shape->note, FL_NOTE_LEN, "array side %lld below %d ranks", (long long)m, n);
        return FL_ERROR;
    }
    /* rows x side within an int, asked without forming the product: at a side of 2^32
     * it overflows 64 bits (--force skips the memory check, not this one) */
    if ((m + n - 1) / n > INT_MAX / m) {
        snprintf(shape->note, FL_NOTE_LEN, "one rank's rows: %lld rows of %lld items exceed an MPI int count",
                 (long long)((m + n - 1) / n), (long long)m);
        return FL_SKIP;
    }
    shape->bytes_per_op = m * m * 8;
    tr_state *s = fl_alloc(sizeof *s);
    *state = s;
    if (app_begin(ctx, pt, shape, &s->a) != FL_OK)
        return FL_ERROR;
    int stores = strcmp(mode, "deposit") == 0 ? deposit_stores(ctx, s, shape) : 0;
    if (stores < 0 || s->a.comm == MPI_COMM_NULL) { /* idle ranks, or a skip every rank agrees on */
        if (stores < 0)
            transpose_teardown(ctx, s);
        return stores < 0 ? FL_SKIP : FL_OK;
    }
    arrays_setup(s, m);
    s->schedule = app_schedule(ctx->opts);
    if (strcmp(mode, "deposit") == 0) {
        window_setup(s, stores);
    } else {
        s->B = fl_alloc((size_t)(s->h * m) * sizeof *s->B);
        if (strcmp(mode, "packed") == 0)
            packed_setup(s);
        else
            typed_setup(s, 0), s->op = datatype_op;
    }
    shape->sent_bytes = shape->recv_bytes = s->h * (m - s->h) * 8;
    shape->messages = n - 1;
    snprintf(shape->info, FL_INFO_LEN, "{\"mode\":\"%s\",\"exchange\":\"%s\",\"m\":%lld,\"ranks\":%d}",
             mode, exchange_name(s, mode), (long long)m, n);
    return FL_OK;
}

/* ---- measure, verify, teardown ---- */

static double transpose_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    tr_state *s = state;
    (void)ctx;
    if (s->a.comm == MPI_COMM_NULL)
        return 0;
    double t0 = fl_now(), t = t0;
    for (int64_t i = 0; i < iters; i++)
        s->op(s, &t);
    return fl_now() - t0;
}

/* One transpose into a cleared B; every element of this rank's B checked:
 * B[jj][i] = A[i][lo + jj] = i M + lo + jj + 1. */
static int64_t transpose_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    tr_state *s = state;
    int64_t bad = 0;
    if (s->a.comm == MPI_COMM_NULL)
        return 0;
    if (s->op == stores_op)
        MPI_Barrier(s->a.comm); /* nobody clears while another still stores */
    memset(s->B, 0, (size_t)(s->h * s->m) * sizeof *s->B);
    if (s->op == put_op || s->op == stores_op)
        MPI_Barrier(s->a.comm);
    transpose_measure(ctx, s, 1);
    for (int64_t jj = 0; jj < s->h; jj++)
        for (int64_t i = 0; i < s->m; i++)
            bad += s->B[jj * s->m + i] != (uint64_t)(i * s->m + s->lo + jj + 1);
    *checked += s->h * s->m * 8;
    return bad * 8;
}

static void free_types(MPI_Datatype *t, int n)
{
    for (int q = 0; t && q < n; q++)
        if (t[q] != MPI_DATATYPE_NULL)
            MPI_Type_free(&t[q]);
}

static void transpose_teardown(const fl_ctx *ctx, void *state)
{
    tr_state *s = state;
    (void)ctx;
    if (s->has_win) {
        if (s->op == stores_op)
            MPI_Win_unlock_all(s->win);
        fl_win_free(&s->win);
        s->B = NULL;
    }
    if (s->stype)
        free_types(s->stype, 3 * s->a.n);
    fl_free(s->stype);
    fl_free(s->ones);
    fl_free(s->A);
    fl_free(s->B);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->scount);
    fl_free(s->rows);
    fl_free(s->peer_B);
    app_end(&s->a);
    fl_free(s);
}

const fl_kernel fl_app_transpose_kernels[] = {
    {.name = "app.transpose", .setup = transpose_setup, .measure = transpose_measure,
     .verify = transpose_verify, .teardown = transpose_teardown, .phases = app_phases},
    {.name = NULL},
};
