/* Family "app": app.sort, seed 003's parallel in-core bucket sort. Rank r
 * of N holds keys(r) = app_count(K, r, N) elements of E bytes, element g
 * (global index) drawn from the seed: its first 8 bytes (4 when E = 4) are
 * the key, an unsigned little-endian word, the rest a payload that names g,
 * so a moved element can be checked on its own. One op, timed by phase:
 *
 * - bucket: count the elements bound for each rank by key range (the
 *   leading 32 bits k of the key go to rank floor(k N / 2^32), suite/apps.py
 *   bucket_of), prefix sums, scatter the elements by destination into the
 *   send array. The drawn elements are only read, so every op starts from
 *   the same unsorted input with nothing to restore.
 * - exchange: MPI_Alltoall of the counts, MPI_Alltoallv of the elements
 *   (a contiguous type of E bytes, so counts are elements).
 * - sort: a radix sort of what arrived (Knuth, TAOCP vol. 3, 5.2.5), 8-bit
 *   digits over the key's bytes, stable, moving whole elements: LSD passes
 *   when the array fits the cache, else one pass on the highest digit that
 *   varies, then LSD within each bucket (radix_e); a digit that is the same
 *   in every key is skipped.
 *
 * The keys are the same in every op, so setup runs the count exchange once
 * and sizes the receive array exactly. */
#include "app.h"

#include <stdio.h>
#include <string.h>

/* 8-bit digits; arrays up to CACHE_BYTES are sorted by LSD passes alone
 * (about half a 1 MiB L2), buckets of up to SMALL elements by insertion. */
enum { DIGIT = 8, RADIX = 1 << DIGIT, MAX_DIGITS = 8, CACHE_BYTES = 512 << 10, SMALL = 48 };

static const uint64_t GOLDEN = 0x9e3779b97f4a7c15ULL;
static const uint64_t INDEX_MASK = (1ULL << 56) - 1; /* payload word k: g | k << 56 */

typedef struct {
    app_common a;            /* first: app_phases reads it */
    size_t e;                /* element bytes */
    int64_t total, lo, keys; /* keys in all; this rank's first global index and count */
    int64_t arrived;         /* elements this rank receives per op */
    uint64_t seed;
    char *in, *send, *recv, *tmp;
    char *out;               /* the sorted elements after an op: recv or tmp */
    int *scount, *sdispl, *rcount, *rdispl;
    int64_t *pos;            /* the bucket scatter's next slot per destination */
    uint32_t (*hist)[RADIX]; /* radix counts, one row per digit */
    uint32_t top[RADIX], start[RADIX + 1]; /* the split on the highest digit */
    MPI_Datatype elem;
    int schedule;            /* APP_COLLECTIVE, APP_CONCURRENT or a pairwise one (app.h) */
} sort_state;

/* ---- the elements (suite/apps.py draw writes the same keys) ---- */

/* The (g+1)-th output of splitmix64 seeded with `seed` (Steele, Lea and
 * Flood, OOPSLA 2014): any element can be drawn alone, so K keys are the
 * same keys at any N. */
