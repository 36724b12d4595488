/* Family "message", congestion (GPCNeT: Chunduri et al., "GPCNeT: Designing
 * a Benchmark Suite for Inducing and Measuring Contention in HPC Networks",
 * SC'19): victim ranks time a test while aggressor ranks load the network
 * until every victim is done. Python decides who is which (measure/
 * congestion.py): role 'v' a victim, its peer its successor on a seeded random
 * ring of the victims; an aggressor 'a' (alltoall, or naming the hotspot 't'
 * of the one-sided loads) or in the roles of a registered pattern laid over
 * the aggressors (s r b t: incast is the hotspot pattern); role 'i' a rank that
 * waits (the isolated points, whose layouts make every aggressor idle).
 *
 * Victim tests, one benchmark each:
 * - victim_latency: SIZE bytes to and from both ring neighbours at once,
 *   one exchange an op (GPCNeT's random ring two-sided latency, 8 B);
 * - victim_bandwidth: a window of SIZE-byte messages to and from both
 *   neighbours an op (its random ring bandwidth, 128 KiB);
 * - victim_allreduce: MPI_Allreduce of SIZE bytes of doubles among the
 *   victims (its 8-byte allreduce).
 *
 * Aggressors (param aggressor) stream without rounds, every flow a window of
 * messages reposted as each completes, so the load is as steady as the
 * model's flows (rounds would leave cables idle while the slowest flow of a
 * round finishes): alltoall (every aggressor to every other), incast (every
 * aggressor to the hotspot), pairs, bipairs, shift and bisection (the
 * registered patterns' flows, suite/patterns.py), put_incast (MPI_Rput
 * into the hotspot's window, a window at a time, then flushed), get_bcast
 * (MPI_Rget from its window).
 *
 * The end: every rank enters one MPI_Ibarrier per measure call, the victims
 * after their ops, the others at the start; the others load (or wait) until
 * it completes. Each two-sided flow then ends with a zero-byte message after
 * its data (MPI's non-overtaking order puts it last), so each receiver knows
 * when its sources are done and cancels the receives left posted.
 *
 * Where the machine holds more ranks than CPUs (the emulated testbed),
 * ranks that wait sleep between polls instead of spinning (fl_crowded,
 * fl_nap), so that the CPUs go to the victims and the packets, not to
 * polling. */
#include "congestion.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_VICTIM = 21, TAG_LOAD = 22 };

/* ---- waiting ---- */

static void nap(const cg_state *s)
{
    if (s->nap)
        fl_nap();
}

static int test_stop(MPI_Request *stop)
{
    int done = 0;
    if (*stop != MPI_REQUEST_NULL)
        MPI_Test(stop, &done, MPI_STATUS_IGNORE);
    return *stop == MPI_REQUEST_NULL || done;
}

/* Idle ranks, and the hotspot of the one-sided loads (MPI_Test drives the
 * library's progress, which passive-target RMA may need at the target). */
static double idle_wait(cg_state *s, MPI_Request *stop)
{
    while (!test_stop(stop))
        nap(s);
    return 0.0;
}

/* ---- two-sided aggressors: alltoall and the patterns' flows ---- */

static void post_flows(cg_state *s)
{
    const int w = s->awin, c = (int)s->asize;
    for (int q = 0; q < s->nsrc; q++)
        for (int j = 0; j < w; j++)
            MPI_Irecv(s->ar + ((size_t)q * w + j) * s->asize, c, MPI_BYTE, s->src[q], TAG_LOAD, s->comm,
                      &s->areq[(size_t)(s->ndst + q) * w + j]);
    for (int d = 0; d < s->ndst; d++)
        for (int j = 0; j < w; j++)
            MPI_Isend(s->as + (size_t)j * s->asize, c, MPI_BYTE, s->dst[d], TAG_LOAD, s->comm,
                      &s->areq[(size_t)d * w + j]);
}

/* Receive i done: its message reposted (1 source still sending), or its
 * source's end message, the source's other receives cancelled (0). */
