/* thread_pool: a rank's threads for the multi-threaded kernels (thread_pool.h). */
#include "thread_pool.h"

#include <stdlib.h>

typedef struct {
    fl_pool *pool;
    int id;
} worker_arg;

static void *worker(void *arg)
{
    fl_pool *p = ((worker_arg *)arg)->pool;
    const int id = ((worker_arg *)arg)->id;
    free(arg);
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->quit)
            return NULL;
        p->loop(p->state, id, p->iters);
        pthread_barrier_wait(&p->done);
    }
}

void fl_pool_start(fl_pool *p, int threads, fl_pool_loop loop, void *state)
{
    p->threads = threads;
    p->loop = loop;
    p->state = state;
    p->quit = 0;
    p->tid = NULL;
    if (threads < 1)
        return;
    pthread_barrier_init(&p->start, NULL, (unsigned)threads);
    pthread_barrier_init(&p->done, NULL, (unsigned)threads);
    p->tid = calloc((size_t)threads, sizeof *p->tid);
    if (!p->tid)
        fl_die("out of memory");
    for (int i = 1; i < threads; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (!a)
            fl_die("out of memory");
        a->pool = p;
        a->id = i;
        if (pthread_create(&p->tid[i], NULL, worker, a) != 0)
            fl_die("pthread_create failed for thread %d of %d", i, threads);
    }
}

double fl_pool_run(fl_pool *p, int64_t iters)
{
    if (p->threads < 1)
        return 0.0;
    p->iters = iters;
    pthread_barrier_wait(&p->start);
    double t0 = fl_now();
    p->loop(p->state, 0, iters);
    pthread_barrier_wait(&p->done);
    return fl_now() - t0;
}

void fl_pool_stop(fl_pool *p)
{
    if (p->threads < 1)
        return;
    p->quit = 1;
    pthread_barrier_wait(&p->start);
    for (int i = 1; i < p->threads; i++)
        pthread_join(p->tid[i], NULL);
    pthread_barrier_destroy(&p->start);
    pthread_barrier_destroy(&p->done);
    free(p->tid);
    p->threads = 0;
}
