/* Reference UCX (UCP) loop between ranks 0 and 1: the smallest program that
 * measures what ucx.pingpong and ucx.stream measure. MPI only launches the
 * ranks and exchanges worker addresses; the timed loops call UCP alone.
 * Tagged ucp_tag_send_nbx/ucp_tag_recv_nbx, progress by ucp_worker_progress;
 * the transports are UCX's choice under UCX_TLS from the environment.
 *
 *   mpiexec -n 2 ucp_loop pingpong SIZE ITERS [REPS]
 *       one-way latency = round trip / 2, median over REPS timed repetitions
 *   mpiexec -n 2 ucp_loop stream SIZE WINDOW ITERS [REPS]
 *       WINDOW sends to pre-posted receives (each at its own offset of a
 *       WINDOW x SIZE buffer), 1-byte ack per window; bytes/s
 *
 * Rank 0 prints one JSON line. REPS defaults to 7; one untimed repetition
 * of ITERS/10 + 1 warms up first. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

enum { DATA_TAG = 1, ACK_TAG = 2, MAX_WINDOW = 4096 };

static struct {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_ep_h ep;
    void *req[MAX_WINDOW];
} U;

static void check(ucs_status_t st, const char *what)
{
    if (st != UCS_OK) {
        fprintf(stderr, "ucp_loop: %s: %s\n", what, ucs_status_string(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void open_endpoint(void)
{
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG};
    check(ucp_init(&params, NULL, &U.ctx), "ucp_init"); /* reads UCX_* from the environment */
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    check(ucp_worker_create(U.ctx, &wp, &U.worker), "ucp_worker_create");

    ucp_address_t *mine;
    size_t len;
    check(ucp_worker_get_address(U.worker, &mine, &len), "ucp_worker_get_address");
    int mylen = (int)len, lens[2], rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    int most = lens[0] > lens[1] ? lens[0] : lens[1];
    char *all = calloc(2, most), *pad = calloc(1, most);
    memcpy(pad, mine, len);
    MPI_Allgather(pad, most, MPI_BYTE, all, most, MPI_BYTE, MPI_COMM_WORLD);
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                          .address = (ucp_address_t *)(all + (1 - rank) * most)};
    check(ucp_ep_create(U.worker, &ep, &U.ep), "ucp_ep_create");
    ucp_worker_release_address(U.worker, mine);
    free(all);
    free(pad);
}

/* Progresses until the request completes; NULL means it completed at once. */
static void wait_req(void *req, const char *what)
{
    if (req == NULL)
        return;
    if (UCS_PTR_IS_ERR(req))
        check(UCS_PTR_STATUS(req), what);
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
        ucp_worker_progress(U.worker);
    ucp_request_free(req);
    check(st, what);
}

/* A barrier that keeps UCP progressing meanwhile: the peer may still need
 * this worker's replies to finish its last operation. Untimed. */
static void barrier(void)
{
    MPI_Request both;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &both);
    while (!done) {
        ucp_worker_progress(U.worker);
        MPI_Test(&both, &done, MPI_STATUS_IGNORE);
    }
}

static void *post_recv(void *buf, size_t size, ucp_tag_t tag)
{
    ucp_request_param_t p = {0};
    return ucp_tag_recv_nbx(U.worker, buf, size, tag, (ucp_tag_t)-1, &p);
}

static void *send_msg(void *buf, size_t size, ucp_tag_t tag)
{
    ucp_request_param_t p = {0};
    return ucp_tag_send_nbx(U.ep, buf, size, tag, &p);
}

/* Round-trip slots, 64 KiB a side as fabriclab's warm ping-pong (suite/buffers.py). */
#define PING_SLOTS(size) ((size) && (size) < 65536 ? 65536 / (size) : 1)
static void pingpong(int rank, char *buf, size_t size, long iters)
{
    size_t slots = PING_SLOTS(size);
    for (long i = 0; i < iters; i++) {
        char *rbuf = buf + (size_t)i % slots * size, *sbuf = rbuf + slots * size;
        void *rx = post_recv(rbuf, size, DATA_TAG);
        if (rank == 1)
            wait_req(rx, "recv");
        void *tx = send_msg(sbuf, size, DATA_TAG);
        if (rank == 0)
            wait_req(rx, "recv");
        wait_req(tx, "send");
    }
}

/* Rank 0 sends windows; rank 1 re-posts the next window's receives before
 * it acks, so every data message finds its receive posted. */
static void stream(int rank, char *buf, size_t size, long window, long iters)
{
    char ack = 0;
    if (rank == 1)
        for (long w = 0; w < window; w++)
            U.req[w] = post_recv(buf + (size_t)w * size, size, DATA_TAG);
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            void *rx = post_recv(&ack, 1, ACK_TAG);
            for (long w = 0; w < window; w++)
                U.req[w] = send_msg(buf + (size_t)w * size, size, DATA_TAG);
            for (long w = 0; w < window; w++)
                wait_req(U.req[w], "send");
            wait_req(rx, "ack recv");
        } else {
            for (long w = 0; w < window; w++)
                wait_req(U.req[w], "recv");
            for (long w = 0; i + 1 < iters && w < window; w++)
                U.req[w] = post_recv(buf + (size_t)w * size, size, DATA_TAG);
            wait_req(send_msg(&ack, 1, ACK_TAG), "ack send");
        }
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
    int is_stream = argc > 1 && !strcmp(argv[1], "stream");
    int nargs = is_stream ? 5 : 4;
    if (nranks != 2 || argc < nargs || argc > nargs + 1 ||
        (!is_stream && strcmp(argv[1], "pingpong"))) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 ucp_loop pingpong SIZE ITERS [REPS]\n"
                            "       mpiexec -n 2 ucp_loop stream SIZE WINDOW ITERS [REPS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t size = strtoul(argv[2], NULL, 10);
    long window = is_stream ? atol(argv[3]) : 1, iters = atol(argv[nargs - 1]);
    int reps = argc > nargs ? atoi(argv[nargs]) : 7;
    if (iters < 1 || reps < 1 || reps > 1000 || window < 1 || window > MAX_WINDOW) {
        if (rank == 0)
            fprintf(stderr, "ucp_loop: ITERS, REPS (<= 1000) and WINDOW (<= 4096) must be positive\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    open_endpoint();
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
        double t0 = now();
        if (is_stream)
            stream(rank, buf, size, window, n);
        else
            pingpong(rank, buf, size, n);
        if (r >= 0)
            t[r] = now() - t0;
    }
    if (rank == 0) {
        const char *tls = getenv("UCX_TLS");
        qsort(t, reps, sizeof t[0], by_value);
        double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
        printf("{\"loop\": \"ucp\", \"version\": \"%s\", \"tls\": \"%s\", \"mode\": \"%s\", "
               "\"size\": %zu, \"window\": %ld, \"iters\": %ld, \"reps\": %d, ",
               ucp_get_version_string(), tls ? tls : "", argv[1], size, window, iters, reps);
        if (is_stream)
            printf("\"bandwidth_Bps\": %.9e}\n", (double)size * window * iters / med);
        else
            printf("\"latency_s\": %.9e}\n", med / (2.0 * iters));
    }
    ucp_request_param_t p = {0};
    wait_req(ucp_ep_close_nbx(U.ep, &p), "ucp_ep_close_nbx"); /* a flushing close */
    barrier();
    ucp_worker_destroy(U.worker);
    ucp_cleanup(U.ctx);
    free(buf);
    MPI_Finalize();
    return 0;
}
