/* Small services the runner and the kernels share: clock, buffers, data
 * pattern, params, fatal errors. */
#include "fl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double fl_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- what the kernels hold ---- */

/* The live blocks of fl_alloc and their sizes, so that fl_free can take a
 * block's bytes off the count: a kernel holds a few at a time. */
typedef struct {
    void *p;
    size_t n;
} held_block;

static struct {
    held_block *blocks;
    size_t nblocks, cap;
    int64_t bytes, peak; /* held now; the most since the mark */
} held;

void fl_account(int64_t bytes)
{
    held.bytes += bytes;
    if (held.bytes > held.peak)
        held.peak = held.bytes;
}

int64_t fl_held_mark(void)
{
    held.peak = held.bytes;
    return held.bytes;
}

int64_t fl_held_peak(void)
{
    return held.peak;
}

static void held_add(void *p, size_t n)
{
    if (held.nblocks == held.cap) {
        size_t cap = held.cap ? 2 * held.cap : 64;
        held_block *b = realloc(held.blocks, cap * sizeof *b);
        if (!b)
            fl_die("cannot track %zu allocations", cap);
        held.blocks = b, held.cap = cap;
    }
    held.blocks[held.nblocks++] = (held_block){p, n};
    fl_account((int64_t)n);
}

static void held_drop(void *p)
{
    for (size_t i = held.nblocks; i-- > 0;)
        if (held.blocks[i].p == p) {
            fl_account(-(int64_t)held.blocks[i].n);
            held.blocks[i] = held.blocks[--held.nblocks];
            return;
        }
}

void fl_win_allocate(MPI_Aint bytes, int disp_unit, MPI_Info info, MPI_Comm comm, int shared,
                     void *base, MPI_Win *win)
{
    if (shared)
        MPI_Win_allocate_shared(bytes, disp_unit, info, comm, base, win);
    else
        MPI_Win_allocate(bytes, disp_unit, info, comm, base, win);
    fl_account((int64_t)bytes);
}

/* MPI_WIN_SIZE: this rank's window bytes (MPI-3.1 sec. 11.2.6). */
void fl_win_free(MPI_Win *win)
{
    MPI_Aint *size = NULL;
    int flag = 0;
    MPI_Win_get_attr(*win, MPI_WIN_SIZE, &size, &flag);
    if (flag && size)
        fl_account(-(int64_t)*size);
    MPI_Win_free(win);
}

void *fl_alloc(size_t bytes)
{
    /* Page alignment keeps vector loops and DMA registration on their fast
     * paths; writing every page now keeps page faults out of timed loops. */
    size_t n = bytes ? (bytes + 4095) & ~(size_t)4095 : 4096;
    void *p = NULL;
    if (n < bytes || posix_memalign(&p, 4096, n) != 0)
        fl_die("cannot allocate %zu bytes", bytes);
    memset(p, 0, n);
    held_add(p, n);
    return p;
}

void fl_free(void *p)
{
    if (!p)
        return;
    held_drop(p);
    free(p);
}

/* Pattern: word i of the buffer is splitmix64(seed + i) (Steele, Lea and
 * Flood, OOPSLA 2014). It depends only on (seed, offset), so any slice can be
 * checked on its own, and a shifted or stale buffer mismatches almost
 * everywhere. */
static inline uint64_t pattern_word(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void fl_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = n / 8, i;
    for (i = 0; i < words; i++) {
        uint64_t w = pattern_word(seed, i);
        memcpy(p + 8 * i, &w, 8);
    }
    if (n % 8) {
        uint64_t w = pattern_word(seed, words);
        memcpy(p + 8 * words, &w, n % 8);
    }
}

static int64_t differing_bytes(uint64_t a, uint64_t b, size_t n)
{
    unsigned char x[8], y[8];
    int64_t d = 0;
    memcpy(x, &a, 8);
    memcpy(y, &b, 8);
    for (size_t k = 0; k < n; k++)
        d += x[k] != y[k];
    return d;
}

