/* Family "coll" (coll.h): the kernels. Setup reads the point's form, element
 * type, reduction, root, in-place and sync parameters, sizes and fills the
 * buffers and, for the persistent form, initialises one request per root it
 * will use. An op is one collective call, timed on every active rank from
 * after the barrier that precedes it (sync=barrier, as IMB and OSU do) to its
 * return, or back to back without one (sync=none, nccl-tests' default); the
 * runner keeps every rank's time and takes the slowest (IMB's t_max). With
 * root_shift the root moves to the next rank every op (IMB's -root_shift). */
#include "coll.h"

#include <stdio.h>
#include <string.h>

static const char *const FORMS[] = {"blocking", "nonblocking", "persistent", NULL};
static const char *const DTYPES[] = {"int8", "int32", "int64", "float", "double", NULL};
static const char *const REDUCES[] = {"sum", "max", "min", "band", "bor", "bxor", NULL};

/* The index of a parameter's value among names (the registry's choices; 0 where the
 * benchmark has no such parameter). */
static int which(const fl_opts *o, const char *key, const char *const *names)
{
    const char *v = fl_param_find(o, key);
    for (int k = 0; v && names[k]; k++)
        if (strcmp(v, names[k]) == 0)
            return k;
    return 0;
}

static void read_params(coll_state *s, const fl_opts *o)
{
    static const MPI_Op rops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR};
    static const int sizes[] = {1, 4, 8, 4, 8};
    const MPI_Datatype types[] = {MPI_INT8_T, MPI_INT32_T, MPI_INT64_T, MPI_FLOAT, MPI_DOUBLE};
    s->form = which(o, "form", FORMS);
    s->dtype = which(o, "dtype", DTYPES);
    s->reduce = which(o, "reduce", REDUCES);
    s->type = types[s->dtype], s->esize = sizes[s->dtype], s->rop = rops[s->reduce];
    s->root = fl_param_find(o, "root") ? (int)fl_param_int(o, "root") : 0;
    s->root_shift = fl_param_is(o, "root_shift", "on");
    s->in_place = fl_param_is(o, "in_place", "yes");
    s->sync = !fl_param_is(o, "sync", "none");
    s->overlap = fl_param_is(o, "overlap", "on") && s->form == FORM_NONBLOCKING;
}

/* The point's counts and roots, decided alike on every rank (idle ones too):
 * FL_OK, or FL_SKIP / FL_ERROR with a note. */
static int check_point(coll_state *s, const fl_point *pt, fl_shape *shape)
{
    const int n = pt->layout ? pt->layout->active : 0;
    if (pt->size % s->esize) {
        snprintf(shape->note, FL_NOTE_LEN, "%lld bytes are not whole %s elements", (long long)pt->size,
                 DTYPES[s->dtype]);
        return FL_ERROR;
    }
    if (s->root >= n) {
        snprintf(shape->note, FL_NOTE_LEN, "root %d is not one of the %d ranks", s->root, n);
        return FL_ERROR;
    }
    if (s->op == C_REDUCE_LOCAL && (s->form != FORM_BLOCKING || s->in_place)) {
        snprintf(shape->note, FL_NOTE_LEN, "MPI_Reduce_local has %s", s->in_place ? "no in-place form" :
                 "no non-blocking or persistent form");
        return s->in_place ? FL_ERROR : FL_SKIP;
    }
    if (s->form == FORM_PERSISTENT && !COLL_PERSISTENT) {
        snprintf(shape->note, FL_NOTE_LEN, "this MPI offers no persistent collectives (MPI 4's %s_init)",
                 coll_name(s->op));
        return FL_SKIP;
    }
    s->count = pt->size / s->esize;
    return app_int_count(s->count * n, shape, "elements of one op's buffers") ? FL_SKIP : FL_OK;
}

/* bytes_per_op: the data the op is about (nccl-tests' S; suite/benchmarks.py). */
static int64_t op_bytes(const coll_state *s)
{
    const int64_t n = s->a.n, b = s->count * s->esize;
    switch (s->op) {
    case C_ALLGATHER: case C_ALLGATHERV: case C_GATHER: case C_GATHERV:
    case C_SCATTER: case C_SCATTERV: case C_ALLTOALL: case C_ALLTOALLV: return b * n;
    case C_REDUCE_SCATTER_BLOCK: return s->block * n * s->esize;
    case C_BARRIER: return 0;
    default: return b;
    }
}