static inline uint64_t draw(uint64_t seed, uint64_t g)
{
    uint64_t z = seed + (g + 1) * GOLDEN;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t key_at(const char *p, size_t e)
{
    if (e == 4) {
        uint32_t k;
        memcpy(&k, p, 4);
        return k;
    }
    uint64_t k;
    memcpy(&k, p, 8);
    return k;
}

/* The destination of a key among n ranks from its leading 32 bits. */
static inline int bucket_of(uint64_t key, size_t e, int n)
{
    uint64_t k32 = e == 4 ? key : key >> 32;
    return (int)((k32 * (uint64_t)n) >> 32);
}

/* Element g: the key draw(seed, g) (its leading 32 bits when E = 4), then
 * payload words g | k << 56 for k = 1 .. E/8 - 1. */
static void make_element(char *p, size_t e, uint64_t seed, uint64_t g)
{
    uint64_t w = draw(seed, g);
    if (e == 4) {
        uint32_t k = (uint32_t)(w >> 32);
        memcpy(p, &k, 4);
        return;
    }
    memcpy(p, &w, 8);
    for (size_t k = 1; k < e / 8; k++) {
        uint64_t x = g | (uint64_t)k << 56;
        memcpy(p + 8 * k, &x, 8);
    }
}

/* ---- the hot loops, with E a constant in each caller so that moving an
 * element compiles to a few loads and stores ---- */

static inline void count_e(const sort_state *s, size_t e)
{
    const int n = s->a.n;
    memset(s->scount, 0, sizeof *s->scount * (size_t)n);
    for (int64_t i = 0; i < s->keys; i++)
        s->scount[bucket_of(key_at(s->in + (size_t)i * e, e), e, n)]++;
    for (int d = 0, at = 0; d < n; at += s->scount[d], d++)
        s->sdispl[d] = at;
}

static inline void scatter_e(const sort_state *s, size_t e)
{
    const int n = s->a.n;
    for (int d = 0; d < n; d++)
        s->pos[d] = s->sdispl[d];
    for (int64_t i = 0; i < s->keys; i++) {
        const char *p = s->in + (size_t)i * e;
        memcpy(s->send + (size_t)s->pos[bucket_of(key_at(p, e), e, n)]++ * e, p, e);
    }
}

/* One stable counting pass of m elements on the digit at `shift`: a -> b,
 * next[v] the slot of the next element with digit value v. */
static inline void radix_pass_e(const char *a, char *b, int64_t m, size_t e, int shift,
                                uint32_t *next)
{
    for (int64_t i = 0; i < m; i++) {
        const char *p = a + (size_t)i * e;
        memcpy(b + (size_t)next[(key_at(p, e) >> shift) & (RADIX - 1)]++ * e, p, e);
    }
}

/* Counts into first slots: h[v] becomes the number of digits below v. */
static inline void first_slots(uint32_t *h)
{
    for (uint32_t v = 0, at = 0; v < RADIX; v++) {
        uint32_t c = h[v];
        h[v] = at;
        at += c;
    }
}

/* Stable insertion sort, for buckets too small to pay for histograms. */
static inline void insertion_e(char *a, int64_t m, size_t e)
{
    char t[64];
    for (int64_t i = 1; i < m; i++) {
        uint64_t k = key_at(a + (size_t)i * e, e);
        int64_t j = i;
        if (key_at(a + (size_t)(j - 1) * e, e) <= k)
            continue;
        memcpy(t, a + (size_t)i * e, e);
        for (; j > 0 && key_at(a + (size_t)(j - 1) * e, e) > k; j--)
            memcpy(a + (size_t)j * e, a + (size_t)(j - 1) * e, e);
        memcpy(a + (size_t)j * e, t, e);
    }
}

/* LSD over the digits below `digits` of m elements at a (b the scratch):
 * one pass per digit that is not the same in every key; the result in a. */
static inline void lsd_e(sort_state *s, char *a, char *b, int64_t m, size_t e, int digits)
{
    if (m <= SMALL) {
        insertion_e(a, m, e);
        return;
    }
    memset(s->hist, 0, sizeof *s->hist * (size_t)digits);
    for (int64_t i = 0; i < m; i++) {
        uint64_t k = key_at(a + (size_t)i * e, e);
        for (int d = 0; d < digits; d++)
            s->hist[d][(k >> (d * DIGIT)) & (RADIX - 1)]++;
    }
    const uint64_t k0 = key_at(a, e);
    char *x = a, *y = b;
    for (int d = 0; d < digits; d++) {
        if (s->hist[d][(k0 >> (d * DIGIT)) & (RADIX - 1)] == (uint32_t)m)
            continue;
        first_slots(s->hist[d]);
        radix_pass_e(x, y, m, e, d * DIGIT, s->hist[d]);
        char *t = x;
        x = y;
        y = t;
    }
    if (x != a)
        memcpy(a, x, (size_t)m * e);
}

/* Sorts the m elements at a (b the scratch); returns where they lie. An
 * array that fits the cache gets LSD passes alone. A larger one first gets
 * one pass on its highest digit that varies, into RADIX buckets that each
 * fit the cache, then LSD within each, in cache: an LSD pass over the whole
 * array scatters to RADIX places across memory every time (Polychroniou and
 * Ross, SIGMOD 2014, compare the two). 16 Mi elements of 8 bytes on a
 * 2-core AMD EPYC VM: 1.07 s by LSD alone, 0.37 s split first.
 * Every pass is a stable counting pass, so the sort is stable. */
static inline char *radix_e(sort_state *s, char *a, char *b, int64_t m, size_t e)
{
    const int digits = (e == 4 ? 32 : 64) / DIGIT;
    if (m < 2)
        return a;
    if ((size_t)m * e <= CACHE_BYTES) {
        lsd_e(s, a, b, m, e, digits);
        return a;
    }
    uint64_t k0 = key_at(a, e), diff = 0;
    for (int64_t i = 0; i < m; i++)
        diff |= key_at(a + (size_t)i * e, e) ^ k0;
    if (!diff)
        return a;
    const int top = (63 - __builtin_clzll(diff)) / DIGIT, shift = top * DIGIT;
    uint32_t *next = s->top, *at = s->start;
    memset(next, 0, sizeof *s->top * RADIX);
    for (int64_t i = 0; i < m; i++)
        next[(key_at(a + (size_t)i * e, e) >> shift) & (RADIX - 1)]++;
    first_slots(next);
    memcpy(at, next, sizeof *s->top * RADIX);
    at[RADIX] = (uint32_t)m;
    radix_pass_e(a, b, m, e, shift, next);
    for (int v = 0; v < RADIX; v++)
        lsd_e(s, b + (size_t)at[v] * e, a + (size_t)at[v] * e, at[v + 1] - at[v], e, top);
    return b;
}

/* The registry's element sizes, each a constant for the loops above. */
static inline void bucket_e(sort_state *s, size_t e)
{
    count_e(s, e);
    scatter_e(s, e);
}

static void bucket(sort_state *s)
{
    switch (s->e) {
    case 4: bucket_e(s, 4); break;
    case 8: bucket_e(s, 8); break;
    case 16: bucket_e(s, 16); break;
    case 32: bucket_e(s, 32); break;
    default: bucket_e(s, 64); break;
    }
}

static void local_sort(sort_state *s)
{
    switch (s->e) {
    case 4: s->out = radix_e(s, s->recv, s->tmp, s->arrived, 4); break;
    case 8: s->out = radix_e(s, s->recv, s->tmp, s->arrived, 8); break;
    case 16: s->out = radix_e(s, s->recv, s->tmp, s->arrived, 16); break;
    case 32: s->out = radix_e(s, s->recv, s->tmp, s->arrived, 32); break;
    default: s->out = radix_e(s, s->recv, s->tmp, s->arrived, 64); break;
    }
}

/* The counts (receive displacements follow), then the elements. */
static void exchange(sort_state *s)
{
    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, s->a.comm);
    int64_t at = 0;
    for (int d = 0; d < s->a.n; at += s->rcount[d], d++)
        s->rdispl[d] = (int)at;
    if (at != s->arrived) /* the keys are the same every op: a broken exchange */
        fl_die("app.sort: rank %d expected %lld elements, %lld announced", s->a.rank,
               (long long)s->arrived, (long long)at);
    app_alltoallv(&s->a, s->schedule, s->send, s->scount, s->sdispl, s->recv, s->rcount, s->rdispl,
                  s->elem);
}

