/* deposit: one-sided remote deposit between ranks 0 (origin) and 1 (target).
 *
 * Seed 000 level 1: the origin stores straight into the peer's memory
 * ("direct deposit") and the receiver takes no part in moving the data.
 * Today's forms: MPI RMA put/get, and plain CPU stores through an MPI
 * shared-memory window (the "direct mapped" mode of SCI and the Cray T3D).
 * The strided kernels compare, per stride, the three transfer modes of seed
 * 000 section IV: direct deposit with a strided target datatype, buffer
 * packing (contiguous transfer, then the target scatters), and direct-mapped
 * stores.
 *
 * Windows live on a communicator of ranks 0 and 1 only, so fences and window
 * creation do not grow with idle ranks; ranks >= 2 join only the split in
 * init and otherwise do nothing. Windows come from MPI_Win_allocate so the
 * library can hand out memory it has registered with the network. */
#include "../fl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SYNC_FLUSH, SYNC_FENCE };
enum { K_PUT_LAT, K_GET_LAT, K_PUT_BW, K_GET_BW, K_DIRECT, K_PACKED, K_SHM };

#define TAG_DEP 4711 /* zero-byte notifications and acknowledgements */

/* Once per run: parsed params and the communicators. */
typedef struct {
    int kind;
    int sync;          /* SYNC_FLUSH or SYNC_FENCE (unused by K_SHM) */
    int window;        /* ops per completion (bw kernels), 1 otherwise */
    int shm_ok;        /* K_SHM: ranks 0 and 1 share memory */
    MPI_Comm pair;     /* ranks 0 and 1; MPI_COMM_NULL on other ranks */
    MPI_Comm shm;      /* K_SHM: the pair as a shared-memory communicator */
} dep_run;

/* One point. */
typedef struct {
    const dep_run *run;
    int role;          /* 0 origin, 1 target, -1 idle */
    int active;        /* this rank runs a measure loop */
    int locked;        /* holds MPI_Win_lock_all */
    int fence;         /* per-op completion by MPI_Win_fence */
    MPI_Win win;
    char *wbase;       /* this rank's window segment */
    uint64_t *src;     /* K_SHM origin: private contiguous source */
    uint64_t *dst;     /* strided destination (target array, or peer segment for K_SHM) */
    int64_t size, nwords, stride, extent; /* extent: words spanned by the strided layout */
    int count;         /* MPI count of the transfer (bytes, or words for K_DIRECT) */
    int window;        /* ops per completion */
    int64_t buffers;   /* slots of `size` bytes per side that ops rotate through */
    int64_t next;      /* slot of the next op; the rotation runs on across calls */
    MPI_Datatype vec;  /* K_DIRECT: strided target layout */
} dep_state;

/* The contiguous kernels honour the cache state: both sides hold `buffers`
 * slots of `size` bytes, and op i uses slot i % buffers on both sides (i
 * counted over the point, so a batch shorter than the rotation still walks
 * every slot: cold stays cold). With fewer slots than a window, several ops
 * of one epoch share a slot, as in OSU's osu_put_bw and osu_get_bw, which
 * reuse one buffer for the whole window; the data is then identical, so the
 * overlap leaves every byte defined. The strided kernels keep one layout. */
static int is_rotating(int kind) { return kind <= K_GET_BW; }
static int is_strided(int kind) { return kind >= K_DIRECT; }
static int is_get(int kind) { return kind == K_GET_LAT || kind == K_GET_BW; }

static int dep_init(const fl_ctx *ctx, int kind, void **bench_state)
{
    dep_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("deposit: out of memory");
    r->kind = kind;
    r->pair = r->shm = MPI_COMM_NULL;
    r->window = 1;
    const char *sync = fl_param(ctx->opts, "sync", "flush");
    r->sync = strcmp(sync, "fence") == 0 ? SYNC_FENCE : SYNC_FLUSH;
    if (kind == K_PUT_BW || kind == K_GET_BW)
        r->window = (int)fl_param_int(ctx->opts, "window", 64);
    MPI_Comm_split(ctx->comm, ctx->rank < 2 ? 0 : MPI_UNDEFINED, ctx->rank, &r->pair);
    if (kind == K_SHM) {
        /* The pair can map each other's memory only if the shared-memory split
         * of the pair keeps both: the same test as "rank 1 is in rank 0's
         * node_comm", but it also yields the communicator the window needs. */
        if (r->pair != MPI_COMM_NULL) {
            int n = 0;
            MPI_Comm_split_type(r->pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &r->shm);
            MPI_Comm_size(r->shm, &n);
            r->shm_ok = n == 2;
            if (!r->shm_ok)
                MPI_Comm_free(&r->shm);
        }
        MPI_Bcast(&r->shm_ok, 1, MPI_INT, 0, ctx->comm);
    }
    *bench_state = r;
    return FL_OK;
}