static int received(cg_state *s, int i, MPI_Status *st)
{
    const int w = s->awin, q = i / w - s->ndst;
    int bytes = 0;
    MPI_Get_count(st, MPI_BYTE, &bytes);
    if (s->ended[q]) /* a message of the source's last, reported after its end: nothing to repost */
        return 1;
    if (bytes > 0) {
        MPI_Irecv(s->ar + (size_t)(i - s->ndst * w) * s->asize, (int)s->asize, MPI_BYTE, s->src[q],
                  TAG_LOAD, s->comm, &s->areq[i]);
        return 1;
    }
    for (int j = 0; j < w; j++) {
        MPI_Request *r = &s->areq[(size_t)(s->ndst + q) * w + j];
        if (*r != MPI_REQUEST_NULL) { /* unmatched: cancelled; matched (data on its way): completes */
            MPI_Cancel(r);
            MPI_Wait(r, MPI_STATUS_IGNORE);
        }
    }
    s->ended[q] = 1;
    return 0;
}

/* Every flow streams until the stop; then each sender's last data is
 * followed by its end message, and the load ends when every send is done
 * and every source's end is in. */
static double stream_load(cg_state *s, MPI_Request *stop)
{
    const int w = s->awin, nsend = s->ndst * w, total = (s->ndst + s->nsrc) * w;
    int stopping = 0, ended = 0, sending = nsend, sources = s->nsrc;
    post_flows(s);
    memset(s->ended, 0, (size_t)s->nsrc);
    while (sources > 0 || !ended || sending > 0) {
        int k = 0;
        stopping = stopping || test_stop(stop);
        MPI_Testsome(total, s->areq, &k, s->done_idx, s->done_st);
        for (int x = 0; x < (k == MPI_UNDEFINED ? 0 : k); x++) {
            const int i = s->done_idx[x];
            if (i >= nsend)
                sources -= !received(s, i, &s->done_st[x]);
            else if (!stopping)
                MPI_Isend(s->as + (size_t)(i % w) * s->asize, (int)s->asize, MPI_BYTE, s->dst[i / w],
                          TAG_LOAD, s->comm, &s->areq[i]);
            else
                sending--;
        }
        if (stopping && !ended && sending == 0) { /* the data is out: the end messages */
            for (int d = 0; d < s->ndst; d++)
                MPI_Isend(s->as, 0, MPI_BYTE, s->dst[d], TAG_LOAD, s->comm, &s->areq[(size_t)d * w]);
            sending = s->ndst, ended = 1;
        }
        if (k == 0 || k == MPI_UNDEFINED)
            nap(s);
    }
    return 0.0;
}

/* ---- one-sided aggressors: put_incast, get_bcast (windows locked at setup) ---- */

/* A window of request-based RMA ops done, polled (and napping) rather than
 * waited for inside the library, which spins. */
static void settle(const cg_state *s, int n)
{
    int done = 0;
    for (MPI_Testall(n, s->areq, &done, MPI_STATUSES_IGNORE); !done;
         MPI_Testall(n, s->areq, &done, MPI_STATUSES_IGNORE))
        nap(s);
}

static double put_load(cg_state *s, MPI_Request *stop)
{
    const MPI_Aint base = (MPI_Aint)s->slot * s->awin * (MPI_Aint)s->asize;
    while (!test_stop(stop)) {
        for (int j = 0; j < s->awin; j++)
            MPI_Rput(s->as + (size_t)j * s->asize, (int)s->asize, MPI_BYTE, s->hot,
                     base + (MPI_Aint)j * (MPI_Aint)s->asize, (int)s->asize, MPI_BYTE, s->win, &s->areq[j]);
        settle(s, s->awin);
        MPI_Win_flush(s->hot, s->win); /* the puts' data out: the flush waits for their delivery */
    }
    return 0.0;
}

static double get_load(cg_state *s, MPI_Request *stop)
{
    while (!test_stop(stop)) {
        for (int j = 0; j < s->awin; j++)
            MPI_Rget(s->ar + (size_t)j * s->asize, (int)s->asize, MPI_BYTE, s->hot,
                     (MPI_Aint)j * (MPI_Aint)s->asize, (int)s->asize, MPI_BYTE, s->win, &s->areq[j]);
        settle(s, s->awin); /* a get's request completes with its data */
    }
    return 0.0;
}

/* ---- layouts ---- */

/* How the aggressors' traffic is laid out (LOADS): every aggressor 'a' to
 * every other; the roles of a registered pattern (s r b t: each s or b
 * sends to its peer, and receives from every s or b naming it); or origins
 * 'a' naming one hotspot 't' of peer -1 (the one-sided loads). */
enum { BY_ALL, BY_ROLES, BY_HOTSPOT };

static int aggressor(char r)
{
    return r != FL_VICTIM && r != FL_IDLE;
}

