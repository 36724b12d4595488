/* Family "ucx": UCX's UCP API below MPI (ucx.h). Tagged send and receive
 * between ranks 0 (sender, timed) and 1 as message.c does it through MPI,
 * the bibw pattern of message_patterns.c, put and get windows completed by
 * an endpoint flush as deposit.c's flush mode, and memory mapping on rank 0.
 *
 * Cache state, as in message.c and deposit.c: send and receive regions of
 * `buffers` slots of `size` bytes per side, both mapped with the context
 * (and handed to every op as its memory handle), op i on slot i % buffers,
 * i counted over the whole point; receives (and puts) of one window share
 * slots when buffers < window, and a verified window carries one pattern.
 *
 * Put and get need no help from the target on transports that reach its
 * memory directly (cma, knem, RDMA), but UCP emulates them with active
 * messages elsewhere (tcp), and those the target must progress. So the
 * target's measure polls its worker until the origin's zero-byte "done"
 * tag, sent after the flush that ends the origin's measure call; the
 * target is not timed. */
#include "ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IDLE, SENDER, RECEIVER, BOTH };
enum { TAG_DATA = 1, TAG_ACK, TAG_DONE };
#define TAG_ALL ((ucp_tag_t)-1)

typedef struct {
    ucx_run *run;
    ucp_worker_h worker;
    ucp_ep_h ep;
    int role, peer, rank, window;
    size_t count;
    int64_t buffers, next;   /* op i uses slot (next + i) % buffers */
    ucx_region sreg, rreg;   /* send and receive regions; rma: origin's and target's */
    ucp_request_param_t sp, rp, plain; /* with the send / receive memh; none */
    void **req;
    uint64_t raddr;          /* rma origin: the target's region */
    ucp_rkey_h rkey;
    char ack_in, ack_out;
    uint64_t seed;
} ucx_state;

/* A tag names what it carries and the rank that sends it, so flows never mix. */
static inline ucp_tag_t tag(int what, int from)
{
    return (ucp_tag_t)what << 32 | (ucp_tag_t)(unsigned)from;
}

static inline char *sslot(const ucx_state *s, int64_t i)
{
    return fl_slot(s->sreg.base, (int64_t)s->count, s->buffers, s->next + i);
}

static inline char *rslot(const ucx_state *s, int64_t i)
{
    return fl_slot(s->rreg.base, (int64_t)s->count, s->buffers, s->next + i);
}

static inline int window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

static inline double finish(ucx_state *s, int64_t iters, double t0)
{
    double t = fl_now() - t0;
    s->next += iters;
    return t;
}

/* ---- init, setup, teardown ---- */

static int ucx_init(const fl_ctx *ctx, void **bench_state)
{
    return ucx_start(ctx, bench_state, 1);
}

/* mr_reg: without UCP's registration cache, every ucp_mem_map registers. */
static int mr_init(const fl_ctx *ctx, void **bench_state)
{
    return ucx_start(ctx, bench_state, 0);
}

static void ucx_fini(const fl_ctx *ctx, void *bench_state)
{
    ucx_stop(ctx, bench_state);
}

/* The state of a point for `role` with `peer`, regions of `buffers` slots
 * mapped on the active ranks; FL_SKIP without a context, FL_ERROR when the
 * endpoint or the footprint cannot be had. */
static int ucx_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, int role, int peer,
                     int window, void **state, fl_shape *shape)
{
    ucx_run *r = bs;
    if (!r->context) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", r->failed);
        return FL_SKIP;
    }
    if (pt->buffers < 1 || (pt->size > 0 && pt->buffers > (INT64_MAX / 2) / pt->size)) {
        snprintf(shape->note, FL_NOTE_LEN, "buffers must be >= 1 and fit in memory, got %lld",
                 (long long)pt->buffers);
        return FL_ERROR;
    }
    ucx_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("ucx: out of memory");
    *state = s;
    s->run = r;
    s->worker = r->worker;
    s->role = role;
    s->peer = peer;
    s->rank = ctx->rank;
    s->window = window;
    s->count = (size_t)pt->size;
    s->buffers = pt->buffers;
    s->seed = (uint64_t)pt->size * 0x100000001b3ULL + 29;
    if (role == IDLE)
        return FL_OK;
    if (!(s->ep = ucx_ep(r, peer, shape->note)))
        return FL_ERROR;
    ucx_map(r, s->count * (size_t)s->buffers, &s->sreg);
    ucx_map(r, s->count * (size_t)s->buffers, &s->rreg);
    s->sp = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->sreg.memh};
    s->rp = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->rreg.memh};
    s->req = calloc(2 * (size_t)window, sizeof *s->req);
    if (!s->req)
        fl_die("ucx: out of memory");
    return FL_OK;
}

