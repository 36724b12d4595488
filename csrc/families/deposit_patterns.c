/* deposit patterns: one-sided deposit in the traffic patterns of fabriclab's
 * layouts (src/fabriclab/measure/patterns.py); the core follows the roles
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
 * Cache state: every region holds `buffers` slots of `size` bytes and op i
 * of an origin uses slot i % buffers on both sides (i runs on across measure
 * calls). With fewer slots than a window, several ops of one epoch share a
 * slot with identical data, as OSU's osu_put_bw and osu_get_bw reuse one
 * buffer for a whole window. */
#include "../fl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_BIBW, P_HOT_PUT, P_HOT_GET };

typedef struct {
    int kind;
    int active;        /* an origin: runs the timed loop */
    int target;        /* a hotspot target: passive, exposes the shared memory */
    int peer;          /* the rank it puts to or gets from; -1 none */
    int count, window;
    int64_t size, buffers, next; /* next: slot of the next op */
    MPI_Aint region;   /* the peer's displacement of this origin's slots */
    char *local;       /* this origin's slots: put source, or get destination */
    char *land;        /* bibw: the slots the peer's puts land in */
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

/* Roles the kernel does not follow are an error on every rank alike (the
 * layout is the same everywhere): pairs must be mutual, senders must
 * address a target. */
static const char *layout_fault(const fl_layout *l, int nranks, int kind)
{
    for (int q = 0; q < nranks; q++) {
        int p = l->peer[q];
        char r = l->role[q];
        if (r == FL_IDLE || r == FL_TARGET)
            continue;
        if (p < 0 || p >= nranks || p == q)
            return "an active rank has no valid peer";
        if (kind == P_BIBW && (r != FL_BOTH || l->role[p] != FL_BOTH || l->peer[p] != q))
            return "put_bibw needs mutual pairs of role 'b'";
        if (kind != P_BIBW && (r != FL_SENDER || l->role[p] != FL_TARGET))
            return "hotspot senders must address a target rank";
    }
    return NULL;
}

static int dp_setup(const fl_ctx *ctx, int kind, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    const fl_layout *l = pt->layout;
    const int me = ctx->rank;
    int64_t window = fl_param_int(ctx->opts, "window", 64);
    const char *fault = !l ? "no layout" : layout_fault(l, ctx->nranks, kind);
    if (fault) {
        snprintf(shape->note, FL_NOTE_LEN, "deposit: %s", fault);
        return FL_ERROR;
    }
    const char role = l->role[me];
    const int64_t size = pt->size, nb = pt->buffers;
    int nsend = 0, before = 0; /* a target's senders; a sender's place among its target's */
    if (kind != P_BIBW && role == FL_TARGET)
        nsend = senders_of(l, ctx->nranks, me, me, NULL);
    else if (kind != P_BIBW && role == FL_SENDER)
        senders_of(l, ctx->nranks, l->peer[me], me, &before);
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
    s->kind = kind;
    s->peer = -1;
    s->count = (int)size;
    s->window = (int)window;
    s->size = size;
    s->buffers = nb;
    s->win = MPI_WIN_NULL;
    s->layout = l;
    s->nranks = ctx->nranks;
    const MPI_Aint slots = (MPI_Aint)(size * nb);
    MPI_Aint wb = 0;
    if (kind == P_BIBW && role == FL_BOTH) {
        wb = 2 * slots; /* landing slots, then source slots */
        s->active = 1;
    } else if (kind != P_BIBW && role == FL_SENDER) {
        wb = slots; /* put source, or get destination */
        s->active = 1;
        if (kind == P_HOT_PUT)
            s->region = (MPI_Aint)before * slots;
    } else if (kind != P_BIBW && role == FL_TARGET) {
        s->target = 1;
        wb = kind == P_HOT_PUT ? (MPI_Aint)nsend * slots : slots;
    }
    if (s->active)
        s->peer = l->peer[me];

    wb = fl_win_bytes(wb);
    MPI_Win_allocate(wb, 1, MPI_INFO_NULL, ctx->comm, &s->wbase, &s->win);
    memset(s->wbase, 0, (size_t)wb); /* fault the pages in before timing */
    s->local = kind == P_BIBW && s->active ? s->wbase + slots : s->wbase;
    s->land = s->wbase;
    /* Every rank holds the shared lock for the whole point: origins need it
     * for put/get/flush, targets so that MPI_Win_sync is valid in verify. */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);

    shape->timed = s->active;
    shape->batch_multiple = window; /* samples time whole windows */
    if (s->active) {
        /* Every origin moves `size` payload bytes and issues one message per
         * op. For gets the reader counts the bytes it pulls as its moved
         * payload (sent_bytes) as well as its received bytes, and the target
         * reports none: the aggregate (sum of sent_bytes) then counts every
         * payload byte once, as it does for puts. */
        shape->sent_bytes = size;
        shape->messages = 1;
        shape->recv_bytes = kind == P_HOT_PUT ? 0 : size;
    } else if (kind == P_HOT_PUT && role == FL_TARGET) {
        shape->recv_bytes = (int64_t)nsend * size; /* every sender's puts land here */
    }
    snprintf(shape->info, FL_INFO_LEN, "{\"sync\":\"flush\",\"window\":%lld,\"buffers\":%lld%s}",
             (long long)window, (long long)nb,
             kind == P_HOT_GET ? ",\"source\":\"shared\"" :
             kind == P_HOT_PUT ? ",\"regions\":\"per_sender\"" : "");
    *state = s;
    return FL_OK;
}

