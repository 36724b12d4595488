/* deposit: one-sided remote deposit between ranks 0 (origin) and 1 (target).
 *
 * Seed 000 level 1: the origin stores straight into the peer's memory
 * ("direct deposit") and the receiver takes no part in moving the data.
 * Today's forms: MPI RMA put and get (this file), and the strided transfer
 * modes of seed 000 section IV (deposit_strided.c).
 *
 * Windows live on a communicator of ranks 0 and 1 only, so fences and window
 * creation do not grow with idle ranks; ranks >= 2 join only the split in
 * init and otherwise do nothing. Windows come from MPI_Win_allocate so the
 * library can hand out memory it has registered with the network.
 *
 * Cache state: both sides hold `buffers` slots of `size` bytes, and op i
 * uses slot i % buffers on both sides (i counted over the point, so a batch
 * shorter than the rotation still walks every slot: cold stays cold).
 * Python plans at least a window of slots (suite/buffers.py, under
 * window_buffers=per-op, the default of one-sided windows), so every op of
 * an epoch has its own offset, as OSU's osu_put_bw puts op j of a window
 * from sbuf + j * size to displacement j * size: a window whose puts all
 * land in one region that the target never reads would find it in the
 * writer's cache from the second window on. Given fewer slots (shared, or
 * --buffers by hand), ops of one epoch share a slot with identical data,
 * which leaves every byte defined. */
#include "deposit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared with deposit_strided.c (deposit.h) ---- */

dep_run *dep_new_run(const fl_ctx *ctx)
{
    dep_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("deposit: out of memory");
    r->pair = r->shm = MPI_COMM_NULL;
    r->sync = fl_param_is(ctx->opts, "sync", "fence") ? SYNC_FENCE : SYNC_FLUSH;
    r->window = fl_param_find(ctx->opts, "window") ? (int)fl_param_int(ctx->opts, "window") : 1;
    MPI_Comm_split(ctx->comm, ctx->rank < 2 ? 0 : MPI_UNDEFINED, ctx->rank, &r->pair);
    return r;
}

int dep_init(const fl_ctx *ctx, void **bench_state)
{
    *bench_state = dep_new_run(ctx);
    return FL_OK;
}

void dep_fini(const fl_ctx *ctx, void *bench_state)
{
    dep_run *r = bench_state;
    (void)ctx;
    if (!r)
        return;
    if (r->shm != MPI_COMM_NULL)
        MPI_Comm_free(&r->shm);
    if (r->pair != MPI_COMM_NULL)
        MPI_Comm_free(&r->pair);
    free(r);
}

const char *dep_sync_name(const dep_run *r)
{
    return r->sync == SYNC_FENCE ? "fence" : "flush";
}

/* The state every kernel shares, for a transfer of pt->size bytes: laid out
 * at the point's stride in whole words through one slot (strided), or
 * contiguous through the point's buffers; a skip when it does not fit. */
dep_state *dep_new_state(const fl_ctx *ctx, const dep_run *r, const fl_point *pt, int strided,
                         int target_works, void **state, fl_shape *shape)
{
    int64_t stride = strided ? pt->stride : 1, buffers = strided ? 1 : pt->buffers;
    if (strided && (pt->size % 8 != 0 || stride < 1)) {
        snprintf(shape->note, sizeof shape->note,
                 "strided sizes are whole 8-byte words and strides >= 1");
        return NULL;
    }
    int64_t nwords = pt->size / 8;
    int64_t extent = nwords ? (nwords - 1) * stride + 1 : 0;
    if (pt->size > INT_MAX || extent > INT_MAX / 8) {
        snprintf(shape->note, sizeof shape->note, "size x stride exceeds an MPI int count");
        return NULL;
    }
    if (buffers < 1 || (pt->size > 0 && buffers > (int64_t)(PTRDIFF_MAX / 2) / pt->size)) {
        snprintf(shape->note, sizeof shape->note, "%lld buffers of %lld bytes cannot be allocated",
                 (long long)buffers, (long long)pt->size);
        return NULL;
    }
    dep_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("deposit: out of memory");
    s->role = ctx->rank < 2 ? ctx->rank : IDLE;
    s->size = pt->size;
    s->nwords = nwords;
    s->stride = stride;
    s->extent = extent;
    s->count = (int)pt->size;
    s->window = r->window;
    s->buffers = buffers;
    s->fence = r->sync == SYNC_FENCE;
    s->comm = r->pair;
    s->win = MPI_WIN_NULL;
    s->vec = MPI_DATATYPE_NULL;
    /* A flush-completed target is passive: it runs no loop, and the
     * origin's time (completion of the deposit) is the whole op. */
    s->active = s->role == ORIGIN || (s->role == TARGET && (s->fence || target_works));
    shape->bytes_per_op = pt->size;
    shape->timed = s->active;
    shape->batch_multiple = s->window; /* samples time whole windows */
    if (strided) {
        shape->buffers = 1; /* one strided layout, whatever the cache state */
        shape->working_set = extent * 8 > pt->size ? extent * 8 : pt->size;
    }
    *state = s;
    return s;
}