/* info: library, tls, lanes (of rank 0's endpoint: rank 0 writes the
 * record), then window and buffers. */
static void pair_info(const ucx_state *s, int windowed, const fl_point *pt, fl_shape *shape)
{
    char extra[96];
    int n = windowed ? snprintf(extra, sizeof extra, ",\"window\":%d", s->window) : 0;
    snprintf(extra + n, sizeof extra - (size_t)n, ",\"buffers\":%lld", (long long)pt->buffers);
    ucx_info(s->run, s->ep, extra, shape->info);
}

/* Ranks 0 (sender or origin) and 1; `legs` 2 for a round trip. */
static int pair_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape, int window, int legs)
{
    int role = ctx->rank == 0 ? SENDER : ctx->rank == 1 ? RECEIVER : IDLE;
    int st = ucx_begin(ctx, bs, pt, role, fl_peer(ctx), window, state, shape);
    if (st != FL_OK)
        return st;
    shape->bytes_per_op = legs * pt->size;
    shape->timed = ctx->rank == 0;
    if (legs == 1)
        shape->batch_multiple = window; /* samples are whole windows */
    pair_info(*state, legs == 1, pt, shape);
    return FL_OK;
}

static int pingpong_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    return pair_setup(ctx, bs, pt, state, shape, 1, 2);
}

static int window_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    return pair_setup(ctx, bs, pt, state, shape, (int)fl_param_int(ctx->opts, "window"), 1);
}

/* put_bw, get_bw: the origin learns the target's receive region and key. */
static int rma_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                     fl_shape *shape)
{
    int st = window_setup(ctx, bs, pt, state, shape);
    ucx_state *s = *state;
    if (st != FL_OK || s->role == IDLE)
        return st;
    ucx_swap_key(s->run, ctx->comm, s->role == SENDER, s->peer, s->ep, &s->rreg, &s->raddr,
                 &s->rkey);
    return FL_OK;
}

/* bibw: the bipairs layout, every active rank 'b' with a 'b' peer naming it. */
static int exchange_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                          fl_shape *shape)
{
    const fl_layout *l = pt->layout;
    for (int q = 0; l && q < ctx->nranks; q++) {
        int p = l->peer[q];
        if (l->role[q] != FL_IDLE && !(l->role[q] == FL_BOTH && p >= 0 && p < ctx->nranks &&
                                       p != q && l->role[p] == FL_BOTH && l->peer[p] == q))
            l = NULL;
    }
    if (!l) {
        snprintf(shape->note, FL_NOTE_LEN,
                 "layout: every active rank must be 'b' with a 'b' peer that names it back");
        return FL_ERROR;
    }
    int both = l->role[ctx->rank] == FL_BOTH, w = (int)fl_param_int(ctx->opts, "window");
    int st = ucx_begin(ctx, bs, pt, both ? BOTH : IDLE, l->peer[ctx->rank], w, state, shape);
    if (st != FL_OK)
        return st;
    shape->batch_multiple = w;
    shape->timed = both;
    if (both) {
        shape->sent_bytes = shape->recv_bytes = pt->size;
        shape->messages = 1;
    }
    pair_info(*state, 1, pt, shape);
    return FL_OK;
}

static void ucx_teardown(const fl_ctx *ctx, void *state)
{
    ucx_state *s = state;
    (void)ctx;
    if (s->rkey)
        ucp_rkey_destroy(s->rkey);
    ucx_unmap(s->run, &s->sreg);
    ucx_unmap(s->run, &s->rreg);
    free(s->req);
    free(s);
}