int64_t fl_check(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    size_t words = n / 8, i;
    int64_t bad = 0;
    for (i = 0; i < words; i++) {
        uint64_t w = pattern_word(seed, i), got;
        memcpy(&got, p + 8 * i, 8);
        if (got != w)
            bad += differing_bytes(got, w, 8);
    }
    if (n % 8) {
        uint64_t w = pattern_word(seed, words), got = 0;
        memcpy(&got, p + 8 * words, n % 8);
        bad += differing_bytes(got, w, n % 8);
    }
    return bad;
}

int fl_parse_int(const char *s, int64_t *out)
{
    char *end;
    if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
        return -1; /* strtoll would skip spaces and take a '+' */
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return -1;
    *out = (int64_t)v;
    return 0;
}

const char *fl_param_find(const fl_opts *o, const char *key)
{
    for (int i = 0; i < o->nparams; i++)
        if (strcmp(o->params[i].key, key) == 0)
            return o->params[i].value;
    return NULL;
}

const char *fl_param(const fl_opts *o, const char *key)
{
    const char *v = fl_param_find(o, key);
    if (!v)
        fl_die("param %s is not among the benchmark's facts", key);
    return v;
}

int64_t fl_param_int(const fl_opts *o, const char *key)
{
    const char *v = fl_param(o, key);
    int64_t x;
    if (fl_parse_int(v, &x) != 0)
        fl_die("param %s=%s is not an integer", key, v);
    return x;
}

int fl_param_is(const fl_opts *o, const char *key, const char *value)
{
    const char *v = fl_param_find(o, key);
    return v && strcmp(v, value) == 0;
}

/* Any rank may fail alone: it reports and aborts the whole job, so no peer is
 * left waiting in a receive (a lone exit() would hang the others). */
_Noreturn void fl_die(const char *fmt, ...)
{
    char msg[FL_INFO_LEN], line[FL_INFO_LEN + 32];
    int up = 0, down = 0, rank = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(line, sizeof line, "rank %d: %s", rank, msg);
    fl_emit_error(line);
    if (up && !down) {
        /* The launcher forwards every rank's output through its proxies
         * and may stop forwarding once the abort starts (MPICH's hydra lost
         * the line now and then on a loaded host): give the line 0.2 s to
         * reach it, so the run says why. */
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    exit(3);
}

int fl_peer(const fl_ctx *ctx)
{
    int p = ctx->rank ^ 1;
    return p < ctx->nranks ? p : -1;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fl_median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, by_value);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Ranks of comm on this machine, by its boot id: network namespaces and
 * containers share one, so an emulated testbed's hosts count as one machine. */
static int ranks_here(MPI_Comm comm)
{
    char id[64] = "";
    int n = 0, same = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id, sizeof id, f))
            id[0] = '\0';
        fclose(f);
    }
    MPI_Comm_size(comm, &n);
    char *all = malloc((size_t)n * sizeof id);
    if (!all)
        fl_die("out of memory");
    MPI_Allgather(id, sizeof id, MPI_CHAR, all, sizeof id, MPI_CHAR, comm);
    for (int q = 0; q < n; q++)
        same += strncmp(all + (size_t)q * sizeof id, id, sizeof id) == 0;
    free(all);
    return same;
}

int fl_crowded(MPI_Comm comm)
{
    int mine = ranks_here(comm) > (int)sysconf(_SC_NPROCESSORS_ONLN), any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any;
}

int fl_crowded_init(const fl_ctx *ctx, void **bs)
{
    int *crowded = fl_alloc(sizeof *crowded);
    *crowded = fl_crowded(ctx->comm);
    *bs = crowded;
    return FL_OK;
}

void fl_crowded_fini(const fl_ctx *ctx, void *bs)
{
    (void)ctx;
    fl_free(bs);
}

void fl_nap(void)
{
    struct timespec ts = {0, FL_NAP_NS};
    nanosleep(&ts, NULL);
}
