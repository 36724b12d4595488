/* Reference window loops between ranks 0 and 1: the smallest MPI programs
 * that run the loops of fabriclab's windowed kernels with its warm buffers
 * (see WARM_REGION) in either of OSU's layouts (LAYOUT), so
 * bench/bench_patterns.py can hold fabriclab's figures against them.
 *
 *   bibw      message.bibw (osu_bibw): per window both ranks post WINDOW
 *             receives from the other, then WINDOW sends, wait for all, then
 *             exchange a zero-byte ack; an op is one message each way.
 *   stream    message.stream (osu_bw): rank 0 sends WINDOW messages to
 *             pre-posted receives, rank 1 acks each window with zero bytes.
 *   put_bibw  deposit.put_bibw (osu_put_bibw, passive target): both ranks put
 *             WINDOW messages into each other's window, then MPI_Win_flush.
 *
 * Per size the window count is chosen so the timed loop lasts about SECONDS;
 * each window is timed too (the slower rank's, as fabriclab times a sample).
 * Rank 0 prints one JSON line per size: seconds per op and MB/s (10^6
 * bytes/s, both directions counted for the bidirectional loops) of the whole
 * loop, and of the median window, which a loaded host disturbs far less.
 *
 * Usage: mpiexec -n 2 window_ref MODE [sizes] [seconds] [layout]
 *   sizes: comma-separated bytes with optional K/M suffix (default 8 B..4 MiB)
 *   seconds: timed seconds per size (default 0.3)
 *   layout: shared or per-op (default: shared for bibw and stream, per-op
 *           for put_bibw, as fabriclab's window_buffers) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define DEFAULT_SIZES "8,32,128,512,2K,8K,32K,128K,512K,2M,4M"
#define TAG_DATA 1
#define TAG_ACK 2

/* fabriclab's warm layout (src/fabriclab/suite/buffers.py): op i of a
 * point uses slot i % slots on both sides, i running on from window to
 * window, slots = WARM_REGION / size, at least 1 (shared: from 64 KiB up a
 * window's ops all go from one buffer into one, osu_bw's and osu_bibw's
 * default) or at least a window's (per-op: every op of a window has its own
 * slot, osu_bw's -b multiple and osu_put_bw's offsets). Every loop follows
 * it, so that they move the same bytes between the same places as
 * fabriclab's kernels and differ only in the harness. */
#define WARM_REGION (64 << 10)

typedef struct {
    int rank, size, per_op;
    int64_t slots, next; /* slots per side; the next op's number */
    char *sbuf, *rbuf;   /* put_bibw: rbuf is the window's base, sbuf follows the slots */
    MPI_Win win;
} loop;

static inline size_t slot(const loop *l, int j)
{
    return (size_t)((l->next + j) % l->slots) * (size_t)l->size;
}

