/* fabric: the libfabric plumbing: the provider, endpoints joined over MPI,
 * registered regions, control messages and the failures of the libfabric
 * kernels (fabric_plumbing.h tells what they share), and the probe. */
#include "fabric_plumbing.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void fab_fail(int rc, const char *what)
{
    fl_die("fabric: %s: %s", what, fi_strerror(rc < 0 ? -rc : rc));
}

_Noreturn void fab_cq_fail(struct fid_cq *cq, ssize_t rc, const char *what)
{
    struct fi_cq_err_entry e;
    char prov[128] = "";
    if (rc != -FI_EAVAIL)
        fab_fail((int)rc, what);
    memset(&e, 0, sizeof e);
    if (fi_cq_readerr(cq, &e, 0) < 0)
        fab_fail((int)rc, what);
    fi_cq_strerror(cq, e.prov_errno, e.err_data, prov, sizeof prov);
    fl_die("fabric: %s: a completion failed: %s (%s)", what, fi_strerror(e.err), prov);
}

void fab_close(struct fid *f)
{
    if (f) {
        int rc = fi_close(f);
        if (rc)
            fab_fail(rc, "fi_close");
    }
}

/* ---- the provider ---- */

static struct fi_info *fab_hints(const char *prov, int msg, uint64_t caps)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        fl_die("fabric: fi_allocinfo: out of memory");
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2; /* every op passes its own fi_context2 */
    h->ep_attr->type = msg ? FI_EP_MSG : FI_EP_RDM;
    /* One thread uses the domain, so the provider may skip its locks
     * (FI_THREAD_SAFE, the default, takes one on every post and poll). */
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                              FI_MR_ENDPOINT;
    if (prov[0] && !(h->fabric_attr->prov_name = strdup(prov)))
        fl_die("fabric: out of memory");
    return h;
}

/* The answers for the hints; of a named provider only its own: fi_getinfo also
 * answers a name with the utility providers layered over it ("udp;ofi_rxd" for
 * udp), and a provider the user named is not swapped for another. */
static struct fi_info *fab_query(const char *prov, int msg, uint64_t caps)
{
    struct fi_info *h = fab_hints(prov, msg, caps), *info = NULL, *own = NULL;
    int rc = fi_getinfo(FAB_VERSION, NULL, NULL, 0, h, &info);
    fi_freeinfo(h);
    if (rc != 0)
        return NULL;
    if (!prov[0])
        return info;
    for (struct fi_info *i = info; i && !own; i = i->next)
        if (strcmp(i->fabric_attr->prov_name, prov) == 0 && !(own = fi_dupinfo(i)))
            fl_die("fabric: fi_dupinfo: out of memory");
    fi_freeinfo(info);
    return own;
}

/* Why no answer came for the caps: the provider is absent, has no endpoint
 * of the type, or lacks a capability. */
static void fab_why(fab_dom *d, const char *prov, int msg, int need)
{
    const char *ep = msg ? "msg" : "rdm", *name = prov[0] ? prov : "(any)";
    struct fi_info *any = fab_query(prov, msg, 0);
    if (!any)
        snprintf(d->why, FL_NOTE_LEN, "provider %s offers no %s endpoints", name, ep);
    else
        snprintf(d->why, FL_NOTE_LEN, "provider %s lacks %s on %s endpoints", name,
                 need & FAB_NEED_ATOMIC ? "FI_ATOMIC" : need & FAB_NEED_RMA ? "FI_RMA" : "FI_MSG",
                 ep);
    fi_freeinfo(any);
}

/* The first answer, tagged where the provider offers it. */
static struct fi_info *fab_choose(fab_dom *d, const char *prov, int need)
{
    uint64_t caps = FI_MSG | (need & FAB_NEED_RMA ? FI_RMA : 0) |
                    (need & FAB_NEED_ATOMIC ? FI_ATOMIC : 0);
    struct fi_info *info = fab_query(prov, d->msg, caps | FI_TAGGED);
    if (!info)
        info = fab_query(prov, d->msg, caps);
    if (!info) {
        fab_why(d, prov, d->msg, need);
        return NULL;
    }
    if (info->next) { /* keep the first answer only */
        fi_freeinfo(info->next);
        info->next = NULL;
    }
    return info;
}

