/* Reference libfabric loop between ranks 0 and 1: the smallest program that
 * measures what fabric.pingpong and fabric.stream measure. MPI only launches
 * the ranks and exchanges endpoint names; the timed loops call libfabric alone.
 * RDM endpoint, tagged messages, fi_tinject up to the provider's inject size
 * (as OSU-style loops do), completions by polling fi_cq_read.
 *   mpiexec -n 2 fi_loop PROVIDER pingpong SIZE ITERS [REPS]
 *       one-way latency = round trip / 2, median over REPS timed repetitions
 *   mpiexec -n 2 fi_loop PROVIDER stream SIZE WINDOW ITERS [REPS]
 *       WINDOW sends to pre-posted receives (each at its own offset of a
 *       WINDOW x SIZE buffer), 1-byte ack per window; bytes/s
 * Rank 0 prints one JSON line. REPS defaults to 7; one untimed repetition
 * of ITERS/10 + 1 warms up first. */
#include <mpi.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
enum { DATA_TAG = 1, ACK_TAG = 2, MAX_WINDOW = 4096 };

static struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_ep *ep;
    struct fid_cq *txcq, *rxcq;
    fi_addr_t peer;
    size_t inject;
    struct fi_context2 ctx[MAX_WINDOW + 1];
} F;

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "fi_loop: %s: %s\n", what, fi_strerror(-rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void open_endpoint(const char *prov, int rank)
{
    struct fi_info *hints = fi_allocinfo();
    hints->caps = FI_TAGGED;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = 0; /* send/recv of unregistered buffers */
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(prov);
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &F.info);
    check(rc, rc == -FI_ENODATA ? "fi_getinfo: no such provider with RDM tagged messages" : "fi_getinfo");
    fi_freeinfo(hints);
    F.inject = F.info->tx_attr->inject_size;
    check(fi_fabric(F.info->fabric_attr, &F.fabric, NULL), "fi_fabric");
    check(fi_domain(F.fabric, F.info, &F.domain, NULL), "fi_domain");
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_CONTEXT, .size = 2 * MAX_WINDOW};
    check(fi_cq_open(F.domain, &cq, &F.txcq, NULL), "fi_cq_open tx");
    check(fi_cq_open(F.domain, &cq, &F.rxcq, NULL), "fi_cq_open rx");
    struct fi_av_attr av = {.type = FI_AV_TABLE};
    check(fi_av_open(F.domain, &av, &F.av, NULL), "fi_av_open");
    check(fi_endpoint(F.domain, F.info, &F.ep, NULL), "fi_endpoint");
    check(fi_ep_bind(F.ep, &F.txcq->fid, FI_TRANSMIT), "fi_ep_bind tx");
    check(fi_ep_bind(F.ep, &F.rxcq->fid, FI_RECV), "fi_ep_bind rx");
    check(fi_ep_bind(F.ep, &F.av->fid, 0), "fi_ep_bind av");
    check(fi_enable(F.ep), "fi_enable");

    char names[2][256];
    size_t len = sizeof names[0];
    check(fi_getname(&F.ep->fid, names[rank], &len), "fi_getname");
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, names, sizeof names[0], MPI_BYTE, MPI_COMM_WORLD);
    if (fi_av_insert(F.av, names[1 - rank], 1, &F.peer, 0, NULL) != 1)
        check(-FI_EINVAL, "fi_av_insert");
}

