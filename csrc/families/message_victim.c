/* Family "message", congestion with any registered benchmark as the victim
 * (GPCNeT's victim tests are three; message.victim runs the one its param
 * `victim` names): the victims run that benchmark among themselves, on a
 * communicator of their own ranked by the drawn ring, with its default
 * parameters, while the aggressors load the network as for the GPCNeT tests
 * (congestion.h, message_congestion.c).
 *
 * Python checks the name before launch (suite/congestion.py, check_victim):
 * a benchmark of this core, not itself a congestion test, either a two-rank
 * one (the victims' first two ranks on the ring run it, the others wait) or
 * one whose every rank takes part (patterns group, app, all: its layout here
 * makes every victim active, 'b'), with no more ranks than the victims.
 *
 * The benchmark's own init and fini run per point on the victims'
 * communicator (its bench state lives with the point); its setup's status is
 * the point's on every rank. A point's bytes are the benchmark's: a pattern
 * benchmark's per rank, a two-rank one's whole op on the victims' first rank. */
#include "congestion.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    fl_bench bench;
    const fl_bench *b;    /* &bench once found */
    fl_ctx ctx;           /* the victims' communicator, the benchmark's params */
    fl_opts opts;         /* the run's options, the benchmark's default params */
    fl_layout layout;     /* a pattern benchmark's: every victim 'b' */
    fl_point pt;
    void *bench_state, *state;
    int joined;           /* ctx holds a node communicator of its own */
    int set;              /* its setup returned FL_OK */
} victim_run;

/* The benchmark named, if a victim can run it, into v->b; 0 and why. */
static int victim_bench(victim_run *v, const char *name, char *why)
{
    const char *no = fl_find_bench(name, &v->bench);
    if (no)
        snprintf(why, FL_NOTE_LEN, "victim %s: %s", name, no);
    else if (strncmp(name, "message.victim", 14) == 0)
        snprintf(why, FL_NOTE_LEN, "victim %s: a congestion test cannot be a victim", name);
    v->b = why[0] ? NULL : &v->bench;
    return v->b != NULL;
}

/* The run's options with the benchmark's own params, every one at its default. */
static void victim_opts(victim_run *v, const fl_opts *run)
{
    v->opts = *run;
    v->opts.nparams = 0;
    for (const fl_param_rule *r = v->b->facts->rules; r->key && v->opts.nparams < FL_MAX_PARAMS; r++)
        v->opts.params[v->opts.nparams++] = (fl_kv){r->key, r->dflt};
}

/* The victims' context: their communicator, the ranks that share memory among them. */
static void victim_ctx(victim_run *v, const fl_ctx *run, MPI_Comm group)
{
    v->ctx = *run;
    v->ctx.comm = group;
    v->ctx.opts = &v->opts;
    MPI_Comm_rank(group, &v->ctx.rank);
    MPI_Comm_size(group, &v->ctx.nranks);
    MPI_Comm_split_type(group, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &v->ctx.node_comm);
    MPI_Comm_rank(v->ctx.node_comm, &v->ctx.node_rank);
    MPI_Comm_size(v->ctx.node_comm, &v->ctx.node_size);
    v->joined = 1;
}

/* The benchmark's point: the size, one stride and connection, the run's
 * buffers, and for a pattern benchmark every victim active. */
static void victim_point(victim_run *v, const fl_point *pt)
{
    const int n = v->ctx.nranks;
    v->pt = (fl_point){.size = pt->size, .stride = 1, .conns = 1, .buffers = pt->buffers};
    if (!v->b->facts->pattern)
        return;
    v->layout.active = n;
    v->layout.role = fl_alloc((size_t)n);
    v->layout.peer = fl_alloc(sizeof *v->layout.peer * (size_t)n);
    memset(v->layout.role, FL_BOTH, (size_t)n);
    for (int q = 0; q < n; q++)
        v->layout.peer[q] = -1;
    v->pt.layout = &v->layout;
}

/* A victim's part of setup: the benchmark's init and setup on the victims'
 * communicator, its shape the point's. */