static void dep_fini(const fl_ctx *ctx, void *bench_state)
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

#define DEP_INIT(fn, kind) \
    static int fn(const fl_ctx *c, void **b) { return dep_init(c, kind, b); }
DEP_INIT(init_put_lat, K_PUT_LAT)
DEP_INIT(init_get_lat, K_GET_LAT)
DEP_INIT(init_put_bw, K_PUT_BW)
DEP_INIT(init_get_bw, K_GET_BW)
DEP_INIT(init_direct, K_DIRECT)
DEP_INIT(init_packed, K_PACKED)
DEP_INIT(init_shm, K_SHM)

static const char *sync_name(const dep_run *r)
{
    return r->sync == SYNC_FENCE ? "fence" : "flush";
}

static void dep_info(const dep_run *r, int window, int64_t buffers, fl_shape *shape)
{
    switch (r->kind) {
    case K_PUT_BW: case K_GET_BW:
        snprintf(shape->info, sizeof shape->info,
                 "{\"sync\":\"%s\",\"window\":%d,\"buffers\":%lld}", sync_name(r), window,
                 (long long)buffers);
        break;
    case K_PUT_LAT: case K_GET_LAT:
        snprintf(shape->info, sizeof shape->info, "{\"sync\":\"%s\",\"buffers\":%lld}",
                 sync_name(r), (long long)buffers);
        break;
    case K_DIRECT:
        snprintf(shape->info, sizeof shape->info,
                 "{\"sync\":\"%s\",\"mode\":\"direct_deposit\",\"target_type\":\"vector\"}",
                 sync_name(r));
        break;
    case K_PACKED:
        snprintf(shape->info, sizeof shape->info,
                 "{\"sync\":\"%s\",\"mode\":\"buffer_packing\",\"unpack\":\"target\"}",
                 sync_name(r));
        break;
    case K_SHM:
        snprintf(shape->info, sizeof shape->info,
                 "{\"sync\":\"win_sync+ack\",\"mode\":\"direct_mapped\"}");
        break;
    default:
        snprintf(shape->info, sizeof shape->info, "{\"sync\":\"%s\"}", sync_name(r));
    }
}

/* Window bytes of this rank for the point. The origin's segment doubles as
 * its (registered) source or destination buffer. */
static MPI_Aint win_bytes(const dep_state *s)
{
    int kind = s->run->kind;
    if (kind == K_SHM)
        return s->role == 1 ? (MPI_Aint)(s->extent * 8) : 0;
    if (kind == K_DIRECT && s->role == 1)
        return (MPI_Aint)(s->extent * 8);
    /* lat/bw: the slots, both sides; packed (one slot): origin source, target staging */
    return (MPI_Aint)s->size * (MPI_Aint)s->buffers;
}

