/* Reference bidirectional bandwidth between ranks 0 and 1: the smallest MPI
 * program that runs message.bibw's loop (OSU osu_bibw style). Per window
 * both ranks post WINDOW receives from the other, then WINDOW sends to it,
 * wait for all, then exchange a zero-byte ack, so a window ends when both
 * directions are done. One send and one receive buffer per rank, reused by
 * every message. Per size the window count is chosen so the timed loop lasts
 * about SECONDS; the time is the slower rank's. Rank 0 prints one JSON line
 * per size: size, seconds per op (one message each way) and MB/s (10^6
 * bytes/s, both directions counted) from the whole loop, and the same from
 * the median window (each window is timed too, as fabriclab times a sample
 * of one window), which a loaded host disturbs far less than the mean.
 *
 * Usage: mpiexec -n 2 bibw_ref [sizes] [seconds]
 *   sizes: comma-separated bytes with optional K/M suffix (default 8 B..4 MiB)
 *   seconds: timed seconds per size (default 0.3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define DEFAULT_SIZES "8,32,128,512,2K,8K,32K,128K,512K,2M,4M"
#define TAG_DATA 1
#define TAG_ACK 2

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

static void window(int peer, int size, char *sbuf, char *rbuf)
{
    MPI_Request req[2 * WINDOW];
    char ack_in = 0, ack_out = 0;
    for (int j = 0; j < WINDOW; j++)
        MPI_Irecv(rbuf, size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[j]);
    for (int j = 0; j < WINDOW; j++)
        MPI_Isend(sbuf, size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[WINDOW + j]);
    MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
    MPI_Irecv(&ack_in, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&ack_out, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

/* Seconds for n windows, the slower of ranks 0 and 1, on every rank; w[i]
 * gets window i's seconds, the slower rank's. */
static double timed(int rank, long n, int size, char *sbuf, char *rbuf, double *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), t = t0;
    for (long i = 0; i < n; i++) {
        if (rank < 2)
            window(1 - rank, size, sbuf, rbuf);
        double now = MPI_Wtime();
        w[i] = now - t;
        t = now;
    }
    t -= t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, w, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, long n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Page-aligned and touched, as fabriclab's buffers (fl_alloc) and OSU's:
 * with MPICH 5.0 on one host a stream of 1-4 MiB messages from malloc's
 * buffer (16 bytes past a page boundary) ran about 20% faster than from a
 * page-aligned one, a matter of placement rather than of the loop. */
static char *buffer(int size)
{
    void *p = NULL;
    size_t n = (size_t)size + 4096;
    if (posix_memalign(&p, 4096, n) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(p, 0, n);
    return p;
}

static double *times(long n)
{
    double *w = malloc(sizeof *w * (size_t)n);
    if (!w)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return w;
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
            fprintf(stderr, "bibw_ref: needs 2 ranks, sizes and positive seconds\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < nsizes; i++) {
        int size = (int)sizes[i];
        char *sbuf = buffer(size), *rbuf = buffer(size);
        /* warm-up and calibration: double the window count until a run
         * lasts 20 ms, then scale to the timed duration */
        long n = 1;
        double t, *w = times(n);
        while ((t = timed(rank, n, size, sbuf, rbuf, w)) < 0.02) {
            n *= 2;
            free(w);
            w = times(n);
        }
        n = (long)(seconds / (t / (double)n)) + 1;
        free(w);
        w = times(n);
        t = timed(rank, n, size, sbuf, rbuf, w);
        if (rank == 0) {
            double op = t / ((double)n * WINDOW), med = median(w, n) / WINDOW;
            printf("{\"size\":%d,\"windows\":%ld,\"window\":%d,\"seconds_per_op\":%.9e,"
                   "\"mb_per_s\":%.6f,\"median_window_seconds_per_op\":%.9e,"
                   "\"median_window_mb_per_s\":%.6f}\n",
                   size, n, WINDOW, op, 2.0 * size / op / 1e6, med, 2.0 * size / med / 1e6);
            fflush(stdout);
        }
        free(w);
        free(sbuf);
        free(rbuf);
    }
    MPI_Finalize();
    return 0;
}
