/* ucx: the UCX plumbing below the UCP kernels (ucx_plumbing.h): context,
 * worker, endpoints, mapped memory, remote keys, the info of a point, and
 * the probe. */
#include "ucx_plumbing.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uct/api/uct.h>

_Noreturn void ucx_fail(const char *what, ucs_status_t st)
{
    fl_die("ucx: %s: %s", what, ucs_status_string(st));
}

/* Our own context: the features asked (TAG and RMA; the atomics AMO64 too),
 * the tls param as UCX_TLS. The param joins transports with '+'
 * ("posix+cma+self"), since a comma on fabriclab's command line starts
 * another variant; UCX wants commas. */
static ucs_status_t new_context(const char *tls, int rcache, uint64_t features, int shared_workers,
                                ucp_context_h *out)
{
    char list[UCX_TLS_LEN];
    snprintf(list, sizeof list, "%s", tls);
    for (char *c = list; (c = strchr(c, '+')) != NULL;)
        *c = ',';
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
    if (st != UCS_OK)
        return st;
    if (list[0])
        st = ucp_config_modify(cfg, "TLS", list);
    if (st == UCS_OK && !rcache)
        st = ucp_config_modify(cfg, "RCACHE_ENABLE", "n");
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = features};
    if (shared_workers) {
        p.field_mask |= UCP_PARAM_FIELD_MT_WORKERS_SHARED;
        p.mt_workers_shared = 1;
    }
    if (st == UCS_OK)
        st = ucp_init(&p, cfg, out);
    ucp_config_release(cfg);
    return st;
}

/* Every rank's worker address to every rank (an empty one where ucp_init failed). */
static void swap_addresses(const fl_ctx *ctx, ucx_run *r)
{
    ucp_address_t *mine = NULL;
    size_t len = 0;
    if (r->worker) {
        ucs_status_t st = ucp_worker_get_address(r->worker, &mine, &len);
        if (st != UCS_OK)
            ucx_fail("ucp_worker_get_address", st);
    }
    int n = ctx->nranks, mylen = (int)len, *lens = calloc((size_t)n, sizeof *lens),
        *offs = calloc((size_t)n, sizeof *offs);
    r->addr_off = calloc((size_t)n, sizeof *r->addr_off);
    r->addr_len = calloc((size_t)n, sizeof *r->addr_len);
    r->ep = calloc((size_t)n, sizeof *r->ep);
    if (!lens || !offs || !r->addr_off || !r->addr_len || !r->ep)
        fl_die("ucx: out of memory");
    MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, ctx->comm);
    size_t total = 0;
    for (int q = 0; q < n; q++) {
        offs[q] = (int)total;
        r->addr_off[q] = total;
        r->addr_len[q] = (size_t)lens[q];
        total += (size_t)lens[q];
    }
    r->addrs = fl_alloc(total);
    MPI_Allgatherv(mine, mylen, MPI_BYTE, r->addrs, lens, offs, MPI_BYTE, ctx->comm);
    if (mine)
        ucp_worker_release_address(r->worker, mine);
    free(lens);
    free(offs);
}

int ucx_start(const fl_ctx *ctx, void **bench_state, int rcache)
{
    return ucx_start_with(ctx, bench_state, rcache, UCP_FEATURE_TAG | UCP_FEATURE_RMA);
}

ucx_run *ucx_new_run(const fl_ctx *ctx, int rcache, uint64_t features, int shared_workers)
{
    ucx_run *r = calloc(1, sizeof *r);
    if (!r)
        fl_die("ucx: out of memory");
    const char *tls = fl_param(ctx->opts, "tls");
    snprintf(r->tls, sizeof r->tls, "%s", tls[0] ? tls : "default");
    r->nranks = ctx->nranks;
    ucs_status_t st = new_context(tls, rcache, features, shared_workers, &r->context);
    if (st != UCS_OK) {
        r->context = NULL;
        snprintf(r->failed, sizeof r->failed, "ucp_init with UCX_TLS=%s failed: %s", r->tls,
                 ucs_status_string(st));
    }
    return r;
}

int ucx_start_with(const fl_ctx *ctx, void **bench_state, int rcache, uint64_t features)
{
    ucx_run *r = ucx_new_run(ctx, rcache, features, 0);
    if (r->context) {
        ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                  .thread_mode = UCS_THREAD_MODE_SINGLE};
        ucs_status_t st = ucp_worker_create(r->context, &wp, &r->worker);
        if (st != UCS_OK)
            ucx_fail("ucp_worker_create", st);
    }
    swap_addresses(ctx, r);
    *bench_state = r;
    return FL_OK;
}

