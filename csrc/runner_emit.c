/* The runner's JSON lines (docs/core-protocol.md): a point's begin and skip,
 * its point line (samples, where the point is, what every rank held and, for
 * a pattern, every rank's role and samples) and the run's end line. */
#include "runner.h"

#include <stdlib.h>

static const char *const stop_name[] = {"", "converged", "time_cap", "max_samples"};

/* "size":S,"stride":T,"conns":C[,"active":A]: where a point is. */
static void point_where(fl_buf *j, const fl_point *pt)
{
    fl_buf_printf(j, ",\"size\":%lld,\"stride\":%lld,\"conns\":%lld", (long long)pt->size,
                  (long long)pt->stride, (long long)pt->conns);
    if (pt->layout)
        fl_buf_printf(j, ",\"active\":%d", pt->layout->active);
}

void runner_emit_where(const fl_run_state *r, const char *type, const fl_point *pt,
                       const char *reason)
{
    fl_buf j = {0};
    fl_buf_printf(&j, "{\"type\":\"%s\",\"bench\":", type);
    fl_buf_str(&j, r->b->name);
    point_where(&j, pt);
    if (reason) {
        fl_buf_printf(&j, ",\"reason\":");
        fl_buf_str(&j, reason);
    }
    fl_buf_printf(&j, "}");
    fl_emit(j.p);
    fl_buf_free(&j);
}

/* Pattern benchmarks: roles, peers, hosts, per-rank samples (null for a rank
 * that times nothing), bytes and messages per op; the totals become the
 * point's bytes_per_op and messages_per_op. */
static void emit_ranks(fl_buf *j, const fl_run_state *r, const fl_point *pt,
                       const int64_t *per, int n, int64_t *bytes, int64_t *messages)
{
    const fl_layout *l = pt->layout;
    const int nr = r->ctx.nranks;
    *bytes = *messages = 0;
    fl_buf_printf(j, ",\"roles\":\"%.*s\",\"peers\":[", nr, l->role);
    for (int q = 0; q < nr; q++)
        fl_buf_printf(j, "%s%d", q ? "," : "", l->peer[q]);
    fl_buf_printf(j, "],\"rank_sent_bytes\":[");
    for (int q = 0; q < nr; q++) {
        fl_buf_printf(j, "%s%lld", q ? "," : "", (long long)per[3 * q]);
        *bytes += per[3 * q];
        *messages += per[3 * q + 2];
    }
    fl_buf_printf(j, "],\"rank_recv_bytes\":[");
    for (int q = 0; q < nr; q++)
        fl_buf_printf(j, "%s%lld", q ? "," : "", (long long)per[3 * q + 1]);
    fl_buf_printf(j, "],\"rank_samples\":[");
    for (int q = 0; q < nr; q++) {
        const double *x = r->rank_samples + (size_t)q * (size_t)r->opts.max_samples;
        fl_buf_printf(j, "%s", q ? "," : "");
        if (n > 0 && x[0] > 0)
            fl_buf_nums(j, x, n);
        else
            fl_buf_printf(j, "null");
    }
    fl_buf_printf(j, "]");
}

/* Every rank's bytes held by the point's kernel since before its setup
 * (fl_held_peak) and the working set of its ops, to rank 0 as pairs. */
int64_t *runner_gather_held(const fl_run_state *r, const fl_point *pt, const fl_shape *sh,
                            int64_t base)
{
    const fl_ctx *c = &r->ctx;
    int64_t mine[2] = {fl_held_peak() - base, sh->working_set}, *all = NULL;
    if (!mine[1])
        mine[1] = (sh->buffers > 0 ? sh->buffers : pt->buffers) * pt->size;
    if (c->rank == 0 && !(all = malloc(sizeof *all * 2 * (size_t)c->nranks)))
        fl_die("out of memory");
    MPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, c->comm);
    return all;
}

/* ,"working_set_bytes":W,"rank_alloc_bytes":[...]: the largest working set
 * of any rank (null for an app's op) and what each rank's kernel held. */
