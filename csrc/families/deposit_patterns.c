/* deposit patterns: one-sided deposit in the traffic patterns of fabriclab's
 * layouts (src/fabriclab/suite/patterns.py); the core follows the roles
 * and peers it is given.
 *
 * - put_bibw ("bipairs"): both ranks of a pair put a window into each other
 *   at once, the one-sided form of a bidirectional bandwidth test.
 * - hotspot_put ("hotspot"): ranks 1..active put windows into rank 0, each
 *   into its own region: many writers, one memory (seed 004, Fig. 8).
 * - hotspot_get: the same ranks read windows from one shared region of rank
 *   0: the hotspot read of seed 004, Fig. 8.
 *
 * Seed 000's direct deposit: the target takes no part in moving the data, so
 * rank 0 of the hotspots is passive (runs no loop, is not timed) and every
 * origin completes its window with MPI_Win_flush in a passive-target epoch
 * (MPI_Win_lock_all with MPI_MODE_NOCHECK) that lasts the whole point.
 * Windows come from MPI_Win_allocate on all ranks, so the library can hand
 * out memory it has registered with the network; idle ranks expose one page.
 *
 * Cache state as deposit.c: every region holds `buffers` slots of `size`
 * bytes, at least a window's under window_buffers=per-op (the default), and
 * op i of an origin uses slot i % buffers on both sides (i runs on across
 * measure calls), so every op of a window has its own offset. */
#include "../fl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int active;        /* an origin: runs the timed loop */
    int get;           /* origins read (MPI_Get) instead of writing */
    int peer;          /* the rank it puts to or gets from; -1 none */
    int count, window;
    int64_t size, buffers, next; /* next: slot of the next op */
    MPI_Aint region;   /* the peer's displacement of this origin's slots */
    char *local;       /* this origin's slots: put source, or get destination */
    char *dest;        /* where this origin's data lands, checked by verify; or NULL */
    int serves;        /* a hotspot_get target: its slots are the source */
    int collects;      /* a hotspot_put target: one region per sender, checked by verify */
    MPI_Win win;
    char *wbase;
    const fl_layout *layout; /* the point's layout: a put target checks each sender */
    int nranks;
} dp_state;

/* Senders addressing `target`; *before: how many of them precede `rank`
 * (a sender's region in the target's window is its place in rank order). */
static int senders_of(const fl_layout *l, int nranks, int target, int rank, int *before)
{
    int n = 0, b = 0;
    for (int q = 0; q < nranks; q++)
        if (l->role[q] == FL_SENDER && l->peer[q] == target) {
            n++;
            b += q < rank;
        }
    if (before)
        *before = b;
    return n;
}

/* Roles the kernels do not follow are an error on every rank alike (the
 * layout is the same everywhere): every rank that is neither idle nor a
 * target must be an `origin` whose valid peer has the role `peer`, and
 * names it back where the pairs are `mutual`; `why` otherwise. */
static const char *origins_fault(const fl_layout *l, int nranks, char origin, char peer,
                                 int mutual, const char *why)
{
    for (int q = 0; q < nranks; q++) {
        int p = l->peer[q];
        char r = l->role[q];
        if (r == FL_IDLE || r == FL_TARGET)
            continue;
        if (p < 0 || p >= nranks || p == q)
            return "an active rank has no valid peer";
        if (r != origin || l->role[p] != peer || (mutual && l->peer[p] != q))
            return why;
    }
    return NULL;
}

static const char *pairs_fault(const fl_layout *l, int nranks)
{
    return origins_fault(l, nranks, FL_BOTH, FL_BOTH, 1, "put_bibw needs mutual pairs of role 'b'");
}

static const char *hotspot_fault(const fl_layout *l, int nranks)
{
    return origins_fault(l, nranks, FL_SENDER, FL_TARGET, 0,
                         "hotspot senders must address a target rank");
}

/* The state of a point whose layout passes `fault`, or an error or skip. */
static int dp_begin(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape,
                    const char *(*fault)(const fl_layout *, int), dp_state **out)
{
    const fl_layout *l = pt->layout;
    const char *why = !l ? "no layout" : fault(l, ctx->nranks);
    if (why) {
        snprintf(shape->note, FL_NOTE_LEN, "deposit: %s", why);
        return FL_ERROR;
    }
    const int64_t size = pt->size, nb = pt->buffers;
    /* the largest region any rank exposes: a target's, one slot set per sender */
    if (size > INT_MAX || nb < 1 ||
        (size > 0 && nb > (int64_t)(PTRDIFF_MAX / 4) / size / (ctx->nranks + 1))) {
        snprintf(shape->note, FL_NOTE_LEN, "size %lld x %lld buffers does not fit an MPI window",
                 (long long)size, (long long)nb);
        return FL_SKIP;
    }
    dp_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("deposit: out of memory");
    s->peer = -1;
    s->count = (int)size;
    s->window = (int)fl_param_int(ctx->opts, "window");
    s->size = size;
    s->buffers = nb;
    s->win = MPI_WIN_NULL;
    s->layout = l;
    s->nranks = ctx->nranks;
    *out = s;
    return FL_OK;
}

