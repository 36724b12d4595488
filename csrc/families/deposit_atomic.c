/* deposit atomics: MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Accumulate
 * and MPI_Get_accumulate between ranks 0 (origin) and 1 (target), timed as
 * the OSU Micro-Benchmarks time them (osu_fop_latency.c, osu_cas_latency.c,
 * osu_acc_latency.c, osu_get_acc_latency.c), or in IMB-RMA's aggregate mode
 * (IMB_rma_atomic.c). The facts, and why each rule, are in
 * src/fabriclab/suite/atomics.py and docs/atomics.md.
 *
 * OSU's loops, per `sync` (one iteration of each is one op here):
 *   flush, flush_local: one MPI_Win_lock of the target for the whole point,
 *       then op + MPI_Win_flush (flush_local) per op;
 *   lock: MPI_Win_lock, op, MPI_Win_unlock per op; lock_all likewise with
 *       MPI_Win_lock_all/unlock_all;
 *   fence, pscw: a round is an op each way (origin: fence, op, fence, fence;
 *       target: fence, fence, op, fence; pscw: start, op, complete, post,
 *       wait against post, wait, start, op, complete), and OSU prints the
 *       round's time x 0.5: here a round is two ops (batch_multiple 2).
 * The lock types are each test's own (at_test). OSU times rank 0 alone, and
 * so does this (the target's time does not count).
 *   mode=aggregate (sync=flush): `ops_per_flush` ops, then one MPI_Win_flush, each
 *       op with a result slot of its own, as IMB's n_sample ops per flush.
 *
 * Every op of a point goes to displacement 0 of the target's window, as in
 * OSU: the final value there is known from the number of ops, and verify
 * checks it and every value fetched. Compare-and-swap alternates between two
 * values (compare A swap in B, then compare B swap in A), so that every
 * swap succeeds and the value after n ops is A or B by n's parity. */
#include "deposit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One test's choices that OSU makes in its source: what the call fetches,
 * and the lock types (the lock held for flush modes, the lock of each op). */
typedef struct {
    int fetches;
    int held_lock;
    int op_lock;
} at_test;

/* osu_fop_latency.c, osu_cas_latency.c: shared held, exclusive per op;
 * osu_acc_latency.c: shared both; osu_get_acc_latency.c: exclusive both. */
static const at_test FOP = {.fetches = 1, .held_lock = MPI_LOCK_SHARED, .op_lock = MPI_LOCK_EXCLUSIVE};
static const at_test CAS = {.fetches = 1, .held_lock = MPI_LOCK_SHARED, .op_lock = MPI_LOCK_EXCLUSIVE};
static const at_test ACC = {.fetches = 0, .held_lock = MPI_LOCK_SHARED, .op_lock = MPI_LOCK_SHARED};
static const at_test GET_ACC = {.fetches = 1, .held_lock = MPI_LOCK_EXCLUSIVE, .op_lock = MPI_LOCK_EXCLUSIVE};

enum { S_FLUSH, S_FLUSH_LOCAL, S_LOCK, S_LOCK_ALL, S_PSCW, S_FENCE };
static const char *const SYNCS[] = {"flush", "flush_local", "lock", "lock_all", "pscw", "fence", NULL};

enum { T_INT64, T_UINT64, T_DOUBLE, T_INT8 };
static const char *const TYPES[] = {"int64", "uint64", "double", "int8", NULL};
static const int TYPE_BYTES[] = {8, 8, 8, 1};

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_REPLACE, O_NO_OP, O_CAS };
static const char *const OPS[] = {"sum", "prod", "max", "min", "band", "bor", "bxor", "replace", "no_op",
                                  NULL};

/* The shortest sample of OSU's rule (mode=osu): about OSU's loop of 10,000
 * iterations back to back, 1-15 ms here. The first ops after a pause run
 * faster than a long run of them (MPICH 5.0 on one host: 0.93 us per fop
 * lock epoch in the runner's 20 us samples of some 20 epochs, 1.22-1.24 us in
 * 10 ms samples, where OSU's loop and a bare loop of 10,000 read 1.25-1.32
 * us; a 4 KiB accumulate under flush 1.36 against 1.45-1.47 us, OSU
 * 1.44-1.46 us), and a short sample's boundaries put the runner's own work
 * between every few ops. */
