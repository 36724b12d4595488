/* congestion: what the victim benchmarks share (message_congestion.c, the
 * GPCNeT tests; message_victim.c, any registered benchmark as the victim):
 * a point's roles, the victims' and the aggressors' groups, the aggressors'
 * traffic, and the end of a measure call (one MPI_Ibarrier: the victims
 * enter it after their ops, the others at the start and load until it
 * completes). */
#ifndef FL_CONGESTION_H
#define FL_CONGESTION_H

#include "../fl.h"

typedef struct cg_state cg_state;
struct cg_state {
    char role;
    int rank, n;
    MPI_Comm comm;           /* the run's */
    MPI_Comm group;          /* victims: the victims' (ranked by the ring); aggressors: the aggressors' */
    int succ, pred;          /* victims: the ring's neighbours */
    size_t size;             /* a victim message */
    int window;              /* victim_bandwidth: messages to each neighbour per op */
    char *vs, *vr;           /* victim send slots (window), receive slots (2 window) */
    MPI_Request *vreq;       /* 4 window */
    void *victim;            /* message.victim: the benchmark the victims run (message_victim.c) */
    /* aggressors */
    int nap;                 /* sleep between polls (more ranks than CPUs here) */
    size_t asize;            /* an aggressor message */
    int awin;                /* an aggressor flow's messages in flight */
    int ndst, nsrc, *dst, *src;
    char *as, *ar;           /* send slots (awin); receive slots (nsrc x awin) */
    MPI_Request *areq;       /* ndst x awin sends, then nsrc x awin receives */
    int *done_idx;
    MPI_Status *done_st;
    char *ended;             /* per source: its end message is in */
    MPI_Win win;             /* put_incast, get_bcast */
    char *wbase;
    int hot;                 /* the hotspot: its rank among the aggressors */
    int slot;                /* put_incast: this origin's place in the hotspot's window */
    double (*load)(cg_state *s, MPI_Request *stop);
};

/* A point's roles (checked), groups and aggressor traffic; the victims'
 * buffers are their test's. Collective over ctx->comm. */
int cg_begin(const fl_ctx *ctx, void *bs, const fl_point *pt, fl_shape *shape, cg_state **out);
void cg_teardown(const fl_ctx *ctx, void *state);
/* The aggressors' and idle ranks' part of a measure call: load (or wait)
 * until the victims are done. */
double cg_others(cg_state *s);
/* A victim's ops are done: its time t, once it has told the others. */
double cg_victim_done(cg_state *s, double t);

/* A victim test's ops, `iters` in a row (inlined into the loops below). */
typedef void (*cg_ops_fn)(cg_state *s, int64_t iters);

/* measure: the victims time `iters` ops while the others load. */
static inline double cg_measure(cg_state *s, int64_t iters, cg_ops_fn ops)
{
    if (s->role != FL_VICTIM)
        return cg_others(s);
    const double t0 = fl_now();
    ops(s, iters);
    return cg_victim_done(s, fl_now() - t0);
}

/* measure_each: the victims time `timings` runs of `unit` ops one by one
 * while the others load through the whole call (fl_kernel.measure_each). */
static inline void cg_each(cg_state *s, int64_t timings, int64_t unit, double *each, cg_ops_fn ops)
{
    if (s->role != FL_VICTIM) {
        cg_others(s);
        return;
    }
    for (int64_t i = 0; i < timings; i++) {
        const double t0 = fl_now();
        ops(s, unit);
        each[i] = (fl_now() - t0) / (double)unit;
    }
    cg_victim_done(s, 0.0);
}

#endif
