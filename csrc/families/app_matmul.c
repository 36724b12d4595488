/* Family "app": app.matmul, seed 003's dense matrix multiply. C = A B of
 * n x n doubles by row blocks (app_lo/app_count): rank r holds rows
 * lo(r) .. lo(r+1)-1 of A, B and C. One op is
 *
 * - gather: MPI_Allgatherv of B's row blocks, so every rank holds all of B
 *   (it receives the n - rows(r) rows it lacks, n doubles each);
 * - multiply: this rank's rows of C = its rows of A times B, by cblas_dgemm
 *   when the core was built with a BLAS (FL_HAVE_BLAS, measure/libraries.py)
 *   and a cache-blocked loop otherwise.
 *
 * The row distribution needs no square rank count and divides any n >= N;
 * it moves n^2 (N-1) doubles per op in all, against SUMMA's 2 n^2 sqrt(N)
 * (van de Geijn and Watts, "SUMMA: scalable universal matrix multiplication
 * algorithm", 1997), so it stops scaling earlier: that is the fabric's part
 * a user sees in the speedup. Weak scaling keeps each rank's share of the
 * 2 n^3 flops: n(N) = round(n cbrt(N)), in integers (suite/apps.py,
 * matmul_side). */
#include "app.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef FL_HAVE_BLAS
#include <cblas.h>
#endif

/* The loop's tiles: a KB x JB tile of B (256 KiB) stays in L2 while every
 * row of A's block sweeps it; the innermost j loop is unit stride in B and
 * C, so the compiler vectorises it (i-k-j order). */
enum { TILE_K = 128, TILE_J = 256 };
/* The largest side whose weak-scaling rounding stays exact in __int128. */
#define MATMUL_MAX_SIDE (INT64_C(1) << 20)

typedef struct {
    app_common a;        /* first member: app_phases reads it */
    int64_t n;           /* the matrix side of this point */
    int64_t lo, rows;    /* this rank's block */
    int blas;            /* multiply by cblas_dgemm, else the blocked loop */
    double *A, *B, *C;   /* A, C: rows x n; B: n x n, this rank's block at row lo */
    int *counts, *displs; /* the gather, in rows */
    MPI_Datatype row;    /* n doubles: row counts keep every count an int */
} mm_state;

/* ---- what the core was built with ---- */

/* OpenBLAS's own calls, present only when the BLAS linked is OpenBLAS (weak:
 * NULL otherwise, so the core links with any CBLAS). */
extern void openblas_set_num_threads(int) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));

#ifndef FL_BLAS_NAME
#define FL_BLAS_NAME "cblas"
#endif

/* The BLAS as the library itself reports it, else as the build found it. */
static const char *blas_name(void)
{
#ifdef FL_HAVE_BLAS
    return openblas_get_config ? openblas_get_config() : FL_BLAS_NAME;
#else
    return "none";
#endif
}

/* One BLAS thread per rank: the launcher binds each rank to a core, and
 * Debian's OpenBLAS starts a thread per core in every process; N ranks of
 * N threads each would share the cores N-fold and the speedup against one
 * rank would count threads, not ranks. */
static void one_blas_thread(void)
{
    if (openblas_set_num_threads)
        openblas_set_num_threads(1);
}

/* ---- the problem ---- */

static __int128 cube(__int128 x)
{
    return x * x * x;
}

/* n(N) for weak scaling: the integer m nearest n cbrt(N), i.e. with
 * (2m-1)^3 <= 8 n^3 N < (2m+1)^3 (never a tie: the left and right sides are
 * odd, the middle even). The same arithmetic as apps.matmul_side. */
static int64_t weak_side(int64_t n, int nranks)
{
    const __int128 target = 8 * cube(n) * nranks;
    int64_t m = (int64_t)(n * cbrt((double)nranks) + 0.5);
    while (cube(2 * m + 1) <= target)
        m++;
    while (m > 1 && cube(2 * m - 1) > target)
        m--;
    return m;
}

/* Random-looking but fixed values in [-0.5, 0.5) for element (i, j) of a
 * matrix (splitmix64's finaliser, Steele, Lea and Flood, OOPSLA 2014): any
 * rank count gives the same matrices, and no value is denormal. */
static double noise(uint64_t i, uint64_t j, uint64_t salt)
{
    uint64_t z = (i << 32 ^ j) + salt * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 - 0.5;
}