static int dep_setup(const fl_ctx *ctx, void *bench_state, const fl_point *pt,
                     void **state, fl_shape *shape)
{
    const dep_run *r = bench_state;
    int kind = r->kind;
    if (kind == K_SHM && !r->shm_ok) {
        snprintf(shape->note, sizeof shape->note,
                 "ranks 0 and 1 do not share a node: no shared-memory window");
        return FL_SKIP;
    }
    int64_t stride = is_strided(kind) ? pt->stride : 1;
    if (is_strided(kind) && (pt->size % 8 != 0 || stride < 1)) {
        snprintf(shape->note, sizeof shape->note,
                 "strided sizes are whole 8-byte words and strides >= 1");
        return FL_SKIP;
    }
    int64_t nwords = pt->size / 8;
    int64_t extent = nwords ? (nwords - 1) * stride + 1 : 0;
    if (pt->size > INT_MAX || extent > INT_MAX / 8) {
        snprintf(shape->note, sizeof shape->note, "size x stride exceeds an MPI int count");
        return FL_SKIP;
    }
    int64_t buffers = is_rotating(kind) ? pt->buffers : 1;
    if (buffers < 1 || (pt->size > 0 && buffers > (int64_t)(PTRDIFF_MAX / 2) / pt->size)) {
        snprintf(shape->note, sizeof shape->note, "%lld buffers of %lld bytes cannot be allocated",
                 (long long)buffers, (long long)pt->size);
        return FL_SKIP;
    }

    dep_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("deposit: out of memory");
    s->run = r;
    s->role = ctx->rank < 2 ? ctx->rank : -1;
    s->size = pt->size;
    s->nwords = nwords;
    s->stride = stride;
    s->extent = extent;
    s->count = kind == K_DIRECT ? (int)nwords : (int)pt->size;
    s->window = r->window;
    s->buffers = buffers;
    s->fence = kind != K_SHM && r->sync == SYNC_FENCE;
    s->win = MPI_WIN_NULL;
    s->vec = MPI_DATATYPE_NULL;
    /* A flush-completed target is passive: it runs no loop, and the
     * origin's time (completion of the deposit) is the whole op. */
    int passive = r->sync == SYNC_FLUSH && kind != K_PACKED && kind != K_SHM;
    s->active = s->role == 0 || (s->role == 1 && !passive);

    shape->bytes_per_op = pt->size;
    shape->timed = s->active;
    shape->batch_multiple = s->window; /* samples time whole windows */
    if (is_strided(kind))
        shape->buffers = 1; /* one strided layout, whatever the cache state */
    dep_info(r, s->window, s->buffers, shape);
    *state = s;
    if (s->role < 0)
        return FL_OK;

    MPI_Aint wb = fl_win_bytes(win_bytes(s)); /* a real buffer even for empty transfers */
    if (kind == K_SHM) {
        /* Separate, page-aligned segments: rank 1's array starts on its own
         * page, first touched (placed) by rank 1. */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        MPI_Win_allocate_shared(wb, 8, info, r->shm, &s->wbase, &s->win);
        MPI_Info_free(&info);
        if (s->role == 0) {
            MPI_Aint qsize;
            int qdisp;
            MPI_Win_shared_query(s->win, 1, &qsize, &qdisp, &s->dst);
            s->src = fl_alloc((size_t)(nwords ? nwords : 1) * 8);
        } else {
            s->dst = (uint64_t *)s->wbase;
        }
    } else {
        MPI_Info info = MPI_INFO_NULL;
        if (s->fence) { /* fence-only windows never take locks */
            MPI_Info_create(&info);
            MPI_Info_set(info, "no_locks", "true");
        }
        MPI_Win_allocate(wb, 1, info, r->pair, &s->wbase, &s->win);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        if (kind == K_PACKED && s->role == 1)
            s->dst = fl_alloc((size_t)(extent ? extent : 1) * 8);
        if (kind == K_DIRECT && s->role == 1)
            s->dst = (uint64_t *)s->wbase;
    }
    memset(s->wbase, 0, (size_t)wb); /* fault the pages in before timing */
    if (kind == K_DIRECT) {
        MPI_Type_vector((int)nwords, 1, (int)stride, MPI_UINT64_T, &s->vec);
        MPI_Type_commit(&s->vec);
    }
    if (s->fence) {
        MPI_Win_fence(0, s->win); /* opens the first epoch */
    } else {
        /* Both ranks hold a shared lock for the whole point: the origin
         * needs it for put/flush, the target so MPI_Win_sync is valid. */
        MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
        s->locked = 1;
    }
    return FL_OK;
}

/* Origin of the contiguous kernels: window ops, then one completion. Each
 * op takes the next slot of the rotation, the same slot on both sides
 * (window displacement unit: 1 byte). */
static void origin_rma(dep_state *s, int64_t iters)
{
    const int w = s->window, get = is_get(s->run->kind), fence = s->fence;
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
                MPI_Get(buf + slot, count, MPI_BYTE, 1, slot, count, MPI_BYTE, win);
            else
                MPI_Put(buf + slot, count, MPI_BYTE, 1, slot, count, MPI_BYTE, win);
            if (++b == nb)
                b = 0;
        }
        if (fence)
            MPI_Win_fence(0, win);
        else
            MPI_Win_flush(1, win);
        done += k;
    }
    s->next = b;
}

/* Target side of fence-completed kernels: one fence per completion. */
static void target_fences(const dep_state *s, int64_t iters)
{
    const int64_t w = s->window;
    for (int64_t n = (iters + w - 1) / w; n > 0; n--)
        MPI_Win_fence(0, s->win);
}

/* Direct deposit: the target datatype scatters the contiguous origin words
 * with the stride; the target CPU does nothing. */
static void origin_direct(const dep_state *s, int64_t iters)
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
static void origin_packed(const dep_state *s, int64_t iters)
{
    const int count = s->count, fence = s->fence;
    MPI_Win win = s->win;
    MPI_Comm pair = s->run->pair;
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

static void target_packed(const dep_state *s, int64_t iters)
{
    const int fence = s->fence;
    const int64_t n = s->nwords, st = s->stride;
    const uint64_t *restrict stage = (const uint64_t *)s->wbase;
    uint64_t *restrict d = s->dst;
    MPI_Win win = s->win;
    MPI_Comm pair = s->run->pair;
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
static void origin_shm(const dep_state *s, int64_t iters)
{
    const int64_t n = s->nwords, st = s->stride;
    const uint64_t *restrict src = s->src;
    uint64_t *restrict d = s->dst;
    MPI_Win win = s->win;
    MPI_Comm comm = s->run->shm;
    for (int64_t i = 0; i < iters; i++) {
        for (int64_t j = 0; j < n; j++)
            d[j * st] = src[j];
        MPI_Win_sync(win);
        MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_DEP, comm);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_DEP, comm, MPI_STATUS_IGNORE);
    }
}