static int victim_begin(cg_state *s, const fl_ctx *ctx, const fl_point *pt, fl_shape *shape)
{
    victim_run *v = fl_alloc(sizeof *v);
    s->victim = v;
    if (!victim_bench(v, fl_param(ctx->opts, "victim"), shape->note))
        return FL_ERROR;
    victim_opts(v, ctx->opts);
    victim_ctx(v, ctx, s->group);
    victim_point(v, pt);
    fl_shape mine = {.legs_per_op = v->b->facts->legs};
    if (v->b->k->init && v->b->k->init(&v->ctx, &v->bench_state) != FL_OK) {
        snprintf(shape->note, FL_NOTE_LEN, "victim %s: its init failed", v->b->name);
        return FL_ERROR;
    }
    int st = v->b->k->setup(&v->ctx, v->bench_state, &v->pt, &v->state, &mine);
    v->set = st == FL_OK;
    memcpy(shape->note, mine.note, FL_NOTE_LEN);
    shape->timed = mine.timed;
    shape->batch_multiple = mine.batch_multiple;
    shape->buffers = mine.buffers;
    shape->working_set = mine.working_set;
    shape->bytes_per_op = mine.bytes_per_op;
    shape->sent_bytes = v->b->facts->pattern ? mine.sent_bytes : v->ctx.rank ? 0 : mine.bytes_per_op;
    shape->recv_bytes = v->b->facts->pattern ? mine.recv_bytes : 0;
    shape->messages = mine.messages;
    return st;
}

static void victim_end(cg_state *s)
{
    victim_run *v = s->victim;
    if (!v)
        return;
    if (v->set)
        v->b->k->teardown(&v->ctx, v->state);
    if (v->b && v->b->k->fini)
        v->b->k->fini(&v->ctx, v->bench_state);
    if (v->joined)
        MPI_Comm_free(&v->ctx.node_comm);
    fl_free(v->layout.role);
    fl_free(v->layout.peer);
    fl_free(v);
    s->victim = NULL;
}

static void any_teardown(const fl_ctx *ctx, void *state)
{
    victim_end(state);
    cg_teardown(ctx, state);
}

/* Every rank agrees on the victims' status, note, batch multiple and bytes
 * per op (the victims' rank 0 says them: rank 0's shape decides the batch,
 * runner.c); a point that does not go on is taken down here. */
static int agree(cg_state *s, const fl_ctx *ctx, int st, fl_shape *shape)
{
    const victim_run *v = s->victim;
    int root = v && v->ctx.rank == 0 ? ctx->rank : -1;
    int64_t told[3] = {st, shape->batch_multiple, shape->bytes_per_op};
    MPI_Allreduce(MPI_IN_PLACE, &root, 1, MPI_INT, MPI_MAX, ctx->comm);
    MPI_Bcast(told, 3, MPI_INT64_T, root, ctx->comm);
    MPI_Bcast(shape->note, FL_NOTE_LEN, MPI_CHAR, root, ctx->comm);
    shape->batch_multiple = told[1], shape->bytes_per_op = told[2];
    if (told[0] != FL_OK) {
        victim_end(s);
        cg_teardown(ctx, s);
    }
    return (int)told[0];
}

static int any_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    cg_state *s;
    int st = cg_begin(ctx, bs, pt, shape, &s);
    if (st != FL_OK)
        return st;
    if (s->role == FL_VICTIM)
        st = victim_begin(s, ctx, pt, shape);
    else
        shape->timed = 0;
    const size_t end = strlen(shape->info);
    if (end > 1 && shape->info[end - 1] == '}')
        snprintf(shape->info + end - 1, FL_INFO_LEN - (end - 1), ",\"victim\":\"%s\"}",
                 fl_param(ctx->opts, "victim"));
    st = agree(s, ctx, st, shape);
    *state = st == FL_OK ? s : NULL;
    return st;
}

static double any_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    cg_state *s = state;
    (void)ctx;
    if (s->role != FL_VICTIM)
        return cg_others(s);
    victim_run *v = s->victim;
    return cg_victim_done(s, v->b->k->measure(&v->ctx, v->state, iters));
}

/* Per-op timing: each timing one call of the benchmark's measure, the aggressors loading through all. */
static void any_each(const fl_ctx *ctx, void *state, int64_t timings, int64_t unit, double *each)
{
    cg_state *s = state;
    (void)ctx;
    if (s->role != FL_VICTIM) {
        cg_others(s);
        return;
    }
    victim_run *v = s->victim;
    for (int64_t i = 0; i < timings; i++)
        each[i] = v->b->k->measure(&v->ctx, v->state, unit) / (double)unit;
    cg_victim_done(s, 0.0);
}

/* The benchmark's own verify, under the aggressors' load; none: nothing checked. */
static int64_t any_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    cg_state *s = state;
    (void)ctx;
    if (s->role != FL_VICTIM) {
        cg_others(s);
        return 0;
    }
    victim_run *v = s->victim;
    int64_t bad = v->b->k->verify ? v->b->k->verify(&v->ctx, v->state, checked) : 0;
    cg_victim_done(s, 0.0);
    return bad;
}

const fl_kernel fl_message_victim_kernels[] = {
    {.name = "message.victim", .init = fl_crowded_init, .fini = fl_crowded_fini, .setup = any_setup,
     .measure = any_measure, .verify = any_verify, .teardown = any_teardown, .measure_each = any_each},
    {.name = NULL},
};
