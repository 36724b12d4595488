/* deposit: what the one-sided kernels of deposit.c (contiguous put/get)
 * and deposit_strided.c (the strided transfer modes) share: the pair of
 * ranks 0 and 1, its windows and epochs, and the verify pass. */
#ifndef FL_DEPOSIT_H
#define FL_DEPOSIT_H

#include "../fl.h"

enum { SYNC_FLUSH, SYNC_FENCE };
enum { ORIGIN = 0, TARGET = 1, IDLE = -1 };

#define TAG_DEP 4711 /* zero-byte notifications and acknowledgements */

/* Once per run: parsed params and the communicators. */
typedef struct {
    int sync;          /* SYNC_FLUSH or SYNC_FENCE (strided_shm has no sync: flush) */
    int window;        /* ops per completion: the window param (bw kernels), else 1 */
    int shm_ok;        /* strided_shm: ranks 0 and 1 share memory */
    MPI_Comm pair;     /* ranks 0 and 1; MPI_COMM_NULL on other ranks */
    MPI_Comm shm;      /* strided_shm: the pair as a shared-memory communicator */
} dep_run;

/* One point. */
typedef struct {
    int role;          /* ORIGIN, TARGET or IDLE */
    int active;        /* this rank runs a measure loop */
    int locked;        /* holds MPI_Win_lock_all */
    int fence;         /* per-op completion by MPI_Win_fence */
    MPI_Comm comm;     /* the pair (strided_shm: the shared-memory pair) */
    MPI_Win win;
    char *wbase;       /* this rank's window segment */
    uint64_t *src;     /* strided_shm origin: private contiguous source */
    uint64_t *dst;     /* strided destination (target array, or the peer segment for shm) */
    int own_dst;       /* dst was allocated here (strided_packed's target array) */
    int64_t size, nwords, stride, extent; /* extent: words spanned by the strided layout */
    int count;         /* MPI count of the transfer (bytes, or words for strided_direct) */
    int window;        /* ops per completion */
    int64_t buffers;   /* slots of `size` bytes per side that ops rotate through */
    int64_t next;      /* slot of the next op; the rotation runs on across calls */
    MPI_Datatype vec;  /* strided_direct: the strided target layout */
} dep_state;

/* Once per run (init): the pair, the sync and window params. */
dep_run *dep_new_run(const fl_ctx *ctx);
int dep_init(const fl_ctx *ctx, void **bench_state);
void dep_fini(const fl_ctx *ctx, void *bench_state);
const char *dep_sync_name(const dep_run *r);

/* Per point: the shared state for pt->size bytes, strided (one layout at
 * the point's stride) or contiguous (through the point's buffers), with a
 * target that runs a loop of its own (`target_works`) or only fences; it is
 * *state, and the shape has its bytes, timing and batch. NULL: a skip, its
 * reason in the shape's note. Then an RMA window of `bytes` on the pair, and
 * the epoch of the whole point. */
dep_state *dep_new_state(const fl_ctx *ctx, const dep_run *r, const fl_point *pt, int strided,
                         int target_works, void **state, fl_shape *shape);
void dep_rma_window(dep_state *s, MPI_Aint bytes);
void dep_start_epoch(dep_state *s);
void dep_teardown(const fl_ctx *ctx, void *state);

/* One side's part of a measure call of `iters` ops. */
typedef void (*dep_side_fn)(dep_state *s, int64_t iters);

/* The target of a fence-completed kernel: one fence per window of ops. */
void dep_target_fences(dep_state *s, int64_t iters);

/* Every pair kernel's timed loop: the origin's ops or the target's part,
 * on the active ranks (a passive target and idle ranks return 0). Inline,
 * so each measure calls its sides directly. */
static inline double dep_time(dep_state *s, int64_t iters, dep_side_fn origin, dep_side_fn target)
{
    if (!s->active)
        return 0.0;
    double t0 = fl_now();
    if (s->role == ORIGIN)
        origin(s, iters);
    else
        target(s, iters);
    return fl_now() - t0;
}

/* Verify: one window through the kernel's own loop, ordered against the
 * local stores before it and the checks after it; the pattern's seed. */
typedef double (*dep_measure_fn)(const fl_ctx *, void *, int64_t);
void dep_run_checked(const fl_ctx *ctx, dep_state *s, dep_measure_fn measure);
uint64_t dep_seed(const dep_state *s);

#endif
