/* Family "coll" (coll.h): the overlap of a non-blocking collective with
 * computation, as Intel MPI Benchmarks' IMB-NBC measures it.
 *
 * At setup the point calibrates, on every active rank: t_pure, the median
 * time of a post and wait with nothing between (the slowest rank's), and a
 * compute loop of as many steps as take t_pure on this rank; t_cpu is that
 * loop's median time alone (the slowest rank's). Each timed op is then a
 * post, the compute loop and the wait (t_ovrl), with the three parts kept as
 * the point's phases (post, compute, wait). Python reads the overlap from
 * them (measure/overlap.py): 100 x max(0, min(1, (t_pure + t_cpu - t_ovrl) /
 * min(t_pure, t_cpu))), and checks the compute phase against t_cpu, so that
 * a CPU slowed while the collective ran does not pass for overlap. */
#include "coll.h"

#include <stdio.h>
#include <string.h>

#define PURE_OPS 21   /* t_pure: the median of this many ops, after two warm-up ones */
#define CPU_RUNS 5    /* t_cpu: the median of this many runs of the loop */
#define CPU_GRAIN 1e-3 /* the loop's rate is timed over at least this long */

/* A dependent chain of multiply-adds the compiler cannot drop or reorder:
 * work that needs the CPU and nothing from memory. */
static double compute(int64_t steps, double x)
{
    for (int64_t i = 0; i < steps; i++)
        x = x * 0.999999999 + 1e-9;
    return x;
}

/* The slowest active rank's value of x. */
static double slowest(const coll_state *s, double x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, s->a.comm);
    return x;
}

static double pure_time(coll_state *s)
{
    double t[PURE_OPS];
    MPI_Request q;
    for (int i = -2; i < PURE_OPS; i++) {
        MPI_Barrier(s->a.comm);
        double t0 = fl_now();
        coll_call(s, FORM_NONBLOCKING, s->root, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        if (i >= 0)
            t[i] = fl_now() - t0;
    }
    return slowest(s, fl_median(t, PURE_OPS));
}

/* Steps of the loop that take `seconds` on this rank. */
static int64_t steps_for(coll_state *s, double seconds)
{
    int64_t n = 1024;
    double dt = 0;
    for (;;) {
        double t0 = fl_now();
        s->sink = compute(n, s->sink);
        dt = fl_now() - t0;
        if (dt >= CPU_GRAIN || n > ((int64_t)1 << 40))
            break;
        n *= 2;
    }
    double steps = seconds / dt * (double)n;
    return steps < 1 ? 1 : (int64_t)steps;
}

static double cpu_time(coll_state *s)
{
    double t[CPU_RUNS];
    for (int i = 0; i < CPU_RUNS; i++) {
        double t0 = fl_now();
        s->sink = compute(s->steps, s->sink);
        t[i] = fl_now() - t0;
    }
    return slowest(s, fl_median(t, CPU_RUNS));
}

void coll_overlap_setup(coll_state *s, fl_shape *shape)
{
    s->t_pure = pure_time(s);
    s->steps = steps_for(s, s->t_pure);
    s->t_cpu = cpu_time(s);
    shape->phase_names = "post,compute,wait";
    memset(s->a.phase, 0, sizeof s->a.phase);
    size_t len = strlen(shape->info);
    if (len > 1)
        snprintf(shape->info + len - 1, FL_INFO_LEN - len + 1,
                 ",\"overlap\":{\"t_pure_s\":%.9g,\"t_cpu_s\":%.9g,\"compute_steps\":%lld}}", s->t_pure,
                 s->t_cpu, (long long)s->steps);
}

void coll_overlapped(coll_state *s, int root)
{
    MPI_Request q;
    double t0 = fl_now();
    coll_call(s, FORM_NONBLOCKING, root, &q);
    double t1 = fl_now();
    s->sink = compute(s->steps, s->sink);
    double t2 = fl_now();
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    s->a.phase[0] += t1 - t0;
    s->a.phase[1] += t2 - t1;
    s->a.phase[2] += fl_now() - t2;
}
