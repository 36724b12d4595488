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
 * Optimization Guide for Family 19h Processors, on write-combining), which
 * pays once the destination lines leave the cache before they are written
 * again. Where that happens no reported figure says: glibc streams from its
 * x86_non_temporal_threshold (3/4 of the last-level cache CPUID reports up
 * to glibc 2.37, a quarter from 2.38), and under a hypervisor CPUID and
 * sysfs may both report a cache the guest does not have to itself (a host's
 * 256 MiB L3 where the guest's share is 32 MiB, or a shared cache whose
 * other users evict its lines). So `auto` measures: at setup the contiguous
 * copies of memory_nt.h (a vector loop as glibc's, `rep movsb` where the CPU
 * has ERMS and glibc would use it, the streaming loop) each copy the point's
 * own slots a few times, and the fastest is the point's (trial says how);
 * the strided loops take the stores of that copy, except strided stores,
 * which keep the caches (setup_words says why). Every point's info records
 * the copy, where the choice came from, each copy's trial rate and glibc
 * memcpy's own thresholds, so a record says which stores each copy used
 * and why. */
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

/* The strided loops are compiled for AVX2 too, picked at load time like
 * glibc's own memcpy, so that they are not held to SSE2 where the library
 * copy is not. */
#define CLONES
#if defined(__has_attribute)
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

/* A point's choice among the contiguous copies: stores=auto times them on
 * the point's own slots, and the word loops of the same size and buffers
 * reuse the choice (a sweep of strides repeats sizes). */
#define TRIAL_ROUNDS 5       /* at least; the order flips every round */
#define TRIAL_MAX_ROUNDS 15
#define TRIAL_BUDGET_S 0.05  /* more rounds while the trial is this short */
#define TRIAL_BLOCK_S 0.002  /* each copy's turn in a round lasts at least this */
#define TRIAL_BATCH_S 0.0002 /* ops are timed in batches at least this long */
#define TRIAL_MEMO 32
/* The copy glibc's memcpy would run at this size keeps the point unless
 * another beats it by more than this share: two copies within a few percent
 * swap places from trial to trial (on a 2-core AMD EPYC VM, `rep movsb` and
 * the vector loop at 256 KiB, at the edge of the 512 KiB L2, by 2-5% in
 * either direction), and the reference copy is not to fall below glibc's
 * by a trial's noise. */
#define TRIAL_MARGIN 0.04

typedef struct {
    size_t bytes, buffers;
    unsigned use;               /* the copies it timed: bit c for mem_run.copies[c] */
    int pick;                   /* index into mem_run.copies */
    int libc;                   /* the copy glibc's memcpy would run, or -1 */
    int rounds;
    double rate[MEM_COPIES];    /* bytes/s of each copy, the median of the rounds */
} mem_trial;

/* Once per run: the contiguous copies of this CPU, where glibc's memcpy
 * starts streaming and using `rep movsb` (bytes per op, and as info text:
 * a number or null), and the trials so far. */
typedef struct {
    mem_copy copies[MEM_COPIES];
    int ncopies;
    mem_libc libc;
    char libc_nt_json[32], libc_rep_json[32], libc_stop_json[32];
    mem_trial memo[TRIAL_MEMO];
    int nmemo;
} mem_run;

/* One point. */
typedef struct {
    int active;           /* rank 0 */
    mem_copy_fn *copy;    /* the op memory.copy's measure times */
    int nt;               /* non-temporal stores (the strided loops) */
    uint64_t *src, *dst;  /* regions of `buffers` slots of `pitch` bytes */
    size_t bytes, n, s;   /* bytes to copy, words, stride in words */
    size_t pitch, buffers, slot; /* slot: the one the next op copies */
    uint64_t seed;
} mem_state;

/* The compiled word loop: the contiguous copy where the CPU has no vector
 * loop of memory_nt.c (outside x86-64, or without AVX2). */
MEM_LOOP static void copy_words(uint64_t *restrict d, const uint64_t *restrict s, size_t n,
                                size_t st)
{
    (void)st;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}

MEM_LOOP CLONES static void copy_strided_store(uint64_t *restrict d, const uint64_t *restrict s,
                                               size_t n, size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            d[i] = *s++;
}

MEM_LOOP CLONES static void copy_strided_load(uint64_t *restrict d, const uint64_t *restrict s,
                                              size_t n, size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            *d++ = s[i];
}

