/* udp: the datagram plumbing (udp_plumbing.h): connected UDP sockets
 * between ranks 0 and 1, bootstrapped over MPI, and the datagram header.
 *
 * Rank 0 sends its host name; rank 1 picks its address as the tcp level
 * does (tcp_plumbing.c, sock_pick_addr), binds n sockets on it and sends
 * the address and their ports; rank 0 connects a socket to each (the route
 * chooses its source address), reads that address and port back and sends
 * them; rank 1 connects each of its sockets to its peer. Connected, each
 * socket takes datagrams from its peer alone. Every step that fails reports
 * over MPI, so a bad address ends in an error record instead of a hang. */
#include "udp_plumbing.h"
#include "tcp_plumbing.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UDP_TAG 4713
#define UDP_MSG 256

void udp_params_get(const fl_opts *o, udp_params *p)
{
    const char *df = fl_param_find(o, "df");
    p->addr = fl_param(o, "addr");
    p->iface = fl_param(o, "iface");
    p->sndbuf = (int)fl_param_int(o, "sndbuf");
    p->rcvbuf = (int)fl_param_int(o, "rcvbuf");
    p->dontfrag = df && strcmp(df, "1") == 0;
}

int64_t udp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void udp_stamp(void *dgram, uint64_t seq, uint32_t stream, uint32_t flags)
{
    udp_hdr h = {.seq = seq, .sent_ns = udp_now_ns(), .stream = stream, .flags = flags};
    memcpy(dgram, &h, sizeof h);
}

void udp_header(const void *dgram, udp_hdr *h)
{
    memcpy(h, dgram, sizeof *h);
}

int udp_send(int fd, const void *buf, size_t n)
{
    ssize_t r = send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r == (ssize_t)n)
        return 1;
    /* ECONNREFUSED: an ICMP port unreachable for an earlier datagram (the
     * peer's socket not yet connected at setup); the datagram was not sent */
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR ||
                  errno == ECONNREFUSED))
        return 0;
    if (r < 0 && errno == EMSGSIZE)
        fl_die("udp: a datagram of %zu bytes exceeds the path MTU with df=1", n);
    fl_die("udp: send of %zu bytes: %s", n, r < 0 ? strerror(errno) : "sent in part");
}

ssize_t udp_recv(int fd, void *buf, size_t cap)
{
    ssize_t r = recv(fd, buf, cap, MSG_DONTWAIT);
    if (r >= 0)
        return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNREFUSED)
        return -1;
    fl_die("udp: recv: %s", strerror(errno));
}

/* ---- the bootstrap ---- */

static int fail(char *why, const char *what, const char *ip, int port)
{
    snprintf(why, UDP_MSG, "udp: %s %s:%d: %s", what, ip, port, strerror(errno));
    return -1;
}

/* A socket with the params' options, bound to ip (NULL: any) port 0; -1 with why. */
static int udp_socket(const udp_params *p, const char *ip, char *why)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    int fd = socket(AF_INET, SOCK_DGRAM, 0), pmtu = IP_PMTUDISC_DO;
    if (ip)
        inet_pton(AF_INET, ip, &sa.sin_addr);
    if (fd < 0)
        return fail(why, "socket on", ip ? ip : "*", 0);
    if ((p->sndbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &p->sndbuf, sizeof p->sndbuf) < 0) ||
        (p->rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &p->rcvbuf, sizeof p->rcvbuf) < 0) ||
        (p->dontfrag && setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) < 0) ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        fail(why, "socket options or bind on", ip ? ip : "*", 0);
        close(fd);
        return -1;
    }
    return fd;
}

static int udp_connect(int fd, const char *ip, int port, char *why)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return fail(why, "connect to", ip, port);
    return 0;
}

static void local_addr(int fd, char ip[INET_ADDRSTRLEN], int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
        inet_ntop(AF_INET, &sa.sin_addr, ip, INET_ADDRSTRLEN);
        *port = ntohs(sa.sin_port);
    } else {
        *port = -1;
    }
}

static void get_info(udp_link *l, int me)
{
    socklen_t len = sizeof(int);
    getsockopt(l->fd[0], SOL_SOCKET, SO_SNDBUF, &l->sndbuf[me], &len);
    len = sizeof(int);
    getsockopt(l->fd[0], SOL_SOCKET, SO_RCVBUF, &l->rcvbuf[me], &len);
    len = sizeof(int);
    if (getsockopt(l->fd[0], IPPROTO_IP, IP_MTU, &l->mtu, &len) < 0)
        l->mtu = -1;
}

