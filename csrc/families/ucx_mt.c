/* Family "ucx", several threads per rank as ucx_perftest -T T -M MODE runs
 * UCP's tag_lat (src/tools/perf/lib/libperf.c ucp_perf_setup, and
 * libperf_thread.c): one UCP context with mt_workers_shared, a worker per
 * thread in the thread mode of -M (`thread_mode`: single, ucx_perftest's
 * default, serialized or multi), and an endpoint from thread t's worker on
 * rank 0 to thread t's worker on rank 1 (addresses swapped over MPI at
 * set-up); thread t's buffers sit at t x its region in one region per side,
 * mapped with the context (ucx_perftest's "thread specific" offsets into
 * its send and receive buffers).
 *
 * Every thread ping-pongs tagged messages of SIZE bytes on its own worker
 * (ucp_tag_send_nbx, ucp_tag_recv_nbx, each completed by progressing that
 * worker). An op is one round trip on every thread at once, timed on rank
 * 0 from the pool's start barrier to its end barrier (thread_pool.h), and
 * its latency is over two legs. ucx_perftest prints the mean of the
 * threads' own latencies and the sum of their bandwidths; with the threads
 * in step those are the op's time over two and its bytes (2 x T x SIZE)
 * over its time (docs/threads.md says where they part).
 *
 * No MPI call runs in a thread: MPI only sets up. */
#include "ucx_plumbing.h"
#include "thread_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UX_TAG 7
#define UX_TAG_ALL ((ucp_tag_t)-1)

typedef struct ux_state ux_state;

typedef struct {
    ux_state *s;
    ucp_worker_h worker;
    ucp_ep_h ep;
    char *sbuf, *rbuf;   /* this thread's `buffers` slots in the mapped regions */
    int64_t next;        /* ops this thread has run in this point */
} ux_thread;

struct ux_state {
    char role;           /* FL_SENDER (rank 0), FL_RECEIVER (rank 1) or FL_IDLE */
    int peer, threads;   /* threads: 0 on an idle rank */
    size_t count;
    int64_t buffers;
    ucx_run *run;
    ucx_region sreg, rreg;
    ucp_request_param_t sp, rp;
    ux_thread *th;
    fl_pool pool;
    uint64_t seed;
};

static const struct {
    const char *name;
    ucs_thread_mode_t mode;
} MODES[] = {{"single", UCS_THREAD_MODE_SINGLE}, {"serialized", UCS_THREAD_MODE_SERIALIZED},
             {"multi", UCS_THREAD_MODE_MULTI}};

/* The run's context, shared by the workers of every thread (mt_workers_shared,
 * as ucx_perftest sets it for -T above 1); the tls param as UCX_TLS, '+'
 * joining transports. ucx_run carries it so that the plumbing maps memory and
 * describes endpoints with it; its own worker stays NULL. */
static int ux_init(const fl_ctx *ctx, void **bs)
{
    *bs = ucx_new_run(ctx, 1, UCP_FEATURE_TAG, 1);
    return FL_OK;
}

static void ux_fini(const fl_ctx *ctx, void *bs)
{
    ucx_run *r = bs;
    MPI_Barrier(ctx->comm);
    if (r->context)
        ucp_cleanup(r->context);
    free(r);
}

static char *slot(char *base, const ux_state *s, int64_t k)
{
    return fl_slot(base, (int64_t)s->count, s->buffers, k);
}

/* Thread t's worker address to the peer's thread t, and an endpoint to its. */
static void connect_threads(const fl_ctx *ctx, ux_state *s)
{
    for (int t = 0; t < s->threads; t++) {
        ux_thread *x = &s->th[t];
        ucp_address_t *mine;
        size_t len;
        ucs_status_t st = ucp_worker_get_address(x->worker, &mine, &len);
        if (st != UCS_OK)
            ucx_fail("ucp_worker_get_address", st);
        long mylen = (long)len, theirs = 0;
        MPI_Sendrecv(&mylen, 1, MPI_LONG, s->peer, t, &theirs, 1, MPI_LONG, s->peer, t, ctx->comm,
                     MPI_STATUS_IGNORE);
        char *addr = malloc((size_t)theirs);
        if (!addr)
            fl_die("ucx: out of memory");
        MPI_Sendrecv(mine, (int)mylen, MPI_BYTE, s->peer, t, addr, (int)theirs, MPI_BYTE, s->peer, t, ctx->comm,
                     MPI_STATUS_IGNORE);
        ucp_worker_release_address(x->worker, mine);
        ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = (ucp_address_t *)addr};
        st = ucp_ep_create(x->worker, &p, &x->ep);
        free(addr);
        if (st != UCS_OK)
            ucx_fail("ucp_ep_create", st);
    }
}

/* A thread's round trips: rank 0 sends then receives, rank 1 the reverse. */
static void ux_loop(void *state, int id, int64_t iters)
{
    ux_state *s = state;
    ux_thread *x = &s->th[id];
    for (int64_t i = 0; i < iters; i++, x->next++) {
        char *sb = slot(x->sbuf, s, x->next), *rb = slot(x->rbuf, s, x->next);
        if (s->role == FL_SENDER) {
            ucx_wait(x->worker, ucp_tag_send_nbx(x->ep, sb, s->count, UX_TAG, &s->sp), "ucp_tag_send_nbx");
            ucx_wait(x->worker, ucp_tag_recv_nbx(x->worker, rb, s->count, UX_TAG, UX_TAG_ALL, &s->rp),
                     "ucp_tag_recv_nbx");
        } else {
            ucx_wait(x->worker, ucp_tag_recv_nbx(x->worker, rb, s->count, UX_TAG, UX_TAG_ALL, &s->rp),
                     "ucp_tag_recv_nbx");
            ucx_wait(x->worker, ucp_tag_send_nbx(x->ep, sb, s->count, UX_TAG, &s->sp), "ucp_tag_send_nbx");
        }
    }
}

