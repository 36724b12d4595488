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
    return FL_OK;
}

void app_end(app_common *a)
{
    if (a->comm != MPI_COMM_NULL)
        MPI_Comm_free(&a->comm);
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
