/* Family "app": the seeds' applications (seed 000's distributed transpose,
 * seed 003's matrix multiply and bucket sort), each op one whole run of the
 * application on the ACTIVE ranks of the point's layout (the first ACTIVE
 * ranks, role 'b'; the rest idle). An op is timed as a sum of named phases
 * (fl_shape.phase_names), which the runner records per sample.
 *
 * Distributions are block distributions in the balanced form
 * lo(r) = floor(r * n / N): rank r owns items lo(r) .. lo(r+1)-1, so any n
 * divides over any N <= n, the blocks differing by at most one item. The
 * same arithmetic is written in Python (suite/apps.py), which predicts the
 * bytes each rank sends and checks them against what the core reports. */
#ifndef FL_APP_H
#define FL_APP_H

#include "../fl.h"

/* The first item of rank r's block of n items over N ranks. */
static inline int64_t app_lo(int64_t n, int r, int N)
{
    return (int64_t)(((__int128)n * r) / N);
}

static inline int64_t app_count(int64_t n, int r, int N)
{
    return app_lo(n, r + 1, N) - app_lo(n, r, N);
}

/* What every app point shares: the active ranks' communicator (MPI_COMM_NULL
 * on an idle rank), this rank's place in it, and the time of each phase. */
typedef struct {
    MPI_Comm comm;
    int rank, n;             /* in comm; n = the point's active count */
    int node_shared;         /* every active rank shares one memory node (known on every rank) */
    double phase[FL_MAX_PHASES];
    MPI_Request *req;        /* 2 n, for the exchanges of app_alltoallv */
} app_common;

/* How an app exchanges its blocks (param `exchange`): the MPI collective
 * (the library's own schedule), every message at once (Irecv and Isend to
 * every rank, one wait), or pairwise in n steps, step k sending to r + k
 * and receiving from r - k (Thakur, Rabenseifner and Gropp, 2005), a
 * barrier between steps so that they run one after another, as the model
 * adds them (verdicts/exchange_prediction.py): without it a rank ahead sends its next
 * step's block (eagerly, below the library's rendezvous threshold) into
 * cables still carrying the step before, and the steps overlap (barriers
 * between the phases of an all-to-all: Brewer and Kuszmaul, "How to get
 * good performance from the CM-5 data network", IPPS 1994; docs/apps.md).
 * `-p sync=none` leaves the barrier out. */
enum { APP_COLLECTIVE, APP_CONCURRENT, APP_PAIRWISE, APP_PAIRWISE_FREE /* sync=none */ };
int app_schedule(const fl_opts *o);
const char *app_schedule_name(int schedule);
/* An all-to-all of blocks of `type` (counts and displacements in it) by
 * the schedule; APP_COLLECTIVE is MPI_Alltoallv. */
void app_alltoallv(app_common *a, int schedule, const void *sbuf, const int *scount, const int *sdispl,
                   void *rbuf, const int *rcount, const int *rdispl, MPI_Datatype type);

/* Checks the layout (the first ACTIVE ranks 'b', the rest 'i') and splits
 * off the active ranks (collective over ctx->comm). FL_OK, or FL_ERROR with
 * a note. */
int app_begin(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape, app_common *a);
void app_end(app_common *a);
/* The shared `phases` hook: the app_common must be a kernel state's first member. */
void app_phases(const void *state, double *out);

/* Phase accounting in a timed loop: app_tick(&t) returns the seconds since
 * the last tick and moves t on. */
static inline double app_tick(double *t)
{
    double now = fl_now(), d = now - *t;
    *t = now;
    return d;
}

/* 0 when `items` fits the int count MPI takes, else 1 and a note. */
int app_int_count(int64_t items, fl_shape *shape, const char *what);

#endif
