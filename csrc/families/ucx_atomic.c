/* Family "ucx", atomics: rank 0 (origin, timed) updates one 8-byte word
 * that rank 1 (target, passive) mapped and whose remote key it sent at
 * set-up, as ucx_perftest's ucp_add, ucp_fadd, ucp_swap and ucp_cswap
 * tests do (src/tools/perf/lib/ucp_tests.cc): ucp_atomic_op_nbx on a
 * contiguous 8-byte datatype, one op, then its request's completion.
 *
 * - op=add: UCP_ATOMIC_OP_ADD of 1, no reply: its request completes once
 *   the operand may be reused, so, as ucp_add, the measure call ends with
 *   an endpoint flush (inside the time) that completes every add remotely;
 * - op=fadd: UCP_ATOMIC_OP_ADD of 1 with a reply buffer (the old value);
 * - op=swap: UCP_ATOMIC_OP_SWAP of the value after the ops so far plus one;
 * - op=cswap: UCP_ATOMIC_OP_CSWAP comparing with the value the word holds
 *   (the operand) and swapping in the next (the reply buffer, which then
 *   takes the old value), so that every op succeeds.
 *
 * The word: memory=ucx (the default) has UCP allocate it
 * (ucp_mem_map with UCP_MEM_MAP_ALLOCATE, as ucx_perftest allocates its
 * buffers), so a shared-memory transport maps it into the origin and does
 * the atomic with the CPU's own ("device" atomics, no request);
 * memory=program maps a page of the program's (fl_alloc), which UCP
 * registers but no shared-memory transport can reach, so it emulates the
 * atomic with active messages the target serves.
 *
 * clock=per-op reads the clock after every op, as ucx_perftest's loop
 * does (ucx_perf_update reads ucs_get_time() once per iteration,
 * src/tools/perf/lib/libperf_int.h): its figure carries that read, which
 * on an op of tens of nanoseconds is no small part of it; clock=loop (the
 * default) reads it around the measure call alone.
 *
 * The target: target=progress (the default) polls its worker until the
 * origin's "done" and never touches the word. target=perftest does what
 * ucx_perftest's responder does (ucp_tests.cc run_stream_uni, index 0): a
 * worker progress and a clock read for each of the origin's ops, then, its
 * own count done first since its iterations are shorter, it reads the word
 * until the end (wait_last_iter, which waits for the origin's last
 * sequence number there). While it reads, every op of the origin takes the
 * word's cache line back from the target's CPU.
 *
 * Every op adds one to the word, so after k ops from a start value v it
 * holds v + k and op j fetched v + j: verify checks both. The context asks
 * UCP_FEATURE_AMO64 besides tag and RMA; where no transport does atomics
 * UCP emulates them with active messages, which the target's polling of its
 * worker until the origin's zero-byte "done" serves. */
#include "ucx_plumbing.h"
#include "pair.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

enum { AT_RESULTS = 64, AT_VERIFY_OPS = 32, AT_TAG_DONE = 3, AT_WORD_BYTES = 4096 };

typedef enum { AT_ADD, AT_FADD, AT_SWAP, AT_CSWAP } at_op;

typedef struct {
    pair_state p;
    ucx_run *run;
    ucp_ep_h ep;
    at_op op;
    uint64_t *local;          /* origin: operand, then AT_RESULTS replies */
    ucx_region word;          /* target: the word, mapped */
    int ucx_word;             /* memory=ucx: UCP allocated the word */
    uint64_t raddr;           /* origin: the target's word */
    ucp_rkey_h rkey;
    uint64_t expect;          /* origin: what the word holds before the next op */
    int clock_per_op;         /* clock=per-op */
    int target_perftest;      /* target=perftest */
    uint64_t clock_sink;      /* the per-op reads, kept so none is optimised away */
    char flag;                /* "done" */
} at_state;

static const char *const at_names[] = {[AT_ADD] = "add", [AT_FADD] = "fadd", [AT_SWAP] = "swap",
                                       [AT_CSWAP] = "cswap"};

static int at_init(const fl_ctx *ctx, void **bs)
{
    return ucx_start_with(ctx, bs, 1, UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AMO64);
}

static at_op at_param(const fl_opts *opts)
{
    for (int k = 0; k <= AT_CSWAP; k++)
        if (fl_param_is(opts, "op", at_names[k]))
            return (at_op)k;
    return AT_ADD;
}

/* ucx_perftest's clock: ucs_get_time() reads the TSC on x86-64 where UCX finds
 * it invariant (ucs/arch/x86_64/cpu.h, ucs_arch_read_hres_clock); elsewhere
 * UCX's generic clock, a clock_gettime, as here. */
static inline uint64_t at_clock(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_nsec;
#endif
}