/* An RMA window of `bytes` on the pair (a real buffer even for empty
 * transfers), its pages faulted in before timing. */
void dep_rma_window(dep_state *s, MPI_Aint bytes)
{
    MPI_Aint wb = fl_win_bytes(bytes);
    MPI_Info info = MPI_INFO_NULL;
    if (s->fence) { /* fence-only windows never take locks */
        MPI_Info_create(&info);
        MPI_Info_set(info, "no_locks", "true");
    }
    fl_win_allocate(wb, 1, info, s->comm, 0, &s->wbase, &s->win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    memset(s->wbase, 0, (size_t)wb);
}

void dep_start_epoch(dep_state *s)
{
    if (s->fence) {
        MPI_Win_fence(0, s->win); /* opens the first epoch */
    } else {
        /* Both ranks hold a shared lock for the whole point: the origin
         * needs it for put/flush, the target so MPI_Win_sync is valid. */
        MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
        s->locked = 1;
    }
}

/* Target side of fence-completed kernels: one fence per completion. */
void dep_target_fences(dep_state *s, int64_t iters)
{
    const int64_t w = s->window;
    for (int64_t n = (iters + w - 1) / w; n > 0; n--)
        MPI_Win_fence(0, s->win);
}

/* Local stores to window memory complete before the deposit, and the
 * deposit before the check: flush completes an op at the origin only. */
void dep_run_checked(const fl_ctx *ctx, dep_state *s, dep_measure_fn measure)
{
    if (s->fence) {
        MPI_Win_fence(0, s->win);
    } else {
        MPI_Win_sync(s->win);
        MPI_Barrier(s->comm);
    }
    measure(ctx, s, s->window);
    if (!s->fence) {
        MPI_Barrier(s->comm);
        MPI_Win_sync(s->win);
    }
}

uint64_t dep_seed(const dep_state *s)
{
    return (uint64_t)s->size * 1000003u + (uint64_t)s->stride * 7919u;
}

void dep_teardown(const fl_ctx *ctx, void *state)
{
    dep_state *s = state;
    (void)ctx;
    if (!s)
        return;
    if (s->win != MPI_WIN_NULL) {
        if (s->locked)
            MPI_Win_unlock_all(s->win);
        else
            MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win);
        fl_win_free(&s->win);
    }
    if (s->vec != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->vec);
    if (s->src)
        fl_free(s->src);
    if (s->own_dst)
        fl_free(s->dst);
    free(s);
}

/* ---- put_lat, get_lat, put_bw, get_bw ---- */

/* Windows of `buffers` slots, both sides. */
static int rma_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                     fl_shape *shape)
{
    const dep_run *r = bench_state;
    dep_state *s = dep_new_state(ctx, r, pt, 0, 0, state, shape);
    if (!s)
        return FL_SKIP;
    if (fl_param_find(ctx->opts, "window")) /* the bw kernels */
        snprintf(shape->info, sizeof shape->info,
                 "{\"sync\":\"%s\",\"window\":%d,\"buffers\":%lld}", dep_sync_name(r), s->window,
                 (long long)s->buffers);
    else
        snprintf(shape->info, sizeof shape->info, "{\"sync\":\"%s\",\"buffers\":%lld}",
                 dep_sync_name(r), (long long)s->buffers);
    if (s->role == IDLE)
        return FL_OK;
    dep_rma_window(s, (MPI_Aint)s->size * (MPI_Aint)s->buffers);
    dep_start_epoch(s);
    return FL_OK;
}

