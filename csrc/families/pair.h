/* pair: the loops that the two-sided families, MPI (message.c,
 * message_patterns.c, message_scatter.c), libfabric (fabric.c,
 * fabric_patterns.c, fabric_via.c) and UCX (ucx.c), share, written once over
 * a table of transport operations (iperf3's struct protocol, nccl-tests'
 * common.cu).
 *
 * A rank of a two-rank kernel, or of a pattern whose ranks talk to one peer
 * each, keeps a pair_state: its role and peer, its send and receive regions
 * of `buffers` slots, the ops the point has run and the seed of its verify
 * patterns. A family embeds it as the first member of its own state, so an
 * operation given the pair_state reaches the family's state by a cast, and
 * defines its transport as a `static const pair_ops` object. A measure calls
 * a loop here with its family's table by name: the loops are static inline,
 * so the compiler inlines each into its measure, every operation of the
 * constant table becomes a direct call and is inlined in turn, and no
 * indirect call is left in a timed loop. The families' differences (MPI's
 * blocking or polled completion, libfabric's inject path and per-op
 * contexts, UCX's requests) stay inside their operations.
 *
 * Cache state: op i of a measure call uses slot (next + i) % buffers on both
 * sides, `next` counting the point's ops across measure calls, so a batch
 * shorter than the rotation still walks every slot and a cold cache stays
 * cold. A window's messages share the rotation (window_buffers=shared, the
 * default of two-sided windows as of osu_bw: from 64 KiB up a warm window
 * sends from one slot into one slot), or Python plans at least a window of
 * slots (per-op, suite/buffers.py) and every message of a window has its
 * own on both sides. Where messages of a window share slots, every message
 * of a verified window of one flow carries the same pattern, so a shared
 * slot still holds exactly it. */
#ifndef FL_PAIR_H
#define FL_PAIR_H

#include "../fl.h"

typedef struct {
    char role;         /* FL_SENDER, FL_RECEIVER, FL_BOTH or FL_IDLE (fl.h); a
                        * family may give other ranks other roles (FL_TARGET) */
    int rank, peer, nranks;
    size_t count;      /* bytes of one message */
    int window;        /* messages per window; 1 for a round trip */
    int64_t buffers;   /* slots per region that ops rotate through */
    int64_t next;      /* ops run so far in this point */
    char *sbuf, *rbuf; /* send and receive regions of `buffers` slots of count bytes */
    uint64_t seed;     /* of the verify patterns; every pass takes a new one */
} pair_state;

/* A transport. i is an op of the measure call (its slots: pair_sslot,
 * pair_rslot); a window is ops d..d+n-1; j places a posted message among
 * those outstanding at once (its request or context): a window's receives
 * take 0..n-1, its sends 0..n-1 in a stream and n..2n-1 in an exchange. A
 * table fills in the operations of the loops its family runs; those marked
 * optional may be NULL. */
typedef struct {
    void (*post_send)(pair_state *p, int64_t i, int j);
    void (*post_recv)(pair_state *p, int64_t i, int j);
    void (*wait_sends)(pair_state *p, int64_t d, int n); /* a window's n sends */
    void (*wait_recvs)(pair_state *p, int64_t d, int n); /* a window's n receives */
    void (*wait_all)(pair_state *p, int64_t d, int n);   /* n receives and n sends */
    /* The legs of a round trip, each one message sent or received and done;
     * recv posts its receive first, unless the optional recv_ahead did so
     * before the leg that precedes it. */
    void (*send)(pair_state *p, int64_t i);
    void (*recv)(pair_state *p, int64_t i);
    void (*recv_ahead)(pair_state *p, int64_t i);
    /* Zero-byte control messages: the sender's wait for a window's ack
     * (ack_ready, optional, posts its receive before the window), the
     * receiver's ack, and an exchange's ack each way. */
    void (*ack_ready)(pair_state *p);
    void (*ack_recv)(pair_state *p);
    void (*ack_send)(pair_state *p);
    void (*ack_swap)(pair_state *p);
} pair_ops;

/* Ranks 0 (sender or origin, timed) and 1 of a two-rank kernel; the rest idle. */
void pair_init(pair_state *p, const fl_ctx *ctx, const fl_point *pt, int window);
/* A pattern rank: its role and peer from the point's layout. */
void pair_init_layout(pair_state *p, const fl_ctx *ctx, const fl_point *pt, int window);
/* FL_ERROR with a note unless 1 <= buffers and `regions` regions of buffers
 * slots of `unit` bytes fit in an int64_t. */
int pair_check_buffers(const fl_point *pt, int64_t unit, int64_t regions, fl_shape *shape);

static inline char *pair_sslot(const pair_state *p, int64_t i)
{
    return fl_slot(p->sbuf, (int64_t)p->count, p->buffers, p->next + i);
}

static inline char *pair_rslot(const pair_state *p, int64_t i)
{
    return fl_slot(p->rbuf, (int64_t)p->count, p->buffers, p->next + i);
}

