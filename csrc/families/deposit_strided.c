/* deposit_strided: the three transfer modes of seed 000 section IV,
 * compared per stride between ranks 0 (origin) and 1 (target): direct
 * deposit with a strided target datatype (strided_direct), buffer packing,
 * a contiguous transfer that the target then scatters (strided_packed), and
 * direct-mapped stores: plain CPU stores through an MPI shared-memory window,
 * the "direct mapped" mode of SCI and the Cray T3D (strided_shm). Each keeps
 * one strided layout, whatever the cache state. The pair, its windows and
 * the verify pass are deposit.c's (deposit.h). */
#include "deposit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strided_shm: the pair can map each other's memory only if the
 * shared-memory split of the pair keeps both: the same test as "rank 1 is
 * in rank 0's node_comm", but it also yields the communicator the window
 * needs. */
static int shm_init(const fl_ctx *ctx, void **bench_state)
{
    dep_run *r = dep_new_run(ctx);
    if (r->pair != MPI_COMM_NULL) {
        int n = 0;
        MPI_Comm_split_type(r->pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &r->shm);
        MPI_Comm_size(r->shm, &n);
        r->shm_ok = n == 2;
        if (!r->shm_ok)
            MPI_Comm_free(&r->shm);
    }
    MPI_Bcast(&r->shm_ok, 1, MPI_INT, 0, ctx->comm);
    *bench_state = r;
    return FL_OK;
}

/* strided_direct: the origin's words in its segment; the target's strided
 * array is its window, described by a vector datatype. */
static int direct_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    const dep_run *r = bench_state;
    dep_state *s = dep_new_state(ctx, r, pt, 1, 0, state, shape);
    if (!s)
        return FL_SKIP;
    s->count = (int)s->nwords;
    snprintf(shape->info, sizeof shape->info,
             "{\"sync\":\"%s\",\"mode\":\"direct_deposit\",\"target_type\":\"vector\"}",
             dep_sync_name(r));
    if (s->role == IDLE)
        return FL_OK;
    dep_rma_window(s, s->role == TARGET ? (MPI_Aint)(s->extent * 8) : (MPI_Aint)s->size);
    if (s->role == TARGET)
        s->dst = (uint64_t *)s->wbase;
    MPI_Type_vector((int)s->nwords, 1, (int)s->stride, MPI_UINT64_T, &s->vec);
    MPI_Type_commit(&s->vec);
    dep_start_epoch(s);
    return FL_OK;
}

/* strided_packed: the origin's contiguous source and the target's staging
 * buffer are their windows; the target scatters into an array of its own. */
static int packed_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    const dep_run *r = bench_state;
    dep_state *s = dep_new_state(ctx, r, pt, 1, 1, state, shape); /* the target unpacks */
    if (!s)
        return FL_SKIP;
    snprintf(shape->info, sizeof shape->info,
             "{\"sync\":\"%s\",\"mode\":\"buffer_packing\",\"unpack\":\"target\"}",
             dep_sync_name(r));
    if (s->role == IDLE)
        return FL_OK;
    dep_rma_window(s, (MPI_Aint)s->size);
    if (s->role == TARGET) {
        s->dst = fl_alloc((size_t)(s->extent ? s->extent : 1) * 8);
        s->own_dst = 1;
    }
    dep_start_epoch(s);
    return FL_OK;
}

/* strided_shm: separate, page-aligned segments of a shared window: rank
 * 1's array starts on its own page, first touched (placed) by rank 1. */
static int shm_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt, void **state,
                     fl_shape *shape)
{
    const dep_run *r = bench_state;
    if (!r->shm_ok) {
        snprintf(shape->note, sizeof shape->note,
                 "ranks 0 and 1 do not share a node: no shared-memory window");
        return FL_SKIP;
    }
    dep_state *s = dep_new_state(ctx, r, pt, 1, 1, state, shape); /* the target acks */
    if (!s)
        return FL_SKIP;
    s->fence = 0; /* completion: MPI_Win_sync and a zero-byte round trip */
    s->comm = r->shm;
    snprintf(shape->info, sizeof shape->info,
             "{\"sync\":\"win_sync+ack\",\"mode\":\"direct_mapped\"}");
    if (s->role == IDLE)
        return FL_OK;
    MPI_Aint wb = fl_win_bytes(s->role == TARGET ? (MPI_Aint)(s->extent * 8) : 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    fl_win_allocate(wb, 8, info, s->comm, 1, &s->wbase, &s->win);
    MPI_Info_free(&info);
    if (s->role == ORIGIN) {
        MPI_Aint qsize;
        int qdisp;
        MPI_Win_shared_query(s->win, TARGET, &qsize, &qdisp, &s->dst);
        s->src = fl_alloc((size_t)(s->nwords ? s->nwords : 1) * 8);
    } else {
        s->dst = (uint64_t *)s->wbase;
    }
    memset(s->wbase, 0, (size_t)wb); /* fault the pages in before timing */
    dep_start_epoch(s);
    return FL_OK;
}

/* Direct deposit: the target datatype scatters the contiguous origin words
 * with the stride; the target CPU does nothing. */
static void origin_direct(dep_state *s, int64_t iters)
{
    const int count = s->count, fence = s->fence;
    MPI_Win win = s->win;
    MPI_Datatype vec = s->vec;
    for (int64_t i = 0; i < iters; i++) {
        MPI_Put(s->wbase, count, MPI_UINT64_T, 1, 0, 1, vec, win);
        if (fence)
            MPI_Win_fence(0, win);
        else
            MPI_Win_flush(1, win);
    }
}

/* Buffer packing: a contiguous deposit into the target's staging buffer;
 * the op ends when the target has scattered it and acknowledged, so the
 * next deposit cannot overwrite staging that is still being unpacked. */
static void origin_packed(dep_state *s, int64_t iters)
{
    const int count = s->count, fence = s->fence;
    MPI_Win win = s->win;
    MPI_Comm pair = s->comm;
    for (int64_t i = 0; i < iters; i++) {
        MPI_Put(s->wbase, count, MPI_BYTE, 1, 0, count, MPI_BYTE, win);
        if (fence) {
            MPI_Win_fence(0, win);
        } else {
            MPI_Win_flush(1, win);
            MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DEP, pair);
        }
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_DEP, pair, MPI_STATUS_IGNORE);
    }
}

