/* Reference bidirectional one-sided bandwidth between ranks 0 and 1: the
 * smallest MPI program that runs deposit.put_bibw's loop (OSU osu_put_bibw
 * style, passive target). Each rank holds MPI_Win_lock_all for the whole run;
 * per window it puts WINDOW messages of SIZE bytes into the peer's window,
 * all to the same place, from one source buffer in its own window, then
 * MPI_Win_flush. Per size the window count is chosen so the timed loop lasts
 * about SECONDS; the time is the slower rank's. Rank 0 prints one JSON line
 * per size: size, seconds per op (one put each way) and MB/s (10^6 bytes/s,
 * both directions counted).
 *
 * Usage: mpiexec -n 2 put_bibw_ref [sizes] [seconds]
 *   sizes: comma-separated bytes with optional K/M suffix (default 8 B..4 MiB)
 *   seconds: timed seconds per size (default 0.3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 64
#define DEFAULT_SIZES "8,32,128,512,2K,8K,32K,128K,512K,2M,4M"

static int parse_sizes(const char *s, long *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0)
            return -1;
        if (*end == 'K' || *end == 'k')
            v <<= 10, end++;
        else if (*end == 'M' || *end == 'm')
            v <<= 20, end++;
        out[n++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return n;
}

/* Window layout: [0, size) lands the peer's puts, [size, 2 size) is the source. */
static void windows(int rank, long n, int size, char *base, MPI_Win win)
{
    int peer = 1 - rank;
    if (rank > 1)
        return;
    for (long w = 0; w < n; w++) {
        for (int j = 0; j < WINDOW; j++)
            MPI_Put(base + size, size, MPI_BYTE, peer, 0, size, MPI_BYTE, win);
        MPI_Win_flush(peer, win);
    }
}

static double timed(int rank, long n, int size, char *base, MPI_Win win)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    windows(rank, n, size, base, win);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    int rank, nranks;
    long sizes[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int nsizes = parse_sizes(argc > 1 ? argv[1] : DEFAULT_SIZES, sizes, 64);
    double seconds = argc > 2 ? atof(argv[2]) : 0.3;
    if (nranks < 2 || nsizes < 1 || seconds <= 0) {
        if (rank == 0)
            fprintf(stderr, "put_bibw_ref: needs 2 ranks, sizes and positive seconds\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < nsizes; i++) {
        int size = (int)sizes[i];
        char *base = NULL;
        MPI_Win win;
        MPI_Win_allocate(2 * (MPI_Aint)size + 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        /* warm-up and calibration: double the window count until a run
         * lasts 20 ms, then scale to the timed duration */
        long n = 1;
        double t;
        while ((t = timed(rank, n, size, base, win)) < 0.02)
            n *= 2;
        n = (long)(seconds / (t / (double)n)) + 1;
        t = timed(rank, n, size, base, win);
        if (rank == 0) {
            double op = t / ((double)n * WINDOW);
            printf("{\"size\":%d,\"windows\":%ld,\"window\":%d,\"seconds_per_op\":%.9e,"
                   "\"mb_per_s\":%.6f}\n", size, n, WINDOW, op, 2.0 * size / op / 1e6);
            fflush(stdout);
        }
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    MPI_Finalize();
    return 0;
}