/* This rank's rows of A and of B, either noise or verify's integer matrices
 * A[i][k] = i - k, B[k][j] = k + j (global indices). */
static void fill(mm_state *s, int exact)
{
    const int64_t n = s->n;
    for (int64_t r = 0; r < s->rows; r++) {
        const int64_t i = s->lo + r;
        double *a = s->A + r * n, *b = s->B + i * n;
        for (int64_t j = 0; j < n; j++) {
            a[j] = exact ? (double)(i - j) : noise((uint64_t)i, (uint64_t)j, 1);
            b[j] = exact ? (double)(i + j) : noise((uint64_t)i, (uint64_t)j, 2);
        }
    }
}

/* ---- the local multiply ---- */

static void multiply_loop(int64_t rows, int64_t n, const double *restrict A,
                          const double *restrict B, double *restrict C)
{
    memset(C, 0, sizeof *C * (size_t)rows * (size_t)n);
    for (int64_t k0 = 0; k0 < n; k0 += TILE_K) {
        const int64_t k1 = k0 + TILE_K < n ? k0 + TILE_K : n;
        for (int64_t j0 = 0; j0 < n; j0 += TILE_J) {
            const int64_t j1 = j0 + TILE_J < n ? j0 + TILE_J : n;
            for (int64_t i = 0; i < rows; i++) {
                double *restrict c = C + i * n;
                for (int64_t k = k0; k < k1; k++) {
                    const double a = A[i * n + k];
                    const double *restrict b = B + k * n;
                    for (int64_t j = j0; j < j1; j++)
                        c[j] += a * b[j];
                }
            }
        }
    }
}

static void multiply(const mm_state *s)
{
#ifdef FL_HAVE_BLAS
    if (s->blas) {
        const int n = (int)s->n;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->rows, n, n, 1.0, s->A, n,
                    s->B, n, 0.0, s->C, n);
        return;
    }
#endif
    multiply_loop(s->rows, s->n, s->A, s->B, s->C);
}

/* ---- setup ---- */

/* Whether this point multiplies by BLAS: FL_OK and *blas, or FL_SKIP. */
static int choose_local(const fl_ctx *ctx, fl_shape *shape, int *blas)
{
#ifdef FL_HAVE_BLAS
    (void)shape;
    *blas = !fl_param_is(ctx->opts, "local", "loop");
    return FL_OK;
#else
    *blas = 0;
    if (!fl_param_is(ctx->opts, "local", "blas"))
        return FL_OK;
    snprintf(shape->note, FL_NOTE_LEN,
             "local=blas: this core was built without a BLAS (`fabriclab doctor` says why); "
             "local=auto or loop multiplies by the blocked loop");
    return FL_SKIP;
#endif
}

/* The side of this point: SIZE (strong) or SIZE cbrt(N) (weak); 0 and a
 * note when it cannot be divided or counted. */
static int64_t side(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape)
{
    const int nranks = pt->layout->active;
    if (pt->size < 1 || pt->size > MATMUL_MAX_SIDE) {
        snprintf(shape->note, FL_NOTE_LEN, "matrix side %lld outside 1..%lld", (long long)pt->size,
                 (long long)MATMUL_MAX_SIDE);
        return 0;
    }
    int64_t n = fl_param_is(ctx->opts, "scale", "weak") ? weak_side(pt->size, nranks) : pt->size;
    if (n < nranks) {
        snprintf(shape->note, FL_NOTE_LEN, "matrix side %lld over %d ranks: fewer rows than ranks",
                 (long long)n, nranks);
        return 0;
    }
    return app_int_count(n, shape, "matrix side") ? 0 : n;
}

/* Counts and displacements of the gather, in rows of n doubles. */
static void gather_plan(mm_state *s)
{
    const int N = s->a.n;
    s->counts = fl_alloc(sizeof *s->counts * (size_t)N);
    s->displs = fl_alloc(sizeof *s->displs * (size_t)N);
    for (int q = 0; q < N; q++) {
        s->counts[q] = (int)app_count(s->n, q, N);
        s->displs[q] = (int)app_lo(s->n, q, N);
    }
    MPI_Type_contiguous((int)s->n, MPI_DOUBLE, &s->row);
    MPI_Type_commit(&s->row);
}