static void target_packed(dep_state *s, int64_t iters)
{
    const int fence = s->fence;
    const int64_t n = s->nwords, st = s->stride;
    const uint64_t *restrict stage = (const uint64_t *)s->wbase;
    uint64_t *restrict d = s->dst;
    MPI_Win win = s->win;
    MPI_Comm pair = s->comm;
    for (int64_t i = 0; i < iters; i++) {
        if (fence) {
            MPI_Win_fence(0, win);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DEP, pair, MPI_STATUS_IGNORE);
            MPI_Win_sync(win);
        }
        for (int64_t j = 0; j < n; j++) /* unpack: scatter with the stride */
            d[j * st] = stage[j];
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DEP, pair);
    }
}

/* Direct-mapped stores: the origin CPU writes each word into the target's
 * segment of the shared window; MPI_Win_sync orders the stores, and a
 * zero-byte round trip tells the target and ends the op at the origin. */
static void origin_shm(dep_state *s, int64_t iters)
{
    const int64_t n = s->nwords, st = s->stride;
    const uint64_t *restrict src = s->src;
    uint64_t *restrict d = s->dst;
    MPI_Win win = s->win;
    MPI_Comm comm = s->comm;
    for (int64_t i = 0; i < iters; i++) {
        for (int64_t j = 0; j < n; j++)
            d[j * st] = src[j];
        MPI_Win_sync(win);
        MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DEP, comm);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_DEP, comm, MPI_STATUS_IGNORE);
    }
}

static void target_shm(dep_state *s, int64_t iters)
{
    MPI_Win win = s->win;
    MPI_Comm comm = s->comm;
    for (int64_t i = 0; i < iters; i++) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DEP, comm, MPI_STATUS_IGNORE);
        MPI_Win_sync(win);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DEP, comm);
    }
}

static double direct_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return dep_time(state, iters, origin_direct, dep_target_fences); /* window is 1 */
}

static double packed_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return dep_time(state, iters, origin_packed, target_packed);
}

static double shm_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return dep_time(state, iters, origin_shm, target_shm);
}

/* Exact check of a strided landing: payload words against the pattern and
 * the gaps between them against the zeros written before the op. */
static int64_t check_strided(const dep_state *s, uint64_t seed, int64_t *checked)
{
    const int64_t n = s->nwords, st = s->stride;
    const unsigned char *d = (const unsigned char *)s->dst;
    unsigned char *want = fl_alloc((size_t)(n ? n : 1) * 8);
    int64_t bad = 0;
    fl_fill(want, (size_t)n * 8, seed);
    for (int64_t w = 0; w < s->extent; w++) {
        const unsigned char *got = d + w * 8;
        int payload = w % st == 0;
        for (int b = 0; b < 8; b++)
            bad += got[b] != (payload ? want[(w / st) * 8 + b] : 0);
    }
    *checked += s->extent * 8;
    fl_free(want);
    return bad;
}

/* The strided kernels: pattern in the origin's source, zeros over the
 * target's whole strided array, then one op. */
static int64_t strided_verify(const fl_ctx *ctx, dep_state *s, int64_t *checked,
                              dep_measure_fn measure)
{
    if (s->role == IDLE)
        return 0;
    const uint64_t seed = dep_seed(s);
    if (s->role == ORIGIN)
        fl_fill(s->src ? (void *)s->src : (void *)s->wbase, (size_t)s->size, seed);
    else
        memset(s->dst, 0, (size_t)s->extent * 8);
    dep_run_checked(ctx, s, measure);
    return s->role == TARGET ? check_strided(s, seed, checked) : 0;
}

static int64_t direct_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return strided_verify(ctx, state, checked, direct_measure);
}

static int64_t packed_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return strided_verify(ctx, state, checked, packed_measure);
}

static int64_t shm_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return strided_verify(ctx, state, checked, shm_measure);
}

const fl_kernel fl_deposit_strided_kernels[] = {
    {.name = "deposit.strided_direct", .init = dep_init, .fini = dep_fini, .setup = direct_setup,
     .measure = direct_measure, .verify = direct_verify, .teardown = dep_teardown},
    {.name = "deposit.strided_packed", .init = dep_init, .fini = dep_fini, .setup = packed_setup,
     .measure = packed_measure, .verify = packed_verify, .teardown = dep_teardown},
    {.name = "deposit.strided_shm", .init = shm_init, .fini = dep_fini, .setup = shm_setup,
     .measure = shm_measure, .verify = shm_verify, .teardown = dep_teardown},
    {.name = NULL},
};
