/* Reference collective loop: the smallest program that measures what
 * fabriclab's coll level measures with its defaults (blocking form, float
 * elements, MPI_SUM, root 0, not in place, a barrier before each op outside
 * its time), as IMB and OSU time a collective.
 *   mpiexec -n N coll_loop OP SIZE ITERS [REPS]
 * OP: allreduce | bcast | allgather | reduce_scatter. SIZE is bytes of the
 * call's count argument, as fabriclab's: the vector of allreduce, bcast and
 * reduce_scatter (split in balanced blocks), the block of allgather.
 * Each repetition runs ITERS ops and sums each op's time; the repetition's
 * time per op is the slowest rank's. Rank 0 prints one JSON line with the
 * median over REPS (default 7) repetitions, after 0.1 s of untimed ops and an
 * untimed repetition. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define WARMUP_S 0.1

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

static void one_op(const char *op, float *s, float *r, int count, int *counts)
{
    if (strcmp(op, "allreduce") == 0)
        MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (strcmp(op, "bcast") == 0)
        MPI_Bcast(r, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
    else if (strcmp(op, "allgather") == 0)
        MPI_Allgather(s, count, MPI_FLOAT, r, count, MPI_FLOAT, MPI_COMM_WORLD);
    else
        MPI_Reduce_scatter(s, r, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const double start = MPI_Wtime();
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_loop OP SIZE ITERS [REPS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *op = argv[1];
    const int count = atoi(argv[2]) / (int)sizeof(float), iters = atoi(argv[3]);
    const int reps = argc > 4 ? atoi(argv[4]) : 7;
    int *counts = malloc(sizeof(int) * n);
    for (int q = 0; q < n; q++)
        counts[q] = (int)((long long)count * (q + 1) / n - (long long)count * q / n);
    /* fabriclab's buffers (coll_ops.c coll_sizes): as many elements, page-aligned and
     * written (fl_alloc). Their sizes matter beyond their bytes: with both buffers of
     * reduce_scatter at 128 KiB + 4, MPICH's 64 KiB reduce_scatter took 2.7x as long
     * here as with fabriclab's 64 + 32 KiB (where the buffers fall in the cache). */
    size_t sn = (size_t)count, rn = (size_t)count;
    if (strcmp(op, "bcast") == 0)
        sn = 0;
    else if (strcmp(op, "allgather") == 0)
        rn = (size_t)count * n;
    else if (strcmp(op, "reduce_scatter") == 0)
        rn = (size_t)counts[rank];
    float *s = page(sn), *r = page(rn);
    for (size_t k = 0; k < sn; k++)
        s[k] = (float)((7 * rank + 3 * (long)k) % 5);
    if (strcmp(op, "bcast") == 0) /* the root broadcasts its receive buffer, as fabriclab's does */
        for (size_t k = 0; k < rn; k++)
            r[k] = (float)((7 * rank + 3 * (long)k) % 5);
    double *t = malloc(sizeof(double) * (reps + 1));
    /* warm up for WARMUP_S, as fabriclab's run does before its first point: the
     * ranks' polling and the CPU's clock settle (rank 0 decides when to stop) */
    for (int more = 1; more;) {
        for (int i = 0; i < 16; i++) /* the same number on every rank */
            one_op(op, s, r, count, counts);
        more = MPI_Wtime() - start < WARMUP_S;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    for (int k = 0; k <= reps; k++) {
        double sum = 0;
        for (int i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            one_op(op, s, r, count, counts);
            sum += MPI_Wtime() - t0;
        }
        double mine = sum / iters, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (k > 0)
            t[k - 1] = slowest;
    }
    if (rank == 0) {
        qsort(t, (size_t)reps, sizeof *t, by_value);
        printf("{\"op\":\"%s\",\"size\":%s,\"ranks\":%d,\"time_s\":%.9g}\n", op, argv[2], n, t[reps / 2]);
    }
    free(s), free(r), free(counts), free(t);
    MPI_Finalize();
    return 0;
}