/* Bytes this rank sends to and receives from the others per op, and the info. */
static void describe(const mm_state *s, fl_shape *shape)
{
    const int64_t n = s->n, N = s->a.n, row = n * 8;
    shape->sent_bytes = s->rows * row * (N - 1);
    shape->recv_bytes = (n - s->rows) * row;
    shape->messages = N - 1;
    shape->legs_per_op = 1;
    shape->buffers = 1;
    snprintf(shape->info, FL_INFO_LEN,
             "{\"n\":%lld,\"flops\":%lld,\"local\":\"%s\",\"dist\":\"rows\",\"blas\":\"%s\"}",
             (long long)n, (long long)(2 * n * n * n), s->blas ? "blas" : "loop", blas_name());
}

static int matmul_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    mm_state *s = fl_alloc(sizeof *s);
    (void)bs;
    *state = s;
    shape->phase_names = "gather,multiply";
    int st = app_begin(ctx, pt, shape, &s->a);
    if (st == FL_OK)
        st = choose_local(ctx, shape, &s->blas);
    if (st == FL_OK && !(s->n = side(ctx, pt, shape)))
        st = FL_ERROR;
    if (st != FL_OK || s->a.comm == MPI_COMM_NULL) { /* idle ranks hold nothing */
        if (st != FL_OK) {
            app_end(&s->a);
            fl_free(s);
            *state = NULL;
        }
        return st;
    }
    one_blas_thread();
    s->lo = app_lo(s->n, s->a.rank, s->a.n);
    s->rows = app_count(s->n, s->a.rank, s->a.n);
    s->A = fl_alloc(sizeof(double) * (size_t)(s->rows * s->n));
    s->C = fl_alloc(sizeof(double) * (size_t)(s->rows * s->n));
    s->B = fl_alloc(sizeof(double) * (size_t)s->n * (size_t)s->n);
    gather_plan(s);
    fill(s, 0);
    describe(s, shape);
    return FL_OK;
}

static void matmul_teardown(const fl_ctx *ctx, void *state)
{
    mm_state *s = state;
    (void)ctx;
    if (s->a.comm != MPI_COMM_NULL)
        MPI_Type_free(&s->row);
    app_end(&s->a);
    fl_free(s->A);
    fl_free(s->B);
    fl_free(s->C);
    fl_free(s->counts);
    fl_free(s->displs);
    fl_free(s);
}

/* ---- measure and verify ---- */

static double matmul_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mm_state *s = state;
    (void)ctx;
    if (s->a.comm == MPI_COMM_NULL)
        return 0.0;
    double t = fl_now(), gather = 0, mult = 0;
    for (int64_t i = 0; i < iters; i++) {
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s->B, s->counts, s->displs, s->row,
                       s->a.comm);
        gather += app_tick(&t);
        multiply(s);
        mult += app_tick(&t);
    }
    s->a.phase[0] += gather;
    s->a.phase[1] += mult;
    return gather + mult;
}

/* C[i][j] of the verify matrices: sum_k (i - k)(k + j)
 * = n i j + (i - j) n(n-1)/2 - (n-1) n (2n-1)/6, exact in doubles while
 * every partial sum stays below 2^53 (n up to about 1.6e5). */
static double product(int64_t n, int64_t i, int64_t j)
{
    return (double)(n * i * j + (i - j) * (n * (n - 1) / 2) - (n - 1) * n * (2 * n - 1) / 6);
}

/* One op on the integer matrices; C's wrong elements, 8 bytes each. */
static int64_t matmul_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    mm_state *s = state;
    if (s->a.comm == MPI_COMM_NULL)
        return 0;
    fill(s, 1);
    matmul_measure(ctx, s, 1);
    int64_t wrong = 0;
    for (int64_t r = 0; r < s->rows; r++)
        for (int64_t j = 0; j < s->n; j++) {
            double d = s->C[r * s->n + j] - product(s->n, s->lo + r, j);
            wrong += d > 0.5 || d < -0.5;
        }
    *checked += s->rows * s->n * 8;
    return wrong * 8;
}

const fl_kernel fl_app_matmul_kernels[] = {
    {.name = "app.matmul",
     .setup = matmul_setup,
     .measure = matmul_measure,
     .verify = matmul_verify,
     .teardown = matmul_teardown,
     .phases = app_phases},
    {.name = NULL},
};