static void describe(const coll_state *s, fl_shape *shape)
{
    fl_buf path = {0};
    fl_buf_str(&path, s->selection); /* a path may hold any byte: escaped */
    shape->bytes_per_op = op_bytes(s);
    shape->buffers = 1;
    snprintf(shape->info, FL_INFO_LEN,
             "{\"call\":\"%s\",\"form\":\"%s\",\"dtype\":\"%s\",\"count\":%lld,\"reduce\":\"%s\","
             "\"root\":%d,\"root_shift\":%s,\"in_place\":%s,\"sync\":\"%s\",\"ranks\":%d,"
             "\"algorithm_control\":\"%s\",\"algorithm_in_force\":\"%s\",\"selection_file\":%s,\"selection_read\":%s}",
             coll_name(s->op), FORMS[s->form], DTYPES[s->dtype], (long long)s->count, REDUCES[s->reduce],
             s->root, s->root_shift ? "true" : "false", s->in_place ? "true" : "false",
             s->sync ? "barrier" : "none", s->a.n, s->control, s->algorithm, path.p,
             s->selection_read ? "true" : "false");
    fl_buf_free(&path);
}

static void alloc_buffers(coll_state *s)
{
    const size_t n = (size_t)s->a.n;
    s->sbuf = fl_alloc((size_t)s->send_n * (size_t)s->esize);
    s->rbuf = fl_alloc((size_t)s->recv_n * (size_t)s->esize);
    s->counts = fl_alloc(sizeof(int) * n);
    s->displs = fl_alloc(sizeof(int) * n);
    coll_fill(s, s->root);
    if (s->form != FORM_PERSISTENT)
        return;
    s->npreq = s->root_shift ? s->a.n : 1;
    s->preq = fl_alloc(sizeof *s->preq * (size_t)s->npreq);
    for (int r = 0; r < s->npreq; r++)
        if (coll_call(s, FORM_PERSISTENT, s->npreq > 1 ? r : s->root, &s->preq[r]) != MPI_SUCCESS)
            fl_die("%s_init failed", coll_name(s->op));
}

static void coll_teardown(const fl_ctx *ctx, void *state)
{
    coll_state *s = state;
    (void)ctx;
    for (int r = 0; r < s->npreq; r++)
        MPI_Request_free(&s->preq[r]);
    fl_free(s->preq);
    fl_free(s->sbuf);
    fl_free(s->rbuf);
    fl_free(s->counts);
    fl_free(s->displs);
    app_end(&s->a);
    fl_free(s);
}

static int coll_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape, int op)
{
    coll_state *s = fl_alloc(sizeof *s);
    *state = s;
    read_params(s, ctx->opts);
    s->op = op;
    int st = check_point(s, pt, shape);
    if (st == FL_OK)
        st = app_begin(ctx, pt, shape, &s->a);
    if (st != FL_OK) {
        app_end(&s->a);
        fl_free(s);
        *state = NULL;
        return st;
    }
    s->info = shape->info;
    /* on every rank, idle ones too: an idle rank's measure returns at once, and the
     * runner, told the same on every rank, puts no barrier of its own before a round
     * (an idle rank alone in one would wait for active ranks that never come) */
    shape->self_synced = s->sync;
    coll_control_read(s, s->control, s->algorithm, sizeof s->algorithm);
    coll_selection_read(s->selection, sizeof s->selection, &s->selection_read);
    if (s->a.comm != MPI_COMM_NULL) {
        coll_sizes(s);
        alloc_buffers(s);
        describe(s, shape);
        if (s->overlap)
            coll_overlap_setup(s, shape);
    }
    return FL_OK;
}

/* ---- measure ---- */

