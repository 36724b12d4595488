/* Family "app": what the three applications share (app.h): the active
 * ranks' communicator and the phase times the runner reads. */
#include "app.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *app_fault(const fl_layout *l, int nranks)
{
    for (int q = 0; q < nranks; q++)
        if (l->role[q] != (q < l->active ? FL_BOTH : FL_IDLE))
            return "layout: an app runs on the first ACTIVE ranks (role 'b'), the rest idle";
    return NULL;
}

int app_begin(const fl_ctx *ctx, const fl_point *pt, fl_shape *shape, app_common *a)
{
    const fl_layout *l = pt->layout;
    const char *bad = l ? app_fault(l, ctx->nranks) : "an app needs a layout (--layouts)";
    memset(a, 0, sizeof *a);
    a->comm = MPI_COMM_NULL;
    shape->working_set = -1; /* an app's op is the whole problem: no rotation */
    if (bad) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", bad);
        return FL_ERROR;
    }
    int on = ctx->rank < l->active;
    MPI_Comm_split(ctx->comm, on ? 0 : MPI_UNDEFINED, ctx->rank, &a->comm);
    a->n = l->active;
    shape->timed = on;
    /* one memory node: every active rank is in this rank's shared-memory
     * group; decided on every rank, idle ones included, so all agree */
    int all = 1;
    if (on) {
        MPI_Comm node;
        int size = 0;
        MPI_Comm_rank(a->comm, &a->rank);
        MPI_Comm_split_type(a->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &size);
        MPI_Comm_free(&node);
        all = size == a->n;
    }
    MPI_Allreduce(&all, &a->node_shared, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (on)
        a->req = fl_alloc(sizeof *a->req * 2 * (size_t)a->n);
    return FL_OK;
}

int app_schedule(const fl_opts *o)
{
    const char *v = fl_param_find(o, "exchange"), *sync = fl_param_find(o, "sync");
    return !v || strcmp(v, "collective") == 0 ? APP_COLLECTIVE
           : strcmp(v, "concurrent") == 0     ? APP_CONCURRENT
           : sync && strcmp(sync, "none") == 0 ? APP_PAIRWISE_FREE
                                              : APP_PAIRWISE;
}

const char *app_schedule_name(int schedule)
{
    return schedule == APP_CONCURRENT ? "Isend/Irecv to every rank at once"
           : schedule == APP_PAIRWISE ? "pairwise MPI_Sendrecv steps, a barrier between steps"
           : schedule == APP_PAIRWISE_FREE ? "pairwise MPI_Sendrecv steps, no barrier"
                                      : "MPI_Alltoallv";
}

enum { TAG_APP = 401 };

void app_alltoallv(app_common *a, int schedule, const void *sbuf, const int *scount, const int *sdispl,
                   void *rbuf, const int *rcount, const int *rdispl, MPI_Datatype type)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(type, &lb, &ext);
    const char *sb = sbuf;
    char *rb = rbuf;
    const int n = a->n, r = a->rank;
    if (schedule == APP_COLLECTIVE) {
        MPI_Alltoallv(sbuf, scount, sdispl, type, rbuf, rcount, rdispl, type, a->comm);
        return;
    }
    for (int k = 0; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        if (schedule == APP_PAIRWISE || schedule == APP_PAIRWISE_FREE) {
            if (k > 1 && schedule == APP_PAIRWISE) /* step k - 1 over on every rank (app.h) */
                MPI_Barrier(a->comm);
            MPI_Sendrecv(sb + sdispl[to] * ext, scount[to], type, to, TAG_APP, rb + rdispl[from] * ext,
                         rcount[from], type, from, TAG_APP, a->comm, MPI_STATUS_IGNORE);
            continue;
        }
        MPI_Irecv(rb + rdispl[from] * ext, rcount[from], type, from, TAG_APP, a->comm, &a->req[k]);
        MPI_Isend(sb + sdispl[to] * ext, scount[to], type, to, TAG_APP, a->comm, &a->req[n + k]);
    }
    if (schedule == APP_CONCURRENT)
        MPI_Waitall(2 * n, a->req, MPI_STATUSES_IGNORE);
}

void app_end(app_common *a)
{
    if (a->comm != MPI_COMM_NULL)
        MPI_Comm_free(&a->comm);
    fl_free(a->req);
    a->req = NULL;
}

void app_phases(const void *state, double *out)
{
    memcpy(out, ((const app_common *)state)->phase, sizeof(double) * FL_MAX_PHASES);
}

int app_int_count(int64_t items, fl_shape *shape, const char *what)
{
    if (items <= INT_MAX)
        return 0;
    snprintf(shape->note, FL_NOTE_LEN, "%s: %lld items exceed an MPI int count", what,
             (long long)items);
    return 1;
}
