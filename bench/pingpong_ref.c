/* Reference 0-byte ping-pong between ranks 0 and 1: the smallest MPI program
 * that measures what message.pingpong measures. Rank 0 prints the one-way
 * latency, total time / (2 x round trips), in seconds.
 *
 * Usage: mpiexec -n 2 pingpong_ref [round_trips]   (default 100000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define WARMUP 10000

static void round_trips(int rank, long n, char *buf)
{
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    char buf[1];
    long n = argc > 1 ? atol(argv[1]) : 100000;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "pingpong_ref: needs 2 ranks and a positive count\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    round_trips(rank, WARMUP, buf);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    round_trips(rank, n, buf);
    double t = MPI_Wtime() - t0;

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        for (int i = 0; i < len; i++) /* first line only */
            if (lib[i] == '\n' || lib[i] == '\r') {
                lib[i] = '\0';
                break;
            }
        printf("round_trips %ld\n", n);
        printf("total_s %.9e\n", t);
        printf("latency_s %.9e\n", t / (2.0 * (double)n));
        printf("library %s\n", lib);
    }
    MPI_Finalize();
    return 0;
}
