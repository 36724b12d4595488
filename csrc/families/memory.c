/* Family "memory": copy throughput of one process (rank 0; other ranks idle),
 * the reference level every buffering mode is bounded by. Strided variants
 * follow ECT, the extended copy transfer (Kurmann and Stricker, "A Comparison
 * of two Gigabit SAN/LAN technologies"; Stricker and Gross, HPCA 1997): a
 * load and a store stream at once, one contiguous, the other visiting every
 * s-th word in s passes, so that each of the n words is touched exactly once.
 * The strided figures mean something only next to a contiguous one: reports
 * compare them with the best contiguous copy at the same size (memory.copy or
 * memory.memcpy, whichever is faster), so nothing here ranks them.
 * size = bytes copied per op; ops rotate through pt->buffers slots per side
 * (the cache state), so the working set is 2 x size x buffers.
 *
 * Stores (param stores=auto|nt|normal of the word loops): `normal` stores
 * through the caches, so each destination line is first read for ownership
 * and then evicted dirty; `nt` uses non-temporal stores (x86-64 movntdq /
 * vmovntdq, movnti for single words), which write whole lines through the
 * write-combining buffers without reading them: 2 bytes of memory traffic
 * per byte copied instead of 3 (Intel 64 and IA-32 Architectures
 * Optimization Reference Manual, on streaming stores; AMD Software
 * Optimization Guide for Family 19h Processors, on write-combining). `auto`
 * streams contiguous stores (want_nt says why not strided ones) from a
 * quarter of the last-level cache copied per op up, glibc's rule since
 * 2.38 (sysdeps/x86/dl-cacheinfo.h, non_temporal_threshold = shared / 4):
 * from there source and destination together exceed half the cache, and
 * the destination lines are evicted before they are written again. The
 * cache size is the kernel's (sysfs), as in the run header: under a
 * hypervisor CPUID, which glibc reads, may report a cache the guest lacks
 * (a 32 MiB L3 seen as 320 MiB), and glibc's memcpy then streams only from
 * its own __x86_shared_non_temporal_threshold (memmove-vec-unaligned-erms.S;
 * 3/4 of a thread's share of the cache up to glibc 2.37; tunable
 * glibc.cpu.x86_non_temporal_threshold). Both thresholds are recorded in
 * every point's info, so a record says which stores each copy used. */
#include "../fl.h"
#include "memory_nt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_NT 1
#else
#define HAVE_NT 0
#endif

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

/* Slots start on cache lines, so every op sees the same alignment and the
 * word loops only ever see aligned words; for sizes that are a multiple of
 * 64 bytes (every default size) this is fl_slot's layout exactly. */
#define SLOT_ALIGN 64

/* Once per run: where the word loops and where glibc's memcpy start to
 * stream, as bytes per op; -1 where there is no such rule. The json fields
 * hold them as info objects do: a number or null. */
typedef struct {
    mem_thresholds t;
    char nt_json[32], libc_nt_json[32];
} mem_run;

/* One point. */
typedef struct {
    int active;           /* rank 0 */
    int nt;               /* non-temporal stores */
    uint64_t *src, *dst;  /* regions of `buffers` slots of `pitch` bytes */
    size_t bytes, n, s;   /* bytes to copy, words, stride in words */
    size_t pitch, buffers, slot; /* slot: the one the next op copies */
    uint64_t seed;
} mem_state;

/* One op's copy into d from s: n words (bytes for memory.memcpy's
 * copy_bytes), the strided side visiting every st-th word (the contiguous
 * copies have no strided side and ignore st). */
typedef void slot_copy(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st);