static void bibw_window(loop *l)
{
    MPI_Request req[2 * WINDOW];
    char ack_in = 0, ack_out = 0;
    int peer = 1 - l->rank;
    for (int j = 0; j < WINDOW; j++)
        MPI_Irecv(l->rbuf + slot(l, j), l->size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[j]);
    for (int j = 0; j < WINDOW; j++)
        MPI_Isend(l->sbuf + slot(l, j), l->size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                  &req[WINDOW + j]);
    l->next += WINDOW;
    MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
    MPI_Irecv(&ack_in, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&ack_out, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

static void stream_window(loop *l)
{
    MPI_Request req[WINDOW];
    char ack = 0;
    if (l->rank == 0) {
        for (int j = 0; j < WINDOW; j++)
            MPI_Isend(l->sbuf + slot(l, j), l->size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int j = 0; j < WINDOW; j++)
            MPI_Irecv(l->rbuf + slot(l, j), l->size, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &req[j]);
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
    }
    l->next += WINDOW;
}

static void put_bibw_window(loop *l)
{
    int peer = 1 - l->rank;
    for (int j = 0; j < WINDOW; j++)
        MPI_Put(l->sbuf + slot(l, j), l->size, MPI_BYTE, peer, (MPI_Aint)slot(l, j), l->size, MPI_BYTE,
                l->win);
    MPI_Win_flush(peer, l->win);
    l->next += WINDOW;
}

static const struct mode {
    const char *name;
    void (*window)(loop *);
    int directions; /* payload of an op: size bytes each way */
} modes[] = {
    {"bibw", bibw_window, 2},
    {"stream", stream_window, 1},
    {"put_bibw", put_bibw_window, 2},
};

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

/* Seconds for n windows, the slower of ranks 0 and 1, on every rank; w[i]
 * gets window i's seconds, the slower rank's. */
static double timed(const struct mode *m, loop *l, long n, double *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), t = t0;
    for (long i = 0; i < n; i++) {
        if (l->rank < 2)
            m->window(l);
        double now = MPI_Wtime();
        w[i] = now - t;
        t = now;
    }
    t -= t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, w, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
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
static char *buffer(size_t size)
{
    void *p = NULL;
    size_t n = size + 4096;
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

static void buffers_for(const struct mode *m, loop *l)
{
    int64_t own = l->per_op ? WINDOW : 1, rotation = l->size > 0 ? WARM_REGION / l->size : own;
    l->slots = rotation > own ? rotation : own;
    size_t region = (size_t)l->slots * (size_t)l->size;
    if (m->window != put_bibw_window) {
        l->sbuf = buffer(region);
        l->rbuf = buffer(region);
        return;
    }
    /* whole pages, as fabriclab asks (fl_win_bytes in csrc/fl.h): a size of
     * pages plus 8 bytes made 8-128 KiB puts 10-14x slower with MPICH 5.0 */
    MPI_Aint bytes = ((MPI_Aint)(2 * region) + 4095) / 4096 * 4096;
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &l->rbuf, &l->win);
    memset(l->rbuf, 0, (size_t)bytes);
    l->sbuf = l->rbuf + region;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, l->win);
}

static void free_buffers(const struct mode *m, loop *l)
{
    if (m->window != put_bibw_window) {
        free(l->sbuf);
        free(l->rbuf);
        return;
    }
    MPI_Win_unlock_all(l->win);
    MPI_Win_free(&l->win);
}

/* One size: warm up and calibrate (double the window count until a run
 * lasts 20 ms), scale to the timed duration, time, print. */
static void run_size(const struct mode *m, loop *l, double seconds)
{
    long n = 1;
    double t, *w = times(n);
    while ((t = timed(m, l, n, w)) < 0.02) {
        n *= 2;
        free(w);
        w = times(n);
    }
    n = (long)(seconds / (t / (double)n)) + 1;
    free(w);
    w = times(n);
    t = timed(m, l, n, w);
    if (l->rank == 0) {
        double op = t / ((double)n * WINDOW), med = median(w, n) / WINDOW;
        double bytes = (double)m->directions * l->size;
        printf("{\"mode\":\"%s\",\"layout\":\"%s\",\"slots\":%lld,\"size\":%d,\"windows\":%ld,"
               "\"window\":%d,\"seconds_per_op\":%.9e,"
               "\"mb_per_s\":%.6f,\"median_window_seconds_per_op\":%.9e,"
               "\"median_window_mb_per_s\":%.6f}\n",
               m->name, l->per_op ? "per-op" : "shared", (long long)l->slots, l->size, n, WINDOW, op,
               bytes / op / 1e6, med, bytes / med / 1e6);
        fflush(stdout);
    }
    free(w);
}

int main(int argc, char **argv)
{
    int rank, nranks;
    long sizes[64];
    const struct mode *m = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (size_t i = 0; argc > 1 && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(argv[1], modes[i].name) == 0)
            m = &modes[i];
    int nsizes = parse_sizes(argc > 2 ? argv[2] : DEFAULT_SIZES, sizes, 64);
    double seconds = argc > 3 ? atof(argv[3]) : 0.3;
    const char *layout = argc > 4 ? argv[4] : m && m->window == put_bibw_window ? "per-op" : "shared";
    int per_op = strcmp(layout, "per-op") == 0;
    if (!m || nranks < 2 || nsizes < 1 || seconds <= 0 || (!per_op && strcmp(layout, "shared") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 window_ref bibw|stream|put_bibw [sizes] [seconds] "
                            "[shared|per-op]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < nsizes; i++) {
        loop l = {.rank = rank, .size = (int)sizes[i], .per_op = per_op};
        buffers_for(m, &l);
        run_size(m, &l, seconds);
        free_buffers(m, &l);
    }
    MPI_Finalize();
    return 0;
}