/* ---- tagged messages ---- */

static inline void *tsend(ucx_state *s, const void *buf, size_t n, int what,
                         const ucp_request_param_t *p)
{
    return ucx_check(ucp_tag_send_nbx(s->ep, buf, n, tag(what, s->rank), p), "ucp_tag_send_nbx");
}

static inline void *trecv(ucx_state *s, void *buf, size_t n, int what,
                         const ucp_request_param_t *p)
{
    return ucx_check(ucp_tag_recv_nbx(s->worker, buf, n, tag(what, s->peer), TAG_ALL, p),
                     "ucp_tag_recv_nbx");
}

static double pingpong_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ucx_state *s = state;
    ucp_worker_h w = s->worker;
    const size_t c = s->count;
    (void)ctx;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t i = 0; i < iters; i++) {
            ucx_wait(w, tsend(s, sslot(s, i), c, TAG_DATA, &s->sp), "send");
            ucx_wait(w, trecv(s, rslot(s, i), c, TAG_DATA, &s->rp), "receive");
        }
    else if (s->role == RECEIVER)
        for (int64_t i = 0; i < iters; i++) {
            ucx_wait(w, trecv(s, rslot(s, i), c, TAG_DATA, &s->rp), "receive");
            ucx_wait(w, tsend(s, sslot(s, i), c, TAG_DATA, &s->sp), "send");
        }
    return finish(s, iters, t0);
}

/* A window of sends against pre-posted receives, one zero-byte ack back. */
static double stream_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ucx_state *s = state;
    ucp_worker_h w = s->worker;
    const size_t c = s->count;
    (void)ctx;
    double t0 = fl_now();
    if (s->role == SENDER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                s->req[j] = tsend(s, sslot(s, d + j), c, TAG_DATA, &s->sp);
            ucx_wait_all(w, s->req, n, "send");
            ucx_wait(w, trecv(s, &s->ack_in, 0, TAG_ACK, &s->plain), "ack");
        }
    else if (s->role == RECEIVER)
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++)
                s->req[j] = trecv(s, rslot(s, d + j), c, TAG_DATA, &s->rp);
            ucx_wait_all(w, s->req, n, "receive");
            ucx_wait(w, tsend(s, &s->ack_out, 0, TAG_ACK, &s->plain), "ack");
        }
    return finish(s, iters, t0);
}

/* bibw: W receives, W sends, one wait for all 2W, then an ack each way. */
static double exchange_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ucx_state *s = state;
    ucp_worker_h w = s->worker;
    const size_t c = s->count;
    (void)ctx;
    if (s->role != BOTH)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += s->window) {
        const int n = window_len(iters, d, s->window);
        for (int j = 0; j < n; j++)
            s->req[j] = trecv(s, rslot(s, d + j), c, TAG_DATA, &s->rp);
        for (int j = 0; j < n; j++)
            s->req[n + j] = tsend(s, sslot(s, d + j), c, TAG_DATA, &s->sp);
        ucx_wait_all(w, s->req, 2 * n, "exchange");
        s->req[0] = trecv(s, &s->ack_in, 0, TAG_ACK, &s->plain);
        s->req[1] = tsend(s, &s->ack_out, 0, TAG_ACK, &s->plain);
        ucx_wait_all(w, s->req, 2, "ack");
    }
    return finish(s, iters, t0);
}

/* One round trip (slot 0) with patterned data both ways; each side checks. */
static int64_t pingpong_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ucx_state *s = state;
    if (s->role == IDLE)
        return 0;
    s->next = 0;
    int64_t bad = fl_verify_round_trip(ctx, state, pingpong_measure, sslot(s, 0), rslot(s, 0),
                                       (size_t)s->count, s->peer, s->seed, checked);
    s->next = 0; /* back to the slots the round trip used */
    s->seed += 4;
    return bad;
}

/* One full window of one pattern per flow: senders fill every slot the
 * window uses, receivers zero them and check each distinct slot once. */