struct fid_cq *fab_cq_open(fab_dom *d)
{
    struct fi_cq_attr a;
    struct fid_cq *cq = NULL;
    memset(&a, 0, sizeof a);
    a.format = FI_CQ_FORMAT_CONTEXT;
    a.wait_obj = d->block ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
    int rc = fi_cq_open(d->domain, &a, &cq, NULL);
    if (rc)
        fab_fail(rc, "fi_cq_open");
    return cq;
}

/* Can this provider's queues wait on an object? */
static int fab_can_block(fab_dom *d)
{
    struct fi_cq_attr a;
    struct fid_cq *cq = NULL;
    memset(&a, 0, sizeof a);
    a.format = FI_CQ_FORMAT_CONTEXT;
    a.wait_obj = FI_WAIT_UNSPEC;
    int rc = fi_cq_open(d->domain, &a, &cq, NULL);
    if (rc) {
        snprintf(d->why, FL_NOTE_LEN, "provider %s refuses a wait object on its completion "
                 "queues (fi_cq_open: %s)", d->info->fabric_attr->prov_name, fi_strerror(-rc));
        return 0;
    }
    fab_close(&cq->fid);
    return 1;
}

static void fab_listen(fab_dom *d)
{
    struct fi_eq_attr ea;
    memset(&ea, 0, sizeof ea);
    ea.wait_obj = FI_WAIT_UNSPEC;
    int rc = fi_eq_open(d->fabric, &ea, &d->eq, NULL);
    if (!rc)
        rc = fi_passive_ep(d->fabric, d->info, &d->pep, NULL);
    if (!rc)
        rc = fi_pep_bind(d->pep, &d->eq->fid, 0);
    if (!rc)
        rc = fi_listen(d->pep);
    if (rc)
        fab_fail(rc, "listening for msg endpoints");
}

void fab_dom_open(const fl_ctx *ctx, fab_dom *d, int need)
{
    const char *prov = fl_param(ctx->opts, "provider");
    memset(d, 0, sizeof *d);
    d->rank = ctx->rank;
    d->nranks = ctx->nranks;
    d->msg = fl_param_is(ctx->opts, "ep", "msg");
    d->next_key = 1;
    if (!(d->info = fab_choose(d, prov, need)))
        return;
    d->tagged = (d->info->caps & FI_TAGGED) != 0;
    d->rma = (d->info->caps & FI_RMA) != 0;
    int rc = fi_fabric(d->info->fabric_attr, &d->fabric, NULL);
    if (!rc)
        rc = fi_domain(d->fabric, d->info, &d->domain, NULL);
    if (rc)
        fab_fail(rc, "opening the fabric and domain");
    if (fl_param_find(ctx->opts, "completion") && fl_param_is(ctx->opts, "completion", "block"))
        d->block = fab_can_block(d);
    if (d->msg)
        fab_listen(d);
}

void fab_dom_close(fab_dom *d)
{
    if (d->pep)
        fab_close(&d->pep->fid);
    if (d->eq)
        fab_close(&d->eq->fid);
    if (d->domain)
        fab_close(&d->domain->fid);
    if (d->fabric)
        fab_close(&d->fabric->fid);
    if (d->info)
        fi_freeinfo(d->info);
    memset(d, 0, sizeof *d);
}

/* Names of flag bits, as the probe and the points print them; ended by
 * name == NULL. */
typedef struct {
    uint64_t bit;
    const char *name;
} fab_flag;

static const fab_flag fab_mr_modes[] = {
    {FI_MR_LOCAL, "local"}, {FI_MR_RAW, "raw"}, {FI_MR_VIRT_ADDR, "virt_addr"},
    {FI_MR_ALLOCATED, "allocated"}, {FI_MR_PROV_KEY, "prov_key"},
    {FI_MR_MMU_NOTIFY, "mmu_notify"}, {FI_MR_RMA_EVENT, "rma_event"},
    {FI_MR_ENDPOINT, "endpoint"}, {FI_MR_HMEM, "hmem"}, {FI_MR_COLLECTIVE, "collective"},
    {0, NULL},
};

