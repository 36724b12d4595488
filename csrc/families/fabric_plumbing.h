/* fabric: the libfabric plumbing (fabric_plumbing.c) below the kernels
 * (fabric.c, fabric_patterns.c, fabric_via.c, through fabric.h): the
 * provider chosen from fi_getinfo, endpoints joined to their peers over MPI
 * at set-up, registered regions and the completion loops. MPI only
 * launches the ranks and carries endpoint names, keys and addresses in init
 * and setup; no timed loop calls it. It knows nothing of the kernels above.
 *
 * Built against the headers found at build time (Debian's 1.17) and run on
 * the library the MPI loads (2.5 in MPICH's wheel): FAB_VERSION asks for the
 * API of the headers, which every later library answers. */
#ifndef FL_FABRIC_PLUMBING_H
#define FL_FABRIC_PLUMBING_H

#include "../fl.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define FAB_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
/* Data and control (acks, "done") travel on two tags; without FI_TAGGED
 * the protocol's order keeps them apart. */
enum { FAB_TAG_DATA = 1, FAB_TAG_CTRL = 2 };

/* What a benchmark asks of the provider. */
enum { FAB_NEED_MSG = 1, FAB_NEED_RMA = 2, FAB_NEED_ATOMIC = 4 };

/* The provider of the run: one fi_getinfo answer, its fabric and domain. */
typedef struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *eq;    /* msg endpoints: connection events */
    struct fid_pep *pep;  /* msg endpoints: this rank listens here */
    int rank, nranks;
    int msg;              /* connected endpoints (ep=msg) */
    int tagged, rma;      /* FI_TAGGED, FI_RMA in the answer */
    int block;            /* completion queues wait on an object (fi_cq_sread) */
    uint64_t next_key;    /* requested MR keys, when the provider does not choose them */
    char why[FL_NOTE_LEN];/* set: the benchmark cannot run here, and why */
} fab_dom;

/* Endpoints to the ranks a point talks to and their completion queues:
 * rdm, one endpoint and an address vector of every rank; msg, one
 * connected endpoint per peer, all bound to the same queues. */
typedef struct {
    struct fid_cq *txcq, *rxcq;
    int own_txcq, own_rxcq;
    struct fid_av *av;
    struct fid_ep *ep;    /* rdm */
    struct fid_ep **eps;  /* msg: per rank, NULL where not linked */
    fi_addr_t *addr;      /* rdm: per rank */
    int nranks;
    char *ctrl;           /* the registered bytes of control messages */
    void *ctrl_desc;
    struct fid_mr *ctrl_mr;
    int64_t tx_posted, tx_done, rx_posted, rx_done;
} fab_net;

/* A registered region: what a local op passes (desc) and what a peer
 * needs to reach it (key, and the address its offsets count from). */
typedef struct {
    struct fid_mr *mr;
    void *desc;
    uint64_t key, base;
} fab_mr;

/* A peer's region, as fi_write and fi_read address it. */
typedef struct {
    uint64_t key, base;
} fab_remote;

/* The run's provider for a benchmark that needs `need` (FAB_NEED_*),
 * from the params provider= and ep= (and completion=block: waitable
 * queues). Never fails the run: dom->why says what is missing. */
void fab_dom_open(const fl_ctx *ctx, fab_dom *d, int need);
void fab_dom_close(fab_dom *d);
/* The info members every point records (library, provider, ...), as JSON
 * members without braces. */
int fab_dom_info(const fab_dom *d, char *out, size_t len);

/* Collective over ctx->comm. linked[q]: this rank talks to rank q (msg
 * endpoints connect those pairs, both sides agreeing; rdm ignores it).
 * txcq/rxcq: queues to bind, or NULL for the net's own. */
void fab_net_open(const fl_ctx *ctx, fab_dom *d, fab_net *n, const char *linked,
                  struct fid_cq *txcq, struct fid_cq *rxcq);
void fab_net_close(fab_net *n);
struct fid_cq *fab_cq_open(fab_dom *d);
void fab_close(struct fid *f);

static inline struct fid_ep *fab_ep(const fab_net *n, int peer)
{
    return n->eps ? n->eps[peer] : n->ep;
}

static inline fi_addr_t fab_addr(const fab_net *n, int peer)
{
    return n->eps ? FI_ADDR_UNSPEC : n->addr[peer];
}

/* Registers `len` bytes (at least one) for `access` (FI_SEND, FI_REMOTE_WRITE...). */
void fab_mr_reg(fab_dom *d, fab_net *n, void *buf, size_t len, uint64_t access, fab_mr *m);
void fab_mr_close(fab_mr *m);
/* Collective: every rank's region key and base, gathered (out: nranks). */
void fab_mr_share(const fl_ctx *ctx, const fab_mr *m, fab_remote *out);

/* What a fabric benchmark opens once per run (its init): the provider,
 * and its endpoints unless they depend on the point (msg patterns). */
typedef struct {
    fab_dom dom;
    fab_net net;
    int open;             /* net opened in init */
} fab_run;