static int64_t window_verify(const fl_ctx *ctx, ucx_state *s, int64_t *checked,
                             double (*measure)(const fl_ctx *, void *, int64_t))
{
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    const uint64_t mine = s->seed + (uint64_t)s->rank, theirs = s->seed + (uint64_t)s->peer;
    const int sends = s->role == SENDER || s->role == BOTH;
    const int recvs = s->role == RECEIVER || s->role == BOTH;
    int64_t bad = 0;
    s->next = 0;
    for (int64_t k = 0; k < slots; k++) {
        if (sends)
            fl_fill(sslot(s, k), s->count, mine);
        if (recvs)
            memset(rslot(s, k), 0, s->count);
    }
    measure(ctx, s, s->window);
    s->next = 0;
    for (int64_t k = 0; recvs && k < slots; k++) {
        bad += fl_check(rslot(s, k), s->count, theirs);
        *checked += (int64_t)s->count;
    }
    s->seed += 2 * (uint64_t)ctx->nranks;
    return bad;
}

static int64_t stream_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ucx_state *s = state;
    return s->role == IDLE ? 0 : window_verify(ctx, s, checked, stream_measure);
}

static int64_t exchange_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ucx_state *s = state;
    return s->role == IDLE ? 0 : window_verify(ctx, s, checked, exchange_measure);
}

/* ---- put and get ---- */

typedef ucs_status_ptr_t (*rma_op)(ucp_ep_h, void *, size_t, uint64_t, ucp_rkey_h,
                                   const ucp_request_param_t *);

static ucs_status_ptr_t put_op(ucp_ep_h ep, void *buf, size_t n, uint64_t raddr, ucp_rkey_h rkey,
                               const ucp_request_param_t *p)
{
    return ucp_put_nbx(ep, buf, n, raddr, rkey, p);
}

/* The origin's windows: each op on the next slot of both regions, its
 * request let go at once (the flush completes it), one flush per window;
 * then "done" to the target. The target polls until "done". */
static inline double rma_time(ucx_state *s, int64_t iters, rma_op op)
{
    ucp_worker_h w = s->worker;
    const size_t c = s->count;
    double t0 = fl_now();
    if (s->role == SENDER) {
        for (int64_t d = 0; d < iters; d += s->window) {
            const int n = window_len(iters, d, s->window);
            for (int j = 0; j < n; j++) {
                size_t at = (size_t)((s->next + d + j) % s->buffers) * c;
                void *req = ucx_check(op(s->ep, s->sreg.base + at, c, s->raddr + at, s->rkey,
                                         &s->sp), "rma");
                if (req)
                    ucp_request_free(req);
            }
            ucx_wait(w, ucp_ep_flush_nbx(s->ep, &s->plain), "ucp_ep_flush_nbx");
        }
        ucx_wait(w, tsend(s, &s->ack_out, 0, TAG_DONE, &s->plain), "done");
    } else if (s->role == RECEIVER) {
        ucx_wait(w, trecv(s, &s->ack_in, 0, TAG_DONE, &s->plain), "done");
    }
    return finish(s, iters, t0);
}

static double put_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rma_time(state, iters, put_op);
}

static double get_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return rma_time(state, iters, ucp_get_nbx);
}

/* One whole window from slot 0: the pattern at the source (the target's
 * region for a get), zeros at the destination; the destination checks each
 * distinct slot once. The barrier orders the stores before the window. */
static int64_t rma_verify(const fl_ctx *ctx, ucx_state *s, int64_t *checked, int get)
{
    if (s->role == IDLE) {
        MPI_Barrier(ctx->comm);
        return 0;
    }
    const int64_t slots = s->window < s->buffers ? s->window : s->buffers;
    const int source = get ? RECEIVER : SENDER;
    char *mine = s->role == SENDER ? s->sreg.base : s->rreg.base;
    for (int64_t k = 0; k < slots; k++) {
        if (s->role == source)
            fl_fill(mine + (size_t)k * s->count, s->count, s->seed);
        else
            memset(mine + (size_t)k * s->count, 0, s->count);
    }
    MPI_Barrier(ctx->comm);
    s->next = 0;
    rma_time(s, s->window, get ? ucp_get_nbx : put_op);
    s->next = 0;
    int64_t bad = 0;
    for (int64_t k = 0; s->role != source && k < slots; k++) {
        bad += fl_check(mine + (size_t)k * s->count, s->count, s->seed);
        *checked += (int64_t)s->count;
    }
    s->seed++;
    return bad;
}