static int mt_pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    ucx_run *r = bs;
    int bad = r->context == NULL;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (bad) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", r->failed[0] ? r->failed : "ucp_init failed on another rank");
        return FL_SKIP;
    }
    if (pt->buffers < 1) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1, got %lld", (long long)pt->buffers);
        return FL_ERROR;
    }
    const int threads = (int)fl_param_int(ctx->opts, "threads");
    const char *mode = fl_param(ctx->opts, "thread_mode");
    ucs_thread_mode_t tm = UCS_THREAD_MODE_SINGLE;
    for (size_t k = 0; k < sizeof MODES / sizeof MODES[0]; k++)
        if (strcmp(MODES[k].name, mode) == 0)
            tm = MODES[k].mode;
    ux_state *s = fl_alloc(sizeof *s);
    s->role = ctx->rank == 0 ? FL_SENDER : ctx->rank == 1 ? FL_RECEIVER : FL_IDLE;
    s->peer = ctx->rank == 0 ? 1 : 0;
    s->count = (size_t)pt->size;
    s->buffers = pt->buffers;
    s->run = r;
    s->seed = 1;
    if (s->role != FL_IDLE) {
        s->threads = threads;
        const size_t region = s->count * (size_t)s->buffers;
        ucx_map(r, region * (size_t)threads, &s->sreg);
        ucx_map(r, region * (size_t)threads, &s->rreg);
        s->sp = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->sreg.memh};
        s->rp = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->rreg.memh};
        s->th = fl_alloc(sizeof *s->th * (size_t)threads);
        ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = tm};
        for (int t = 0; t < threads; t++) {
            ux_thread *x = &s->th[t];
            x->s = s;
            x->sbuf = s->sreg.base + (size_t)t * region;
            x->rbuf = s->rreg.base + (size_t)t * region;
            ucs_status_t st = ucp_worker_create(r->context, &wp, &x->worker);
            if (st != UCS_OK)
                ucx_fail("ucp_worker_create", st);
        }
        connect_threads(ctx, s);
    }
    *state = s;
    shape->bytes_per_op = 2 * (int64_t)threads * pt->size;  /* a round trip per thread */
    shape->timed = ctx->rank == 0;
    shape->working_set = (int64_t)s->count * s->buffers;  /* a thread's rotation */
    char extra[128];
    snprintf(extra, sizeof extra, ",\"threads\":%d,\"thread_mode\":\"%s\",\"buffers\":%lld", threads, mode,
             (long long)pt->buffers);
    ucx_info(r, s->th ? s->th[0].ep : NULL, extra, shape->info);
    fl_pool_start(&s->pool, s->threads, ux_loop, s);
    return FL_OK;
}

static double mt_pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return fl_pool_run(&((ux_state *)state)->pool, iters);
}

/* One round trip per thread on patterned data: thread t of each rank sends
 * the pattern of (rank, t) and checks what came back against (peer, t). */
static int64_t mt_pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ux_state *s = state;
    if (s->role == FL_IDLE)
        return 0;
    const uint64_t base = s->seed * 1000003u;
    for (int t = 0; t < s->threads; t++) {
        s->th[t].next = 0;
        fl_fill(slot(s->th[t].sbuf, s, 0), s->count, base + (uint64_t)(ctx->rank * 4096 + t));
        memset(slot(s->th[t].rbuf, s, 0), 0, s->count);
    }
    mt_pingpong_measure(ctx, s, 1);
    int64_t bad = 0;
    for (int t = 0; t < s->threads; t++) {
        bad += fl_check(slot(s->th[t].rbuf, s, 0), s->count, base + (uint64_t)(s->peer * 4096 + t));
        *checked += (int64_t)s->count;
        s->th[t].next = 0;
    }
    s->seed++;
    return bad;
}

/* The pool ends, then every endpoint closes (flush mode: both ranks close
 * thread t's in the same order, each progressing that worker), then the
 * workers and the regions go. */
static void mt_pingpong_teardown(const fl_ctx *ctx, void *state)
{
    ux_state *s = state;
    fl_pool_stop(&s->pool);
    MPI_Barrier(ctx->comm);
    for (int t = 0; t < s->threads; t++) {
        ucp_request_param_t p = {.op_attr_mask = 0};
        ucx_wait(s->th[t].worker, ucp_ep_close_nbx(s->th[t].ep, &p), "ucp_ep_close_nbx");
    }
    MPI_Barrier(ctx->comm);
    for (int t = 0; t < s->threads; t++)
        ucp_worker_destroy(s->th[t].worker);
    ucx_unmap(s->run, &s->sreg);
    ucx_unmap(s->run, &s->rreg);
    fl_free(s->th);
    fl_free(s);
}

const fl_kernel fl_ucx_mt_kernels[] = {
    {.name = "ucx.mt_pingpong", .init = ux_init, .fini = ux_fini, .setup = mt_pingpong_setup,
     .measure = mt_pingpong_measure, .verify = mt_pingpong_verify, .teardown = mt_pingpong_teardown},
    {.name = NULL},
};