int fab_dom_info(const fab_dom *d, char *out, size_t len)
{
    const struct fi_info *i = d->info;
    uint32_t v = fi_version();
    char mr[96] = "";
    size_t m = 0;
    for (const fab_flag *f = fab_mr_modes; f->name && m < sizeof mr; f++)
        if ((uint64_t)i->domain_attr->mr_mode & f->bit)
            m += (size_t)snprintf(mr + m, sizeof mr - m, "%s%s", m ? "|" : "", f->name);
    return snprintf(out, len,
                    "\"library\":\"libfabric %u.%u\",\"provider\":\"%s\",\"fabric\":\"%s\","
                    "\"domain\":\"%s\",\"ep\":\"%s\",\"caps\":\"msg%s%s%s\",\"inject_size\":%zu,"
                    "\"iov_limit\":%zu,\"mr_mode\":\"%s\"",
                    FI_MAJOR(v), FI_MINOR(v), i->fabric_attr->prov_name, i->fabric_attr->name,
                    i->domain_attr->name, d->msg ? "msg" : "rdm", d->tagged ? "|tagged" : "",
                    d->rma ? "|rma" : "", i->caps & FI_ATOMIC ? "|atomic" : "",
                    i->tx_attr->inject_size, i->rx_attr->iov_limit, mr);
}

int fab_use_inject(const fl_ctx *ctx, const fab_dom *d, int64_t size, char *note)
{
    const size_t inject = d->info->tx_attr->inject_size;
    if (fl_param_is(ctx->opts, "path", "send"))
        return 0;
    if (fl_param_is(ctx->opts, "path", "auto"))
        return (size_t)size <= inject;
    if ((size_t)size > inject) {
        snprintf(note, FL_NOTE_LEN, "path=inject: %lld bytes above provider %s's inject size %zu",
                 (long long)size, d->info->fabric_attr->prov_name, inject);
        return -1;
    }
    return 1;
}

/* ---- endpoints ---- */

static void fab_bind(fab_net *n, struct fid_ep *ep, struct fid_eq *eq)
{
    int rc = 0;
    if (eq)
        rc = fi_ep_bind(ep, &eq->fid, 0);
    if (!rc && n->av)
        rc = fi_ep_bind(ep, &n->av->fid, 0);
    if (!rc)
        rc = fi_ep_bind(ep, &n->txcq->fid, FI_TRANSMIT);
    if (!rc)
        rc = fi_ep_bind(ep, &n->rxcq->fid, FI_RECV);
    if (!rc)
        rc = fi_enable(ep);
    if (rc)
        fab_fail(rc, "binding an endpoint");
}

/* rdm: one endpoint, every rank's name in the address vector. */
static void fab_rdm_open(const fl_ctx *ctx, fab_dom *d, fab_net *n)
{
    struct fi_av_attr aa;
    char name[256];
    size_t len = sizeof name;
    memset(&aa, 0, sizeof aa);
    aa.type = d->info->domain_attr->av_type;
    int rc = fi_av_open(d->domain, &aa, &n->av, NULL);
    if (!rc)
        rc = fi_endpoint(d->domain, d->info, &n->ep, NULL);
    if (rc)
        fab_fail(rc, "opening an rdm endpoint");
    fab_bind(n, n->ep, NULL);
    memset(name, 0, sizeof name);
    if ((rc = fi_getname(&n->ep->fid, name, &len)))
        fab_fail(rc, "fi_getname");
    char *all = fl_alloc(sizeof name * (size_t)ctx->nranks);
    MPI_Allgather(name, (int)sizeof name, MPI_BYTE, all, (int)sizeof name, MPI_BYTE, ctx->comm);
    n->addr = fl_alloc(sizeof *n->addr * (size_t)ctx->nranks);
    for (int q = 0; q < ctx->nranks; q++) /* names may differ in length: one at a time */
        if (fi_av_insert(n->av, all + q * sizeof name, 1, &n->addr[q], 0, NULL) != 1)
            fl_die("fabric: fi_av_insert of rank %d's address failed", q);
    fl_free(all);
}

