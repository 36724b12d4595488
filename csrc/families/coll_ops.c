/* Family "coll" (coll.h): each operation's MPI call in its three forms, its
 * buffers, and the arithmetic of its result, which --validate checks on
 * every rank. Inputs are small integers, val(r, k) in 0..4 for element k of
 * rank r's input, so that every reduction of them is exact in every type
 * (float sums to 2^24) and the expected result is computed here in the
 * same type (an int8 sum wraps as MPI's does). */
#include "coll.h"

#include <limits.h>
#include <string.h>

#define IP(s, p) ((s)->in_place ? MPI_IN_PLACE : (const void *)(p))
#define IP_ROOT(s, p, root) ((s)->in_place && (s)->a.rank == (root) ? MPI_IN_PLACE : (const void *)(p))

static int call_allreduce(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Allreduce(sb, s->rbuf, c, s->type, s->rop, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Iallreduce(sb, s->rbuf, c, s->type, s->rop, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Allreduce_init(sb, s->rbuf, c, s->type, s->rop, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_bcast(coll_state *s, int form, int root, MPI_Request *q)
{
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Bcast(s->rbuf, c, s->type, root, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ibcast(s->rbuf, c, s->type, root, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Bcast_init(s->rbuf, c, s->type, root, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_reduce(coll_state *s, int form, int root, MPI_Request *q)
{
    const void *sb = IP_ROOT(s, s->sbuf, root);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Reduce(sb, s->rbuf, c, s->type, s->rop, root, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ireduce(sb, s->rbuf, c, s->type, s->rop, root, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Reduce_init(sb, s->rbuf, c, s->type, s->rop, root, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_allgather(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Allgather(sb, c, s->type, s->rbuf, c, s->type, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Iallgather(sb, c, s->type, s->rbuf, c, s->type, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Allgather_init(sb, c, s->type, s->rbuf, c, s->type, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_allgatherv(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Allgatherv(sb, c, s->type, s->rbuf, s->counts, s->displs, s->type, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Iallgatherv(sb, c, s->type, s->rbuf, s->counts, s->displs, s->type, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Allgatherv_init(sb, c, s->type, s->rbuf, s->counts, s->displs, s->type, s->a.comm,
                               MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_reduce_scatter(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    if (form == FORM_BLOCKING)
        return MPI_Reduce_scatter(sb, s->rbuf, s->counts, s->type, s->rop, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ireduce_scatter(sb, s->rbuf, s->counts, s->type, s->rop, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Reduce_scatter_init(sb, s->rbuf, s->counts, s->type, s->rop, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_reduce_scatter_block(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int b = (int)s->block;
    if (form == FORM_BLOCKING)
        return MPI_Reduce_scatter_block(sb, s->rbuf, b, s->type, s->rop, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ireduce_scatter_block(sb, s->rbuf, b, s->type, s->rop, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Reduce_scatter_block_init(sb, s->rbuf, b, s->type, s->rop, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_gather(coll_state *s, int form, int root, MPI_Request *q)
{
    const void *sb = IP_ROOT(s, s->sbuf, root);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Gather(sb, c, s->type, s->rbuf, c, s->type, root, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Igather(sb, c, s->type, s->rbuf, c, s->type, root, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Gather_init(sb, c, s->type, s->rbuf, c, s->type, root, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_gatherv(coll_state *s, int form, int root, MPI_Request *q)
{
    const void *sb = IP_ROOT(s, s->sbuf, root);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Gatherv(sb, c, s->type, s->rbuf, s->counts, s->displs, s->type, root, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Igatherv(sb, c, s->type, s->rbuf, s->counts, s->displs, s->type, root, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Gatherv_init(sb, c, s->type, s->rbuf, s->counts, s->displs, s->type, root, s->a.comm,
                            MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_scatter(coll_state *s, int form, int root, MPI_Request *q)
{
    void *rb = s->in_place && s->a.rank == root ? MPI_IN_PLACE : s->rbuf;
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Scatter(s->sbuf, c, s->type, rb, c, s->type, root, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Iscatter(s->sbuf, c, s->type, rb, c, s->type, root, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Scatter_init(s->sbuf, c, s->type, rb, c, s->type, root, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_scatterv(coll_state *s, int form, int root, MPI_Request *q)
{
    void *rb = s->in_place && s->a.rank == root ? MPI_IN_PLACE : s->rbuf;
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Scatterv(s->sbuf, s->counts, s->displs, s->type, rb, c, s->type, root, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Iscatterv(s->sbuf, s->counts, s->displs, s->type, rb, c, s->type, root, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Scatterv_init(s->sbuf, s->counts, s->displs, s->type, rb, c, s->type, root, s->a.comm,
                             MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_alltoall(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Alltoall(sb, c, s->type, s->rbuf, c, s->type, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ialltoall(sb, c, s->type, s->rbuf, c, s->type, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Alltoall_init(sb, c, s->type, s->rbuf, c, s->type, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_alltoallv(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int *c = s->counts, *d = s->displs;
    if (form == FORM_BLOCKING)
        return MPI_Alltoallv(sb, c, d, s->type, s->rbuf, c, d, s->type, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ialltoallv(sb, c, d, s->type, s->rbuf, c, d, s->type, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Alltoallv_init(sb, c, d, s->type, s->rbuf, c, d, s->type, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_scan(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    const void *sb = IP(s, s->sbuf);
    const int c = (int)s->count;
    if (form == FORM_BLOCKING)
        return MPI_Scan(sb, s->rbuf, c, s->type, s->rop, s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Iscan(sb, s->rbuf, c, s->type, s->rop, s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Scan_init(sb, s->rbuf, c, s->type, s->rop, s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

static int call_barrier(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root;
    if (form == FORM_BLOCKING)
        return MPI_Barrier(s->a.comm);
    if (form == FORM_NONBLOCKING)
        return MPI_Ibarrier(s->a.comm, q);
#if COLL_PERSISTENT
    return MPI_Barrier_init(s->a.comm, MPI_INFO_NULL, q);
#else
    return MPI_ERR_OTHER;
#endif
}

/* inoutbuf = inbuf op inoutbuf on this rank alone; the result accumulates
 * between ops (the timing does not depend on the values), verify refills. */
static int call_reduce_local(coll_state *s, int form, int root, MPI_Request *q)
{
    (void)root, (void)q;
    if (form != FORM_BLOCKING)
        return MPI_ERR_OTHER;
    return MPI_Reduce_local(s->sbuf, s->rbuf, (int)s->count, s->type, s->rop);
}

static const struct {
    const char *name;
    int (*call)(coll_state *, int, int, MPI_Request *);
} OPS[] = {
    [C_ALLREDUCE] = {"MPI_Allreduce", call_allreduce},
    [C_BCAST] = {"MPI_Bcast", call_bcast},
    [C_REDUCE] = {"MPI_Reduce", call_reduce},
    [C_ALLGATHER] = {"MPI_Allgather", call_allgather},
    [C_ALLGATHERV] = {"MPI_Allgatherv", call_allgatherv},
    [C_REDUCE_SCATTER] = {"MPI_Reduce_scatter", call_reduce_scatter},
    [C_REDUCE_SCATTER_BLOCK] = {"MPI_Reduce_scatter_block", call_reduce_scatter_block},
    [C_GATHER] = {"MPI_Gather", call_gather},
    [C_GATHERV] = {"MPI_Gatherv", call_gatherv},
    [C_SCATTER] = {"MPI_Scatter", call_scatter},
    [C_SCATTERV] = {"MPI_Scatterv", call_scatterv},
    [C_ALLTOALL] = {"MPI_Alltoall", call_alltoall},
    [C_ALLTOALLV] = {"MPI_Alltoallv", call_alltoallv},
    [C_SCAN] = {"MPI_Scan", call_scan},
    [C_BARRIER] = {"MPI_Barrier", call_barrier},
    [C_REDUCE_LOCAL] = {"MPI_Reduce_local", call_reduce_local},
};

int coll_call(coll_state *s, int form, int root, MPI_Request *req)
{
    return OPS[s->op].call(s, form, root, req);
}

const char *coll_name(int op)
{
    return OPS[op].name;
}

/* ---- buffers ---- */

/* Balanced blocks of reduce_scatter's vector; equal ones for the v forms. */
static void set_counts(coll_state *s)
{
    const int n = s->a.n;
    for (int q = 0; q < n; q++) {
        int64_t lo = s->op == C_REDUCE_SCATTER ? app_lo(s->count, q, n) : q * s->count;
        s->counts[q] = (int)(s->op == C_REDUCE_SCATTER ? app_count(s->count, q, n) : s->count);
        s->displs[q] = (int)lo;
    }
}

void coll_sizes(coll_state *s)
{
    const int64_t c = s->count, n = s->a.n, all = c * n;
    int64_t snd = c, rcv = c;
    switch (s->op) {
    case C_BCAST: snd = 0; break;
    case C_ALLGATHER: case C_ALLGATHERV: case C_GATHER: case C_GATHERV: rcv = all; break;
    case C_SCATTER: case C_SCATTERV: snd = all; break;
    case C_ALLTOALL: case C_ALLTOALLV: snd = rcv = all; break;
    case C_REDUCE_SCATTER: rcv = s->in_place ? c : app_count(c, s->a.rank, (int)n); break;
    case C_REDUCE_SCATTER_BLOCK:
        s->block = c / n;
        snd = s->block * n;
        rcv = s->in_place ? snd : s->block;
        break;
    case C_BARRIER: snd = rcv = 0; break;
    default: break;
    }
    s->send_n = snd, s->recv_n = rcv;
}

static inline int64_t val(int r, int64_t k)
{
    return (r * 7 + k * 3) % 5;
}

/* v in the point's element type, read back as a double (exact: small integers). */
static double as_type(int dtype, int64_t v)
{
    switch (dtype) {
    case T_INT8: return (double)(int8_t)v;
    case T_INT32: return (double)(int32_t)v;
    case T_FLOAT: return (double)(float)v;
    default: return (double)v;
    }
}

static void put(char *b, int64_t k, int dtype, int64_t v)
{
    switch (dtype) {
    case T_INT8: ((int8_t *)b)[k] = (int8_t)v; break;
    case T_INT32: ((int32_t *)b)[k] = (int32_t)v; break;
    case T_INT64: ((int64_t *)b)[k] = v; break;
    case T_FLOAT: ((float *)b)[k] = (float)v; break;
    default: ((double *)b)[k] = (double)v; break;
    }
}

static double get(const char *b, int64_t k, int dtype)
{
    switch (dtype) {
    case T_INT8: return ((const int8_t *)b)[k];
    case T_INT32: return ((const int32_t *)b)[k];
    case T_INT64: return (double)((const int64_t *)b)[k];
    case T_FLOAT: return ((const float *)b)[k];
    default: return ((const double *)b)[k];
    }
}

void coll_fill(coll_state *s, int root)
{
    const int me = s->a.rank;
    const int rooted = s->op == C_REDUCE || s->op == C_GATHER || s->op == C_GATHERV;
    const int gathers = s->op == C_ALLGATHER || s->op == C_ALLGATHERV || s->op == C_GATHER ||
                        s->op == C_GATHERV;
    set_counts(s);
    if (s->op == C_REDUCE_LOCAL) {    /* the in-out operand is what rank 1 would give */
        for (int64_t k = 0; k < s->count; k++)
            put(s->sbuf, k, s->dtype, val(0, k)), put(s->rbuf, k, s->dtype, val(1, k));
        return;
    }
    if (s->op == C_BCAST) {
        for (int64_t k = 0; k < s->count; k++)
            put(s->rbuf, k, s->dtype, me == root ? val(root, k) : 0);
        return;
    }
    /* in place, the input is in the receive buffer: (all)gather's at this rank's block,
     * reduce's and gather's at the root alone; scatter's root keeps its own in the send buffer */
    if (!s->in_place || s->op == C_SCATTER || s->op == C_SCATTERV || (rooted && me != root)) {
        for (int64_t k = 0; k < s->send_n; k++)
            put(s->sbuf, k, s->dtype, val(me, k));
        return;
    }
    const int64_t at = gathers ? me * s->count : 0, n = gathers ? s->count : s->send_n;
    for (int64_t k = 0; k < n; k++)
        put(s->rbuf, at + k, s->dtype, val(me, k));
}

/* ---- the result ---- */

static int64_t combine(int reduce, int64_t a, int64_t b)
{
    switch (reduce) {
    case R_MAX: return a > b ? a : b;
    case R_MIN: return a < b ? a : b;
    case R_BAND: return a & b;
    case R_BOR: return a | b;
    case R_BXOR: return a ^ b;
    default: return a + b;
    }
}

/* The reduction of element k over ranks 0 .. upto - 1. */
static int64_t reduced(const coll_state *s, int upto, int64_t k)
{
    int64_t acc = val(0, k);
    for (int r = 1; r < upto; r++)
        acc = combine(s->reduce, acc, val(r, k));
    return acc;
}

/* The expected value of element j of this rank's result. */
static int64_t expect(const coll_state *s, int root, int64_t j)
{
    const int n = s->a.n, me = s->a.rank;
    const int64_t c = s->count ? s->count : 1;
    switch (s->op) {
    case C_BCAST: return val(root, j);
    case C_SCAN: return reduced(s, me + 1, j);
    case C_REDUCE_LOCAL: return reduced(s, 2, j);
    case C_ALLGATHER: case C_ALLGATHERV: case C_GATHER: case C_GATHERV: return val((int)(j / c), j % c);
    case C_SCATTER: case C_SCATTERV: return val(root, me * c + j);
    case C_ALLTOALL: case C_ALLTOALLV: return val((int)(j / c), me * c + j % c);
    case C_REDUCE_SCATTER: return reduced(s, n, app_lo(s->count, me, n) + j);
    case C_REDUCE_SCATTER_BLOCK: return reduced(s, n, me * s->block + j);
    default: return reduced(s, n, j);   /* allreduce, reduce */
    }
}

/* Elements of this rank's result: none where it receives nothing. */
static int64_t result_n(const coll_state *s, int root)
{
    const int me = s->a.rank;
    switch (s->op) {
    case C_REDUCE: case C_GATHER: case C_GATHERV: return me == root ? s->recv_n : 0;
    case C_SCATTER: case C_SCATTERV: return s->in_place && me == root ? 0 : s->count;
    case C_REDUCE_SCATTER: return app_count(s->count, me, s->a.n);
    case C_REDUCE_SCATTER_BLOCK: return s->block;
    default: return s->recv_n;
    }
}

int64_t coll_check(const coll_state *s, int root, int64_t *checked, int64_t *at, double *got,
                   double *want)
{
    const int64_t n = result_n(s, root);
    int64_t bad = 0;
    for (int64_t j = 0; j < n; j++) {
        double g = get(s->rbuf, j, s->dtype), w = as_type(s->dtype, expect(s, root, j));
        if (g != w && bad++ == 0)
            *at = j, *got = g, *want = w;
    }
    *checked += n * s->esize;
    return bad;
}
