/* Reference for app.matmul on one rank: the same cblas_dgemm on n x n
 * doubles, called directly. Built with the mpicc, flags and BLAS that
 * fabriclab's core uses, launched as fabriclab launches its core; MPI is
 * initialised only so that the launch is the same, and nothing of it runs
 * between the clock readings. Prints one JSON line: every repetition's
 * seconds, their median and GFLOP/s (2 n^3 flops per multiply).
 *
 * Usage: mpiexec -n 1 dgemm_ref N REPS */
#include <cblas.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* OpenBLAS's calls, when the BLAS is OpenBLAS (as in app_matmul.c). */
extern void openblas_set_num_threads(int) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Page-aligned and touched, as the core allocates; values in [-0.5, 0.5). */
static double *matrix(size_t n, uint64_t seed)
{
    double *m = NULL;
    if (posix_memalign((void **)&m, 4096, n * n * sizeof *m) != 0) {
        fprintf(stderr, "dgemm_ref: cannot allocate %zu bytes\n", n * n * sizeof *m);
        exit(2);
    }
    for (size_t i = 0; i < n * n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        m[i] = (double)(seed >> 11) * 0x1.0p-53 - 0.5;
    }
    return m;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double multiply(int n, const double *A, const double *B, double *C)
{
    double t0 = now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
    return now() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 2 ? atoi(argv[1]) : 0, reps = argc > 2 ? atoi(argv[2]) : 0;
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: dgemm_ref N REPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (openblas_set_num_threads)
        openblas_set_num_threads(1); /* one thread per rank, as the core */
    double *A = matrix((size_t)n, 1), *B = matrix((size_t)n, 2), *C = matrix((size_t)n, 3);
    double *t = malloc(sizeof *t * (size_t)reps);
    multiply(n, A, B, C); /* warm-up: the BLAS's buffers and the pages of C */
    for (int r = 0; r < reps; r++)
        t[r] = multiply(n, A, B, C);
    printf("{\"n\":%d,\"reps\":%d,\"times_s\":[", n, reps);
    for (int r = 0; r < reps; r++)
        printf("%s%.9g", r ? "," : "", t[r]);
    qsort(t, (size_t)reps, sizeof *t, by_value);
    double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    printf("],\"median_s\":%.9g,\"gflops\":%.6g,\"blas\":\"%s\"}\n", med,
           2.0 * n * (double)n * n / med / 1e9, openblas_get_config ? openblas_get_config() : "cblas");
    free(t);
    free(A);
    free(B);
    free(C);
    MPI_Finalize();
    return 0;
}