#define AT_OSU_SAMPLE_S 10e-3

/* IMB_settings.h: OVERALL_VOL, the most bytes of one aggregate sample. */
#define IMB_OVERALL_VOL (40LL << 20)

typedef struct {
    const at_test *t;
    int role, active, peer;
    int sync, held, aggregate;
    int locked;              /* the origin holds the flush modes' lock */
    MPI_Win win;
    MPI_Group group;         /* pscw: the peer */
    char *wbase;             /* this rank's window: the target element(s) */
    int type, op, esize, count;
    MPI_Datatype dtype;
    MPI_Op mop;
    int64_t size, window;    /* window: ops per flush (aggregate), else 1 */
    char *block;             /* operand | scratch | results x window | CAS's four values */
    char *operand, *scratch, *results;
    uint64_t *cas;           /* compare A, compare B, swap B, swap A */
    int64_t next;            /* ops this rank made since the last reset */
    int clock_per_op;        /* clock=per-op: the clock read around every op (or round), as OSU */
    double clock_sink;       /* where those reads go, so that none is optimised away */
} at_state;

static int lookup(const char *const *names, const char *v)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], v) == 0)
            return i;
    return -1;
}

static MPI_Datatype mpi_type(int type)
{
    switch (type) {
    case T_INT64: return MPI_INT64_T;
    case T_UINT64: return MPI_UINT64_T;
    case T_DOUBLE: return MPI_DOUBLE;
    default: return MPI_INT8_T;
    }
}

static MPI_Op mpi_op(int op)
{
    switch (op) {
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    case O_BAND: return MPI_BAND;
    case O_BOR: return MPI_BOR;
    case O_BXOR: return MPI_BXOR;
    case O_REPLACE: return MPI_REPLACE;
    default: return MPI_NO_OP;
    }
}

/* ---- the values: the target starts at t0, every op brings v ---- */

static void set_elem(int type, void *p, int64_t iv, double dv)
{
    switch (type) {
    case T_DOUBLE: memcpy(p, &dv, 8); break;
    case T_INT8: { int8_t x = (int8_t)iv; memcpy(p, &x, 1); break; }
    default: memcpy(p, &iv, 8); break;
    }
}

static void fill_elems(int type, int esize, char *p, int count, int64_t iv, double dv)
{
    for (int i = 0; i < count; i++)
        set_elem(type, p + (size_t)i * (size_t)esize, iv, dv);
}

#define T0_INT 1
#define V_INT 3
#define T0_DBL 1.0
#define V_DBL 2.0

/* acc = acc OP v on one element, as MPI computes it (integers wrap). */
static void apply(int type, int op, void *acc, const void *v)
{
    if (op == O_NO_OP)
        return;
    if (op == O_REPLACE) {
        memcpy(acc, v, (size_t)TYPE_BYTES[type]);
        return;
    }
    if (type == T_DOUBLE) {
        double a, b;
        memcpy(&a, acc, 8);
        memcpy(&b, v, 8);
        a = op == O_SUM ? a + b : op == O_PROD ? a * b : op == O_MAX ? (a > b ? a : b) : (a < b ? a : b);
        memcpy(acc, &a, 8);
        return;
    }
    int64_t a = 0, b = 0;
    if (type == T_INT8) {
        int8_t x, y;
        memcpy(&x, acc, 1);
        memcpy(&y, v, 1);
        a = x;
        b = y;
    } else {
        memcpy(&a, acc, 8);
        memcpy(&b, v, 8);
    }
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r;
    int less = type == T_UINT64 ? ua < ub : a < b;
    switch (op) {
    case O_SUM: r = ua + ub; break;
    case O_PROD: r = ua * ub; break;
    case O_MAX: r = less ? ub : ua; break;
    case O_MIN: r = less ? ua : ub; break;
    case O_BAND: r = ua & ub; break;
    case O_BOR: r = ua | ub; break;
    default: r = ua ^ ub; break;
    }
    set_elem(type, acc, (int64_t)r, 0.0);
}