static void target_shm(const dep_state *s, int64_t iters)
{
    MPI_Win win = s->win;
    MPI_Comm comm = s->run->shm;
    for (int64_t i = 0; i < iters; i++) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DEP, comm, MPI_STATUS_IGNORE);
        MPI_Win_sync(win);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_DEP, comm);
    }
}

static void run_ops(dep_state *s, int64_t iters)
{
    switch (s->run->kind) {
    case K_DIRECT:
        if (s->role == 0)
            origin_direct(s, iters);
        else
            target_fences(s, iters); /* window is 1 */
        break;
    case K_PACKED:
        if (s->role == 0)
            origin_packed(s, iters);
        else
            target_packed(s, iters);
        break;
    case K_SHM:
        if (s->role == 0)
            origin_shm(s, iters);
        else
            target_shm(s, iters);
        break;
    default:
        if (s->role == 0)
            origin_rma(s, iters);
        else
            target_fences(s, iters);
    }
}

static double dep_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    dep_state *s = state;
    (void)ctx;
    if (!s->active)
        return 0.0;
    double t0 = fl_now();
    run_ops(s, iters);
    return fl_now() - t0;
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

static int64_t dep_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    dep_state *s = state;
    int kind = s->run->kind;
    (void)ctx;
    if (s->role < 0)
        return 0;
    uint64_t seed = (uint64_t)s->size * 1000003u + (uint64_t)s->stride * 7919u + (uint64_t)kind;
    size_t n = (size_t)s->size;
    const int w = s->window; /* one whole window from slot 0, every op the same data */
    const int64_t slots = w < s->buffers ? w : s->buffers; /* distinct slots it uses */

    /* Pattern at the source, zeros at the destination. */
    if (is_rotating(kind)) {
        int source = is_get(kind) ? 1 : 0;
        for (int64_t j = 0; j < slots; j++) {
            if (s->role == source)
                fl_fill(s->wbase + (size_t)j * n, n, seed);
            else
                memset(s->wbase + (size_t)j * n, 0, n);
        }
        s->next = 0;
    } else if (s->role == 0) {
        fl_fill(kind == K_SHM ? (void *)s->src : (void *)s->wbase, n, seed);
    } else {
        memset(s->dst ? (void *)s->dst : (void *)s->wbase, 0,
               s->dst ? (size_t)s->extent * 8 : n);
    }
    /* Local stores to window memory must be complete before the deposit. */
    if (s->fence) {
        MPI_Win_fence(0, s->win);
    } else {
        MPI_Win_sync(s->win);
        MPI_Barrier(kind == K_SHM ? s->run->shm : s->run->pair);
    }
    if (s->active)
        run_ops(s, w);
    if (!s->fence) { /* flush completed the op at the origin only */
        MPI_Barrier(kind == K_SHM ? s->run->shm : s->run->pair);
        MPI_Win_sync(s->win);
    }

    if (s->role != (is_get(kind) ? 0 : 1))
        return 0;
    if (is_strided(kind))
        return check_strided(s, seed, checked);
    int64_t bad = 0; /* each distinct slot once: shared slots hold the one pattern */
    for (int64_t j = 0; j < slots; j++) {
        *checked += s->size;
        bad += fl_check(s->wbase + (size_t)j * n, n, seed);
    }
    return bad;
}

static void dep_teardown(const fl_ctx *ctx, void *state)
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
        MPI_Win_free(&s->win);
    }
    if (s->vec != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->vec);
    if (s->src)
        fl_free(s->src);
    if (s->run->kind == K_PACKED && s->dst)
        fl_free(s->dst);
    free(s);
}

#define DEP_KERNEL(bench, init_fn)                                                  \
    {.name = bench, .init = init_fn, .fini = dep_fini, .setup = dep_setup,            \
     .measure = dep_measure, .verify = dep_verify, .teardown = dep_teardown}

const fl_kernel fl_deposit_kernels[] = {
    DEP_KERNEL("deposit.put_lat", init_put_lat),
    DEP_KERNEL("deposit.get_lat", init_get_lat),
    DEP_KERNEL("deposit.put_bw", init_put_bw),
    DEP_KERNEL("deposit.get_bw", init_get_bw),
    DEP_KERNEL("deposit.strided_direct", init_direct),
    DEP_KERNEL("deposit.strided_packed", init_packed),
    DEP_KERNEL("deposit.strided_shm", init_shm),
    {.name = NULL},
};