static void fab_expect(fab_dom *d, uint32_t want, struct fi_eq_cm_entry *e)
{
    uint32_t event = 0;
    ssize_t r = fi_eq_sread(d->eq, &event, e, sizeof *e, 60000, 0);
    if (r == -FI_EAVAIL) {
        struct fi_eq_err_entry err;
        memset(&err, 0, sizeof err);
        fi_eq_readerr(d->eq, &err, 0);
        fl_die("fabric: connecting msg endpoints: %s", fi_strerror(err.err));
    }
    if (r < 0)
        fab_fail((int)r, "connecting msg endpoints (60 s)");
    if (event != want)
        fl_die("fabric: connecting msg endpoints: event %u, expected %u", event, want);
}

/* msg: the lower rank of a pair accepts on its passive endpoint, the
 * higher connects to the name it sent over MPI. */
static struct fid_ep *fab_connect(const fl_ctx *ctx, fab_dom *d, fab_net *n, int q)
{
    struct fi_eq_cm_entry e;
    struct fid_ep *ep = NULL;
    char name[256];
    size_t len = sizeof name;
    int rc;
    memset(name, 0, sizeof name);
    if (ctx->rank < q) {
        if ((rc = fi_getname(&d->pep->fid, name, &len)))
            fab_fail(rc, "fi_getname");
        MPI_Send(name, (int)sizeof name, MPI_BYTE, q, 0, ctx->comm);
        fab_expect(d, FI_CONNREQ, &e);
        rc = fi_endpoint(d->domain, e.info, &ep, NULL);
        fi_freeinfo(e.info);
        if (rc)
            fab_fail(rc, "fi_endpoint");
        fab_bind(n, ep, d->eq);
        if ((rc = fi_accept(ep, NULL, 0)))
            fab_fail(rc, "fi_accept");
    } else {
        MPI_Recv(name, (int)sizeof name, MPI_BYTE, q, 0, ctx->comm, MPI_STATUS_IGNORE);
        if ((rc = fi_endpoint(d->domain, d->info, &ep, NULL)))
            fab_fail(rc, "fi_endpoint");
        fab_bind(n, ep, d->eq);
        if ((rc = fi_connect(ep, name, NULL, 0)))
            fab_fail(rc, "fi_connect");
    }
    fab_expect(d, FI_CONNECTED, &e);
    return ep;
}

void fab_net_open(const fl_ctx *ctx, fab_dom *d, fab_net *n, const char *linked,
                  struct fid_cq *txcq, struct fid_cq *rxcq)
{
    memset(n, 0, sizeof *n);
    n->nranks = ctx->nranks;
    n->own_txcq = !txcq;
    n->own_rxcq = !rxcq;
    n->txcq = txcq ? txcq : fab_cq_open(d);
    n->rxcq = rxcq ? rxcq : fab_cq_open(d);
    if (d->msg) {
        /* pairs in one global order, (lower, higher) rank: every rank meets
         * its peers by ascending rank, so no pair waits on a later one */
        n->eps = fl_alloc(sizeof *n->eps * (size_t)ctx->nranks);
        for (int q = 0; q < ctx->nranks; q++)
            if (q != ctx->rank && linked[q])
                n->eps[q] = fab_connect(ctx, d, n, q);
    } else {
        fab_rdm_open(ctx, d, n);
    }
    fab_mr m;
    n->ctrl = fl_alloc(64);
    fab_mr_reg(d, n, n->ctrl, 64, FI_SEND | FI_RECV, &m);
    n->ctrl_mr = m.mr;
    n->ctrl_desc = m.desc;
}

void fab_net_close(fab_net *n)
{
    if (n->ctrl_mr)
        fab_close(&n->ctrl_mr->fid);
    fl_free(n->ctrl);
    for (int q = 0; n->eps && q < n->nranks; q++)
        if (n->eps[q])
            fab_close(&n->eps[q]->fid);
    fl_free(n->eps);
    if (n->ep)
        fab_close(&n->ep->fid);
    if (n->av)
        fab_close(&n->av->fid);
    fl_free(n->addr);
    if (n->own_txcq)
        fab_close(&n->txcq->fid);
    if (n->own_rxcq)
        fab_close(&n->rxcq->fid);
    memset(n, 0, sizeof *n);
}

