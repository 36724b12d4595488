/* Reference collective loop: the smallest program that measures what
 * fabriclab's coll level measures with its defaults (blocking form, float
 * elements, MPI_SUM, root 0, not in place, a barrier before each op outside
 * its time), as IMB and OSU time a collective.
 *   mpiexec -n N coll_loop OP:SIZE:ITERS:REPS [OP:SIZE:ITERS:REPS ...]
 * OP: allreduce | bcast | allgather | reduce_scatter. SIZE is bytes of the
 * call's count argument, as fabriclab's: the vector of allreduce, bcast and
 * reduce_scatter (split in balanced blocks), the block of allgather.
 * The points run one after another in one launch, as a fabriclab launch runs
 * a benchmark's sizes, each on buffers and a communicator of its own. Each
 * repetition runs ITERS ops and sums each op's time; the repetition's time
 * per op is the slowest rank's. Rank 0 prints one JSON line per point with
 * the median over REPS repetitions, after untimed ops (0.1 s before the
 * first point, 5 ms before each other, as fabriclab's runner warms up) and
 * an untimed repetition. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define RUN_WARMUP_S 0.1
#define POINT_WARMUP_S 0.005

typedef struct {
    char op[32];
    int count, iters, reps, *counts;
    float *s, *r;
    MPI_Comm comm;
} point;

/* n floats, page-aligned and written, as fabriclab's fl_alloc gives them. */
static float *page(size_t n)
{
    size_t bytes = (n * sizeof(float) + 4095) & ~(size_t)4095;
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 4096))
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(p, 0, bytes ? bytes : 4096);
    return p;
}

static void one_op(const point *p)
{
    if (strcmp(p->op, "allreduce") == 0)
        MPI_Allreduce(p->s, p->r, p->count, MPI_FLOAT, MPI_SUM, p->comm);
    else if (strcmp(p->op, "bcast") == 0)
        MPI_Bcast(p->r, p->count, MPI_FLOAT, 0, p->comm);
    else if (strcmp(p->op, "allgather") == 0)
        MPI_Allgather(p->s, p->count, MPI_FLOAT, p->r, p->count, MPI_FLOAT, p->comm);
    else
        MPI_Reduce_scatter(p->s, p->r, p->counts, MPI_FLOAT, MPI_SUM, p->comm);
}

/* fabriclab's buffers (coll_ops.c coll_sizes): as many elements, page-aligned and
 * written (fl_alloc). Their sizes matter beyond their bytes: with both buffers of
 * reduce_scatter at 128 KiB + 4, MPICH's 64 KiB reduce_scatter took 2.7x as long
 * here as with fabriclab's 64 + 32 KiB (where the buffers fall in the cache). */
static void setup(point *p, const char *spec, int rank, int n)
{
    long size = 0;
    if (sscanf(spec, "%31[a-z_]:%ld:%d:%d", p->op, &size, &p->iters, &p->reps) != 4 || p->iters < 1 ||
        p->reps < 1) {
        if (rank == 0)
            fprintf(stderr, "coll_loop: bad point %s (OP:SIZE:ITERS:REPS)\n", spec);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    p->count = (int)(size / (long)sizeof(float));
    /* a communicator per point, as fabriclab's runner splits one for each */
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &p->comm);
    p->counts = malloc(sizeof(int) * n);
    for (int q = 0; q < n; q++)
        p->counts[q] = (int)((long long)p->count * (q + 1) / n - (long long)p->count * q / n);
    size_t sn = (size_t)p->count, rn = (size_t)p->count;
    if (strcmp(p->op, "bcast") == 0)
        sn = 0;
    else if (strcmp(p->op, "allgather") == 0)
        rn = (size_t)p->count * n;
    else if (strcmp(p->op, "reduce_scatter") == 0)
        rn = (size_t)p->counts[rank];
    p->s = page(sn), p->r = page(rn);
    for (size_t k = 0; k < sn; k++)
        p->s[k] = (float)((7 * rank + 3 * (long)k) % 5);
    if (strcmp(p->op, "bcast") == 0) /* the root broadcasts its receive buffer, as fabriclab's does */
        for (size_t k = 0; k < rn; k++)
            p->r[k] = (float)((7 * rank + 3 * (long)k) % 5);
}

/* Untimed ops for `secs` (rank 0 decides when to stop, so every rank runs as many):
 * the ranks' polling and the CPU's clock settle, and the library's paths warm. */
static void warm(const point *p, double secs)
{
    const double start = MPI_Wtime();
    for (int more = 1; more;) {
        for (int i = 0; i < 16; i++)
            one_op(p);
        more = MPI_Wtime() - start < secs;
        MPI_Bcast(&more, 1, MPI_INT, 0, p->comm);
    }
}

/* The median over p->reps of the slowest rank's time per op, on rank 0. Each rank
 * keeps its own repetitions and one reduction takes their maxima at the end, as
 * fabriclab's runner reduces a round of samples at once: no message between two
 * repetitions but the barrier. */
static double measure(const point *p)
{
    const int reps = p->reps;
    double *mine = malloc(sizeof(double) * (size_t)(reps + 1)), *t = malloc(sizeof(double) * (size_t)(reps + 1));
    for (int k = 0; k <= reps; k++) {
        double sum = 0;
        for (int i = 0; i < p->iters; i++) {
            MPI_Barrier(p->comm);
            double t0 = MPI_Wtime();
            one_op(p);
            sum += MPI_Wtime() - t0;
        }
        mine[k] = sum / p->iters;
    }
    MPI_Reduce(mine, t, reps + 1, MPI_DOUBLE, MPI_MAX, 0, p->comm);
    qsort(t + 1, (size_t)reps, sizeof *t, by_value); /* the first repetition is a warm-up */
    const double med = t[1 + reps / 2];
    free(mine), free(t);
    return med;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_loop OP:SIZE:ITERS:REPS [OP:SIZE:ITERS:REPS ...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int a = 1; a < argc; a++) {
        point p;
        setup(&p, argv[a], rank, n);
        warm(&p, a == 1 ? RUN_WARMUP_S : POINT_WARMUP_S);
        const double med = measure(&p);
        if (rank == 0)
            printf("{\"op\":\"%s\",\"size\":%d,\"ranks\":%d,\"time_s\":%.9g}\n", p.op,
                   p.count * (int)sizeof(float), n, med);
        free(p.s), free(p.r), free(p.counts);
        MPI_Comm_free(&p.comm);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
