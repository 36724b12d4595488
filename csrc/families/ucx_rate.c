/* Family "ucx", message rate over several workers, as perftest's
 * ib_send_bw -q Q: ranks 0 (sender, timed) and 1 (receiver) each create Q
 * UCP workers of the run's context for the point, endpoint k from worker k
 * to the peer's worker k (addresses swapped over MPI at set-up).
 *
 * An op is one tagged message of SIZE bytes. A window is W messages on
 * every worker, Q x W ops: the sender posts worker 0's W sends
 * (ucp_tag_send_nbx), then worker 1's, ..., completes them worker by worker
 * and waits for the receiver's zero-byte ack on worker 0, which the
 * receiver sends once the Q x W receives it pre-posted have completed. A
 * sample is the time from the first post to the last completion of its
 * windows; the point's message rate (schema/records.py: messages_per_op /
 * median) is perftest's MsgRate, its bandwidth perftest's BW average.
 *
 * Op i of a measure call uses slot (next + i) % buffers of a region mapped
 * with the context on each side (ucx.c's cache state). */
#include "ucx_plumbing.h"
#include "pair.h"

#include <stdio.h>
#include <string.h>

enum { RATE_TAG_DATA = 1, RATE_TAG_ACK = 2 };

typedef struct {
    pair_state p;              /* window: W, messages per worker */
    ucx_run *run;
    int q;
    ucp_worker_h *workers;     /* q */
    ucp_ep_h *eps;             /* q */
    ucx_region reg;            /* the sender's or the receiver's slots */
    ucp_request_param_t prm, plain;
    void **req;                /* q x W, then the ack's */
    char ack_in, ack_out;
} rate_state;

static int rate_init(const fl_ctx *ctx, void **bs)
{
    return ucx_start(ctx, bs, 1);
}

static inline ucp_tag_t rate_tag(int what, int k)
{
    return (ucp_tag_t)what << 32 | (ucp_tag_t)(unsigned)k;
}

/* Worker k's endpoint to the peer's worker k: the two swap addresses. */
static void rate_connect(rate_state *s, const fl_ctx *ctx, int k, char *note)
{
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucs_status_t st = ucp_worker_create(s->run->context, &wp, &s->workers[k]);
    if (st != UCS_OK)
        ucx_fail("ucp_worker_create", st);
    ucp_address_t *mine;
    size_t len;
    if ((st = ucp_worker_get_address(s->workers[k], &mine, &len)) != UCS_OK)
        ucx_fail("ucp_worker_get_address", st);
    uint64_t theirs_len = 0, my_len = len;
    MPI_Sendrecv(&my_len, 1, MPI_UINT64_T, s->p.peer, 0, &theirs_len, 1, MPI_UINT64_T, s->p.peer,
                 0, ctx->comm, MPI_STATUS_IGNORE);
    char *theirs = fl_alloc((size_t)theirs_len);
    MPI_Sendrecv(mine, (int)len, MPI_BYTE, s->p.peer, 1, theirs, (int)theirs_len, MPI_BYTE,
                 s->p.peer, 1, ctx->comm, MPI_STATUS_IGNORE);
    ucp_worker_release_address(s->workers[k], mine);
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                          .address = (const ucp_address_t *)theirs};
    if ((st = ucp_ep_create(s->workers[k], &ep, &s->eps[k])) != UCS_OK) {
        snprintf(note, FL_NOTE_LEN, "ucp_ep_create of worker %d with UCX_TLS=%s: %s", k,
                 s->run->tls, ucs_status_string(st));
        s->eps[k] = NULL;
    }
    fl_free(theirs);
}

static int rate_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape)
{
    ucx_run *r = bs;
    if (!r->context) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", r->failed);
        return FL_SKIP;
    }
    int st = pair_check_buffers(pt, pt->size, 1, shape);
    if (st != FL_OK)
        return st;
    rate_state *s = fl_alloc(sizeof *s);
    const int q = (int)fl_param_int(ctx->opts, "endpoints");
    const int w = (int)fl_param_int(ctx->opts, "window");
    pair_init(&s->p, ctx, pt, w);
    s->run = r;
    s->q = q;
    *state = s;
    shape->bytes_per_op = pt->size;
    shape->timed = ctx->rank == 0;
    shape->batch_multiple = (int64_t)q * w; /* samples are whole windows */
    if (s->p.role == FL_IDLE)
        return FL_OK;
    s->workers = fl_alloc(sizeof *s->workers * (size_t)q);
    s->eps = fl_alloc(sizeof *s->eps * (size_t)q);
    s->req = fl_alloc(sizeof *s->req * ((size_t)q * (size_t)w + 1));
    for (int k = 0; k < q; k++)
        rate_connect(s, ctx, k, shape->note);
    for (int k = 0; k < q; k++)
        if (!s->eps[k])
            return FL_ERROR;
    ucx_map(r, s->p.count * (size_t)s->p.buffers, &s->reg);
    if (s->p.role == FL_SENDER)
        s->p.sbuf = s->reg.base;
    else
        s->p.rbuf = s->reg.base;
    s->prm = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = s->reg.memh};
    char extra[160];
    snprintf(extra, sizeof extra, ",\"workers\":%d,\"endpoints\":%d,\"window\":%d,"
             "\"messages_per_op\":1,\"buffers\":%lld", q, q, w, (long long)pt->buffers);
    ucx_info(r, s->eps[0], extra, shape->info);
    return FL_OK;
}