/* The target's element after j ops of this rank (CAS: A or B by parity). */
static void value_after(const at_state *s, int64_t j, void *out)
{
    if (s->op == O_CAS) {
        memcpy(out, &s->cas[j & 1], 8);
        return;
    }
    set_elem(s->type, out, T0_INT, T0_DBL);
    for (int64_t k = 0; k < j; k++)
        apply(s->type, s->op, out, s->operand);
}

/* Elements of `p` (count of them) unlike `want`, in bytes. */
static int64_t wrong_bytes(const at_state *s, const char *p, const void *want)
{
    int64_t bad = 0;
    for (int i = 0; i < s->count; i++)
        if (memcmp(p + (size_t)i * (size_t)s->esize, want, (size_t)s->esize) != 0)
            bad += s->esize;
    return bad;
}

/* ---- the ops: op i of this rank, to its peer's displacement 0 ---- */

typedef void (*at_op_fn)(at_state *s, int64_t i);

static inline char *result_slot(at_state *s, int64_t i)
{
    return s->results + (size_t)(i % s->window) * (size_t)s->size;
}

static inline void op_fop(at_state *s, int64_t i)
{
    MPI_Fetch_and_op(s->operand, result_slot(s, i), s->dtype, s->peer, 0, s->mop, s->win);
}

static inline void op_cas(at_state *s, int64_t i)
{
    const int odd = (int)(i & 1);
    MPI_Compare_and_swap(&s->cas[2 + odd], &s->cas[odd], result_slot(s, i), s->dtype, s->peer, 0, s->win);
}

static inline void op_acc(at_state *s, int64_t i)
{
    (void)i;
    MPI_Accumulate(s->operand, s->count, s->dtype, s->peer, 0, s->count, s->dtype, s->mop, s->win);
}

static inline void op_get_acc(at_state *s, int64_t i)
{
    MPI_Get_accumulate(s->operand, s->count, s->dtype, result_slot(s, i), s->count, s->dtype, s->peer, 0,
                       s->count, s->dtype, s->mop, s->win);
}

/* OSU's loop for the point's sync (the file's comment), `iters` ops. */
static inline void at_loop(at_state *s, int64_t iters, at_op_fn op)
{
    const MPI_Win win = s->win;
    const int peer = s->peer;
    int64_t i = s->next;
    const int64_t end = i + iters;
    switch (s->sync) {
    case S_FLUSH:
        while (i < end) {
            const int64_t stop = end - i < s->window ? end : i + s->window;
            for (; i < stop; i++)
                op(s, i);
            MPI_Win_flush(peer, win);
        }
        break;
    case S_FLUSH_LOCAL:
        for (; i < end; i++) {
            op(s, i);
            MPI_Win_flush_local(peer, win);
        }
        break;
    case S_LOCK:
        for (; i < end; i++) {
            MPI_Win_lock(s->t->op_lock, peer, 0, win);
            op(s, i);
            MPI_Win_unlock(peer, win);
        }
        break;
    case S_LOCK_ALL:
        for (; i < end; i++) {
            MPI_Win_lock_all(0, win);
            op(s, i);
            MPI_Win_unlock_all(win);
        }
        break;
    case S_FENCE: /* a round: an op each way, this rank's one of them */
        for (int64_t r = s->next, rounds = (iters + 1) / 2; rounds > 0; rounds--, r++) {
            MPI_Win_fence(0, win);
            if (s->role == TARGET)
                MPI_Win_fence(0, win);
            op(s, r);
            MPI_Win_fence(0, win);
            if (s->role == ORIGIN)
                MPI_Win_fence(0, win);
            i = r + 1;
        }
        break;
    default: /* S_PSCW */
        for (int64_t r = s->next, rounds = (iters + 1) / 2; rounds > 0; rounds--, r++) {
            if (s->role == TARGET) {
                MPI_Win_post(s->group, 0, win);
                MPI_Win_wait(win);
            }
            MPI_Win_start(s->group, 0, win);
            op(s, r);
            MPI_Win_complete(win);
            if (s->role == ORIGIN) {
                MPI_Win_post(s->group, 0, win);
                MPI_Win_wait(win);
            }
            i = r + 1;
        }
        break;
    }
    s->next = i;
}

