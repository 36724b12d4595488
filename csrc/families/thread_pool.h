/* thread_pool: the threads of a rank that the multi-threaded kernels
 * (message_mt.c, ucx_mt.c) run their ops on, started once per point. The
 * calling thread is thread 0; threads 1..n-1 wait at a start barrier, every
 * thread runs the kernel's loop for the call, and all meet at an end
 * barrier, so a call's time spans every thread's ops (OSU's
 * pthread_barrier, IMB-MT's omp barrier). */
#ifndef FL_THREAD_POOL_H
#define FL_THREAD_POOL_H

#include "../fl.h"

#include <pthread.h>

/* One thread's part of a call: `iters` ops of thread `id` on the kernel's state. */
typedef void (*fl_pool_loop)(void *state, int id, int64_t iters);

typedef struct {
    int threads;
    fl_pool_loop loop;
    void *state;
    int64_t iters;     /* of the current call */
    int quit;
    pthread_barrier_t start, done;
    pthread_t *tid;    /* threads 1..n-1 (slot 0 unused) */
} fl_pool;

/* Starts threads 1..threads-1 (none for 0 or 1 thread); dies if one cannot start. */
void fl_pool_start(fl_pool *p, int threads, fl_pool_loop loop, void *state);
/* One call: every thread runs loop(state, id, iters); the seconds from the
 * start barrier to the end barrier on the calling thread. */
double fl_pool_run(fl_pool *p, int64_t iters);
/* Ends and joins the threads. */
void fl_pool_stop(fl_pool *p);

#endif