/* Every rank's window of `bytes` (idle ranks expose one page), faulted in,
 * and the shared lock of the whole point: origins need it for
 * put/get/flush, targets so that MPI_Win_sync is valid in verify. */
static void dp_window(const fl_ctx *ctx, dp_state *s, MPI_Aint bytes, fl_shape *shape)
{
    MPI_Aint wb = fl_win_bytes(bytes);
    fl_win_allocate(wb, 1, MPI_INFO_NULL, ctx->comm, 0, &s->wbase, &s->win);
    memset(s->wbase, 0, (size_t)wb);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    shape->timed = s->active;
    shape->batch_multiple = s->window; /* samples time whole windows */
}

/* put_bibw: a pair's ranks put into each other; each window holds the
 * landing slots, then the source slots. */
static int put_bibw_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    dp_state *s;
    int st = dp_begin(ctx, pt, shape, pairs_fault, &s);
    (void)bs;
    if (st != FL_OK)
        return st;
    const MPI_Aint slots = (MPI_Aint)(s->size * s->buffers);
    s->active = pt->layout->role[ctx->rank] == FL_BOTH;
    dp_window(ctx, s, s->active ? 2 * slots : 0, shape);
    if (s->active) {
        s->peer = pt->layout->peer[ctx->rank];
        s->local = s->wbase + slots;
        s->dest = s->wbase;
        shape->sent_bytes = shape->recv_bytes = s->size;
        shape->messages = 1;
    }
    snprintf(shape->info, FL_INFO_LEN, "{\"sync\":\"flush\",\"window\":%d,\"buffers\":%lld}",
             s->window, (long long)s->buffers);
    *state = s;
    return FL_OK;
}

/* hotspot_put, hotspot_get: senders put into (get from) rank 0. A put
 * target holds one region per sender, in the senders' rank order; a get
 * target one shared region. */
static int hotspot_setup(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape,
                         int get)
{
    dp_state *s;
    int st = dp_begin(ctx, pt, shape, hotspot_fault, &s);
    if (st != FL_OK)
        return st;
    const fl_layout *l = pt->layout;
    const int me = ctx->rank;
    const char role = l->role[me];
    const MPI_Aint slots = (MPI_Aint)(s->size * s->buffers);
    MPI_Aint wb = 0;
    s->get = get;
    if (role == FL_SENDER) {
        int before = 0; /* its place among its target's senders */
        senders_of(l, ctx->nranks, l->peer[me], me, &before);
        s->active = 1;
        s->peer = l->peer[me];
        s->region = get ? 0 : (MPI_Aint)before * slots;
        wb = slots; /* put source, or get destination */
    } else if (role == FL_TARGET) {
        int nsend = senders_of(l, ctx->nranks, me, me, NULL);
        s->serves = get;
        s->collects = !get;
        wb = get ? slots : (MPI_Aint)nsend * slots;
        shape->working_set = (int64_t)wb;
        shape->recv_bytes = get ? 0 : (int64_t)nsend * s->size; /* every sender's puts land here */
    }
    dp_window(ctx, s, wb, shape);
    s->local = s->wbase;
    if (s->active) {
        /* Every origin moves `size` payload bytes and issues one message per
         * op. For gets the reader counts the bytes it pulls as its moved
         * payload (sent_bytes) as well as its received bytes, and the target
         * reports none: the aggregate (sum of sent_bytes) then counts every
         * payload byte once, as it does for puts. */
        s->dest = get ? s->local : NULL;
        shape->sent_bytes = s->size;
        shape->messages = 1;
        shape->recv_bytes = get ? s->size : 0;
    }
    snprintf(shape->info, FL_INFO_LEN, "{\"sync\":\"flush\",\"window\":%d,\"buffers\":%lld%s}",
             s->window, (long long)s->buffers,
             get ? ",\"source\":\"shared\"" : ",\"regions\":\"per_sender\"");
    *state = s;
    return FL_OK;
}

static int hotspot_put_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                             fl_shape *shape)
{
    (void)bs;
    return hotspot_setup(ctx, pt, state, shape, 0);
}

static int hotspot_get_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                             fl_shape *shape)
{
    (void)bs;
    return hotspot_setup(ctx, pt, state, shape, 1);
}