/* Origin of the contiguous kernels: window ops, then one completion. Each
 * op takes the next slot of the rotation, the same slot on both sides
 * (window displacement unit: 1 byte). */
static inline void origin_rma(dep_state *s, int64_t iters, int get)
{
    const int w = s->window, fence = s->fence;
    const int count = s->count;
    const int64_t nb = s->buffers;
    int64_t b = s->next;
    MPI_Win win = s->win;
    char *buf = s->wbase;
    for (int64_t done = 0; done < iters;) {
        int64_t k = iters - done < w ? iters - done : w;
        for (int64_t j = 0; j < k; j++) {
            MPI_Aint slot = (MPI_Aint)b * count;
            if (get)
                MPI_Get(buf + slot, count, MPI_BYTE, TARGET, slot, count, MPI_BYTE, win);
            else
                MPI_Put(buf + slot, count, MPI_BYTE, TARGET, slot, count, MPI_BYTE, win);
            if (++b == nb)
                b = 0;
        }
        if (fence)
            MPI_Win_fence(0, win);
        else
            MPI_Win_flush(TARGET, win);
        done += k;
    }
    s->next = b;
}

static void origin_put(dep_state *s, int64_t iters)
{
    origin_rma(s, iters, 0);
}

static void origin_get(dep_state *s, int64_t iters)
{
    origin_rma(s, iters, 1);
}

static double put_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return dep_time(state, iters, origin_put, dep_target_fences);
}

static double get_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return dep_time(state, iters, origin_get, dep_target_fences);
}

/* The contiguous kernels: one whole window from slot 0, every op the same
 * data; pattern at the source (the target for a get), zeros at the
 * destination, each distinct slot checked once. */
static int64_t rma_verify(const fl_ctx *ctx, dep_state *s, int64_t *checked,
                          dep_measure_fn measure, int get)
{
    if (s->role == IDLE)
        return 0;
    const uint64_t seed = dep_seed(s);
    const size_t n = (size_t)s->size;
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    const int source = get ? TARGET : ORIGIN;
    for (int64_t j = 0; j < slots; j++) {
        if (s->role == source)
            fl_fill(s->wbase + (size_t)j * n, n, seed);
        else
            memset(s->wbase + (size_t)j * n, 0, n);
    }
    s->next = 0;
    dep_run_checked(ctx, s, measure);
    if (s->role == source)
        return 0;
    int64_t bad = 0; /* each distinct slot once: shared slots hold the one pattern */
    for (int64_t j = 0; j < slots; j++) {
        *checked += s->size;
        bad += fl_check(s->wbase + (size_t)j * n, n, seed);
    }
    return bad;
}

static int64_t put_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rma_verify(ctx, state, checked, put_measure, 0);
}

static int64_t get_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rma_verify(ctx, state, checked, get_measure, 1);
}

const fl_kernel fl_deposit_kernels[] = {
    {.name = "deposit.put_lat", .init = dep_init, .fini = dep_fini, .setup = rma_setup,
     .measure = put_measure, .verify = put_verify, .teardown = dep_teardown},
    {.name = "deposit.get_lat", .init = dep_init, .fini = dep_fini, .setup = rma_setup,
     .measure = get_measure, .verify = get_verify, .teardown = dep_teardown},
    {.name = "deposit.put_bw", .init = dep_init, .fini = dep_fini, .setup = rma_setup,
     .measure = put_measure, .verify = put_verify, .teardown = dep_teardown},
    {.name = "deposit.get_bw", .init = dep_init, .fini = dep_fini, .setup = rma_setup,
     .measure = get_measure, .verify = get_verify, .teardown = dep_teardown},
    {.name = NULL},
};
