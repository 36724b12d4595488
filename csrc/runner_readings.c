/* What a kernel reads beside its samples: an app's phases of an op
 * (docs/core-protocol.md, "phases") and a kernel's counters ("counters"),
 * taken around each sample and gathered to rank 0's point line. */
#include "runner.h"

#include <stdlib.h>
#include <string.h>

static double phase_mark[FL_MAX_PHASES];

/* The number of phases in "a,b,c" (at most FL_MAX_PHASES), 0 for NULL. */
int runner_count_phases(const char *names)
{
    int n = runner_count_names(names);
    return n < FL_MAX_PHASES ? n : FL_MAX_PHASES;
}

void runner_phase_begin(const fl_run_state *r, void *state)
{
    r->b->k->phases(state, phase_mark);
}

/* Sample i of a round of k: this rank's seconds per op in each phase (0 on
 * a rank that times nothing), at phase_round[p * k + i]. */
void runner_phase_end(fl_run_state *r, void *state, int i, int k, int64_t batch, int timed)
{
    double now[FL_MAX_PHASES];
    r->b->k->phases(state, now);
    for (int p = 0; p < r->nphases; p++)
        r->phase_round[(size_t)p * (size_t)k + (size_t)i] =
            timed ? (now[p] - phase_mark[p]) / (double)batch : 0.0;
}

/* A round's phase times, summed over the ranks and divided by the timed
 * ones, into rank 0's phase samples n0..n0+k-1: the mean rank's split of an
 * op (docs/core-protocol.md, "phases"). */
void runner_keep_phases(fl_run_state *r, int k, int n0)
{
    const fl_ctx *c = &r->ctx;
    size_t len = (size_t)r->nphases * (size_t)k;
    MPI_Reduce(c->rank ? r->phase_round : MPI_IN_PLACE, r->phase_round, (int)len, MPI_DOUBLE,
               MPI_SUM, 0, c->comm);
    if (c->rank != 0)
        return;
    for (int p = 0; p < r->nphases; p++)
        for (int i = 0; i < k; i++)
            r->phase_samples[(size_t)p * (size_t)r->opts.max_samples + (size_t)(n0 + i)] =
                r->phase_round[(size_t)p * (size_t)k + (size_t)i] / (r->timed_ranks > 0 ? r->timed_ranks : 1);
}

/* ,"phases":{"pack":[...],...} */
void runner_emit_phases(fl_buf *j, const fl_run_state *r, const fl_shape *sh, int n)
{
    const char *name = sh->phase_names;
    fl_buf_printf(j, ",\"phases\":{");
    for (int p = 0; p < r->nphases; p++) {
        size_t len = strcspn(name, ",");
        fl_buf_printf(j, "%s\"%.*s\":", p ? "," : "", (int)len, name);
        fl_buf_nums(j, r->phase_samples + (size_t)p * (size_t)r->opts.max_samples, n);
        name += len + (name[len] == ',');
    }
    fl_buf_printf(j, "}");
}

/* ---- kernel counters (docs/core-protocol.md, "counters") ---- */

/* The number of names in "a,b,c", 0 for NULL or "". */
int runner_count_names(const char *names)
{
    int n = names && names[0] ? 1 : 0;
    for (const char *c = names; c && *c; c++)
        n += *c == ',';
    return n;
}

/* This rank's counters into row `at` (0: before the first sample, i + 1: after sample i). */
void runner_read_counters(const fl_run_state *r, void *state, int at)
{
    if (r->ncounters)
        r->b->k->counters(state, r->counter_vals + (size_t)at * (size_t)r->ncounters);
}

/* Collective: every rank's counter names and its n + 1 rows of values to
 * rank 0, which appends ,"rank_counters":[null | {"name":[v0..vn]}, ...]. */
void runner_gather_counters(const fl_run_state *r, const fl_shape *sh, int n, fl_buf *j)
{
    const fl_ctx *c = &r->ctx;
    const char *names = r->ncounters ? sh->counter_names : "";
    int mine[2] = {r->ncounters, (int)strlen(names) + 1}, *all = NULL, *vcount = NULL, *vdisp = NULL;
    int *ncount = NULL, *ndisp = NULL;
    char *allnames = NULL;
    double *allvals = NULL, *x = NULL;
    if (c->rank == 0) {
        all = malloc(sizeof *all * 2 * (size_t)c->nranks);
        vcount = malloc(sizeof *vcount * 4 * (size_t)c->nranks);
        if (!all || !vcount)
            fl_die("out of memory");
        vdisp = vcount + c->nranks, ncount = vdisp + c->nranks, ndisp = ncount + c->nranks;
    }
    MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, c->comm);
    size_t nv = 0, nn = 0;
    for (int q = 0; c->rank == 0 && q < c->nranks; q++) {
        vcount[q] = all[2 * q] * (n + 1), vdisp[q] = (int)nv, nv += (size_t)vcount[q];
        ncount[q] = all[2 * q + 1], ndisp[q] = (int)nn, nn += (size_t)ncount[q];
    }
    if (c->rank == 0 && (!(allvals = malloc(sizeof *allvals * (nv + 1))) || !(allnames = malloc(nn + 1)) ||
                         !(x = malloc(sizeof *x * (size_t)(n + 1)))))
        fl_die("out of memory");
    MPI_Gatherv(names, mine[1], MPI_CHAR, allnames, ncount, ndisp, MPI_CHAR, 0, c->comm);
    MPI_Gatherv(r->counter_vals, r->ncounters * (n + 1), MPI_DOUBLE, allvals, vcount, vdisp, MPI_DOUBLE, 0,
                c->comm);
    for (int q = 0; c->rank == 0 && q < c->nranks; q++) {
        int nc = all[2 * q];
        const char *name = allnames + ndisp[q];
        fl_buf_printf(j, "%s", q ? "," : ",\"rank_counters\":[");
        if (!nc) {
            fl_buf_printf(j, "null");
            continue;
        }
        fl_buf_printf(j, "{");
        for (int p = 0; p < nc; p++) {
            size_t len = strcspn(name, ",");
            for (int i = 0; i <= n; i++)
                x[i] = allvals[vdisp[q] + i * nc + p];
            fl_buf_printf(j, "%s\"%.*s\":", p ? "," : "", (int)len, name);
            fl_buf_nums(j, x, n + 1);
            name += len + (name[len] == ',');
        }
        fl_buf_printf(j, "}");
    }
    if (c->rank == 0)
        fl_buf_printf(j, "]");
    free(all), free(vcount), free(allvals), free(allnames), free(x);
}