NO_IDIOM CLONES static void copy_words(uint64_t *restrict d, const uint64_t *restrict s,
                                       size_t n, size_t st)
{
    (void)st;
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

#if HAVE_NT
/* Non-temporal word copies. Vector streaming stores need an aligned
 * destination: single words go with movnti until it is, the body moves
 * four vectors (64 or 128 bytes) per turn, the tail is single words again.
 * The sfence orders the write-combined lines before anything that follows,
 * as glibc's own large copy does. */
static void store_nt_word(uint64_t *d, uint64_t w)
{
    _mm_stream_si64((long long *)d, (long long)w);
}

NO_IDIOM static void copy_words_nt_sse2(uint64_t *restrict d, const uint64_t *restrict s,
                                        size_t n, size_t st)
{
    size_t i = 0;
    (void)st;
    for (; i < n && ((uintptr_t)(d + i) & 15); i++)
        store_nt_word(d + i, s[i]);
    for (; i + 8 <= n; i += 8) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 2));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 4));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 6));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 2), b);
        _mm_stream_si128((__m128i *)(d + i + 4), c);
        _mm_stream_si128((__m128i *)(d + i + 6), e);
    }
    for (; i < n; i++)
        store_nt_word(d + i, s[i]);
    _mm_sfence();
}

#if defined(__has_attribute) && __has_attribute(target)
#define HAVE_NT_AVX2 1
NO_IDIOM __attribute__((target("avx2"))) static void
copy_words_nt_avx2(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st)
{
    size_t i = 0;
    (void)st;
    for (; i < n && ((uintptr_t)(d + i) & 31); i++)
        store_nt_word(d + i, s[i]);
    for (; i + 16 <= n; i += 16) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 4));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 8));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 12));
        _mm256_stream_si256((__m256i *)(d + i), a);
        _mm256_stream_si256((__m256i *)(d + i + 4), b);
        _mm256_stream_si256((__m256i *)(d + i + 8), c);
        _mm256_stream_si256((__m256i *)(d + i + 12), e);
    }
    for (; i < n; i++)
        store_nt_word(d + i, s[i]);
    _mm_sfence();
}
#else
#define HAVE_NT_AVX2 0
#endif

/* The strided side is single words, so the non-temporal stores are movnti;
 * write-combining still fills whole lines when the stores are contiguous. */
NO_IDIOM CLONES static void copy_strided_store_nt(uint64_t *restrict d,
                                                  const uint64_t *restrict s, size_t n,
                                                  size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            store_nt_word(d + i, *s++);
    _mm_sfence();
}

NO_IDIOM CLONES static void copy_strided_load_nt(uint64_t *restrict d,
                                                 const uint64_t *restrict s, size_t n,
                                                 size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            store_nt_word(d++, s[i]);
    _mm_sfence();
}

/* The contiguous non-temporal copy for this CPU, chosen once. */
static slot_copy *copy_words_nt;

static void pick_copy_words_nt(void)
{
    copy_words_nt = copy_words_nt_sse2;
#if HAVE_NT_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        copy_words_nt = copy_words_nt_avx2;
#endif
}
#else
/* Without non-temporal stores want_nt never asks for them; the names still
 * resolve, so the measure loops read the same on every platform. */
#define copy_words_nt copy_words
#define copy_strided_store_nt copy_strided_store
#define copy_strided_load_nt copy_strided_load
#endif /* HAVE_NT */

static void put_json(char *buf, size_t len, int64_t v)
{
    if (v >= 0)
        snprintf(buf, len, "%lld", (long long)v);
    else
        snprintf(buf, len, "null");
}

static int mem_init(const fl_ctx *ctx, void **bench_state)
{
    mem_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("memory: out of memory");
    r->t.nt_threshold = r->t.libc_nt_threshold = -1;
    r->t.from = r->t.libc_from = "none";
#if HAVE_NT
    pick_copy_words_nt();
    if (ctx->rank == 0) /* the only rank that copies */
        fl_mem_thresholds(&r->t);
#else
    (void)ctx;
#endif
    put_json(r->nt_json, sizeof r->nt_json, r->t.nt_threshold);
    put_json(r->libc_nt_json, sizeof r->libc_nt_json, r->t.libc_nt_threshold);
    *bench_state = r;
    return FL_OK;
}

static void mem_fini(const fl_ctx *ctx, void *bench_state)
{
    (void)ctx;
    free(bench_state);
}

/* stores=auto|nt|normal -> 1 for non-temporal stores at this many bytes.
 * auto streams only stores that run along whole lines: stores at a stride
 * leave each write-combining buffer a partial line, which goes to memory
 * as a read-modify-write, slower than the cached store it replaces. */