/* ---- control messages ---- */

void fab_ctrl_send(const fab_dom *d, fab_net *n, int peer, void *ctx)
{
    if (d->info->tx_attr->inject_size > 0) {
        fab_inject(d, n, peer, n->ctrl, 0, FAB_TAG_CTRL);
        return;
    }
    fab_send(d, n, peer, n->ctrl, 0, n->ctrl_desc, FAB_TAG_CTRL, ctx);
}

void fab_ctrl_post(const fab_dom *d, fab_net *n, int peer, void *ctx)
{
    fab_recv(d, n, peer, n->ctrl + 32, 0, n->ctrl_desc, FAB_TAG_CTRL, ctx);
}

/* ---- registered regions ---- */

void fab_mr_reg(fab_dom *d, fab_net *n, void *buf, size_t len, uint64_t access, fab_mr *m)
{
    const int mode = d->info->domain_attr->mr_mode;
    memset(m, 0, sizeof *m);
    int rc = fi_mr_reg(d->domain, buf, len ? len : 1, access, 0, d->next_key++, 0, &m->mr, NULL);
    if (rc)
        fab_fail(rc, "fi_mr_reg");
    if (mode & FI_MR_ENDPOINT) { /* bound to the endpoint that uses it */
        struct fid_ep *ep = n->ep;
        for (int q = 0; !ep && n->eps && q < n->nranks; q++)
            ep = n->eps[q];
        rc = ep ? fi_mr_bind(m->mr, &ep->fid, 0) : 0;
        if (!rc)
            rc = fi_mr_enable(m->mr);
        if (rc)
            fab_fail(rc, "binding a memory region");
    }
    m->desc = fi_mr_desc(m->mr);
    m->key = fi_mr_key(m->mr);
    m->base = mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)buf : 0;
}

void fab_mr_close(fab_mr *m)
{
    if (m->mr)
        fab_close(&m->mr->fid);
    memset(m, 0, sizeof *m);
}

void fab_mr_share(const fl_ctx *ctx, const fab_mr *m, fab_remote *out)
{
    fab_remote mine = {m->key, m->base};
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, out, (int)sizeof mine, MPI_BYTE, ctx->comm);
}

/* ---- the probe: what the library offers, without MPI ---- */

static const fab_flag cap_names[] = {
    {FI_MSG, "msg"}, {FI_RMA, "rma"}, {FI_TAGGED, "tagged"}, {FI_ATOMIC, "atomic"},
    {FI_MULTICAST, "multicast"}, {FI_COLLECTIVE, "collective"}, {FI_READ, "read"},
    {FI_WRITE, "write"}, {FI_RECV, "recv"}, {FI_SEND, "send"}, {FI_REMOTE_READ, "remote_read"},
    {FI_REMOTE_WRITE, "remote_write"}, {FI_MULTI_RECV, "multi_recv"},
    {FI_REMOTE_COMM, "remote_comm"}, {FI_FENCE, "fence"}, {FI_LOCAL_COMM, "local_comm"},
    {FI_RMA_EVENT, "rma_event"}, {FI_SOURCE, "source"}, {FI_NAMED_RX_CTX, "named_rx_ctx"},
    {FI_DIRECTED_RECV, "directed_recv"}, {FI_HMEM, "hmem"}, {FI_RMA_PMEM, "rma_pmem"},
    {FI_SOURCE_ERR, "source_err"}, {FI_SHARED_AV, "shared_av"}, {FI_TRIGGER, "trigger"},
    {FI_VARIABLE_MSG, "variable_msg"}, {0, NULL},
};

static const char *ep_name(enum fi_ep_type t)
{
    return t == FI_EP_MSG ? "msg" : t == FI_EP_RDM ? "rdm" : t == FI_EP_DGRAM ? "dgram"
           : t == FI_EP_SOCK_STREAM ? "sock_stream" : t == FI_EP_SOCK_DGRAM ? "sock_dgram"
           : "unspec";
}