#define DP_SETUP(fn, kind)                                                              \
    static int fn(const fl_ctx *c, void *b, const fl_point *p, void **st, fl_shape *sh) \
    {                                                                                   \
        (void)b;                                                                        \
        return dp_setup(c, kind, p, st, sh);                                            \
    }
DP_SETUP(setup_bibw, P_BIBW)
DP_SETUP(setup_hot_put, P_HOT_PUT)
DP_SETUP(setup_hot_get, P_HOT_GET)

/* An origin: windows of puts (or gets), each completed by MPI_Win_flush. */
static double dp_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    dp_state *s = state;
    (void)ctx;
    if (!s->active)
        return 0.0;
    const int w = s->window, count = s->count, peer = s->peer, get = s->kind == P_HOT_GET;
    const int64_t nb = s->buffers;
    const MPI_Aint region = s->region;
    int64_t b = s->next;
    char *local = s->local;
    MPI_Win win = s->win;
    double t0 = fl_now();
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
    double t = fl_now() - t0;
    s->next = b;
    return t;
}

/* The pattern of the data that rank q deposits (put) or serves (get). */
static uint64_t dp_seed(const dp_state *s, int q)
{
    return (uint64_t)s->size * 1000003u + (uint64_t)s->kind * 7919u + (uint64_t)q * 104729u;
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
    const int put_target = s->target && s->kind == P_HOT_PUT;
    /* where this rank's data lands, if anywhere: bibw its landing slots,
     * hotspot readers their own slots (a put target: one region per sender) */
    char *dest = !s->active ? NULL : s->kind == P_BIBW ? s->land
               : s->kind == P_HOT_GET ? s->local : NULL;
    int64_t bad = 0;

    /* Pattern at every source, zeros at every destination. */
    for (int64_t j = 0; j < slots; j++) {
        size_t off = (size_t)j * n;
        if (s->active && s->kind != P_HOT_GET)
            fl_fill(s->local + off, n, dp_seed(s, me));
        if (s->target && s->kind == P_HOT_GET)
            fl_fill(s->wbase + off, n, dp_seed(s, me));
        if (dest)
            memset(dest + off, 0, n);
        for (int q = 0, o = 0; put_target && q < s->nranks; q++)
            if (s->layout->role[q] == FL_SENDER && s->layout->peer[q] == me)
                memset(s->wbase + (size_t)o++ * span + off, 0, n);
    }
    s->next = 0;
    /* Local stores to window memory are complete before any origin starts. */
    MPI_Win_sync(s->win);
    MPI_Barrier(ctx->comm);
    dp_measure(ctx, s, s->window);
    /* flush completed the ops at the origins; the barrier tells the targets */
    MPI_Barrier(ctx->comm);
    MPI_Win_sync(s->win);

    for (int64_t j = 0; dest && j < slots; j++) {
        bad += fl_check(dest + (size_t)j * n, n, dp_seed(s, s->peer));
        *checked += s->size;
    }
    for (int q = 0, o = 0; put_target && q < s->nranks; q++) {
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
    MPI_Win_free(&s->win);
    free(s);
}

#define DP_KERNEL(bench, setup_fn)                                            \
    {.name = bench, .setup = setup_fn, .measure = dp_measure, .verify = dp_verify, \
     .teardown = dp_teardown}

const fl_kernel fl_deposit_pattern_kernels[] = {
    DP_KERNEL("deposit.put_bibw", setup_bibw),
    DP_KERNEL("deposit.hotspot_put", setup_hot_put),
    DP_KERNEL("deposit.hotspot_get", setup_hot_get),
    {.name = NULL},
};