/* An origin's ops: windows of puts (or gets), each completed by MPI_Win_flush. */
static inline void windows(dp_state *s, int64_t iters, int get)
{
    const int w = s->window, count = s->count, peer = s->peer;
    const int64_t nb = s->buffers;
    const MPI_Aint region = s->region;
    int64_t b = s->next;
    char *local = s->local;
    MPI_Win win = s->win;
    for (int64_t done = 0; done < iters;) {
        int64_t k = iters - done < w ? iters - done : w;
        for (int64_t j = 0; j < k; j++) {
            MPI_Aint off = (MPI_Aint)b * count;
            if (get)
                MPI_Get(local + off, count, MPI_BYTE, peer, region + off, count, MPI_BYTE, win);
            else
                MPI_Put(local + off, count, MPI_BYTE, peer, region + off, count, MPI_BYTE, win);
            if (++b == nb)
                b = 0;
        }
        MPI_Win_flush(peer, win);
        done += k;
    }
    s->next = b;
}

/* The timed loop: an origin's windows; targets are passive and, like idle
 * ranks, return 0. */
static inline double time_windows(dp_state *s, int64_t iters, int get)
{
    if (!s->active)
        return 0.0;
    double t0 = fl_now();
    windows(s, iters, get);
    return fl_now() - t0;
}

/* put_bibw, hotspot_put: origins put. */
static double put_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return time_windows(state, iters, 0);
}

/* hotspot_get: origins get. */
static double get_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return time_windows(state, iters, 1);
}

/* The pattern of the data that rank q deposits (put) or serves (get). */
static uint64_t dp_seed(const dp_state *s, int q)
{
    return (uint64_t)s->size * 1000003u + (uint64_t)q * 104729u;
}

/* One whole window from slot 0 on every origin; all its ops carry the same
 * data (one seed per origin), so shared slots hold exactly the pattern. The
 * destination checks each distinct slot once: bibw ranks what their peer
 * put, the hotspot target every sender's region, hotspot readers what they
 * got from the shared region. */
static int64_t dp_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    dp_state *s = state;
    const int me = ctx->rank;
    const size_t n = (size_t)s->size, span = (size_t)(s->size * s->buffers);
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    int64_t bad = 0;

    /* Pattern at every source, zeros at every destination. */
    for (int64_t j = 0; j < slots; j++) {
        size_t off = (size_t)j * n;
        if (s->active && !s->get)
            fl_fill(s->local + off, n, dp_seed(s, me));
        if (s->serves)
            fl_fill(s->wbase + off, n, dp_seed(s, me));
        if (s->dest)
            memset(s->dest + off, 0, n);
        for (int q = 0, o = 0; s->collects && q < s->nranks; q++)
            if (s->layout->role[q] == FL_SENDER && s->layout->peer[q] == me)
                memset(s->wbase + (size_t)o++ * span + off, 0, n);
    }
    s->next = 0;
    /* Local stores to window memory are complete before any origin starts. */
    MPI_Win_sync(s->win);
    MPI_Barrier(ctx->comm);
    if (s->active)
        windows(s, s->window, s->get);
    /* flush completed the ops at the origins; the barrier tells the targets */
    MPI_Barrier(ctx->comm);
    MPI_Win_sync(s->win);

    for (int64_t j = 0; s->dest && j < slots; j++) {
        bad += fl_check(s->dest + (size_t)j * n, n, dp_seed(s, s->peer));
        *checked += s->size;
    }
    for (int q = 0, o = 0; s->collects && q < s->nranks; q++) {
        if (s->layout->role[q] != FL_SENDER || s->layout->peer[q] != me)
            continue;
        for (int64_t j = 0; j < slots; j++) {
            bad += fl_check(s->wbase + (size_t)o * span + (size_t)j * n, n, dp_seed(s, q));
            *checked += s->size;
        }
        o++;
    }
    return bad;
}

static void dp_teardown(const fl_ctx *ctx, void *state)
{
    dp_state *s = state;
    (void)ctx;
    if (!s)
        return;
    MPI_Win_unlock_all(s->win);
    fl_win_free(&s->win);
    free(s);
}

const fl_kernel fl_deposit_pattern_kernels[] = {
    {.name = "deposit.put_bibw", .setup = put_bibw_setup, .measure = put_measure,
     .verify = dp_verify, .teardown = dp_teardown},
    {.name = "deposit.hotspot_put", .setup = hotspot_put_setup, .measure = put_measure,
     .verify = dp_verify, .teardown = dp_teardown},
    {.name = "deposit.hotspot_get", .setup = hotspot_get_setup, .measure = get_measure,
     .verify = dp_verify, .teardown = dp_teardown},
    {.name = NULL},
};