/* Progresses every worker until `comm`'s non-blocking barrier completes,
 * so that a peer still closing its endpoints gets its answers. */
static void rate_progress_until(rate_state *s, MPI_Request *bar)
{
    for (int done = 0; !done;) {
        for (int k = 0; k < s->q; k++)
            ucp_worker_progress(s->workers[k]);
        MPI_Test(bar, &done, MPI_STATUS_IGNORE);
    }
}

/* Every endpoint's close posted at once (flush: the peer closes its own
 * alongside), all workers progressed until every close is done here and
 * there, then the workers destroyed. Closing one endpoint after another
 * would wait on worker k while the peer needs an answer from worker j. */
static void rate_teardown(const fl_ctx *ctx, void *state)
{
    rate_state *s = state;
    MPI_Request bar;
    for (int k = 0; s->eps && k < s->q; k++)
        s->req[k] = s->eps[k] ? ucx_check(ucp_ep_close_nbx(s->eps[k], &s->plain),
                                          "ucp_ep_close_nbx") : NULL;
    for (int left = s->eps != NULL; left;) {
        left = 0;
        for (int k = 0; k < s->q; k++) {
            if (!s->req[k])
                continue;
            ucp_worker_progress(s->workers[k]);
            ucs_status_t st = ucp_request_check_status(s->req[k]);
            if (st == UCS_INPROGRESS) {
                left = 1;
                continue;
            }
            ucp_request_free(s->req[k]);
            s->req[k] = NULL;
            if (st != UCS_OK)
                ucx_fail("ucp_ep_close_nbx", st);
        }
    }
    MPI_Ibarrier(ctx->comm, &bar);
    if (s->workers)
        rate_progress_until(s, &bar);
    else
        MPI_Wait(&bar, MPI_STATUS_IGNORE);
    for (int k = 0; s->workers && k < s->q; k++)
        if (s->workers[k])
            ucp_worker_destroy(s->workers[k]);
    ucx_unmap(s->run, &s->reg);
    fl_free(s->workers);
    fl_free(s->eps);
    fl_free(s->req);
    fl_free(s);
}

/* Ops d..d+n-1 of a window, worker k taking its share in turn, then their
 * completions worker by worker. */
static inline void rate_window(rate_state *s, int64_t d, int n, int send)
{
    pair_state *p = &s->p;
    for (int k = 0, j = 0; k < s->q; k++)
        for (int m = 0; m < p->window && j < n; m++, j++)
            s->req[j] = send ? ucx_check(ucp_tag_send_nbx(s->eps[k], pair_sslot(p, d + j),
                                                          p->count, rate_tag(RATE_TAG_DATA, k),
                                                          &s->prm), "ucp_tag_send_nbx")
                             : ucx_check(ucp_tag_recv_nbx(s->workers[k], pair_rslot(p, d + j),
                                                          p->count, rate_tag(RATE_TAG_DATA, k),
                                                          (ucp_tag_t)-1, &s->prm),
                                         "ucp_tag_recv_nbx");
    for (int k = 0, j = 0; k < s->q; k++)
        for (int m = 0; m < p->window && j < n; m++, j++)
            ucx_wait(s->workers[k], s->req[j], send ? "send" : "receive");
}

/* Windows of Q x W messages, each acked on worker 0. */
static double rate_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    rate_state *s = state;
    pair_state *p = &s->p;
    const int qw = s->q * p->window;
    (void)ctx;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters && p->role != FL_IDLE; d += qw) {
        const int n = pair_window_len(iters, d, qw);
        if (p->role == FL_SENDER) {
            void *ack = ucx_check(ucp_tag_recv_nbx(s->workers[0], &s->ack_in, 0,
                                                   rate_tag(RATE_TAG_ACK, 0), (ucp_tag_t)-1,
                                                   &s->plain), "ucp_tag_recv_nbx");
            rate_window(s, d, n, 1);
            ucx_wait(s->workers[0], ack, "ack");
        } else {
            rate_window(s, d, n, 0);
            ucx_wait(s->workers[0], ucx_check(ucp_tag_send_nbx(s->eps[0], &s->ack_out, 0,
                                                               rate_tag(RATE_TAG_ACK, 0),
                                                               &s->plain), "ucp_tag_send_nbx"),
                     "ack");
        }
    }
    return pair_finish(p, iters, t0);
}

/* One window of every endpoint (Q x W messages) from slot 0, each slot with a pattern of its own. */
static int64_t rate_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    rate_state *s = state;
    return pair_verify_slots(ctx, &s->p, s, rate_measure, (int64_t)s->q * s->p.window, checked);
}

const fl_kernel fl_ucx_rate_kernels[] = {
    {.name = "ucx.msg_rate", .init = rate_init, .fini = ucx_stop, .setup = rate_setup,
     .measure = rate_measure, .verify = rate_verify, .teardown = rate_teardown},
    {.name = NULL},
};