static void emit_held(fl_buf *j, const int64_t *held, int nranks)
{
    int64_t ws = -1;
    for (int q = 0; q < nranks; q++)
        ws = held[2 * q + 1] > ws ? held[2 * q + 1] : ws;
    if (ws >= 0)
        fl_buf_printf(j, ",\"working_set_bytes\":%lld", (long long)ws);
    else
        fl_buf_printf(j, ",\"working_set_bytes\":null");
    fl_buf_printf(j, ",\"rank_alloc_bytes\":[");
    for (int q = 0; q < nranks; q++)
        fl_buf_printf(j, "%s%lld", q ? "," : "", (long long)held[2 * q]);
    fl_buf_printf(j, "]");
}

void runner_emit_point(const fl_run_state *r, const fl_point *pt, fl_shape *sh,
                       const int64_t *per, const int64_t *held, int64_t warmup, int64_t batch,
                       int n, int stop, double elapsed, const int64_t *validation, const char *extra)
{
    const fl_facts *f = r->b->facts;
    int64_t bytes = sh->bytes_per_op, messages = 0;
    fl_buf j = {0}, ranks = {0};
    if (pt->layout)
        emit_ranks(&ranks, r, pt, per, n, &bytes, &messages);
    if (pt->layout && sh->bytes_per_op > 0) /* an app's op: its problem's bytes (the array) */
        bytes = sh->bytes_per_op;
    fl_buf_printf(&j, "{\"type\":\"point\",\"bench\":");
    fl_buf_str(&j, r->b->name);
    point_where(&j, pt);
    fl_buf_printf(&j, ",\"buffers\":%lld", (long long)(sh->buffers > 0 ? sh->buffers : pt->buffers));
    emit_held(&j, held, r->ctx.nranks);
    fl_buf_printf(&j, ",\"bytes_per_op\":%lld,\"legs_per_op\":%d,\"concurrent\":%s,"
                  "\"warmup\":%lld,\"batch\":%lld,\"samples\":", (long long)bytes, sh->legs_per_op,
                  f->concurrent ? "true" : "false", (long long)warmup, (long long)batch);
    fl_buf_nums(&j, r->samples, n);
    fl_buf_printf(&j, ",\"stop\":\"%s\",\"elapsed_s\":", stop_name[stop]);
    fl_buf_num(&j, elapsed);
    if (validation)
        fl_buf_printf(&j, ",\"validation\":{\"checked_bytes\":%lld,\"errors\":%lld}",
                      (long long)validation[1], (long long)validation[0]);
    else
        fl_buf_printf(&j, ",\"validation\":null");
    if (pt->layout)
        fl_buf_printf(&j, ",\"messages_per_op\":%lld%s", (long long)messages, ranks.p);
    if (r->nphases)
        runner_emit_phases(&j, r, sh, n);
    if (extra)
        fl_buf_printf(&j, "%s", extra);
    sh->info[FL_INFO_LEN - 1] = '\0';
    fl_buf_printf(&j, ",\"info\":%s}", sh->info[0] ? sh->info : "{}");
    fl_emit(j.p);
    fl_buf_free(&j);
    fl_buf_free(&ranks);
}

/* The run's last line: the points it printed and the CPU each rank ends on. */
void runner_emit_end(const fl_run_state *r)
{
    int *on = r->ctx.rank == 0 ? malloc(sizeof *on * (size_t)r->ctx.nranks) : NULL;
    if (r->ctx.rank == 0 && !on)
        fl_die("out of memory");
    fl_gather_cpus(&r->ctx, on);
    if (r->ctx.rank == 0) {
        fl_buf j = {0};
        fl_buf_printf(&j, "{\"type\":\"end\",\"bench\":");
        fl_buf_str(&j, r->b->name);
        fl_buf_printf(&j, ",\"points\":%d", r->points);
        fl_buf_int_list(&j, "cpu_end", on, r->ctx.nranks);
        fl_buf_printf(&j, "}");
        fl_emit(j.p);
        fl_buf_free(&j);
    }
    free(on);
}