static int64_t put_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rma_verify(ctx, state, checked, 0);
}

static int64_t get_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return rma_verify(ctx, state, checked, 1);
}

/* ---- mr_reg: rank 0 maps and unmaps one SIZE-byte buffer per op ---- */

static int mr_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    ucx_run *r = bs;
    if (!r->context) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", r->failed);
        return FL_SKIP;
    }
    ucx_state *s = calloc(1, sizeof *s);
    if (!s)
        fl_die("ucx: out of memory");
    *state = s;
    s->run = r;
    s->role = ctx->rank == 0 ? SENDER : IDLE;
    s->count = (size_t)pt->size;
    s->seed = (uint64_t)pt->size * 0x100000001b3ULL + 31;
    if (s->role == SENDER)
        s->sreg.base = fl_alloc(s->count); /* mapped per op, not here */
    shape->timed = s->role == SENDER;
    shape->buffers = 1;
    ucx_info(r, NULL, ",\"rcache\":\"off\",\"buffers\":1", shape->info);
    return FL_OK;
}

static double mr_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    ucx_state *s = state;
    ucp_context_h c = s->run->context;
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                            UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                              .address = s->sreg.base, .length = s->count};
    ucp_mem_h memh;
    (void)ctx;
    if (s->role != SENDER)
        return 0.0;
    double t0 = fl_now();
    for (int64_t i = 0; i < iters; i++) {
        ucs_status_t st = ucp_mem_map(c, &p, &memh);
        if (st != UCS_OK)
            ucx_fail("ucp_mem_map", st);
        if ((st = ucp_mem_unmap(c, memh)) != UCS_OK)
            ucx_fail("ucp_mem_unmap", st);
    }
    return fl_now() - t0;
}

/* Registration must leave the data as it was: a patterned buffer through one op. */
static int64_t mr_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    ucx_state *s = state;
    if (s->role != SENDER)
        return 0;
    fl_fill(s->sreg.base, s->count, s->seed);
    mr_measure(ctx, state, 1);
    *checked += (int64_t)s->count;
    return fl_check(s->sreg.base, s->count, s->seed++);
}

static void mr_teardown(const fl_ctx *ctx, void *state)
{
    ucx_state *s = state;
    (void)ctx;
    fl_free(s->sreg.base);
    free(s);
}

const fl_kernel fl_ucx_kernels[] = {
    {.name = "ucx.pingpong", .init = ucx_init, .fini = ucx_fini, .setup = pingpong_setup,
     .measure = pingpong_measure, .verify = pingpong_verify, .teardown = ucx_teardown},
    {.name = "ucx.stream", .init = ucx_init, .fini = ucx_fini, .setup = window_setup,
     .measure = stream_measure, .verify = stream_verify, .teardown = ucx_teardown},
    {.name = "ucx.bibw", .init = ucx_init, .fini = ucx_fini, .setup = exchange_setup,
     .measure = exchange_measure, .verify = exchange_verify, .teardown = ucx_teardown},
    {.name = "ucx.put_bw", .init = ucx_init, .fini = ucx_fini, .setup = rma_setup,
     .measure = put_measure, .verify = put_verify, .teardown = ucx_teardown},
    {.name = "ucx.get_bw", .init = ucx_init, .fini = ucx_fini, .setup = rma_setup,
     .measure = get_measure, .verify = get_verify, .teardown = ucx_teardown},
    {.name = "ucx.mr_reg", .init = mr_init, .fini = ucx_fini, .setup = mr_setup,
     .measure = mr_measure, .verify = mr_verify, .teardown = mr_teardown},
    {.name = NULL},
};