static int want_nt(const fl_ctx *ctx, const mem_run *r, size_t bytes, int scattered)
{
    if (!HAVE_NT || fl_param_is(ctx->opts, "stores", "normal"))
        return 0;
    if (fl_param_is(ctx->opts, "stores", "nt"))
        return 1;
    return !scattered && r->t.nt_threshold >= 0 && (int64_t)bytes >= r->t.nt_threshold;
}

/* Both setups: rank 0 holds `buffers` slots per side, every source slot
 * with the same pattern (so any op's copy can be checked), and is the one
 * timed rank. */
static mem_state *new_state(const fl_ctx *ctx, const fl_point *pt, void **state, fl_shape *shape)
{
    mem_state *m = fl_alloc(sizeof *m);
    m->active = ctx->rank == 0;
    m->bytes = (size_t)pt->size;
    m->n = m->bytes / 8;
    m->s = (size_t)pt->stride;
    m->buffers = pt->buffers > 0 ? (size_t)pt->buffers : 1;
    m->pitch = (m->bytes + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
    m->seed = (uint64_t)pt->size * 31 + (uint64_t)pt->stride;
    if (m->active) {
        if (m->pitch && m->buffers > SIZE_MAX / m->pitch)
            fl_die("memory: %zu buffers of %zu bytes do not fit in memory", m->buffers, m->pitch);
        m->src = fl_alloc(m->pitch * m->buffers);
        m->dst = fl_alloc(m->pitch * m->buffers);
        for (size_t b = 0; b < m->buffers; b++)
            fl_fill((char *)m->src + b * m->pitch, m->bytes, m->seed);
    }
    shape->timed = m->active;
    *state = m;
    return m;
}

/* memory.memcpy: the C library's copy, odd tail bytes included. */
static int memcpy_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                        fl_shape *shape)
{
    const mem_run *r = bs;
    const mem_state *m = new_state(ctx, pt, state, shape);
    shape->bytes_per_op = pt->size;
    snprintf(shape->info, FL_INFO_LEN,
             "{\"nt_threshold\":%s,\"nt_threshold_from\":\"%s\",\"buffers\":%zu}",
             r->libc_nt_json, r->t.libc_from, m->buffers);
    return FL_OK;
}

/* The word loops (memory.copy and the ECT copies): whole words, and the
 * stores the `stores` param asks for; `scattered`: the stores go at the
 * point's stride. */
static int setup_words(const fl_ctx *ctx, const mem_run *r, const fl_point *pt, void **state,
                       fl_shape *shape, int scattered)
{
    mem_state *m = new_state(ctx, pt, state, shape);
    m->nt = want_nt(ctx, r, m->bytes, scattered && m->s > 1);
    shape->bytes_per_op = (int64_t)(m->n * 8);
    snprintf(shape->info, FL_INFO_LEN,
             "{\"stores\":\"%s\",\"nt_threshold\":%s,\"nt_threshold_from\":\"%s\","
             "\"memcpy_nt_threshold\":%s,\"buffers\":%zu%s}",
             m->nt ? "nt" : "normal", r->nt_json, r->t.from, r->libc_nt_json, m->buffers,
             HAVE_NT ? "" : ",\"note\":\"no non-temporal stores outside x86-64\"");
    return FL_OK;
}

static int words_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                       fl_shape *shape)
{
    return setup_words(ctx, bs, pt, state, shape, 0);
}

static int strided_store_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                               fl_shape *shape)
{
    return setup_words(ctx, bs, pt, state, shape, 1);
}

static void teardown(const fl_ctx *ctx, void *state)
{
    mem_state *m = state;
    (void)ctx;
    fl_free(m->src);
    fl_free(m->dst);
    fl_free(m);
}

/* The slots of the next op (op i copies slot i % buffers), and the step to
 * the one after. */
static inline uint64_t *dst_slot(const mem_state *m)
{
    return (uint64_t *)((char *)m->dst + m->slot * m->pitch);
}

static inline const uint64_t *src_slot(const mem_state *m)
{
    return (const uint64_t *)((const char *)m->src + m->slot * m->pitch);
}