/* memory=ucx: a page UCP allocates and maps (counted as the kernel's). */
static void at_alloc_word(const ucx_run *r, ucx_region *m)
{
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                            UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                            UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                              .address = NULL, .length = AT_WORD_BYTES,
                              .flags = UCP_MEM_MAP_ALLOCATE};
    ucs_status_t st = ucp_mem_map(r->context, &p, &m->memh);
    if (st != UCS_OK)
        ucx_fail("ucp_mem_map (allocate)", st);
    ucp_mem_attr_t a = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    if ((st = ucp_mem_query(m->memh, &a)) != UCS_OK)
        ucx_fail("ucp_mem_query", st);
    m->base = a.address;
    m->bytes = AT_WORD_BYTES;
    memset(m->base, 0, sizeof(uint64_t));
    fl_account(AT_WORD_BYTES);
}

static int at_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                    fl_shape *shape)
{
    ucx_run *r = bs;
    if (!r->context) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", r->failed);
        return FL_SKIP;
    }
    if (pt->size != 8) { /* footprint.py: atomic_limit */
        snprintf(shape->note, FL_NOTE_LEN, "atomics update one 8-byte word: size 8 only");
        return FL_SKIP;
    }
    at_state *s = fl_alloc(sizeof *s);
    pair_init(&s->p, ctx, pt, 1);
    s->run = r;
    s->op = at_param(ctx->opts);
    s->clock_per_op = fl_param_is(ctx->opts, "clock", "per-op");
    s->target_perftest = fl_param_is(ctx->opts, "target", "perftest");
    *state = s;
    shape->bytes_per_op = 8;
    shape->timed = ctx->rank == 0;
    shape->buffers = 1;
    shape->working_set = 8;
    if (s->p.role != FL_IDLE && !(s->ep = ucx_ep(r, s->p.peer, shape->note)))
        return FL_ERROR;
    if (s->p.role == FL_SENDER)
        s->local = fl_alloc((1 + AT_RESULTS) * sizeof *s->local);
    else if (s->p.role == FL_RECEIVER && (s->ucx_word = fl_param_is(ctx->opts, "memory", "ucx")))
        at_alloc_word(r, &s->word);
    else if (s->p.role == FL_RECEIVER)
        ucx_map(r, sizeof(uint64_t), &s->word); /* memory=program */
    if (s->p.role != FL_IDLE)
        ucx_swap_key(r, ctx->comm, s->p.role == FL_SENDER, s->p.peer, s->ep, &s->word, &s->raddr,
                     &s->rkey);
    char extra[192];
    snprintf(extra, sizeof extra,
             ",\"op\":\"ucp_atomic_op_nbx %s\",\"memory\":\"%s\",\"clock\":\"%s\",\"target\":\"%s\","
             "\"buffers\":1",
             at_names[s->op], fl_param(ctx->opts, "memory"), s->clock_per_op ? "per-op" : "loop",
             s->target_perftest ? "perftest" : "progress");
    ucx_info(r, s->ep, extra, shape->info);
    return FL_OK;
}

static void at_teardown(const fl_ctx *ctx, void *state)
{
    at_state *s = state;
    (void)ctx;
    if (s->rkey)
        ucp_rkey_destroy(s->rkey);
    if (s->ucx_word && s->word.base) {
        ucs_status_t st = ucp_mem_unmap(s->run->context, s->word.memh);
        if (st != UCS_OK)
            ucx_fail("ucp_mem_unmap", st);
        fl_account(-(int64_t)AT_WORD_BYTES);
    } else {
        ucx_unmap(s->run, &s->word);
    }
    fl_free(s->local);
    fl_free(s);
}

static inline ucp_tag_t at_tag(int from)
{
    return (ucp_tag_t)AT_TAG_DONE << 32 | (ucp_tag_t)(unsigned)from;
}

/* Op j of a measure call: the operand (and, cswap, the compare value in
 * the reply slot) set, posted, and its request completed. */
static inline void at_one(at_state *s, int64_t j, const ucp_request_param_t *prm,
                          ucp_request_param_t *fetch)
{
    ucp_worker_h w = s->run->worker;
    uint64_t *reply = &s->local[1 + j % AT_RESULTS];
    void *req;
    switch (s->op) {
    case AT_ADD:
        req = ucp_atomic_op_nbx(s->ep, UCP_ATOMIC_OP_ADD, &s->local[0], 1, s->raddr, s->rkey, prm);
        break;
    case AT_FADD:
        fetch->reply_buffer = reply;
        req = ucp_atomic_op_nbx(s->ep, UCP_ATOMIC_OP_ADD, &s->local[0], 1, s->raddr, s->rkey,
                                fetch);
        break;
    case AT_SWAP:
        s->local[0] = s->expect + 1;
        fetch->reply_buffer = reply;
        req = ucp_atomic_op_nbx(s->ep, UCP_ATOMIC_OP_SWAP, &s->local[0], 1, s->raddr, s->rkey,
                                fetch);
        break;
    default: /* UCP: if (buffer == word) word = reply; reply = the old word */
        s->local[0] = s->expect;
        *reply = s->expect + 1;
        fetch->reply_buffer = reply;
        req = ucp_atomic_op_nbx(s->ep, UCP_ATOMIC_OP_CSWAP, &s->local[0], 1, s->raddr, s->rkey,
                                fetch);
        break;
    }
    ucx_wait(w, req, "ucp_atomic_op_nbx");
    s->expect++;
}