/* clock=per-op: osu_*_latency.c read MPI_Wtime before every iteration's op
 * and after its sync (t_graph_start, t_graph_end: for -G and -z, read even
 * when neither is asked) inside the loop they time, so that their figure
 * carries two clock reads per op (per round under fence and pscw, whose
 * round is two ops here); this reads the clock as often. */
static inline double at_time(at_state *s, int64_t iters, at_op_fn op)
{
    if (!s->active)
        return 0.0;
    double t0 = fl_now();
    if (s->clock_per_op) {
        const int64_t step = s->sync == S_FENCE || s->sync == S_PSCW ? 2 : 1;
        for (int64_t j = 0; j < iters; j += step) {
            s->clock_sink -= fl_now();
            at_loop(s, iters - j < step ? iters - j : step, op);
            s->clock_sink += fl_now();
        }
    } else {
        at_loop(s, iters, op);
    }
    return fl_now() - t0;
}

static double fop_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return at_time(state, iters, op_fop);
}

static double cas_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return at_time(state, iters, op_cas);
}

static double acc_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return at_time(state, iters, op_acc);
}

static double get_acc_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return at_time(state, iters, op_get_acc);
}

/* ---- setup ---- */

static int at_refuse(fl_shape *shape, int status, const char *fmt, const char *a, const char *b)
{
    snprintf(shape->note, sizeof shape->note, fmt, a, b);
    return status;
}

static int at_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape,
                    const at_test *t, int compare)
{
    const fl_opts *o = ctx->opts;
    const char *tname = fl_param(o, "type"), *oname = compare ? "cas" : fl_param(o, "op");
    int type = lookup(TYPES, tname), op = compare ? O_CAS : lookup(OPS, oname);
    int sync = lookup(SYNCS, fl_param(o, "sync"));
    if (type < 0 || op < 0 || sync < 0)
        return at_refuse(shape, FL_ERROR, "atomics: unknown type %s or op %s", tname, oname);
    if (type == T_DOUBLE && (op == O_BAND || op == O_BOR || op == O_BXOR))
        return at_refuse(shape, FL_ERROR, "op %s is not defined for %s", oname, tname);
    const int esize = TYPE_BYTES[type];
    if (pt->size <= 0 || pt->size % esize || pt->size > INT_MAX) {
        snprintf(shape->note, sizeof shape->note, "size %lld is not a whole number of %d-byte %s elements",
                 (long long)pt->size, esize, tname);
        return FL_SKIP;
    }
    at_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("deposit atomics: out of memory");
    *state = s;
    s->t = t;
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->peer = s->role == ORIGIN ? TARGET : ORIGIN;
    s->sync = sync;
    s->held = sync == S_FLUSH || sync == S_FLUSH_LOCAL;
    s->aggregate = fl_param_is(o, "mode", "aggregate");
    s->clock_per_op = fl_param_is(o, "clock", "per-op");
    const int both_ways = sync == S_FENCE || sync == S_PSCW;
    s->active = s->role == ORIGIN || (s->role == TARGET && both_ways);
    s->type = type;
    s->op = op;
    s->esize = esize;
    s->count = (int)(pt->size / esize);
    s->size = pt->size;
    s->dtype = mpi_type(type);
    s->mop = compare ? MPI_NO_OP : mpi_op(op);
    s->win = MPI_WIN_NULL;
    s->group = MPI_GROUP_NULL;
    s->window = 1;
    if (s->aggregate) { /* IMB_mem_manager.c: n_sample = max(1, min(OVERALL_VOL / size, MSGSPERSAMPLE)) */
        int64_t w = fl_param_int(o, "ops_per_flush"), cap = IMB_OVERALL_VOL / pt->size;
        s->window = w < cap ? w : cap > 1 ? cap : 1;
    }
    shape->bytes_per_op = pt->size;
    shape->timed = s->role == ORIGIN; /* OSU times rank 0 */
    shape->batch_multiple = both_ways ? 2 : s->window;
    if (!s->aggregate)
        shape->min_sample_s = AT_OSU_SAMPLE_S;
    shape->buffers = 1; /* every op at displacement 0 */
    const int lock = sync == S_LOCK ? t->op_lock : t->held_lock;
    snprintf(shape->info, sizeof shape->info,
             "{\"sync\":\"%s\",\"mode\":\"%s\",\"op\":\"%s\",\"type\":\"%s\",\"ops_per_flush\":%lld,"
             "\"ops_per_round\":%d,\"lock\":\"%s\"}",
             SYNCS[sync], s->aggregate ? "aggregate" : "osu", oname, tname, (long long)s->window,
             both_ways ? 2 : 1,
             sync == S_LOCK_ALL || both_ways ? "none" : lock == MPI_LOCK_SHARED ? "shared" : "exclusive");
    return FL_OK;
}

