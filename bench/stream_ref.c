/* Reference one-way streaming bandwidth from rank 0 to rank 1: the smallest
 * MPI program that runs message.stream's loop (OSU osu_bw style). Per window
 * the receiver posts WINDOW receives and the sender WINDOW sends, each side
 * waits for all, and the receiver returns a zero-byte ack. One buffer per
 * side, reused by every message. Per size the window count is chosen so the
 * timed loop lasts about SECONDS; the time is the sender's, from the first
 * send to the last ack. Rank 0 prints one JSON line per size: size, seconds
 * per message and MB/s (10^6 bytes/s).
 *
 * Usage: mpiexec -n 2 stream_ref [sizes] [seconds]
 *   sizes: comma-separated bytes with optional K/M suffix (default 64 KiB..4 MiB)
 *   seconds: timed seconds per size (default 0.3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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

static void windows(int rank, long n, int size, char *buf)
{
    MPI_Request req[WINDOW];
    char ack = 0;
    for (long w = 0; w < n; w++) {
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
}

/* Seconds for n windows on rank 0 (the sender), on every rank. */
static double timed(int rank, long n, int size, char *buf)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    windows(rank, n, size, buf);
    double t = MPI_Wtime() - t0;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
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
            fprintf(stderr, "stream_ref: needs 2 ranks, sizes and positive seconds\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < nsizes; i++) {
        int size = (int)sizes[i];
        char *buf = calloc(1, (size_t)size + 1);
        if (!buf)
            MPI_Abort(MPI_COMM_WORLD, 1);
        /* warm-up and calibration: double the window count until a run
         * lasts 20 ms, then scale to the timed duration */
        long n = 1;
        double t;
        while ((t = timed(rank, n, size, buf)) < 0.02)
            n *= 2;
        n = (long)(seconds / (t / (double)n)) + 1;
        t = timed(rank, n, size, buf);
        if (rank == 0) {
            double op = t / ((double)n * WINDOW);
            printf("{\"size\":%d,\"windows\":%ld,\"window\":%d,\"seconds_per_op\":%.9e,"
                   "\"mb_per_s\":%.6f}\n", size, n, WINDOW, op, size / op / 1e6);
            fflush(stdout);
        }
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