/* Messages in the window that starts after `done` of `iters` (the last
 * window of a measure call may be partial). */
static inline int pair_window_len(int64_t iters, int64_t done, int w)
{
    return iters - done < w ? (int)(iters - done) : w;
}

/* Ends a measure call of `iters` ops: every rank counts the same ops. */
static inline double pair_finish(pair_state *p, int64_t iters, double t0)
{
    double t = fl_now() - t0;
    p->next += iters;
    return t;
}

/* ---- the loops ---- */

/* Round trip (2 legs per op): the sender sends op i's slot and receives the
 * reply into its receive slot; the receiver the other way round. */
static inline double pair_round_trip(pair_state *p, const pair_ops *o, int64_t iters)
{
    double t0 = fl_now();
    if (p->role == FL_SENDER)
        for (int64_t i = 0; i < iters; i++) {
            if (o->recv_ahead)
                o->recv_ahead(p, i);
            o->send(p, i);
            o->recv(p, i);
        }
    else if (p->role == FL_RECEIVER)
        for (int64_t i = 0; i < iters; i++) {
            if (o->recv_ahead)
                o->recv_ahead(p, i);
            o->recv(p, i);
            o->send(p, i);
        }
    return pair_finish(p, iters, t0);
}

/* Stream (OSU bandwidth style): windows of sends against pre-posted
 * receives, one zero-byte ack per window, so the sender's time covers
 * delivery. */
static inline double pair_stream(pair_state *p, const pair_ops *o, int64_t iters)
{
    const int w = p->window;
    double t0 = fl_now();
    if (p->role == FL_SENDER)
        for (int64_t d = 0; d < iters; d += w) {
            const int n = pair_window_len(iters, d, w);
            if (o->ack_ready)
                o->ack_ready(p);
            for (int j = 0; j < n; j++)
                o->post_send(p, d + j, j);
            o->wait_sends(p, d, n);
            o->ack_recv(p);
        }
    else if (p->role == FL_RECEIVER)
        for (int64_t d = 0; d < iters; d += w) {
            const int n = pair_window_len(iters, d, w);
            for (int j = 0; j < n; j++)
                o->post_recv(p, d + j, j);
            o->wait_recvs(p, d, n);
            o->ack_send(p);
        }
    return pair_finish(p, iters, t0);
}

/* Exchange (OSU osu_bibw): both ranks of a pair (FL_BOTH) post a window of
 * receives, then a window of sends, wait for all of them, then ack each
 * way, so a window ends only when both directions are done. */
static inline double pair_exchange(pair_state *p, const pair_ops *o, int64_t iters)
{
    const int w = p->window;
    if (p->role != FL_BOTH)
        return 0.0;
    double t0 = fl_now();
    for (int64_t d = 0; d < iters; d += w) {
        const int n = pair_window_len(iters, d, w);
        for (int j = 0; j < n; j++)
            o->post_recv(p, d + j, j);
        for (int j = 0; j < n; j++)
            o->post_send(p, d + j, n + j);
        o->wait_all(p, d, n);
        o->ack_swap(p);
    }
    return pair_finish(p, iters, t0);
}

/* ---- verify passes (pair.c): mismatched bytes on this rank ---- */

/* The seed of the flow from rank `from` to rank `to` in the current pass. */
static inline uint64_t pair_flow_seed(const pair_state *p, int from, int to)
{
    return p->seed + (uint64_t)from * (uint64_t)p->nranks + (uint64_t)to;
}

/* Moves on to the seeds of the next pass. */
static inline void pair_next_pass(pair_state *p)
{
    p->seed += (uint64_t)p->nranks * (uint64_t)p->nranks;
}

/* One round trip (op 0) through `measure`, each side's pattern its flow's. */
int64_t pair_verify_round_trip(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure,
                               int64_t *checked);
/* One full window through `measure`: senders fill every send slot it uses
 * with their flow's pattern, receivers zero every receive slot it uses and
 * check each distinct one once. pair_verify_window is the two halves around
 * the measure, for a kernel that adds ranks of its own between them. */
int64_t pair_verify_window(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure,
                           int64_t *checked);
void pair_verify_begin(pair_state *p);
int64_t pair_verify_end(pair_state *p, int64_t *checked);
/* `ops` ops from slot 0 through `measure` on `state` (the kernel's, which
 * holds p), slot k with a pattern of its own: every op lands in its own
 * slot, or (fewer buffers than ops) in one whose ops all carry its pattern. */
int64_t pair_verify_slots(const fl_ctx *ctx, pair_state *p, void *state, fl_measure_fn measure,
                          int64_t ops, int64_t *checked);
/* One window of puts (get = 0) or gets from slot 0: the source's slots
 * filled (the target's for a get), the destination's zeroed and checked.
 * Collective: a barrier orders the stores before the window. */
int64_t pair_verify_rma(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure, int get,
                        int64_t *checked);

#endif