/* ---- setup ---- */

/* The keys in all: SIZE (strong) or SIZE per active rank (weak). */
static int64_t total_keys(const fl_ctx *ctx, const fl_point *pt)
{
    int weak = fl_param_is(ctx->opts, "scale", "weak");
    return weak ? pt->size * pt->layout->active : pt->size;
}

/* Draws this rank's elements, counts them by destination and sizes the
 * receive side with one count exchange. */
static void sort_fill(sort_state *s)
{
    for (int64_t i = 0; i < s->keys; i++)
        make_element(s->in + (size_t)i * s->e, s->e, s->seed, (uint64_t)(s->lo + i));
    bucket(s);
    MPI_Alltoall(s->scount, 1, MPI_INT, s->rcount, 1, MPI_INT, s->a.comm);
    s->arrived = 0;
    for (int d = 0; d < s->a.n; d++)
        s->arrived += s->rcount[d];
}

static void sort_shape(const fl_ctx *ctx, const sort_state *s, fl_shape *shape)
{
    const int me = s->a.rank;
    shape->sent_bytes = (s->keys - s->scount[me]) * (int64_t)s->e;
    shape->recv_bytes = (s->arrived - s->rcount[me]) * (int64_t)s->e;
    shape->messages = s->a.n - 1;
    shape->bytes_per_op = s->total * (int64_t)s->e;
    snprintf(shape->info, FL_INFO_LEN,
             "{\"keys\":%lld,\"elem\":%zu,\"key_bytes\":%d,\"scale\":\"%s\",\"seed\":%llu,"
             "\"exchange\":\"%s\"}",
             (long long)s->total, s->e, s->e == 4 ? 4 : 8, fl_param(ctx->opts, "scale"),
             (unsigned long long)s->seed, app_schedule_name(s->schedule));
}