static inline void coll_once(coll_state *s, int root)
{
    MPI_Request q;
    if (s->overlap) {
        coll_overlapped(s, root);
    } else if (s->form == FORM_PERSISTENT) {
        MPI_Request *p = &s->preq[s->npreq > 1 ? root : 0];
        MPI_Start(p);
        MPI_Wait(p, MPI_STATUS_IGNORE);
    } else if (s->form == FORM_NONBLOCKING) {
        coll_call(s, FORM_NONBLOCKING, root, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        coll_call(s, FORM_BLOCKING, root, NULL);
    }
}

static inline int next_root(coll_state *s)
{
    if (!s->root_shift)
        return s->root;
    int r = s->next;
    s->next = (s->next + 1) % s->a.n;
    return r;
}

static double coll_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    coll_state *s = state;
    (void)ctx;
    if (s->a.comm == MPI_COMM_NULL)
        return 0.0;
    double elapsed = 0, t = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        int root = next_root(s);
        if (s->sync) {
            MPI_Barrier(s->a.comm);
            t = fl_now();
        }
        coll_once(s, root);
        if (s->sync)
            elapsed += fl_now() - t;
    }
    return s->sync ? elapsed : fl_now() - t;
}

/* ---- verify: one op on fresh inputs, every element of every rank's result ---- */

static int64_t coll_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    coll_state *s = state;
    int64_t bad = 0, at = 0;
    double got = 0, want = 0;
    int first[2] = {0, ctx->rank}; /* any error here; this rank */
    if (s->a.comm != MPI_COMM_NULL) {
        int root = s->root;
        coll_fill(s, root);
        MPI_Barrier(s->a.comm);
        coll_once(s, root);
        bad = coll_check(s, root, checked, &at, &got, &want);
        first[0] = bad > 0;
    }
    /* the lowest rank with a wrong element names its first one in the point's info */
    int lowest[2];
    first[0] = first[0] ? 0 : 1;
    MPI_Allreduce(first, lowest, 1, MPI_2INT, MPI_MINLOC, ctx->comm);
    if (lowest[0] == 0 && lowest[1] != 0 && ctx->rank == lowest[1]) {
        double w[3] = {(double)at, got, want};
        MPI_Send(w, 3, MPI_DOUBLE, 0, 0, ctx->comm);
    }
    if (lowest[0] == 0 && ctx->rank == 0) {
        double w[3] = {(double)at, got, want};
        if (lowest[1] != 0)
            MPI_Recv(w, 3, MPI_DOUBLE, lowest[1], 0, ctx->comm, MPI_STATUS_IGNORE);
        size_t len = strlen(s->info);
        if (len > 1)
            snprintf(s->info + len - 1, FL_INFO_LEN - len + 1,
                     ",\"first_error\":\"rank %d element %.0f: %g where %g was expected\"}", lowest[1], w[0],
                     w[1], w[2]);
    }
    return bad * s->esize;
}

/* ---- one setup per operation ---- */

static int allreduce_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_ALLREDUCE);
}

static int bcast_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_BCAST);
}

static int reduce_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_REDUCE);
}

static int allgather_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_ALLGATHER);
}

static int allgatherv_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_ALLGATHERV);
}

static int reduce_scatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_REDUCE_SCATTER);
}

static int reduce_scatter_block_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_REDUCE_SCATTER_BLOCK);
}

static int gather_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_GATHER);
}

static int gatherv_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_GATHERV);
}

static int scatter_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_SCATTER);
}

static int scatterv_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_SCATTERV);
}

static int alltoall_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_ALLTOALL);
}

static int alltoallv_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_ALLTOALLV);
}

static int scan_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_SCAN);
}

static int barrier_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_BARRIER);
}

static int reduce_local_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    (void)bs;
    return coll_setup(ctx, pt, state, shape, C_REDUCE_LOCAL);
}

const fl_kernel fl_coll_kernels[] = {
    {.name = "coll.allreduce", .setup = allreduce_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.bcast", .setup = bcast_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.reduce", .setup = reduce_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.allgather", .setup = allgather_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.allgatherv", .setup = allgatherv_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.reduce_scatter", .setup = reduce_scatter_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.reduce_scatter_block", .setup = reduce_scatter_block_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.gather", .setup = gather_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.gatherv", .setup = gatherv_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.scatter", .setup = scatter_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.scatterv", .setup = scatterv_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.alltoall", .setup = alltoall_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.alltoallv", .setup = alltoallv_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.scan", .setup = scan_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.barrier", .setup = barrier_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = "coll.reduce_local", .setup = reduce_local_setup, .measure = coll_measure, .verify = coll_verify,
     .teardown = coll_teardown, .phases = app_phases},
    {.name = NULL},
};
