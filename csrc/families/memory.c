/* Family "memory": copy throughput of one process (rank 0; other ranks idle),
 * the reference level every buffering mode is bounded by. Strided variants
 * follow ECT, the extended copy transfer (Kurmann and Stricker, "A Comparison
 * of two Gigabit SAN/LAN technologies"; Stricker and Gross, HPCA 1997): a
 * load and a store stream at once, one contiguous, the other visiting every
 * s-th word in s passes, so that each of the n words is touched exactly once.
 * size = bytes copied per op (working set 2 x size). */
#include "../fl.h"

#include <stdio.h>
#include <string.h>

/* The word loops must stay loops: GCC and clang would otherwise turn the
 * contiguous copy into a memcpy call. They are compiled for AVX2 too, picked
 * at load time like glibc's own memcpy, so that the same source is not held
 * to SSE2 when the library copy is not. */
#define NO_IDIOM
#define CLONES
#if defined(__has_attribute)
#if __has_attribute(no_builtin) /* clang */
#undef NO_IDIOM
#define NO_IDIOM __attribute__((noinline, no_builtin("memcpy")))
#elif __has_attribute(optimize) /* GCC */
#undef NO_IDIOM
#define NO_IDIOM __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
#endif
#if __has_attribute(target_clones) && defined(__x86_64__) && defined(__linux__)
#undef CLONES
#define CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif

/* Tells the compiler the copy's result is used, so repeated copies stay. */
#define KEEP(p) __asm__ __volatile__("" : : "r"(p) : "memory")

typedef struct {
    int active;          /* rank 0 */
    uint64_t *src, *dst;
    size_t bytes, n, s;  /* bytes to copy, words, stride in words */
    uint64_t seed;
} mem_state;

NO_IDIOM CLONES static void copy_words(uint64_t *restrict d, const uint64_t *restrict s,
                                       size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}

NO_IDIOM CLONES static void copy_strided_store(uint64_t *restrict d,
                                               const uint64_t *restrict s, size_t n,
                                               size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            d[i] = *s++;
}

NO_IDIOM CLONES static void copy_strided_load(uint64_t *restrict d,
                                              const uint64_t *restrict s, size_t n,
                                              size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            *d++ = s[i];
}

static int setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                 fl_shape *shape)
{
    (void)bs;
    mem_state *m = fl_alloc(sizeof *m);
    m->active = ctx->rank == 0;
    m->bytes = (size_t)pt->size;
    m->n = m->bytes / 8;
    m->s = (size_t)pt->stride;
    m->seed = (uint64_t)pt->size * 31 + (uint64_t)pt->stride;
    if (m->active) {
        m->src = fl_alloc(m->bytes);
        m->dst = fl_alloc(m->bytes);
        fl_fill(m->src, m->bytes, m->seed);
    }
    *state = m;
    shape->bytes_per_op = (int64_t)(m->n * 8);
    shape->timed = m->active;
    return FL_OK;
}

static int memcpy_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    int st = setup(ctx, bs, pt, state, shape);
    shape->bytes_per_op = pt->size; /* memcpy copies the odd tail bytes too */
    return st;
}

static void teardown(const fl_ctx *ctx, void *state)
{
    mem_state *m = state;
    (void)ctx;
    fl_free(m->src);
    fl_free(m->dst);
    fl_free(m);
}

static double memcpy_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    double t0 = fl_now();
    if (m->active)
        for (int64_t i = 0; i < iters; i++) {
            memcpy(m->dst, m->src, m->bytes);
            KEEP(m->dst);
        }
    return fl_now() - t0;
}

static double copy_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    double t0 = fl_now();
    if (m->active)
        for (int64_t i = 0; i < iters; i++) {
            copy_words(m->dst, m->src, m->n);
            KEEP(m->dst);
        }
    return fl_now() - t0;
}

static double strided_store_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    double t0 = fl_now();
    if (m->active)
        for (int64_t i = 0; i < iters; i++) {
            copy_strided_store(m->dst, m->src, m->n, m->s);
            KEEP(m->dst);
        }
    return fl_now() - t0;
}

static double strided_load_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    double t0 = fl_now();
    if (m->active)
        for (int64_t i = 0; i < iters; i++) {
            copy_strided_load(m->dst, m->src, m->n, m->s);
            KEEP(m->dst);
        }
    return fl_now() - t0;
}

/* Where word i of the strided side goes on the contiguous side. With
 * n = a*s + b, passes p < b hold a+1 words and the others a, so pass p
 * starts at p*a + min(p, b). A closed form, independent of the loops. */
static size_t contiguous_index(size_t i, size_t n, size_t s)
{
    size_t a = n / s, b = n % s, p = i % s;
    return p * a + (p < b ? p : b) + i / s;
}

static int64_t word_diff(uint64_t x, uint64_t y)
{
    int64_t d = 0;
    for (; x != y; x >>= 8, y >>= 8)
        d += (x & 0xff) != (y & 0xff);
    return d;
}

/* One copy of patterned data through the measured loop, then every byte of
 * the destination is compared with what the traversal must produce. */
static int64_t verify(const fl_ctx *ctx, void *state, int64_t *checked,
                      double (*measure)(const fl_ctx *, void *, int64_t), int strided_store)
{
    mem_state *m = state;
    int64_t bad = 0;
    if (!m->active)
        return 0;
    memset(m->dst, 0, m->bytes);
    measure(ctx, state, 1);
    for (size_t i = 0; i < m->n; i++) {
        size_t k = contiguous_index(i, m->n, m->s);
        bad += strided_store ? word_diff(m->dst[i], m->src[k]) : word_diff(m->dst[k], m->src[i]);
    }
    *checked += (int64_t)(m->n * 8);
    return bad;
}

static int64_t memcpy_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    mem_state *m = state;
    if (!m->active)
        return 0;
    memset(m->dst, 0, m->bytes);
    memcpy_measure(ctx, state, 1);
    *checked += (int64_t)m->bytes;
    return fl_check(m->dst, m->bytes, m->seed);
}

static int64_t copy_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return verify(ctx, state, checked, copy_measure, 1);
}

static int64_t strided_store_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return verify(ctx, state, checked, strided_store_measure, 1);
}

static int64_t strided_load_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return verify(ctx, state, checked, strided_load_measure, 0);
}

const fl_kernel fl_memory_kernels[] = {
    {.name = "memory.memcpy", .setup = memcpy_setup, .measure = memcpy_measure,
     .verify = memcpy_verify, .teardown = teardown},
    {.name = "memory.copy", .setup = setup, .measure = copy_measure, .verify = copy_verify,
     .teardown = teardown},
    {.name = "memory.strided_store", .setup = setup, .measure = strided_store_measure,
     .verify = strided_store_verify, .teardown = teardown},
    {.name = "memory.strided_load", .setup = setup, .measure = strided_load_measure,
     .verify = strided_load_verify, .teardown = teardown},
    {.name = NULL},
};