static void sort_alloc(sort_state *s)
{
    size_t n = (size_t)s->a.n;
    s->in = fl_alloc((size_t)s->keys * s->e);
    s->send = fl_alloc((size_t)s->keys * s->e);
    s->scount = fl_alloc(sizeof(int) * n);
    s->sdispl = fl_alloc(sizeof(int) * n);
    s->rcount = fl_alloc(sizeof(int) * n);
    s->rdispl = fl_alloc(sizeof(int) * n);
    s->pos = fl_alloc(sizeof(int64_t) * n);
    s->hist = fl_alloc(sizeof *s->hist * MAX_DIGITS);
    MPI_Type_contiguous((int)s->e, MPI_BYTE, &s->elem);
    MPI_Type_commit(&s->elem);
}

static void sort_teardown(const fl_ctx *ctx, void *state)
{
    sort_state *s = state;
    (void)ctx;
    if (s->a.comm != MPI_COMM_NULL) {
        if (s->elem != MPI_DATATYPE_NULL) /* a point skipped before sort_alloc made none */
            MPI_Type_free(&s->elem);
        fl_free(s->in);
        fl_free(s->send);
        fl_free(s->recv);
        fl_free(s->tmp);
        fl_free(s->scount);
        fl_free(s->sdispl);
        fl_free(s->rcount);
        fl_free(s->rdispl);
        fl_free(s->pos);
        fl_free(s->hist);
    }
    app_end(&s->a);
    fl_free(s);
}

/* Every rank of ctx->comm, idle ones too, agrees on the status: the largest
 * block and the largest arrival must fit an MPI int count. */
static int sort_setup(const fl_ctx *ctx, void *bs, const fl_point *pt, void **state,
                      fl_shape *shape)
{
    sort_state *s = fl_alloc(sizeof *s);
    (void)bs;
    *state = s;
    s->elem = MPI_DATATYPE_NULL;
    if (app_begin(ctx, pt, shape, &s->a) != FL_OK) {
        app_end(&s->a);
        fl_free(s);
        *state = NULL;
        return FL_ERROR;
    }
    s->e = (size_t)fl_param_int(ctx->opts, "elem");
    s->schedule = app_schedule(ctx->opts);
    s->seed = (uint64_t)fl_param_int(ctx->opts, "seed");
    s->total = total_keys(ctx, pt);
    shape->phase_names = "bucket,exchange,sort"; /* on idle ranks too: the runner's reductions */
    if (app_int_count((s->total + s->a.n - 1) / s->a.n, shape, "app.sort keys per rank")) {
        sort_teardown(ctx, s);
        *state = NULL;
        return FL_SKIP;
    }
    int64_t most = 0;
    if (s->a.comm != MPI_COMM_NULL) {
        s->lo = app_lo(s->total, s->a.rank, s->a.n);
        s->keys = app_count(s->total, s->a.rank, s->a.n);
        sort_alloc(s);
        sort_fill(s);
        most = s->arrived;
    }
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, ctx->comm);
    if (app_int_count(most, shape, "app.sort elements one rank receives")) {
        sort_teardown(ctx, s);
        *state = NULL;
        return FL_SKIP;
    }
    if (s->a.comm != MPI_COMM_NULL) {
        s->recv = fl_alloc((size_t)s->arrived * s->e);
        s->tmp = fl_alloc((size_t)s->arrived * s->e);
        sort_shape(ctx, s, shape);
    }
    return FL_OK;
}

/* ---- measure ---- */

static double sort_measure(const fl_ctx *ctx, void *state, int64_t iters)
{
    sort_state *s = state;
    double *ph = s->a.phase, elapsed = 0;
    (void)ctx;
    if (s->a.comm == MPI_COMM_NULL)
        return 0.0;
    for (int64_t i = 0; i < iters; i++) {
        double t = fl_now(), t0 = t;
        bucket(s);
        MPI_Barrier(s->a.comm); /* bucketing ends when every rank has bucketed: the exchange times the exchange alone */
        ph[0] += app_tick(&t);
        exchange(s);
        ph[1] += app_tick(&t);
        local_sort(s);
        ph[2] += app_tick(&t);
        elapsed += t - t0;
    }
    return elapsed;
}