/* Victims 'v' on one ring (each peer a victim, one cycle through all). */
static const char *ring_fault(const fl_layout *l, int n)
{
    int victims = 0, first = -1, steps = 0;
    for (int q = 0; q < n; q++) {
        if (l->role[q] != FL_VICTIM)
            continue;
        victims++, first = first < 0 ? q : first;
        if (l->peer[q] < 0 || l->role[l->peer[q]] != FL_VICTIM)
            return "layout: every victim names a victim, its successor on the ring";
    }
    for (int q = first; victims && (steps == 0 || q != first) && steps <= victims; q = l->peer[q])
        steps++;
    return victims < 2 || steps != victims
               ? "layout: the victims' successors must make one ring through at least 2 victims" : NULL;
}

/* One aggressor's role and peer under `by`; NULL or what is wrong. */
static const char *aggressor_fault(const fl_layout *l, int q, int by)
{
    const char r = l->role[q];
    const int p = l->peer[q];
    if (by == BY_ALL && r != FL_AGGRESSOR)
        return "layout: an alltoall aggressor takes role 'a'";
    if (by == BY_HOTSPOT && !(r == FL_AGGRESSOR && p >= 0) && !(r == FL_TARGET && p < 0))
        return "layout: a one-sided load's origins 'a' name its hotspot, a 't' of no peer";
    if (by == BY_ROLES && r != FL_SENDER && r != FL_RECEIVER && r != FL_BOTH && r != FL_TARGET)
        return "layout: a pattern's aggressors take the roles s, r, b and t";
    if (by == BY_ALL && p != -1)
        return "layout: an alltoall aggressor names no peer";
    if (p >= 0 && !aggressor(l->role[p]))
        return "layout: an aggressor's peer must be another aggressor";
    if (by == BY_ROLES && (r == FL_SENDER || r == FL_BOTH) && p < 0)
        return "layout: a pattern's sender names its peer";
    return NULL;
}

static const char *aggressors_fault(const fl_layout *l, int n, int by)
{
    int count = 0, heads = 0, hot = -1;
    for (int q = 0; q < n; q++) {
        if (!aggressor(l->role[q]))
            continue;
        const char *bad = aggressor_fault(l, q, by);
        if (bad)
            return bad;
        count++;
        heads += l->peer[q] < 0;
        if (by == BY_HOTSPOT && l->peer[q] >= 0 && hot >= 0 && l->peer[q] != hot)
            return "layout: the aggressors of a one-sided load name one hotspot";
        hot = by == BY_HOTSPOT && l->peer[q] >= 0 ? l->peer[q] : hot;
    }
    if (count == 1 || (by == BY_HOTSPOT && count && (heads != 1 || hot < 0 || l->role[hot] != FL_TARGET)))
        return "layout: an aggressor needs another to load against (and one hotspot among them)";
    return NULL;
}

static const char *cg_fault(const fl_layout *l, int n, int by)
{
    for (int q = 0; q < n; q++)
        if (!strchr("vaisrbt", l->role[q]))
            return "layout: congestion roles are v, i, a, and s r b t (a pattern's aggressors)";
    const char *bad = ring_fault(l, n);
    return bad ? bad : aggressors_fault(l, n, by);
}

/* ---- setup ---- */

/* The aggressors (param aggressor): data, not a switch. */
static const struct {
    const char *name;
    int by;                  /* how the layout gives the traffic (BY_*) */
    double (*load)(cg_state *s, MPI_Request *stop);
    double (*hot_load)(cg_state *s, MPI_Request *stop); /* the hotspot's own part */
} LOADS[] = {
    {"alltoall", BY_ALL, stream_load, stream_load},
    {"incast", BY_ROLES, stream_load, stream_load},
    {"put_incast", BY_HOTSPOT, put_load, idle_wait},
    {"get_bcast", BY_HOTSPOT, get_load, idle_wait},
    {"pairs", BY_ROLES, stream_load, stream_load},
    {"bipairs", BY_ROLES, stream_load, stream_load},
    {"shift", BY_ROLES, stream_load, stream_load},
    {"bisection", BY_ROLES, stream_load, stream_load},
};
enum { NLOADS = sizeof LOADS / sizeof LOADS[0] };

static int load_of(const fl_opts *o)
{
    for (int k = 0; k < NLOADS; k++)
        if (fl_param_is(o, "aggressor", LOADS[k].name))
            return k;
    fl_die("message congestion: no aggressor %s", fl_param(o, "aggressor"));
}

