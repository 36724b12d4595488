/* Reference one-way streaming bandwidth from rank 0 to rank 1: the smallest
 * MPI program that runs message.stream's loop (OSU osu_bw style). Per window
 * the receiver posts WINDOW receives and the sender WINDOW sends, each side
 * waits for all, and the receiver returns a zero-byte ack. One buffer per
 * side, reused by every message. Per size the window count is chosen so the
 * timed loop lasts about SECONDS; the time is the sender's, from the first
 * send to the last ack. Rank 0 prints one JSON line per size: size, seconds
 * per message and MB/s (10^6 bytes/s) from the whole loop, and the same from
 * the median window (each window is timed too, as fabriclab times a sample
 * of one window), which a loaded host disturbs far less than the mean.
 *
 * Usage: mpiexec -n 2 stream_ref [sizes] [seconds]
 *   sizes: comma-separated bytes with optional K/M suffix (default 64 KiB..4 MiB)
 *   seconds: timed seconds per size (default 0.3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define DEFAULT_SIZES "64K,128K,256K,512K,1M,2M,4M"
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

static void window(int rank, int size, char *buf)
{
    MPI_Request req[WINDOW];
    char ack = 0;
    if (rank == 0) {
        for (int j = 0; j < WINDOW; j++)
            MPI_Isend(buf, size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        for (int j = 0; j < WINDOW; j++)
            MPI_Irecv(buf, size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
    }
}

/* Seconds for n windows on rank 0 (the sender), on every rank; w[i] gets
 * window i's seconds on rank 0. */
static double timed(int rank, long n, int size, char *buf, double *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), t = t0;
    for (long i = 0; i < n; i++) {
        window(rank, size, buf);
        double now = MPI_Wtime();
        w[i] = now - t;
        t = now;
    }
    t -= t0;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
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
            fprintf(stderr, "stream_ref: needs 2 ranks, sizes and positive seconds\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < nsizes; i++) {
        int size = (int)sizes[i];
        char *buf = buffer(size);
        /* warm-up and calibration: double the window count until a run
         * lasts 20 ms, then scale to the timed duration */
        long n = 1;
        double t, *w = times(n);
        while ((t = timed(rank, n, size, buf, w)) < 0.02) {
            n *= 2;
            free(w);
            w = times(n);
        }
        n = (long)(seconds / (t / (double)n)) + 1;
        free(w);
        w = times(n);
        t = timed(rank, n, size, buf, w);
        if (rank == 0) {
            double op = t / ((double)n * WINDOW), med = median(w, n) / WINDOW;
            printf("{\"size\":%d,\"windows\":%ld,\"window\":%d,\"seconds_per_op\":%.9e,"
                   "\"mb_per_s\":%.6f,\"median_window_seconds_per_op\":%.9e,"
                   "\"median_window_mb_per_s\":%.6f}\n",
                   size, n, WINDOW, op, size / op / 1e6, med, size / med / 1e6);
            fflush(stdout);
        }
        free(w);
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