/* Closes every endpoint (flush mode: both sides progress while they wait),
 * then the worker and the context once no peer needs them any more. */
void ucx_stop(const fl_ctx *ctx, void *bench_state)
{
    ucx_run *r = bench_state;
    MPI_Barrier(ctx->comm);
    for (int q = 0; q < r->nranks; q++)
        if (r->ep[q]) {
            ucp_request_param_t p = {.op_attr_mask = 0};
            ucx_wait(r->worker, ucp_ep_close_nbx(r->ep[q], &p), "ucp_ep_close_nbx");
        }
    MPI_Barrier(ctx->comm);
    if (r->worker)
        ucp_worker_destroy(r->worker);
    if (r->context)
        ucp_cleanup(r->context);
    fl_free(r->addrs);
    free(r->addr_off);
    free(r->addr_len);
    free(r->ep);
    free(r);
}

ucp_ep_h ucx_ep(ucx_run *r, int peer, char *note)
{
    if (r->ep[peer])
        return r->ep[peer];
    ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                         .address = (const ucp_address_t *)(r->addrs + r->addr_off[peer])};
    ucs_status_t st = ucp_ep_create(r->worker, &p, &r->ep[peer]);
    if (st != UCS_OK) {
        snprintf(note, FL_NOTE_LEN, "ucp_ep_create to rank %d with UCX_TLS=%s: %s", peer, r->tls,
                 ucs_status_string(st));
        r->ep[peer] = NULL;
    }
    return r->ep[peer];
}

/* "lane[2]:  5:cma/memory.0 md[4] -> md[4]/cma/sysdev[255] seg 4294967295
 * rma_bw#0" gives "rma_bw:cma/memory": each use of a lane (the words after
 * the remote memory domain and segment size) with the transport and device
 * it runs on, once. */
static void add_lane(const char *line, fl_buf *out)
{
    const char *colon = strstr(line, "]:"), *at = strstr(line, "->");
    char tl[64] = "", use[64];
    int len = 0;
    if (!colon || !at || sscanf(colon + 2, " %*d:%63s", tl) != 1)
        return;
    char *dot = strrchr(tl, '.'); /* "posix/memory.0": drop the path index */
    if (dot)
        *dot = '\0';
    for (at += 2; sscanf(at, " %63s%n", use, &len) == 1; at += len) {
        if (!((use[0] >= 'a' && use[0] <= 'z') || use[0] == '_') || strchr(use, '/') ||
            strcmp(use, "seg") == 0)
            continue;
        char *hash = strchr(use, '#');
        if (hash)
            *hash = '\0';
        char item[140];
        snprintf(item, sizeof item, "%s:%s", use, tl);
        if (!out->p || !strstr(out->p, item))
            fl_buf_printf(out, "%s%s", out->len ? " " : "", item);
    }
}

/* The lanes of `ep` as ucp_ep_print_info lists them. */
static void lanes(ucp_ep_h ep, char *out, size_t len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f)
        fl_die("ucx: open_memstream failed");
    ucp_ep_print_info(ep, f);
    fclose(f);
    fl_buf b = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, "lane["))
            add_lane(line, &b);
    snprintf(out, len, "%s", b.p ? b.p : "");
    fl_buf_free(&b);
    free(text);
}

void ucx_info(const ucx_run *r, ucp_ep_h ep, const char *extra, char *info)
{
    fl_buf b = {0};
    fl_buf_printf(&b, "{\"library\":");
    fl_buf_printf(&b, "\"UCX %s\",\"tls\":", ucp_get_version_string());
    fl_buf_str(&b, r->tls);
    if (ep) {
        char l[UCX_LANES_LEN];
        lanes(ep, l, sizeof l);
        fl_buf_printf(&b, ",\"lanes\":");
        fl_buf_str(&b, l);
    }
    fl_buf_printf(&b, "%s}", extra);
    snprintf(info, FL_INFO_LEN, "%s", b.p);
    fl_buf_free(&b);
}

void ucx_map(const ucx_run *r, size_t bytes, ucx_region *m)
{
    m->bytes = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
    m->base = fl_alloc(m->bytes);
    ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                            UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                              .address = m->base, .length = m->bytes};
    ucs_status_t st = ucp_mem_map(r->context, &p, &m->memh);
    if (st != UCS_OK)
        ucx_fail("ucp_mem_map", st);
}

void ucx_unmap(const ucx_run *r, ucx_region *m)
{
    if (!m->base)
        return;
    ucs_status_t st = ucp_mem_unmap(r->context, m->memh);
    if (st != UCS_OK)
        ucx_fail("ucp_mem_unmap", st);
    fl_free(m->base);
    m->base = NULL;
}