/* Two-sided flows: alltoall every other aggressor both ways (shifted, so no
 * rank is everyone's first); a pattern's, each s or b rank to its peer, and
 * from every s or b rank that names this one. */
static void flows_setup(cg_state *s, const fl_layout *l, int by)
{
    const int n = s->n, me = s->rank;
    const char mine = l->role[me];
    s->dst = fl_alloc(sizeof *s->dst * (size_t)n);
    s->src = fl_alloc(sizeof *s->src * (size_t)n);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        if (by == BY_ALL ? aggressor(l->role[to]) : (mine == FL_SENDER || mine == FL_BOTH) && l->peer[me] == to)
            s->dst[s->ndst++] = to;
        if (by == BY_ALL ? aggressor(l->role[from])
                         : (l->role[from] == FL_SENDER || l->role[from] == FL_BOTH) && l->peer[from] == me)
            s->src[s->nsrc++] = from;
    }
    const size_t reqs = (size_t)(s->ndst + s->nsrc) * (size_t)s->awin;
    s->as = fl_alloc((size_t)s->awin * s->asize);
    s->ar = fl_alloc((size_t)s->nsrc * (size_t)s->awin * s->asize);
    s->areq = fl_alloc(sizeof *s->areq * reqs);
    s->done_idx = fl_alloc(sizeof *s->done_idx * reqs);
    s->done_st = fl_alloc(sizeof *s->done_st * reqs);
    s->ended = fl_alloc((size_t)s->nsrc + 1);
}

/* One-sided: a window over the aggressors, the hotspot's holding every
 * origin's slots (put) or the slots every origin reads (get); locked for
 * the point's life (passive target: flushed a window at a time). */
static void window_setup(cg_state *s, const fl_layout *l, int put)
{
    int a = 0, me = 0;
    s->hot = -1;
    for (int q = 0; q < s->n; q++) {
        if (!aggressor(l->role[q]))
            continue;
        if (l->peer[q] < 0)
            s->hot = a;
        if (q == s->rank)
            me = a;
        s->slot += q < s->rank && l->peer[q] >= 0; /* the origins before this one */
        a++;
    }
    const size_t slots = (size_t)s->awin * s->asize;
    const MPI_Aint bytes = me == s->hot ? (MPI_Aint)(put ? (size_t)(a - 1) * slots : slots) : 0;
    fl_win_allocate(fl_win_bytes(bytes), 1, MPI_INFO_NULL, s->group, 0, &s->wbase, &s->win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    s->as = fl_alloc(slots);
    s->ar = fl_alloc(slots);
    s->areq = fl_alloc(sizeof *s->areq * (size_t)s->awin);
}

/* A victim's neighbours on the ring, and its place on it counted from the
 * lowest-numbered victim (its rank among the victims: a drawn ring orders
 * them anew); the others' rank. */
static int ring_place(cg_state *s, const fl_layout *l)
{
    int first = -1, place = 0;
    s->succ = s->pred = -1;
    if (s->role != FL_VICTIM)
        return s->rank;
    for (int q = 0; q < s->n; q++) {
        first = first < 0 && l->role[q] == FL_VICTIM ? q : first;
        s->pred = l->role[q] == FL_VICTIM && l->peer[q] == s->rank ? q : s->pred;
    }
    s->succ = l->peer[s->rank];
    for (int q = first; q != s->rank; q = l->peer[q])
        place++;
    return place;
}

/* A point's roles, groups and aggressor traffic; the victim's buffers are
 * its test's (the setups below). */
int cg_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, fl_shape *shape, cg_state **out)
{
    const fl_layout *l = pt->layout;
    const int k = load_of(ctx->opts);
    int st = fl_pattern_point(pt, shape, l ? cg_fault(l, ctx->nranks, LOADS[k].by) : NULL);
    if (st != FL_OK)
        return st;
    cg_state *s = fl_alloc(sizeof *s);
    s->comm = ctx->comm, s->rank = ctx->rank, s->n = ctx->nranks, s->role = l->role[ctx->rank];
    s->nap = *(int *)bs, s->size = (size_t)pt->size, s->win = MPI_WIN_NULL;
    s->asize = (size_t)fl_param_int(ctx->opts, "aggressor_size");
    s->awin = (int)fl_param_int(ctx->opts, "aggressor_window");
    const int loads = aggressor(s->role), place = ring_place(s, l);
    MPI_Comm_split(ctx->comm, s->role == FL_VICTIM ? 0 : loads ? 1 : MPI_UNDEFINED, place, &s->group);
    s->load = !loads ? idle_wait : LOADS[k].by == BY_HOTSPOT && l->peer[s->rank] < 0 ? LOADS[k].hot_load
                                                                                    : LOADS[k].load;
    if (loads && LOADS[k].by == BY_HOTSPOT)
        window_setup(s, l, LOADS[k].load == put_load);
    else if (loads)
        flows_setup(s, l, LOADS[k].by);
    int v = 0, a = 0;
    for (int q = 0; q < s->n; q++)
        v += l->role[q] == FL_VICTIM, a += aggressor(l->role[q]);
    shape->timed = s->role == 'v';
    snprintf(shape->info, FL_INFO_LEN,
             "{\"victims\":%d,\"aggressors\":%d,\"aggressor\":\"%s\",\"aggressor_size\":%zu,"
             "\"aggressor_window\":%d,\"waiting\":\"%s\"}",
             v, a, LOADS[k].name, s->asize, s->awin, s->nap ? "sleep" : "spin");
    *out = s;
    return FL_OK;
}