/* init of a benchmark that needs `need`; pair: ranks 0 and 1 only (msg
 * endpoints connect them), else msg endpoints wait for the point. Always
 * FL_OK: what is missing becomes every point's skip (fab_skip). */
int fab_run_init(const fl_ctx *ctx, void **bs, int need, int pair);
void fab_run_fini(const fl_ctx *ctx, void *bs);
/* FL_SKIP with the reason when the provider cannot run the benchmark. */
int fab_skip(const fab_run *r, fl_shape *shape);
/* Starts a point's info JSON with the provider's members; returns its length. */
int fab_info_begin(const fab_run *r, fl_shape *shape);

/* ---- completions: counted, so a loop waits for a number ---- */

_Noreturn void fab_cq_fail(struct fid_cq *cq, ssize_t rc, const char *what);
_Noreturn void fab_fail(int rc, const char *what);

/* Reads what completed on cq and adds it to *done. */
static inline void fab_drain(struct fid_cq *cq, int64_t *done)
{
    struct fi_cq_entry e[16];
    ssize_t r = fi_cq_read(cq, e, 16);
    if (r > 0)
        *done += r;
    else if (r != -FI_EAGAIN)
        fab_cq_fail(cq, r, "fi_cq_read");
}

/* Spins (or sleeps on the queue's wait object, block) until *done >= want. */
static inline void fab_wait(struct fid_cq *cq, int64_t *done, int64_t want, int block)
{
    struct fi_cq_entry e[16];
    while (*done < want) {
        ssize_t r = block ? fi_cq_sread(cq, e, 16, NULL, -1) : fi_cq_read(cq, e, 16);
        if (r > 0)
            *done += r;
        else if (r != -FI_EAGAIN)
            fab_cq_fail(cq, r, block ? "fi_cq_sread" : "fi_cq_read");
    }
}

/* Posts until the provider takes the op: -FI_EAGAIN means its queue is
 * full, so progress both queues and try again. */
#define FAB_POST(n, call, what)                                    \
    do {                                                           \
        ssize_t rc_;                                               \
        while ((rc_ = (call)) == -FI_EAGAIN) {                     \
            fab_drain((n)->txcq, &(n)->tx_done);                   \
            fab_drain((n)->rxcq, &(n)->rx_done);                   \
        }                                                          \
        if (rc_)                                                   \
            fab_fail((int)rc_, what);                              \
    } while (0)

/* Send and receive of `len` bytes with the tag where the provider has
 * FI_TAGGED; inject: fi_inject (no completion; len <= inject_size). */
static inline void fab_send(const fab_dom *d, fab_net *n, int peer, const void *buf, size_t len,
                            void *desc, uint64_t tag, void *ctx)
{
    struct fid_ep *ep = fab_ep(n, peer);
    fi_addr_t a = fab_addr(n, peer);
    if (d->tagged)
        FAB_POST(n, fi_tsend(ep, buf, len, desc, a, tag, ctx), "fi_tsend");
    else
        FAB_POST(n, fi_send(ep, buf, len, desc, a, ctx), "fi_send");
    n->tx_posted++;
}

static inline void fab_inject(const fab_dom *d, fab_net *n, int peer, const void *buf,
                              size_t len, uint64_t tag)
{
    struct fid_ep *ep = fab_ep(n, peer);
    fi_addr_t a = fab_addr(n, peer);
    if (d->tagged)
        FAB_POST(n, fi_tinject(ep, buf, len, a, tag), "fi_tinject");
    else
        FAB_POST(n, fi_inject(ep, buf, len, a), "fi_inject");
}

static inline void fab_recv(const fab_dom *d, fab_net *n, int peer, void *buf, size_t len,
                            void *desc, uint64_t tag, void *ctx)
{
    struct fid_ep *ep = fab_ep(n, peer);
    fi_addr_t a = fab_addr(n, peer);
    if (d->tagged)
        FAB_POST(n, fi_trecv(ep, buf, len, desc, a, tag, 0, ctx), "fi_trecv");
    else
        FAB_POST(n, fi_recv(ep, buf, len, desc, a, ctx), "fi_recv");
    n->rx_posted++;
}

static inline void fab_wait_tx(fab_net *n, int block)
{
    fab_wait(n->txcq, &n->tx_done, n->tx_posted, block);
}

static inline void fab_wait_rx(fab_net *n, int block)
{
    fab_wait(n->rxcq, &n->rx_done, n->rx_posted, block);
}

/* A zero-byte control message (ack, "done"), and the wait for one. */
void fab_ctrl_send(const fab_dom *d, fab_net *n, int peer, void *ctx);
void fab_ctrl_post(const fab_dom *d, fab_net *n, int peer, void *ctx);

/* The send path of a point: fi_inject where path=auto and the size fits,
 * or path=inject; an error note where path=inject and it does not. */
int fab_use_inject(const fl_ctx *ctx, const fab_dom *d, int64_t size, char *note);

#endif
