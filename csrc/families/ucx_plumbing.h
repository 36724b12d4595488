/* ucx: the UCX plumbing (ucx_plumbing.c) below the UCP kernels of ucx.c,
 * which knows nothing of them: one UCP context and worker per run,
 * endpoints to peers made from worker addresses that MPI carried once,
 * memory mapped with the context, and completion by polling the worker.
 *
 * MPI only sets things up (addresses in init, remote keys in setup); no MPI
 * call runs inside a measure. The context is our own: libmpi may hold a UCP
 * context of its own in the same process (MPICH ch4:ucx), and the two share
 * nothing but the library. The `tls` param reaches only ours, through
 * ucp_config_modify, never through the environment MPI reads. */
#ifndef FL_UCX_PLUMBING_H
#define FL_UCX_PLUMBING_H

#include "../fl.h"

#include <ucp/api/ucp.h>

#define UCX_TLS_LEN 128
#define UCX_LANES_LEN 400

/* Once per run. */
typedef struct {
    ucp_context_h context; /* NULL when ucp_init failed: every point skips */
    ucp_worker_h worker;
    char tls[UCX_TLS_LEN]; /* the param, or "default" */
    char failed[FL_NOTE_LEN]; /* why there is no context */
    int nranks;
    char *addrs;           /* every rank's worker address, back to back */
    size_t *addr_off, *addr_len;
    ucp_ep_h *ep;          /* per rank; made when a point first needs it */
} ucx_run;

/* A region of memory mapped with the context (pinned where the transport
 * registers memory), and what a peer needs to reach it. */
typedef struct {
    char *base;
    size_t bytes;
    ucp_mem_h memh;
} ucx_region;

/* init and fini of every ucx kernel; `rcache` 0 turns off UCP's registration
 * cache, so that ucp_mem_map registers on every call (ucx.mr_reg). */
int ucx_start(const fl_ctx *ctx, void **bench_state, int rcache);
void ucx_stop(const fl_ctx *ctx, void *bench_state);
/* ucx_start with the context's UCP features (ucx_start: UCP_FEATURE_TAG |
 * UCP_FEATURE_RMA; the atomics add UCP_FEATURE_AMO64). */
int ucx_start_with(const fl_ctx *ctx, void **bench_state, int rcache, uint64_t features);
/* A run's UCP context alone (no worker): the tls param as UCX_TLS, the
 * registration cache off unless `rcache`, workers of several threads sharing
 * it where `shared_workers` (ucx_perftest's mt_workers_shared for -T); where
 * ucp_init fails, context NULL and `failed` says why. */
ucx_run *ucx_new_run(const fl_ctx *ctx, int rcache, uint64_t features, int shared_workers);

/* The endpoint to `peer` (collective among the ranks that call it for each
 * other: a pair's two ranks); NULL, and a reason in note, if UCP refuses. */
ucp_ep_h ucx_ep(ucx_run *r, int peer, char *note);

/* The point's info JSON: library, tls, the lanes UCP chose for `ep` (NULL:
 * none), then `extra` (",\"window\":64,..." or ""). */
void ucx_info(const ucx_run *r, ucp_ep_h ep, const char *extra, char *info);

/* Maps `bytes` (at least a page) of fresh, touched memory. */
void ucx_map(const ucx_run *r, size_t bytes, ucx_region *m);
void ucx_unmap(const ucx_run *r, ucx_region *m);

/* Across `comm` (the pair): the target sends its region's address and packed
 * key, the origin unpacks the key for `ep`. Collective on the pair. */
void ucx_swap_key(const ucx_run *r, MPI_Comm comm, int origin, int peer, ucp_ep_h ep,
                  const ucx_region *m, uint64_t *raddr, ucp_rkey_h *rkey);

_Noreturn void ucx_fail(const char *what, ucs_status_t st);

/* Completion: a NULL request is done already; an error ends the run. */
static inline void *ucx_check(void *req, const char *what)
{
    if (UCS_PTR_IS_ERR(req))
        ucx_fail(what, UCS_PTR_STATUS(req));
    return req;
}

static inline void ucx_wait(ucp_worker_h w, void *req, const char *what)
{
    if (ucx_check(req, what) == NULL)
        return;
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    ucp_request_free(req);
    if (st != UCS_OK)
        ucx_fail(what, st);
}

static inline void ucx_wait_all(ucp_worker_h w, void **req, int n, const char *what)
{
    for (int j = 0; j < n; j++)
        ucx_wait(w, req[j], what);
}

#endif