/* victim_latency, victim_bandwidth: a window of messages to and from each
 * ring neighbour an op (latency: one). */
static int ring_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape,
                      int window)
{
    cg_state *s;
    int st = cg_begin(ctx, bs, pt, shape, &s);
    if (st != FL_OK)
        return st;
    s->window = window;
    if (s->role == 'v') {
        s->vs = fl_alloc((size_t)window * s->size);
        s->vr = fl_alloc(2 * (size_t)window * s->size);
        s->vreq = fl_alloc(sizeof *s->vreq * 4 * (size_t)window);
        shape->sent_bytes = shape->recv_bytes = shape->bytes_per_op = 2 * (int64_t)window * pt->size;
        shape->messages = 2 * window;
    }
    shape->legs_per_op = 1;
    shape->buffers = window;
    *state = s;
    return FL_OK;
}

static int latency_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return ring_setup(ctx, bs, pt, state, shape, 1);
}

static int bandwidth_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    return ring_setup(ctx, bs, pt, state, shape, (int)fl_param_int(ctx->opts, "window"));
}

/* victim_allreduce: SIZE bytes of doubles summed among the victims. */
static int allreduce_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state, fl_shape *shape)
{
    if (pt->size % (int64_t)sizeof(double)) {
        snprintf(shape->note, FL_NOTE_LEN, "an allreduce of doubles needs a size that is a multiple of 8 bytes");
        return FL_SKIP;
    }
    cg_state *s;
    int st = cg_begin(ctx, bs, pt, shape, &s);
    if (st != FL_OK)
        return st;
    if (s->role == 'v') {
        s->vs = fl_alloc(s->size);
        s->vr = fl_alloc(s->size);
        shape->sent_bytes = shape->recv_bytes = shape->bytes_per_op = pt->size;
        shape->messages = 1;
    }
    shape->legs_per_op = 1;
    shape->buffers = 1;
    *state = s;
    return FL_OK;
}

void cg_teardown(const fl_ctx *ctx, void *state)
{
    cg_state *s = state;
    (void)ctx;
    if (s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        fl_win_free(&s->win);
    }
    if (s->group != MPI_COMM_NULL)
        MPI_Comm_free(&s->group);
    void *held[] = {s->vs, s->vr, s->vreq, s->as, s->ar, s->areq, s->done_idx, s->done_st, s->ended, s->dst, s->src};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        fl_free(held[i]);
    fl_free(s);
}

/* ---- measure ---- */

double cg_others(cg_state *s)
{
    MPI_Request stop;
    MPI_Ibarrier(s->comm, &stop);
    return s->load(s, &stop);
}

double cg_victim_done(cg_state *s, double t)
{
    MPI_Request done;
    MPI_Ibarrier(s->comm, &done);
    MPI_Wait(&done, MPI_STATUS_IGNORE);
    return t;
}

/* A victim's ops: a window of messages to and from both ring neighbours
 * (latency: one); an allreduce among the victims. */
