/* via: the VI Architecture feature experiments of Hellwagner et al. (seed
 * 002) with today's interfaces, between ranks 0 (sender, timed) and 1
 * (receiver); other ranks idle.
 *
 * - Many connections: the receiver learns which of C connections holds data
 *   from a completion queue (epoll over C sockets, MPI_Waitany over C
 *   receives) or by visiting them in turn (non-blocking recv on each socket,
 *   MPI_Test on each request): seed 002 Table 2, where round-robin checking
 *   of 100 VIs lost 6% and the completion queue stayed flat.
 * - Scatter: a block arrives as `segments` segments of SIZE bytes placed
 *   every other block of the receiver's region, scattered by the transport
 *   (an iovec for recvmsg, an MPI vector datatype) or by the program
 *   (contiguous receive, then memcpy): seed 002 Fig. 4 and 5, where the
 *   NIC's scatter of 8-byte items fell to 22 Mbit/s against 585 for the
 *   program's, and 32 segments of 8..1024 bytes (Fig. 5's sweep) rose to
 *   560 at best.
 *
 * Every measure call ends with an ack from the receiver, so the sender's
 * time covers delivery. The kernels are in message_conns.c, message_scatter.c,
 * tcp_conns.c, tcp_scatter.c and fabric_via.c; this file holds what they
 * share. */
#include "via.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A batch is whole rounds over the C connections, and MIN_OPS_PER_ACK ops
 * at least. */
int64_t rounds_multiple(int64_t conns)
{
    return (MIN_OPS_PER_ACK + conns - 1) / conns * conns;
}

/* Every op carries the same pattern, so slots that several ops share still
 * hold exactly it; the receiver checks each distinct slot once. */
int64_t verify_conns(const fl_ctx *ctx, void *state, fl_measure_fn measure, int role,
                     int64_t conns, int64_t size, int64_t buffers, char *sbuf, char *rbuf,
                     int64_t *checked)
{
    const uint64_t seed = (uint64_t)size * 0x9e37u + (uint64_t)conns;
    const int64_t slots = conns < buffers ? conns : buffers;
    int64_t bad = 0;
    if (role == IDLE)
        return 0;
    if (role == SENDER)
        for (int64_t i = 0; i < slots; i++)
            fl_fill(fl_slot(sbuf, size, buffers, i), (size_t)size, seed);
    else
        memset(rbuf, 0, (size_t)(size * buffers));
    measure(ctx, state, conns);
    if (role == RECEIVER) {
        for (int64_t i = 0; i < slots; i++)
            bad += fl_check(fl_slot(rbuf, size, buffers, i), (size_t)size, seed);
        *checked += slots * size;
    }
    return bad;
}

/* ---- the scatter layout: segment j of a block at j * 2B, gaps of B ---- */

/* Segment j carries its own pattern (seed + j), so each can be checked in
 * place wherever it lands. */
void fill_segments(char *msg, int64_t segments, int64_t b, uint64_t seed)
{
    for (int64_t j = 0; j < segments; j++)
        fl_fill(msg + j * b, (size_t)b, seed + (uint64_t)j);
}

/* Mismatching bytes of one scattered block: every segment against its
 * pattern, every gap against zero. */
int64_t check_scattered(const char *region, int64_t segments, int64_t b, uint64_t seed)
{
    int64_t bad = 0;
    for (int64_t j = 0; j < segments; j++) {
        const char *seg = region + 2 * j * b;
        bad += fl_check(seg, (size_t)b, seed + (uint64_t)j);
        for (int64_t x = 0; x < b; x++)
            bad += seg[b + x] != 0;
    }
    return bad;
}

/* The program's scatter: contiguous segments to every other block. */
void unpack(char *region, const char *stage, int64_t segments, int64_t b)
{
    for (int64_t j = 0; j < segments; j++)
        memcpy(region + 2 * j * b, stage + j * b, (size_t)b);
}

int scatter_segments(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape,
                            int64_t *segments)
{
    *segments = fl_param_int(ctx->opts, "segments");
    if (pt->size == 0) {
        snprintf(shape->note, FL_NOTE_LEN, "no payload to scatter");
        return FL_SKIP;
    }
    if (pt->size > INT_MAX / 2 / *segments) {
        snprintf(shape->note, FL_NOTE_LEN, "message above INT_MAX/2 bytes (MPI int count)");
        return FL_SKIP;
    }
    return FL_OK;
}

int scatter_message(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape, scatter_msg *m)
{
    memset(m, 0, sizeof *m);
    m->seg = pt->size;
    m->copy = fl_param_is(ctx->opts, "mode", "copy");
    return scatter_segments(ctx, pt, shape, &m->segments);
}

void scatter_pair_init(pair_state *p, const fl_ctx *ctx, const fl_point *pt,
                       const scatter_msg *m, int window)
{
    pair_init(p, ctx, pt, window);
    p->count = (size_t)(m->segments * m->seg);
    p->buffers = fl_unit_slots(pt->buffers, m->segments, fl_own_slots(ctx->opts, window));
}

void scatter_unpack(const pair_state *p, const scatter_msg *m, int64_t d, int n)
{
    for (int j = 0; m->copy && j < n; j++)
        unpack(scatter_block(p, d + j), scatter_stage(p, m, d + j), m->segments, m->seg);
}

int64_t verify_scatter(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure,
                       const scatter_msg *m, int64_t *checked)
{
    const uint64_t seed = (uint64_t)m->seg * 0x100000001b3ULL + (uint64_t)m->segments;
    const int64_t used = p->window < p->buffers ? p->window : p->buffers;
    int64_t bad = 0;
    p->next = 0;
    if (p->role == FL_SENDER)
        for (int64_t i = 0; i < used; i++)
            fill_segments(pair_sslot(p, i), m->segments, m->seg, seed);
    else if (p->role == FL_RECEIVER)
        memset(p->rbuf, 0, 2 * p->count * (size_t)p->buffers);
    measure(ctx, p, p->window);
    p->next = 0; /* back to the blocks the window used */
    if (p->role == FL_RECEIVER) {
        for (int64_t i = 0; i < used; i++)
            bad += check_scattered(scatter_block(p, i), m->segments, m->seg, seed);
        *checked += used * (int64_t)p->count;
    }
    return bad;
}