#if HAVE_NT
/* The strided side is single words, so the non-temporal stores are movnti;
 * write-combining still fills whole lines when the stores are contiguous.
 * The sfence orders the write-combined lines before anything that follows. */
static void store_nt_word(uint64_t *d, uint64_t w)
{
    _mm_stream_si64((long long *)d, (long long)w);
}

MEM_LOOP CLONES static void copy_strided_store_nt(uint64_t *restrict d,
                                                  const uint64_t *restrict s, size_t n,
                                                  size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            store_nt_word(d + i, *s++);
    _mm_sfence();
}

MEM_LOOP CLONES static void copy_strided_load_nt(uint64_t *restrict d,
                                                 const uint64_t *restrict s, size_t n,
                                                 size_t st)
{
    for (size_t p = 0; p < st; p++)
        for (size_t i = p; i < n; i += st)
            store_nt_word(d++, s[i]);
    _mm_sfence();
}
#else
/* Without non-temporal stores nothing asks for them; the names still
 * resolve, so the measure loops read the same on every platform. */
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
    r->libc = (mem_libc){-1, -1, -1, "none"};
    if (ctx->rank == 0) /* the only rank that copies */
        fl_memcpy_thresholds(&r->libc);
    r->ncopies = fl_mem_copies(r->copies, copy_words, &r->libc);
    put_json(r->libc_nt_json, sizeof r->libc_nt_json, r->libc.nt_threshold);
    put_json(r->libc_rep_json, sizeof r->libc_rep_json, r->libc.rep_movsb_threshold);
    put_json(r->libc_stop_json, sizeof r->libc_stop_json, r->libc.rep_movsb_stop_threshold);
    *bench_state = r;
    return FL_OK;
}