static void probe_provider(const struct fi_info *i)
{
    fl_buf b = {0};
    int first = 1;
    fl_buf_printf(&b, "{\"type\":\"provider\",\"provider\":");
    fl_buf_str(&b, i->fabric_attr->prov_name);
    fl_buf_printf(&b, ",\"fabric\":");
    fl_buf_str(&b, i->fabric_attr->name);
    fl_buf_printf(&b, ",\"domain\":");
    fl_buf_str(&b, i->domain_attr->name);
    fl_buf_printf(&b, ",\"ep\":\"%s\",\"caps\":[", ep_name(i->ep_attr->type));
    for (const fab_flag *f = cap_names; f->name; f++)
        if (i->caps & f->bit) {
            fl_buf_printf(&b, "%s\"%s\"", first ? "" : ",", f->name);
            first = 0;
        }
    fl_buf_printf(&b, "],\"inject_size\":%zu,\"iov_limit\":%zu,\"tx_iov_limit\":%zu,\"mr_mode\":[",
                  i->tx_attr->inject_size, i->rx_attr->iov_limit, i->tx_attr->iov_limit);
    first = 1;
    for (const fab_flag *f = fab_mr_modes; f->name; f++)
        if ((uint64_t)i->domain_attr->mr_mode & f->bit) {
            fl_buf_printf(&b, "%s\"%s\"", first ? "" : ",", f->name);
            first = 0;
        }
    fl_buf_printf(&b, "],\"max_msg_size\":%zu}", i->ep_attr->max_msg_size);
    printf("%s\n", b.p);
    fl_buf_free(&b);
}

int fl_fabric_probe(void)
{
    struct fi_info *info = NULL;
    Dl_info where;
    fl_buf b = {0};
    uint32_t v = fi_version();
    int rc = fi_getinfo(FAB_VERSION, NULL, NULL, 0, NULL, &info);
    fl_buf_printf(&b, "{\"type\":\"library\",\"name\":\"libfabric\",\"version\":\"%u.%u\",\"path\":",
                  FI_MAJOR(v), FI_MINOR(v));
    fl_buf_str(&b, dladdr((void *)(uintptr_t)fi_getinfo, &where) && where.dli_fname
                       ? where.dli_fname : "");
    printf("%s}\n", b.p);
    fl_buf_free(&b);
    if (rc) {
        fl_buf_printf(&b, "{\"type\":\"error\",\"message\":");
        fl_buf_str(&b, fi_strerror(-rc));
        printf("%s}\n", b.p);
        fl_buf_free(&b);
        fflush(stdout);
        return 3;
    }
    for (const struct fi_info *i = info; i; i = i->next)
        probe_provider(i);
    fi_freeinfo(info);
    fflush(stdout);
    return 0;
}

/* ---- a benchmark's run ---- */

int fab_run_init(const fl_ctx *ctx, void **bs, int need, int pair)
{
    fab_run *r = fl_alloc(sizeof *r);
    *bs = r;
    fab_dom_open(ctx, &r->dom, need);
    if (r->dom.why[0] || (r->dom.msg && !pair))
        return FL_OK;
    char *linked = fl_alloc((size_t)ctx->nranks);
    for (int q = 0; q < ctx->nranks && ctx->rank < 2; q++)
        linked[q] = q < 2 && q != ctx->rank;
    fab_net_open(ctx, &r->dom, &r->net, linked, NULL, NULL);
    fl_free(linked);
    r->open = 1;
    return FL_OK;
}

void fab_run_fini(const fl_ctx *ctx, void *bs)
{
    fab_run *r = bs;
    (void)ctx;
    if (r->open)
        fab_net_close(&r->net);
    fab_dom_close(&r->dom);
    fl_free(r);
}

int fab_skip(const fab_run *r, fl_shape *shape)
{
    if (!r->dom.why[0])
        return FL_OK;
    snprintf(shape->note, FL_NOTE_LEN, "%s", r->dom.why);
    return FL_SKIP;
}

int fab_info_begin(const fab_run *r, fl_shape *shape)
{
    int n = snprintf(shape->info, FL_INFO_LEN, "{");
    return n + fab_dom_info(&r->dom, shape->info + n, FL_INFO_LEN - (size_t)n);
}