/* Rank 1: address and ports out, rank 0's back, then connect. 0 or -1 (why). */
static int open_rank1(const fl_ctx *ctx, const udp_params *p, udp_link *l, int *ports, char *why)
{
    char host[UDP_MSG] = "", mine[UDP_MSG] = "", msg[UDP_MSG] = "";
    sock_params sp = {.addr = p->addr, .iface = p->iface};
    int err = 0;
    gethostname(mine, sizeof mine - 1);
    MPI_Recv(host, UDP_MSG, MPI_CHAR, 0, UDP_TAG, ctx->comm, MPI_STATUS_IGNORE);
    if (sock_pick_addr(&sp, strcmp(host, mine) == 0, l->ip[1], why) < 0)
        err = -1;
    for (int k = 0; k < l->n && !err; k++)
        if ((l->fd[k] = udp_socket(p, l->ip[1], why)) < 0)
            err = -1;
        else
            local_addr(l->fd[k], msg, &ports[k]);
    snprintf(msg, sizeof msg, "%s", err ? "!" : l->ip[1]);
    MPI_Send(msg, UDP_MSG, MPI_CHAR, 0, UDP_TAG, ctx->comm);
    MPI_Send(ports, l->n, MPI_INT, 0, UDP_TAG, ctx->comm);
    MPI_Recv(msg, UDP_MSG, MPI_CHAR, 0, UDP_TAG, ctx->comm, MPI_STATUS_IGNORE);
    MPI_Recv(ports, l->n, MPI_INT, 0, UDP_TAG, ctx->comm, MPI_STATUS_IGNORE);
    if (err)
        return -1;
    if (msg[0] == '!')
        return -2; /* rank 0 says why */
    snprintf(l->ip[0], INET_ADDRSTRLEN, "%s", msg);
    l->port[0] = ports[0];
    for (int k = 0; k < l->n; k++)
        if (udp_connect(l->fd[k], l->ip[0], ports[k], why) < 0)
            return -1;
    local_addr(l->fd[0], msg, &l->port[1]);
    get_info(l, 1);
    return 0;
}

static int open_rank0(const fl_ctx *ctx, const udp_params *p, udp_link *l, int *ports, char *why)
{
    char host[UDP_MSG] = "", msg[UDP_MSG] = "";
    int err = 0;
    gethostname(host, sizeof host - 1);
    MPI_Send(host, UDP_MSG, MPI_CHAR, 1, UDP_TAG, ctx->comm);
    MPI_Recv(msg, UDP_MSG, MPI_CHAR, 1, UDP_TAG, ctx->comm, MPI_STATUS_IGNORE);
    MPI_Recv(ports, l->n, MPI_INT, 1, UDP_TAG, ctx->comm, MPI_STATUS_IGNORE);
    if (msg[0] == '!') {
        err = -2; /* rank 1 says why */
    } else {
        snprintf(l->ip[1], INET_ADDRSTRLEN, "%s", msg);
        l->port[1] = ports[0];
    }
    for (int k = 0; k < l->n && !err; k++) {
        if ((l->fd[k] = udp_socket(p, NULL, why)) < 0 || udp_connect(l->fd[k], l->ip[1], ports[k], why) < 0)
            err = -1;
        else
            local_addr(l->fd[k], k ? msg : l->ip[0], &ports[k]);
    }
    snprintf(msg, sizeof msg, "%s", err ? "!" : l->ip[0]);
    MPI_Send(msg, UDP_MSG, MPI_CHAR, 1, UDP_TAG, ctx->comm);
    MPI_Send(ports, l->n, MPI_INT, 1, UDP_TAG, ctx->comm);
    if (err)
        return err;
    l->port[0] = ports[0];
    get_info(l, 0);
    return 0;
}

int udp_open(const fl_ctx *ctx, const udp_params *p, int n, udp_link *l, char note[FL_NOTE_LEN])
{
    char why[UDP_MSG] = "";
    memset(l, 0, sizeof *l);
    l->role = ctx->rank < 2 ? ctx->rank : -1;
    l->sndbuf[0] = l->sndbuf[1] = l->rcvbuf[0] = l->rcvbuf[1] = l->mtu = -1;
    int err = 0;
    if (l->role >= 0) {
        int *ports = calloc((size_t)n, sizeof *ports);
        l->n = n;
        if (!(l->fd = malloc(sizeof *l->fd * (size_t)n)) || !ports)
            fl_die("udp: out of memory");
        for (int k = 0; k < n; k++)
            l->fd[k] = -1;
        err = l->role == 0 ? open_rank0(ctx, p, l, ports, why) : open_rank1(ctx, p, l, ports, why);
        free(ports);
    }
    /* the reason of the first rank that failed itself (-1; -2: its peer did), the same text everywhere */
    int who = err == -1 ? ctx->rank : ctx->nranks;
    MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (who == ctx->nranks) {
        if (l->role >= 0) { /* each end's buffers, for the info */
            int mine[2] = {l->sndbuf[l->role], l->rcvbuf[l->role]}, theirs[2];
            MPI_Sendrecv(mine, 2, MPI_INT, 1 - l->role, UDP_TAG, theirs, 2, MPI_INT, 1 - l->role, UDP_TAG,
                         ctx->comm, MPI_STATUS_IGNORE);
            l->sndbuf[1 - l->role] = theirs[0], l->rcvbuf[1 - l->role] = theirs[1];
        }
        return 0;
    }
    snprintf(note, FL_NOTE_LEN, "%s", why[0] ? why : "udp: the peer failed to open its sockets");
    MPI_Bcast(note, FL_NOTE_LEN, MPI_CHAR, who, ctx->comm);
    udp_close(l);
    return -1;
}

void udp_close(udp_link *l)
{
    for (int k = 0; l->fd && k < l->n; k++)
        if (l->fd[k] >= 0)
            close(l->fd[k]);
    free(l->fd);
    l->fd = NULL;
    l->n = 0;
}

void udp_info(const udp_link *l, const udp_params *p, char *out, size_t len)
{
    snprintf(out, len,
             "\"addr\":[\"%s\",\"%s\"],\"port\":[%d,%d],\"streams\":%d,\"sndbuf\":[%d,%d],"
             "\"rcvbuf\":[%d,%d],\"mtu\":%d,\"df\":%d",
             l->ip[0], l->ip[1], l->port[0], l->port[1], l->n, l->sndbuf[0], l->sndbuf[1], l->rcvbuf[0],
             l->rcvbuf[1], l->mtu, p->dontfrag);
}