/* target=perftest: ucx_perftest's responder for `iters` ops of the origin
 * (the file's comment), until the origin's "done" request completes. */
static void at_responder(at_state *s, ucp_worker_h w, void *done, int64_t iters)
{
    const volatile uint64_t *word = s->word.base;
    for (int64_t j = 0; j < iters && ucp_request_check_status(done) == UCS_INPROGRESS; j++) {
        ucp_worker_progress(w);
        s->clock_sink += at_clock();
    }
    ucs_status_t st;
    while ((st = ucp_request_check_status(done)) == UCS_INPROGRESS) {
        s->clock_sink += *word;
        ucp_worker_progress(w);
    }
    ucp_request_free(done);
    if (st != UCS_OK)
        ucx_fail("done", st);
}

/* The origin's ops, each completed before the next (add: and a flush at
 * the end); then "done" to the target, which polls its worker until then. */
static double at_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    at_state *s = state;
    ucp_worker_h w = s->run->worker;
    const ucp_request_param_t plain = {.op_attr_mask = 0};
    (void)ctx;
    if (s->p.role == FL_RECEIVER) {
        void *done = ucx_check(ucp_tag_recv_nbx(w, &s->flag, 0, at_tag(s->p.peer), (ucp_tag_t)-1, &plain),
                               "ucp_tag_recv_nbx");
        if (s->target_perftest && done)
            at_responder(s, w, done, iters);
        else
            ucx_wait(w, done, "done");
        return 0.0;
    }
    if (s->p.role != FL_SENDER)
        return 0.0;
    const ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
                                     .datatype = ucp_dt_make_contig(sizeof(uint64_t))};
    ucp_request_param_t fetch = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
                                                 UCP_OP_ATTR_FIELD_REPLY_BUFFER,
                                 .datatype = ucp_dt_make_contig(sizeof(uint64_t))};
    s->local[0] = 1;
    double t0 = fl_now();
    if (s->clock_per_op)
        for (int64_t j = 0; j < iters; j++) {
            at_one(s, j, &prm, &fetch);
            s->clock_sink += at_clock();
        }
    else
        for (int64_t j = 0; j < iters; j++)
            at_one(s, j, &prm, &fetch);
    if (s->op == AT_ADD)
        ucx_wait(w, ucp_ep_flush_nbx(s->ep, &plain), "ucp_ep_flush_nbx");
    double t = pair_finish(&s->p, iters, t0);
    ucx_wait(w, ucx_check(ucp_tag_send_nbx(s->ep, &s->flag, 0, at_tag(s->p.rank), &plain),
                          "ucp_tag_send_nbx"), "done");
    return t;
}

/* The word starts at a value of the pass's own; after AT_VERIFY_OPS ops
 * (their completions, add: and the flush, before "done") the origin checks
 * every reply and the target its word. */
static int64_t at_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    at_state *s = state;
    const uint64_t start = s->p.seed * 0x9e3779b97f4a7c15ULL >> 8;
    int64_t bad = 0;
    if (s->p.role == FL_RECEIVER)
        memcpy(s->word.base, &start, sizeof start);
    if (s->p.role == FL_SENDER) {
        s->expect = start;
        memset(&s->local[1], 0, AT_RESULTS * sizeof *s->local);
    }
    MPI_Barrier(ctx->comm);
    at_measure(ctx, s, AT_VERIFY_OPS);
    if (s->p.role == FL_SENDER && s->op != AT_ADD)
        for (int j = 0; j < AT_VERIFY_OPS; j++, *checked += 8)
            bad += s->local[1 + j] != start + (uint64_t)j;
    if (s->p.role == FL_RECEIVER) {
        uint64_t have;
        memcpy(&have, s->word.base, sizeof have);
        bad += have != start + AT_VERIFY_OPS;
        *checked += 8;
    }
    s->p.seed++;
    return bad;
}

const fl_kernel fl_ucx_atomic_kernels[] = {
    {.name = "ucx.atomic", .init = at_init, .fini = ucx_stop, .setup = at_setup,
     .measure = at_measure, .verify = at_verify, .teardown = at_teardown},
    {.name = NULL},
};