static void ring_ops(cg_state *s, int64_t iters)
{
    const int c = (int)s->size, w = s->window;
    for (int64_t i = 0; i < iters; i++) {
        MPI_Request *rq = s->vreq;
        for (int j = 0; j < w; j++) {
            MPI_Irecv(s->vr + (size_t)j * s->size, c, MPI_BYTE, s->pred, TAG_VICTIM, s->comm, rq++);
            MPI_Irecv(s->vr + (size_t)(w + j) * s->size, c, MPI_BYTE, s->succ, TAG_VICTIM, s->comm, rq++);
        }
        for (int j = 0; j < w; j++) {
            MPI_Isend(s->vs + (size_t)j * s->size, c, MPI_BYTE, s->succ, TAG_VICTIM, s->comm, rq++);
            MPI_Isend(s->vs + (size_t)j * s->size, c, MPI_BYTE, s->pred, TAG_VICTIM, s->comm, rq++);
        }
        MPI_Waitall(4 * w, s->vreq, MPI_STATUSES_IGNORE);
    }
}

static void allreduce_ops(cg_state *s, int64_t iters)
{
    const int count = (int)(s->size / sizeof(double));
    for (int64_t i = 0; i < iters; i++)
        MPI_Allreduce(s->vs, s->vr, count, MPI_DOUBLE, MPI_SUM, s->group);
}

static double ring_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return cg_measure(state, iters, ring_ops);
}

static void ring_each(const fl_ctx *ctx, void *state, int64_t timings, int64_t unit, double *each)
{
    (void)ctx;
    cg_each(state, timings, unit, each, ring_ops);
}

static double allreduce_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    (void)ctx;
    return cg_measure(state, iters, allreduce_ops);
}

static void allreduce_each(const fl_ctx *ctx, void *state, int64_t timings, int64_t unit, double *each)
{
    (void)ctx;
    cg_each(state, timings, unit, each, allreduce_ops);
}

/* ---- verify: one op, every victim's received data against its sender's ---- */

static uint64_t ring_seed(int rank, int j)
{
    return 0x5eed0000ULL + (uint64_t)rank * 4096u + (uint64_t)j;
}

/* Slot j of every victim carries its (rank, j) pattern to both neighbours:
 * region j from the predecessor and region W + j from the successor. */
static int64_t ring_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    cg_state *s = state;
    const int w = s->window;
    int64_t bad = 0;
    for (int j = 0; s->role == 'v' && j < w; j++)
        fl_fill(s->vs + (size_t)j * s->size, s->size, ring_seed(s->rank, j));
    if (s->role == 'v')
        memset(s->vr, 0, 2 * (size_t)w * s->size);
    ring_measure(ctx, state, 1);
    for (int j = 0; s->role == 'v' && j < w; j++) {
        bad += fl_check(s->vr + (size_t)j * s->size, s->size, ring_seed(s->pred, j));
        bad += fl_check(s->vr + (size_t)(w + j) * s->size, s->size, ring_seed(s->succ, j));
        *checked += 2 * (int64_t)s->size;
    }
    return bad;
}

/* Element i of victim r is r + i, small integers that doubles sum exactly. */
static int64_t allreduce_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    cg_state *s = state;
    const size_t n = s->size / sizeof(double);
    double *in = (double *)s->vs, *out = (double *)s->vr, me = (double)s->rank, ranks = 0;
    int64_t bad = 0;
    int victims = 0;
    for (size_t i = 0; s->role == 'v' && i < n; i++)
        in[i] = (double)s->rank + (double)(i % 1024), out[i] = -1;
    allreduce_measure(ctx, state, 1);
    if (s->role != 'v')
        return 0;
    MPI_Comm_size(s->group, &victims);
    MPI_Allreduce(&me, &ranks, 1, MPI_DOUBLE, MPI_SUM, s->group);
    for (size_t i = 0; i < n; i++)
        bad += out[i] != ranks + (double)victims * (double)(i % 1024) ? (int64_t)sizeof(double) : 0;
    *checked += (int64_t)s->size;
    return bad;
}

const fl_kernel fl_message_congestion_kernels[] = {
    {.name = "message.victim_latency", .init = fl_crowded_init, .fini = fl_crowded_fini, .setup = latency_setup,
     .measure = ring_measure, .verify = ring_verify, .teardown = cg_teardown, .measure_each = ring_each},
    {.name = "message.victim_bandwidth", .init = fl_crowded_init, .fini = fl_crowded_fini, .setup = bandwidth_setup,
     .measure = ring_measure, .verify = ring_verify, .teardown = cg_teardown, .measure_each = ring_each},
    {.name = "message.victim_allreduce", .init = fl_crowded_init, .fini = fl_crowded_fini, .setup = allreduce_setup,
     .measure = allreduce_measure, .verify = allreduce_verify, .teardown = cg_teardown,
     .measure_each = allreduce_each},
    {.name = NULL},
};