static void mem_fini(const fl_ctx *ctx, void *bench_state)
{
    (void)ctx;
    free(bench_state);
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
static inline double time_copies(mem_state *m, int64_t iters, mem_copy_fn *copy, size_t n)
{
    double t0 = fl_now();
    for (int64_t i = 0; m->active && i < iters; i++) {
        uint64_t *d = dst_slot(m);
        copy(d, src_slot(m), n, m->s);
        next_slot(m, d);
    }
    return fl_now() - t0;
}

/* ---- which copy: a trial on the point's own slots ---- */

/* Bytes/s of one contiguous copy on the point's slots: one op first, so
 * that its slot holds what this copy leaves in the caches (lines cached and
 * dirty, or streamed out), then ops in batches of at least TRIAL_BATCH_S
 * (one op where an op lasts longer) for at least TRIAL_BLOCK_S and a whole
 * turn of the slots; the fastest batch counts, since a pause of this
 * process only ever makes a batch slower. */
static double trial_rate(mem_state *m, mem_copy_fn *copy)
{
    int64_t ops = 0, batch = 1;
    double spent = 0, best = 0;
    time_copies(m, 1, copy, m->n);
    while (spent < TRIAL_BLOCK_S || ops < (int64_t)m->buffers || best == 0) {
        double t = time_copies(m, batch, copy, m->n);
        if (t >= TRIAL_BATCH_S) {
            double rate = (double)batch * (double)(m->n * 8) / t;
            best = rate > best ? rate : best;
        } else {
            batch *= 2;
        }
        spent += t, ops += batch;
    }
    return best;
}

/* The copy of r that glibc's memcpy would run for `bytes` (its streaming
 * from its non-temporal threshold, `rep movsb` from its threshold to below
 * its stop threshold, else its vector loop), among those `use` lets
 * through; -1 where none is. */
static int libc_copy(const mem_run *r, size_t bytes, unsigned use)
{
    int stream = r->libc.nt_threshold > 0 && bytes >= (size_t)r->libc.nt_threshold;
    int pick = -1;
    for (int c = 0; c < r->ncopies; c++) {
        const mem_copy *cp = &r->copies[c];
        if (!(use >> c & 1) || cp->nt != stream || bytes < cp->from || bytes >= cp->below)
            continue;
        if (bytes >= cp->libc_below) /* rep movsb, where glibc has stopped using it */
            continue;
        if (pick < 0 || cp->from > r->copies[pick].from) /* the narrower range: rep movsb's */
            pick = c;
    }
    return pick;
}

/* Times every copy `allowed` lets through on the point's slots, in rounds
 * of flipped order (A B C, C B A, ...), and keeps the copy whose rate over
 * the round's fastest has the highest median: the copies of one round run
 * back to back, so a disturbance that lasts longer than a round (another
 * guest's traffic on the memory bus) cancels out, and the median drops the
 * rounds a pause of this process hit. The reference copy is thus the
 * fastest this CPU has for this size and cache state, whatever caches the
 * machine reports (a hypervisor's CPUID, or a last-level cache shared with
 * other guests, say nothing reliable about where streaming pays). Trials
 * of the same size and buffers are remembered for the run. */
static const mem_trial *trial(mem_run *r, mem_state *m, unsigned use)
{
    for (int i = 0; i < r->nmemo; i++)
        if (r->memo[i].bytes == m->n * 8 && r->memo[i].buffers == m->buffers && r->memo[i].use == use)
            return &r->memo[i];
    mem_trial t = {.bytes = m->n * 8, .buffers = m->buffers, .use = use, .pick = -1,
                   .libc = libc_copy(r, m->n * 8, use)};
    double rate[MEM_COPIES][TRIAL_MAX_ROUNDS], best[TRIAL_MAX_ROUNDS] = {0};
    double t0 = fl_now();
    while (t.rounds < TRIAL_MAX_ROUNDS && (t.rounds < TRIAL_ROUNDS || fl_now() - t0 < TRIAL_BUDGET_S)) {
        int k = t.rounds++;
        for (int j = 0; j < r->ncopies; j++) {
            int c = k % 2 ? r->ncopies - 1 - j : j;
            rate[c][k] = use >> c & 1 ? trial_rate(m, r->copies[c].copy) : 0;
            best[k] = rate[c][k] > best[k] ? rate[c][k] : best[k];
        }
    }
    double score[MEM_COPIES] = {0};
    for (int c = 0; c < r->ncopies; c++) {
        if (!(use >> c & 1))
            continue;
        double rel[TRIAL_MAX_ROUNDS];
        for (int k = 0; k < t.rounds; k++)
            rel[k] = rate[c][k] / best[k];
        score[c] = fl_median(rel, t.rounds);
        t.rate[c] = fl_median(rate[c], t.rounds);
        if (t.pick < 0 || score[c] > score[t.pick])
            t.pick = c;
    }
    if (t.libc >= 0 && score[t.libc] >= score[t.pick] * (1 - TRIAL_MARGIN))
        t.pick = t.libc;
    m->slot = 0;
    if (r->nmemo == TRIAL_MEMO) /* a long sweep: forget the oldest */
        memmove(r->memo, r->memo + 1, sizeof r->memo[0] * (TRIAL_MEMO - 1)), r->nmemo--;
    r->memo[r->nmemo] = t;
    return &r->memo[r->nmemo++];
}

static int any_copy(const mem_copy *c)
{
    (void)c;
    return 1;
}

static int normal_copy(const mem_copy *c)
{
    return !c->nt;
}

static int streaming_copy(const mem_copy *c)
{
    return c->nt;
}

/* ---- setups ---- */

/* Every setup: rank 0 holds `buffers` slots per side, every source slot
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
    shape->working_set = (int64_t)(m->pitch * m->buffers);
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
             "{\"nt_threshold\":%s,\"rep_movsb_threshold\":%s,\"rep_movsb_stop_threshold\":%s,"
             "\"nt_threshold_from\":\"%s\",\"buffers\":%zu}",
             r->libc_nt_json, r->libc_rep_json, r->libc_stop_json, r->libc.from, m->buffers);
    return FL_OK;
}

/* The word loops (memory.copy and the ECT copies): whole words, and the
 * copy or the stores that the `stores` param and, where it leaves a choice,
 * the trial pick; `contiguous`: the point runs the picked copy itself
 * (memory.copy), else its own loop with the picked copy's stores.
 * `scattered`: the stores go at the point's stride, where stores=auto keeps
 * the caches: each write-combining buffer would hold a partial line, which
 * goes to memory as a read-modify-write, slower than the cached store it
 * replaces. Only rank 0, the one that copies, runs the trial. */
static int setup_words(const fl_ctx *ctx, mem_run *r, const fl_point *pt, void **state,
                       fl_shape *shape, int contiguous, int scattered)
{
    mem_state *m = new_state(ctx, pt, state, shape);
    int nt = fl_param_is(ctx->opts, "stores", "nt");
    int normal = fl_param_is(ctx->opts, "stores", "normal");
    int (*allowed)(const mem_copy *) = nt ? streaming_copy : normal ? normal_copy : any_copy;
    const char *from = nt || normal ? "stores param" : "trial";
    if (scattered && m->s > 1 && !nt)
        allowed = normal_copy, from = "strided stores";
    if (!HAVE_NT)
        allowed = normal_copy, from = "no non-temporal stores outside x86-64";
    shape->bytes_per_op = (int64_t)(m->n * 8);

    /* the copies that may run at this size, and a trial where that leaves
     * a choice: of the copy for memory.copy, of the stores for the others */
    unsigned use = 0;
    int pick = -1, copies = 0, streaming = 0;
    for (int c = 0; c < r->ncopies; c++) {
        const mem_copy *cp = &r->copies[c];
        if (allowed(cp) && m->bytes >= cp->from && m->bytes < cp->below)
            use |= 1u << c, pick = pick < 0 ? c : pick, copies++, streaming += cp->nt;
    }
    int choice = contiguous ? copies > 1 : streaming > 0 && streaming < copies;
    const mem_trial *t = m->active && choice ? trial(r, m, use) : NULL;
    if (t)
        pick = t->pick;
    m->copy = r->copies[pick].copy;
    m->nt = r->copies[pick].nt;

    fl_buf j = {0};
    fl_buf_printf(&j, "{\"stores\":\"%s\"", m->nt ? "nt" : "normal");
    if (contiguous)
        fl_buf_printf(&j, ",\"copy\":\"%s\"", r->copies[pick].name);
    fl_buf_printf(&j, ",\"stores_from\":\"%s\"", from);
    if (t)
        fl_buf_printf(&j, ",\"trial_rounds\":%d,\"trial_libc_copy\":\"%s\"", t->rounds,
                      t->libc >= 0 ? r->copies[t->libc].name : "none");
    for (int c = 0, first = 1; t && c < r->ncopies; c++)
        if (use >> c & 1) {
            fl_buf_printf(&j, "%s\"%s\":%.6g", first ? ",\"trial_Bps\":{" : ",",
                          r->copies[c].name, t->rate[c]);
            first = 0;
        }
    fl_buf_printf(&j, "%s,\"memcpy_nt_threshold\":%s,\"memcpy_rep_movsb_threshold\":%s,"
                  "\"memcpy_rep_movsb_stop_threshold\":%s,\"memcpy_nt_threshold_from\":\"%s\","
                  "\"buffers\":%zu}",
                  t ? "}" : "", r->libc_nt_json, r->libc_rep_json, r->libc_stop_json, r->libc.from,
                  m->buffers);
    snprintf(shape->info, FL_INFO_LEN, "%s", j.p);
    fl_buf_free(&j);
    return FL_OK;
}

static int copy_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape)
{
    return setup_words(ctx, bs, pt, state, shape, 1, 0);
}

static int strided_load_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                              fl_shape *shape)
{
    return setup_words(ctx, bs, pt, state, shape, 0, 0);
}

static int strided_store_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                               fl_shape *shape)
{
    return setup_words(ctx, bs, pt, state, shape, 0, 1);
}

static void teardown(const fl_ctx *ctx, void *state)
{
    mem_state *m = state;
    (void)ctx;
    fl_free(m->src);
    fl_free(m->dst);
    fl_free(m);
}

/* ---- the timed loops, one per benchmark ---- */

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
    return time_copies(m, iters, m->copy, m->n);
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
    {.name = "memory.copy", .init = mem_init, .fini = mem_fini, .setup = copy_setup,
     .measure = copy_measure, .verify = copy_verify, .teardown = teardown},
    {.name = "memory.strided_store", .init = mem_init, .fini = mem_fini,
     .setup = strided_store_setup,
     .measure = strided_store_measure, .verify = strided_store_verify, .teardown = teardown},
    {.name = "memory.strided_load", .init = mem_init, .fini = mem_fini,
     .setup = strided_load_setup,
     .measure = strided_load_measure, .verify = strided_load_verify, .teardown = teardown},
    {.name = NULL},
};