/* The window, the block and the epoch, once the state is made (pair ranks). */
static void at_open(const dep_run *r, at_state *s)
{
    fl_win_allocate(fl_win_bytes(s->size), 1, MPI_INFO_NULL, r->pair, 0, &s->wbase, &s->win);
    const size_t n = (size_t)s->size;
    s->block = fl_alloc(n * (size_t)(2 + s->window) + 32);
    s->operand = s->block;
    s->scratch = s->block + n;
    s->results = s->block + 2 * n;
    s->cas = (uint64_t *)(void *)(s->results + n * (size_t)s->window);
    fill_elems(s->type, s->esize, s->operand, s->count, V_INT, V_DBL);
    fill_elems(s->type, s->esize, s->wbase, s->count, T0_INT, T0_DBL);
    s->cas[0] = s->cas[3] = T0_INT;          /* A */
    s->cas[1] = s->cas[2] = T0_INT + V_INT;  /* B */
    if (s->sync == S_PSCW) {
        MPI_Group all;
        MPI_Comm_group(r->pair, &all);
        MPI_Group_incl(all, 1, &s->peer, &s->group);
        MPI_Group_free(&all);
    }
    MPI_Barrier(r->pair); /* the windows hold t0 before any op */
    if (s->held && s->role == ORIGIN) {
        MPI_Win_lock(s->t->held_lock, TARGET, 0, s->win);
        s->locked = 1;
    }
}

static int setup_with(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                      fl_shape *shape, const at_test *t, int compare)
{
    int rc = at_setup(ctx, pt, state, shape, t, compare);
    at_state *s = *state;
    if (rc == FL_OK && s->role != IDLE)
        at_open(bench_state, s);
    return rc;
}

static int fop_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return setup_with(ctx, bs, pt, state, shape, &FOP, 0);
}

static int cas_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return setup_with(ctx, bs, pt, state, shape, &CAS, 1);
}

static int acc_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return setup_with(ctx, bs, pt, state, shape, &ACC, 0);
}

static int get_acc_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return setup_with(ctx, bs, pt, state, shape, &GET_ACC, 0);
}

static void at_teardown(const fl_ctx *ctx, void *state)
{
    at_state *s = state;
    (void)ctx;
    if (!s)
        return;
    if (s->locked)
        MPI_Win_unlock(TARGET, s->win);
    if (s->group != MPI_GROUP_NULL)
        MPI_Group_free(&s->group);
    if (s->win != MPI_WIN_NULL)
        fl_win_free(&s->win);
    if (s->block)
        fl_free(s->block);
    free(s);
}

/* ---- verify: reset the target, run ops through measure, read it back ---- */

/* An epoch in which this rank may access its peer, outside the timed loop:
 * the held lock (flush modes: a flush ends it), a lock of its own (lock
 * modes), or fence or post/start among the pair (both ways). */
