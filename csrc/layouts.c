/* The rank layouts of the traffic patterns (fl.h, fl_layout), checked whole
 * on every rank so every rank agrees: the families that run a pattern over
 * MPI (message_patterns.c) and over libfabric (fabric_patterns.c) share these
 * rules. Each returns NULL or the reason the layout cannot run. */
#include "fl.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

/* Rank q has role `mine`, and its peer has role `theirs` and names q back. */
static int paired(const fl_layout *l, int n, int q, char mine, char theirs)
{
    int p = l->peer[q];
    return p >= 0 && p < n && p != q && l->role[p] == theirs && l->peer[p] == q &&
           l->role[q] == mine;
}

/* bibw, bisection: every active rank 'b', paired with a 'b'. */
const char *fl_exchange_fault(const fl_layout *l, int n)
{
    for (int q = 0; q < n; q++)
        if (l->role[q] != FL_IDLE && !paired(l, n, q, FL_BOTH, FL_BOTH))
            return "layout: every active rank must be 'b' with a 'b' peer that names it back";
    return NULL;
}

/* saturation: every active rank 's' or 'r', paired with the other role. */
const char *fl_pairs_fault(const fl_layout *l, int n)
{
    for (int q = 0; q < n; q++)
        if (l->role[q] != FL_IDLE && !paired(l, n, q, FL_SENDER, FL_RECEIVER) &&
            !paired(l, n, q, FL_RECEIVER, FL_SENDER))
            return "layout: every active rank must be 's' or 'r' paired with the other role";
    return NULL;
}

/* hotspot: senders 's' name a target 't'; nothing else but idle ranks. */
const char *fl_hotspot_fault(const fl_layout *l, int n)
{
    for (int q = 0; q < n; q++) {
        char r = l->role[q];
        int p = l->peer[q];
        if (r == FL_SENDER && !(p >= 0 && p < n && p != q && l->role[p] == FL_TARGET))
            return "layout: every sender 's' must name a target 't' as its peer";
        if (r != FL_IDLE && r != FL_SENDER && r != FL_TARGET)
            return "layout: hotspot roles are 't', 's' and 'i'";
    }
    return NULL;
}

/* A pattern point: FL_ERROR with `bad` (or the missing layout) in the note,
 * FL_SKIP for a size no MPI int count holds, else FL_OK. */
int fl_pattern_point(const fl_point *pt, fl_shape *shape, const char *bad)
{
    if (!pt->layout)
        bad = "a pattern benchmark needs a layout (--layouts)";
    if (bad) {
        snprintf(shape->note, FL_NOTE_LEN, "%s", bad);
        return FL_ERROR;
    }
    if (pt->size > INT_MAX) {
        snprintf(shape->note, FL_NOTE_LEN, "size above INT_MAX bytes (MPI int count)");
        return FL_SKIP;
    }
    return FL_OK;
}
