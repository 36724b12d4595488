/* via: what the VI Architecture experiments of seed 002 share between their
 * TCP (tcp_conns.c, tcp_scatter.c) and MPI (message_conns.c,
 * message_scatter.c) forms: roles, the ack rule and the
 * scatter layout (segment j of a block at j * 2B, gaps of B). */
#ifndef FL_VIA_H
#define FL_VIA_H

#include "../fl.h"

enum { SENDER = 0, RECEIVER = 1, IDLE = -1 };
enum { TAG_SCATTER = 1, TAG_SCATTER_ACK = 2 };

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

int64_t message_slots(int64_t buffers, int64_t segments);
void fill_segments(char *msg, int64_t segments, int64_t b, uint64_t seed);
int64_t check_scattered(const char *region, int64_t segments, int64_t b, uint64_t seed);
void unpack(char *region, const char *stage, int64_t segments, int64_t b);
int scatter_segments(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape, int64_t *segments);

#endif