static void side_begin(at_state *s)
{
    if (s->sync == S_FENCE) {
        MPI_Win_fence(0, s->win);
    } else if (s->sync == S_PSCW) {
        MPI_Win_post(s->group, 0, s->win);
        MPI_Win_start(s->group, 0, s->win);
    } else if (!s->held && s->role == ORIGIN) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, TARGET, 0, s->win);
    }
}

static void side_end(at_state *s)
{
    if (s->sync == S_FENCE) {
        MPI_Win_fence(0, s->win);
    } else if (s->sync == S_PSCW) {
        MPI_Win_complete(s->win);
        MPI_Win_wait(s->win);
    } else if (s->role == ORIGIN) {
        if (s->held)
            MPI_Win_flush(TARGET, s->win);
        else
            MPI_Win_unlock(TARGET, s->win);
    }
}

/* The ranks that make ops check their peer's element(s) after n ops of
 * theirs, and each value they fetched: op j fetched the value after j ops
 * (osu mode keeps the last op's, aggregate mode every op's). */
static int64_t at_verify(const fl_ctx *ctx, void *state, int64_t *checked, dep_measure_fn measure)
{
    at_state *s = state;
    if (s->role == IDLE)
        return 0;
    const int both_ways = s->sync == S_FENCE || s->sync == S_PSCW;
    const int64_t iters = both_ways ? 2 : s->aggregate ? s->window : 4;
    const int64_t n = both_ways ? 1 : iters; /* ops this rank makes */
    const int makes = s->active;
    unsigned char want[8];

    value_after(s, 0, want);
    fill_elems(s->type, s->esize, s->scratch, s->count, T0_INT, T0_DBL);
    side_begin(s);
    if (makes)
        MPI_Accumulate(s->scratch, s->count, s->dtype, s->peer, 0, s->count, s->dtype, MPI_REPLACE, s->win);
    side_end(s);
    memset(s->results, 0x5a, (size_t)s->size * (size_t)s->window);
    s->next = 0;
    measure(ctx, s, iters);
    side_begin(s);
    if (makes)
        MPI_Get_accumulate(NULL, 0, s->dtype, s->scratch, s->count, s->dtype, s->peer, 0, s->count,
                           s->dtype, MPI_NO_OP, s->win);
    side_end(s);
    if (!makes)
        return 0;
    int64_t bad = 0;
    value_after(s, n, want);
    bad += wrong_bytes(s, s->scratch, want);
    *checked += s->size;
    if (!s->t->fetches)
        return bad;
    for (int64_t j = s->aggregate ? 0 : n - 1; j < n; j++) {
        value_after(s, j, want);
        bad += wrong_bytes(s, result_slot(s, j), want);
        *checked += s->size;
    }
    return bad;
}

static int64_t fop_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return at_verify(ctx, state, checked, fop_measure);
}

static int64_t cas_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return at_verify(ctx, state, checked, cas_measure);
}

static int64_t acc_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return at_verify(ctx, state, checked, acc_measure);
}

static int64_t get_acc_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return at_verify(ctx, state, checked, get_acc_measure);
}

const fl_kernel fl_deposit_atomic_kernels[] = {
    {.name = "deposit.fop", .init = dep_init, .fini = dep_fini, .setup = fop_setup,
     .measure = fop_measure, .verify = fop_verify, .teardown = at_teardown},
    {.name = "deposit.cas", .init = dep_init, .fini = dep_fini, .setup = cas_setup,
     .measure = cas_measure, .verify = cas_verify, .teardown = at_teardown},
    {.name = "deposit.acc", .init = dep_init, .fini = dep_fini, .setup = acc_setup,
     .measure = acc_measure, .verify = acc_verify, .teardown = at_teardown},
    {.name = "deposit.get_acc", .init = dep_init, .fini = dep_fini, .setup = get_acc_setup,
     .measure = get_acc_measure, .verify = get_acc_verify, .teardown = at_teardown},
    {.name = NULL},
};
