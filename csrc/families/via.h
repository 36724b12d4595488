/* via: what the VI Architecture experiments of seed 002 share between their
 * TCP (tcp_conns.c, tcp_scatter.c), MPI (message_conns.c,
 * message_scatter.c) and libfabric (fabric_via.c) forms: roles, the ack
 * rule, the scatter layout (segment j of a block at j * 2B, gaps of B), and
 * the scatter kernels' pair (pair.h). */
#ifndef FL_VIA_H
#define FL_VIA_H

#include "pair.h"

enum { SENDER = 0, RECEIVER = 1, IDLE = -1 };

/* Ops per ack at least: a sample of tiny messages (sample_time is 20 us by
 * default) would otherwise time one or two ops and the ack's round trip,
 * and that share would shrink as C grows, faking a gain from connections.
 * 128 ops make the ack a few percent of a sample at any C up to 128. */
#define MIN_OPS_PER_ACK 128

int64_t rounds_multiple(int64_t conns);  /* whole rounds over C, MIN_OPS_PER_ACK ops at least */

/* The verify pass of the conns kernels: one op on each of the `conns`
 * connections through the kernel's own `measure`, from send slot i to
 * receive slot i (slots of `size` bytes, `buffers` per side). */
int64_t verify_conns(const fl_ctx *ctx, void *state, fl_measure_fn measure, int role,
                     int64_t conns, int64_t size, int64_t buffers, char *sbuf, char *rbuf,
                     int64_t *checked);

void fill_segments(char *msg, int64_t segments, int64_t b, uint64_t seed);
int64_t check_scattered(const char *region, int64_t segments, int64_t b, uint64_t seed);
void unpack(char *region, const char *stage, int64_t segments, int64_t b);
int scatter_segments(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape, int64_t *segments);

/* The scatter kernels of the pair loops (message_scatter.c, fabric_via.c).
 * A point's message is `segments` segments of `seg` bytes, scattered by the
 * transport or, mode=copy, received into a staging slot and unpacked by the
 * program. The pair's count is segments x seg, the sender's region holds
 * slots of count bytes, the receiver's blocks of 2 x count (the scattered
 * layout). Rotation as pair.h: op i uses slot next + i. */
typedef struct {
    int64_t segments, seg;
    int copy;
    char *stage; /* mode=copy: staging slots of count bytes */
} scatter_msg;

/* The message of a point, or scatter_segments' skip. */
int scatter_message(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape, scatter_msg *m);
void scatter_pair_init(pair_state *p, const fl_ctx *ctx, const fl_point *pt,
                       const scatter_msg *m, int window);

static inline char *scatter_block(const pair_state *p, int64_t i)
{
    return fl_slot(p->rbuf, 2 * (int64_t)p->count, p->buffers, p->next + i);
}

static inline char *scatter_stage(const pair_state *p, const scatter_msg *m, int64_t i)
{
    return fl_slot(m->stage, (int64_t)p->count, p->buffers, p->next + i);
}

/* After a window's receives (ops d..d+n-1): the program's scatter from the
 * staging slots where mode=copy, so that it counts in the window's time. */
void scatter_unpack(const pair_state *p, const scatter_msg *m, int64_t d, int n);
/* One window through `measure`, every message with the same per-segment
 * patterns; the receiver checks every block the window used, segments and
 * gaps. */
int64_t verify_scatter(const fl_ctx *ctx, pair_state *p, fl_measure_fn measure,
                       const scatter_msg *m, int64_t *checked);

#endif