/* Reaps n completions from cq, driving progress. */
static void wait_cq(struct fid_cq *cq, long n)
{
    struct fi_cq_entry e[64];
    while (n > 0) {
        ssize_t got = fi_cq_read(cq, e, n < 64 ? n : 64);
        if (got > 0) {
            n -= got;
        } else if (got != -FI_EAGAIN) {
            struct fi_cq_err_entry err = {0};
            fi_cq_readerr(cq, &err, 0);
            fprintf(stderr, "fi_loop: completion error: %s\n", fi_strerror(err.err));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

/* Posts one receive; EAGAIN means the provider needs progress first. */
static void post_recv(void *buf, size_t size, uint64_t tag, int slot)
{
    ssize_t rc;
    while ((rc = fi_trecv(F.ep, buf, size, NULL, F.peer, tag, 0, &F.ctx[slot])) == -FI_EAGAIN)
        fi_cq_read(F.rxcq, NULL, 0);
    check((int)rc, "fi_trecv");
}

/* Sends one message: fi_tinject when it fits (no completion), else fi_tsend.
 * Returns the number of transmit completions to reap. */
static int send_msg(void *buf, size_t size, uint64_t tag, int slot)
{
    ssize_t rc;
    int inj = size <= F.inject;
    for (;;) {
        rc = inj ? fi_tinject(F.ep, buf, size, F.peer, tag)
                 : fi_tsend(F.ep, buf, size, NULL, F.peer, tag, &F.ctx[slot]);
        if (rc != -FI_EAGAIN)
            break;
        fi_cq_read(F.txcq, NULL, 0);
        fi_cq_read(F.rxcq, NULL, 0);
    }
    check((int)rc, inj ? "fi_tinject" : "fi_tsend");
    return !inj;
}

/* A barrier that keeps libfabric progressing meanwhile: the peer may still
 * wait on a message this rank's provider holds. Untimed. */
static void barrier(void)
{
    MPI_Request both;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &both);
    while (!done) {
        fi_cq_read(F.txcq, NULL, 0);
        fi_cq_read(F.rxcq, NULL, 0);
        MPI_Test(&both, &done, MPI_STATUS_IGNORE);
    }
}

/* Round-trip slots, 64 KiB a side as fabriclab's warm ping-pong (suite/buffers.py). */
#define PING_SLOTS(size) ((size) && (size) < 65536 ? 65536 / (size) : 1)
static void pingpong(int rank, char *buf, size_t size, long iters)
{
    size_t slots = PING_SLOTS(size);
    for (long i = 0; i < iters; i++) {
        char *rbuf = buf + (size_t)i % slots * size, *sbuf = rbuf + slots * size;
        post_recv(rbuf, size, DATA_TAG, 0);
        if (rank == 1)
            wait_cq(F.rxcq, 1);
        int tx = send_msg(sbuf, size, DATA_TAG, 1);
        if (rank == 0)
            wait_cq(F.rxcq, 1);
        wait_cq(F.txcq, tx);
    }
}

/* Rank 0 sends windows; rank 1 re-posts the next window's receives before
 * it acks, so every data message finds its receive posted. */
static void stream(int rank, char *buf, size_t size, long window, long iters)
{
    char ack = 0;
    if (rank == 1)
        for (long w = 0; w < window; w++)
            post_recv(buf + (size_t)w * size, size, DATA_TAG, (int)w);
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            post_recv(&ack, 1, ACK_TAG, MAX_WINDOW);
            long tx = 0;
            for (long w = 0; w < window; w++)
                tx += send_msg(buf + (size_t)w * size, size, DATA_TAG, (int)w);
            wait_cq(F.txcq, tx);
            wait_cq(F.rxcq, 1);
        } else {
            wait_cq(F.rxcq, window);
            for (long w = 0; i + 1 < iters && w < window; w++)
                post_recv(buf + (size_t)w * size, size, DATA_TAG, (int)w);
            wait_cq(F.txcq, send_msg(&ack, 1, ACK_TAG, MAX_WINDOW));
        }
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int is_stream = argc > 2 && !strcmp(argv[2], "stream");
    int nargs = is_stream ? 6 : 5;
    if (nranks != 2 || argc < nargs || argc > nargs + 1 ||
        (!is_stream && strcmp(argv[2], "pingpong"))) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 fi_loop PROVIDER pingpong SIZE ITERS [REPS]\n"
                            "       mpiexec -n 2 fi_loop PROVIDER stream SIZE WINDOW ITERS [REPS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t size = strtoul(argv[3], NULL, 10);
    long window = is_stream ? atol(argv[4]) : 1, iters = atol(argv[nargs - 1]);
    int reps = argc > nargs ? atoi(argv[nargs]) : 7;
    if (iters < 1 || reps < 1 || reps > 1000 || window < 1 || window > MAX_WINDOW) {
        if (rank == 0)
            fprintf(stderr, "fi_loop: ITERS, REPS (<= 1000) and WINDOW (<= 4096) must be positive\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    open_endpoint(argv[1], rank);
    /* a window's ops each at their own offset, as fabriclab's (docs/usage.md, "Cache state") */
    size_t bytes = (size ? size : 1) * (size_t)(is_stream ? window : 2 * (long)PING_SLOTS(size));
    char *buf = malloc(bytes);
    /* Written: calloc'd pages only read all map to the kernel's zero page,
     * which stays in cache and makes a sender look faster than memory. */
    memset(buf, 0xa5, bytes);
    double t[1000];
    for (int r = -1; r < reps; r++) {
        long n = r < 0 ? iters / 10 + 1 : iters; /* r = -1: the warm-up */
        barrier();
        double t0 = MPI_Wtime();
        if (is_stream)
            stream(rank, buf, size, window, n);
        else
            pingpong(rank, buf, size, n);
        if (r >= 0)
            t[r] = MPI_Wtime() - t0;
    }
    if (rank == 0) {
        qsort(t, reps, sizeof t[0], by_value);
        double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
        printf("{\"loop\": \"libfabric\", \"provider\": \"%s\", \"fabric\": \"%s\", \"mode\": \"%s\", "
               "\"size\": %zu, \"window\": %ld, \"iters\": %ld, \"reps\": %d, \"inject_size\": %zu, ",
               F.info->fabric_attr->prov_name, F.info->fabric_attr->name, argv[2], size, window,
               iters, reps, F.inject);
        if (is_stream)
            printf("\"bandwidth_Bps\": %.9e}\n", (double)size * window * iters / med);
        else
            printf("\"latency_s\": %.9e}\n", med / (2.0 * iters));
    }
    barrier();
    struct fid *fids[] = {&F.ep->fid, &F.av->fid, &F.txcq->fid, &F.rxcq->fid, &F.domain->fid,
                          &F.fabric->fid};
    for (int i = 0; i < 6; i++) /* endpoint first, fabric last */
        fi_close(fids[i]);
    fi_freeinfo(F.info);
    free(buf);
    MPI_Finalize();
    return 0;
}