static inline void next_slot(mem_state *m, const uint64_t *d)
{
    KEEP(d);
    if (++m->slot == m->buffers)
        m->slot = 0;
}

/* ---- the timed loops, one per benchmark ---- */

/* memory.memcpy's op: the C library's copy of n bytes, odd tail bytes
 * included. */
static void copy_bytes(uint64_t *restrict d, const uint64_t *restrict s, size_t n, size_t st)
{
    (void)st;
    memcpy(d, s, n);
}

/* Every benchmark's loop: op i copies slot i % buffers with `copy`, n words
 * (bytes for copy_bytes) at the point's stride. Inlined into each measure,
 * so memcpy's loop calls memcpy directly. */
static inline double time_copies(mem_state *m, int64_t iters, slot_copy *copy, size_t n)
{
    double t0 = fl_now();
    for (int64_t i = 0; m->active && i < iters; i++) {
        uint64_t *d = dst_slot(m);
        copy(d, src_slot(m), n, m->s);
        next_slot(m, d);
    }
    return fl_now() - t0;
}

static double memcpy_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    return time_copies(m, iters, copy_bytes, m->bytes);
}

static double copy_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    return time_copies(m, iters, m->nt ? copy_words_nt : copy_words, m->n);
}

static double strided_store_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    return time_copies(m, iters, m->nt ? copy_strided_store_nt : copy_strided_store, m->n);
}

static double strided_load_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    mem_state *m = state;
    (void)ctx;
    return time_copies(m, iters, m->nt ? copy_strided_load_nt : copy_strided_load, m->n);
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

/* One op through the benchmark's own loop on patterned data, then every byte
 * of its destination slot is compared with what the traversal must produce:
 * the contiguous side holds word contiguous_index(i) of the strided side's
 * word i (the loads' side for strided_load, the stores' side otherwise). */
static int64_t verify_words(const fl_ctx *ctx, mem_state *m, int64_t *checked,
                            double (*measure)(const fl_ctx *, void *, int64_t), int strided_loads)
{
    if (!m->active)
        return 0;
    const uint64_t *s = src_slot(m);
    uint64_t *d = dst_slot(m);
    memset(d, 0, m->bytes);
    measure(ctx, m, 1);
    int64_t bad = 0;
    for (size_t i = 0; i < m->n; i++) {
        size_t k = contiguous_index(i, m->n, m->s);
        bad += strided_loads ? word_diff(d[k], s[i]) : word_diff(d[i], s[k]);
    }
    *checked += (int64_t)(m->n * 8);
    return bad;
}

static int64_t memcpy_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    mem_state *m = state;
    if (!m->active)
        return 0;
    uint64_t *d = dst_slot(m);
    memset(d, 0, m->bytes);
    memcpy_measure(ctx, m, 1);
    *checked += (int64_t)m->bytes;
    return fl_check(d, m->bytes, m->seed);
}

static int64_t copy_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return verify_words(ctx, state, checked, copy_measure, 0); /* stride 1: word i to word i */
}

static int64_t strided_store_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return verify_words(ctx, state, checked, strided_store_measure, 0);
}

static int64_t strided_load_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    return verify_words(ctx, state, checked, strided_load_measure, 1);
}

const fl_kernel fl_memory_kernels[] = {
    {.name = "memory.memcpy", .init = mem_init, .fini = mem_fini, .setup = memcpy_setup,
     .measure = memcpy_measure, .verify = memcpy_verify, .teardown = teardown},
    {.name = "memory.copy", .init = mem_init, .fini = mem_fini, .setup = words_setup,
     .measure = copy_measure, .verify = copy_verify, .teardown = teardown},
    {.name = "memory.strided_store", .init = mem_init, .fini = mem_fini,
     .setup = strided_store_setup,
     .measure = strided_store_measure, .verify = strided_store_verify, .teardown = teardown},
    {.name = "memory.strided_load", .init = mem_init, .fini = mem_fini, .setup = words_setup,
     .measure = strided_load_measure, .verify = strided_load_verify, .teardown = teardown},
    {.name = NULL},
};