/* ---- verify: one op, then order, count and the multiset of elements ---- */

/* A 64-bit hash of a whole element; summed (wrapping) it is a checksum of
 * a multiset, the same in any order. */
static uint64_t elem_hash(const char *p, size_t e)
{
    uint64_t h = draw(e, 0);
    for (size_t at = 0; at < e; at += 8) {
        uint64_t w = 0;
        memcpy(&w, p + at, e - at < 8 ? e - at : 8);
        h = draw(h ^ w, at);
    }
    return h;
}

/* 0 when the element is the one its payload names (E >= 16), else 1. */
static int64_t elem_wrong(const sort_state *s, const char *p)
{
    uint64_t g, w;
    if (s->e < 16)
        return 0;
    memcpy(&g, p + 8, 8);
    g &= INDEX_MASK;
    if (g >= (uint64_t)s->total || key_at(p, 8) != draw(s->seed, g))
        return 1;
    for (size_t k = 1; k < s->e / 8; k++) {
        memcpy(&w, p + 8 * k, 8);
        if (w != (g | (uint64_t)k << 56))
            return 1;
    }
    return 0;
}

/* The count and checksum every rank's output should have, from the input:
 * {count, sum of hashes} per destination, reduced and scattered. */
static void expected_output(const sort_state *s, uint64_t mine[2])
{
    uint64_t *per = fl_alloc(sizeof *per * 2 * (size_t)s->a.n);
    for (int64_t i = 0; i < s->keys; i++) {
        const char *p = s->in + (size_t)i * s->e;
        int d = bucket_of(key_at(p, s->e), s->e, s->a.n);
        per[2 * d]++;
        per[2 * d + 1] += elem_hash(p, s->e);
    }
    MPI_Reduce_scatter_block(per, mine, 2, MPI_UINT64_T, MPI_SUM, s->a.comm);
    fl_free(per);
}

/* Whether the first key of the next non-empty rank is below this rank's last. */
static int64_t boundary_wrong(const sort_state *s)
{
    uint64_t me[3] = {(uint64_t)s->arrived, 0, 0}, *all = fl_alloc(sizeof *all * 3 * (size_t)s->a.n);
    if (s->arrived > 0) {
        me[1] = key_at(s->out, s->e);
        me[2] = key_at(s->out + (size_t)(s->arrived - 1) * s->e, s->e);
    }
    MPI_Allgather(me, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, s->a.comm);
    int64_t bad = 0;
    for (int q = s->a.rank + 1; q < s->a.n && s->arrived > 0; q++)
        if (all[3 * q] > 0) {
            bad = all[3 * q + 1] < me[2];
            break;
        }
    fl_free(all);
    return bad;
}

static int64_t sort_verify(const fl_ctx *ctx, void *state, int64_t *checked)
{
    sort_state *s = state;
    if (s->a.comm == MPI_COMM_NULL)
        return 0;
    uint64_t want[2], hash = 0;
    expected_output(s, want);
    sort_measure(ctx, s, 1);
    int64_t wrong = 0, m = s->arrived;
    for (int64_t i = 0; i < m; i++) {
        const char *p = s->out + (size_t)i * s->e;
        hash += elem_hash(p, s->e);
        wrong += elem_wrong(s, p) + (i > 0 && key_at(p, s->e) < key_at(p - s->e, s->e));
    }
    wrong += boundary_wrong(s);
    if (want[0] != (uint64_t)m)
        wrong += m > (int64_t)want[0] ? m - (int64_t)want[0] : (int64_t)want[0] - m;
    else if (want[1] != hash && wrong == 0)
        wrong = 1; /* the same count, another multiset, nothing else wrong: one element at least */
    int64_t sum = 0;
    MPI_Allreduce(&m, &sum, 1, MPI_INT64_T, MPI_SUM, s->a.comm);
    if (s->a.rank == 0 && sum != s->total)
        wrong += sum > s->total ? sum - s->total : s->total - sum;
    *checked += m * (int64_t)s->e;
    return wrong * (int64_t)s->e;
}

const fl_kernel fl_app_sort_kernels[] = {
    {.name = "app.sort", .setup = sort_setup, .measure = sort_measure, .verify = sort_verify,
     .teardown = sort_teardown, .phases = app_phases},
    {.name = NULL},
};