void ucx_swap_key(const ucx_run *r, MPI_Comm comm, int origin, int peer, ucp_ep_h ep,
                  const ucx_region *m, uint64_t *raddr, ucp_rkey_h *rkey)
{
    uint64_t head[2]; /* address, key bytes */
    if (!origin) {
        void *key;
        size_t len;
        ucs_status_t st = ucp_rkey_pack(r->context, m->memh, &key, &len);
        if (st != UCS_OK)
            ucx_fail("ucp_rkey_pack", st);
        head[0] = (uint64_t)(uintptr_t)m->base;
        head[1] = len;
        MPI_Send(head, 2, MPI_UINT64_T, peer, 0, comm);
        MPI_Send(key, (int)len, MPI_BYTE, peer, 1, comm);
        ucp_rkey_buffer_release(key);
        return;
    }
    MPI_Recv(head, 2, MPI_UINT64_T, peer, 0, comm, MPI_STATUS_IGNORE);
    char *key = fl_alloc((size_t)head[1]);
    MPI_Recv(key, (int)head[1], MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
    ucs_status_t st = ucp_ep_rkey_unpack(ep, key, rkey);
    if (st != UCS_OK)
        ucx_fail("ucp_ep_rkey_unpack", st);
    fl_free(key);
    *raddr = head[0];
}

/* ---- the probe: the library, then every UCT transport it can open ---- */

static void probe_md(uct_component_h comp, const char *comp_name, const char *md_name)
{
    uct_md_config_t *cfg;
    uct_md_h md;
    uct_tl_resource_desc_t *res;
    unsigned n;
    if (uct_md_config_read(comp, NULL, NULL, &cfg) != UCS_OK)
        return;
    ucs_status_t st = uct_md_open(comp, md_name, cfg, &md);
    uct_config_release(cfg);
    if (st != UCS_OK)
        return; /* a memory domain without its device here (ib, rdmacm) */
    if (uct_md_query_tl_resources(md, &res, &n) == UCS_OK) {
        for (unsigned i = 0; i < n; i++) {
            fl_buf b = {0};
            fl_buf_printf(&b, "{\"type\":\"transport\",\"tl\":");
            fl_buf_str(&b, res[i].tl_name);
            fl_buf_printf(&b, ",\"device\":");
            fl_buf_str(&b, res[i].dev_name);
            fl_buf_printf(&b, ",\"component\":");
            fl_buf_str(&b, comp_name);
            fl_buf_printf(&b, ",\"md\":");
            fl_buf_str(&b, md_name);
            printf("%s}\n", b.p);
            fl_buf_free(&b);
        }
        uct_release_tl_resource_list(res);
    }
    uct_md_close(md);
}

static int probe_component(uct_component_h comp)
{
    uct_component_attr_t a = {.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                                            UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT};
    if (uct_component_query(comp, &a) != UCS_OK)
        return -1;
    uct_md_resource_desc_t *mds = calloc(a.md_resource_count + 1, sizeof *mds);
    if (!mds)
        return -1;
    a.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    a.md_resources = mds;
    int rc = uct_component_query(comp, &a) == UCS_OK ? 0 : -1;
    for (unsigned i = 0; rc == 0 && i < a.md_resource_count; i++)
        probe_md(comp, a.name, mds[i].md_name);
    free(mds);
    return rc;
}

static void probe_error(const char *message)
{
    fl_buf b = {0};
    fl_buf_printf(&b, "{\"type\":\"error\",\"message\":");
    fl_buf_str(&b, message);
    printf("%s}\n", b.p);
    fl_buf_free(&b);
}

int fl_ucx_probe(void)
{
    Dl_info dl;
    const char *path = dladdr((void *)ucp_get_version_string, &dl) && dl.dli_fname
                           ? dl.dli_fname : "";
    fl_buf b = {0};
    fl_buf_printf(&b, "{\"type\":\"library\",\"name\":\"UCX\",\"version\":");
    fl_buf_str(&b, ucp_get_version_string());
    fl_buf_printf(&b, ",\"path\":");
    fl_buf_str(&b, path);
    printf("%s}\n", b.p);
    fl_buf_free(&b);
    uct_component_h *comps;
    unsigned n;
    ucs_status_t st = uct_query_components(&comps, &n);
    if (st != UCS_OK) {
        probe_error(ucs_status_string(st));
        return 3;
    }
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++)
        if (probe_component(comps[i]) != 0) {
            probe_error("uct_component_query failed");
            rc = 3;
        }
    uct_release_component_list(comps);
    fflush(stdout);
    return rc;
}
