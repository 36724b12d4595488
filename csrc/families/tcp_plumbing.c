/* tcp: the socket plumbing (tcp_plumbing.h): TCP connections between ranks
 * 0 and 1, bootstrapped over MPI, and the byte movers.
 *
 * Rank 1 listens on an ephemeral port and sends "ip port" to rank 0, which
 * connects and sends its status and the local port of each connection;
 * rank 1 accepts them and files each under the index whose port it came
 * from, so fd[k] is one connection on both sides whatever the order of the
 * accept queue. Every step that can fail is bounded by
 * SOCK_TIMEOUT_MS and reports over MPI, so a refused connect or a bad
 * interface ends in an error record instead of a hang. */
#include "tcp_plumbing.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SOCK_TAG 4712
#define SOCK_MSG 256
#define SOCK_REASON 200 /* reasons written into a SOCK_MSG message after one byte */

void sock_params_get(const fl_opts *o, sock_params *p)
{
    p->addr = fl_param(o, "addr");
    p->iface = fl_param(o, "iface");
    p->nodelay = fl_param_int(o, "nodelay") != 0;
    p->sndbuf = (int)fl_param_int(o, "sndbuf");
    p->rcvbuf = (int)fl_param_int(o, "rcvbuf");
}

/* ---- byte movers ---- */

_Noreturn void sock_fail(int fd, const char *what)
{
    int e = errno;
    if (fd >= 0)
        close(fd);
    fl_die("tcp: %s: %s", what, e ? strerror(e) : "peer closed the connection");
}

void sock_send_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r >= 0) {
            p += r;
            n -= (size_t)r;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd w = { .fd = fd, .events = POLLOUT };
            if (poll(&w, 1, -1) < 0 && errno != EINTR)
                sock_fail(fd, "poll");
        } else if (errno != EINTR) {
            sock_fail(fd, "send");
        }
    }
}

size_t sock_received(int fd, ssize_t r, const char *what)
{
    if (r < 0 && errno == EINTR)
        return 0;
    if (r <= 0) {
        if (r == 0)
            errno = 0;
        sock_fail(fd, what);
    }
    return (size_t)r;
}

void sock_recv_block(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        size_t r = sock_received(fd, recv(fd, p, n, MSG_WAITALL), "recv");
        p += r;
        n -= r;
    }
}

size_t sock_recv_some(int fd, void *p, size_t n)
{
    ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    return sock_received(fd, r, "recv");
}

/* Busy polling: a non-blocking recv spins on EAGAIN and never sleeps. */
void sock_recv_poll(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        size_t r = sock_recv_some(fd, p, n);
        p += r;
        n -= r;
    }
}

void sock_nagle(int fd, int on)
{
    int nd = !on;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nd, sizeof nd) < 0)
        sock_fail(fd, "setsockopt");
}

void sock_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        sock_fail(fd, "fcntl");
}

/* With nodelay=0, Nagle on every connection while a burst is written
 * (tcp_plumbing.h). */
static void burst(const sock_link *l, const sock_params *p, int on)
{
    if (!p->nodelay)
        for (int k = 0; k < l->n; k++)
            sock_nagle(l->fd[k], on);
}

void sock_send_slots(const sock_link *l, const sock_params *p, char *sbuf, int64_t size,
                     int64_t buffers, int64_t iters)
{
    char ack;
    burst(l, p, 1);
    for (int64_t i = 0; i < iters; i++)
        sock_send_all(l->fd[i % l->n], fl_slot(sbuf, size, buffers, i), (size_t)size);
    burst(l, p, 0);
    sock_recv_poll(l->fd[0], &ack, 1);
}

void sock_ack_send(const sock_link *l)
{
    char ack = 0;
    sock_send_all(l->fd[0], &ack, 1);
}

/* ---- connecting ---- */

static int sock_err(int fd, char *reason, const char *what)
{
    snprintf(reason, SOCK_REASON, "%s: %s", what, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Options that must precede connect/listen (buffer sizes fix the window
 * scale at the handshake); accepted sockets inherit the listener's. */
static int set_opts(int fd, int nodelay, int sndbuf, int rcvbuf)
{
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        return -1;
    if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        return -1;
    if (sndbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) < 0)
        return -1;
    if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) < 0)
        return -1;
    return 0;
}

static void get_bufs(int fd, int *sndbuf, int *rcvbuf)
{
    socklen_t len = sizeof *sndbuf;
    *sndbuf = *rcvbuf = -1;
    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, sndbuf, &len);
    len = sizeof *rcvbuf;
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, rcvbuf, &len);
}

static int local_port(int fd)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    return getsockname(fd, (struct sockaddr *)&sa, &len) == 0 ? ntohs(sa.sin_port) : -1;
}

/* Rank 1's listening address: addr=, else iface=, else loopback when both
 * ranks run on one host, else the first non-loopback IPv4 address. */
int sock_pick_addr(const sock_params *p, int same_host, char ip[INET_ADDRSTRLEN], char *reason)
{
    struct in_addr a;
    if (p->addr[0]) {
        if (inet_pton(AF_INET, p->addr, &a) != 1) {
            snprintf(reason, SOCK_REASON, "addr=%.100s is not an IPv4 address", p->addr);
            return -1;
        }
        snprintf(ip, INET_ADDRSTRLEN, "%s", p->addr);
        return 0;
    }
    if (!p->iface[0] && same_host) {
        snprintf(ip, INET_ADDRSTRLEN, "127.0.0.1");
        return 0;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) < 0)
        return sock_err(-1, reason, "getifaddrs");
    int found = 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        if (p->iface[0] ? strcmp(i->ifa_name, p->iface) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, ip,
                  INET_ADDRSTRLEN);
        found = 1;
    }
    freeifaddrs(ifs);
    if (!found) {
        if (p->iface[0])
            snprintf(reason, SOCK_REASON, "iface=%.100s has no IPv4 address that is up on rank 1",
                     p->iface);
        else
            snprintf(reason, SOCK_REASON, "rank 1 has no non-loopback IPv4 address; set addr=");
        return -1;
    }
    return 0;
}

static int make_listener(const char *ip, const sock_params *p, int backlog, int *port,
                         char *reason)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return sock_err(-1, reason, "socket");
    if (set_opts(fd, 0, p->sndbuf, p->rcvbuf) < 0)
        return sock_err(fd, reason, "setsockopt");
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        return sock_err(fd, reason, "bind");
    if (listen(fd, backlog) < 0 || (*port = local_port(fd)) < 0)
        return sock_err(fd, reason, "listen");
    return fd;
}

/* Non-blocking connect bounded by SOCK_TIMEOUT_MS; returns a blocking socket. */
static int connect_to(const char *ip, int port, int nodelay, const sock_params *p, char *reason)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return sock_err(-1, reason, "socket");
    if (set_opts(fd, nodelay, p->sndbuf, p->rcvbuf) < 0)
        return sock_err(fd, reason, "setsockopt");
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno != EINPROGRESS)
            return sock_err(fd, reason, "connect");
        struct pollfd w = { .fd = fd, .events = POLLOUT };
        int e = 0;
        socklen_t len = sizeof e;
        int r = poll(&w, 1, SOCK_TIMEOUT_MS);
        if (r == 0)
            errno = ETIMEDOUT;
        else if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0)
            errno = e;
        if (r <= 0 || e != 0)
            return sock_err(fd, reason, "connect");
    }
    fcntl(fd, F_SETFL, fl);
    return fd;
}

/* One connection from the queue, bounded by SOCK_TIMEOUT_MS; *port is the
 * peer's port. */
static int accept_from(int lfd, int nodelay, int *port, char *reason)
{
    struct pollfd w = { .fd = lfd, .events = POLLIN };
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int r = poll(&w, 1, SOCK_TIMEOUT_MS), one = 1;
    if (r == 0)
        errno = ETIMEDOUT;
    int fd = r > 0 ? accept(lfd, (struct sockaddr *)&sa, &len) : -1;
    if (fd < 0)
        return sock_err(-1, reason, "accept");
    if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        return sock_err(fd, reason, "setsockopt");
    *port = ntohs(sa.sin_port);
    return fd;
}

static void close_all(sock_link *l, int reset)
{
    struct linger off = { .l_onoff = 1, .l_linger = 0 };
    for (int k = 0; k < l->n; k++)
        if (l->fd[k] >= 0) {
            if (reset)
                setsockopt(l->fd[k], SOL_SOCKET, SO_LINGER, &off, sizeof off);
            close(l->fd[k]);
            l->fd[k] = -1;
        }
}

/* Connections are made in rounds of at most SOCK_ROUND: rank 0 connects a
 * round before rank 1 accepts any, and 128 is the smallest listen queue a
 * Linux host may have (net.core.somaxconn before 5.4). */
#define SOCK_ROUND 128

/* Rank 0: connects connections k0..k0+m-1; ports[0] is the status,
 * ports[1 + j] the local port of connection k0 + j. */
static void connect_round(sock_link *l, const sock_params *p, int nodelay, int k0, int m,
                          int *ports, char *reason)
{
    ports[0] = 0;
    for (int j = 0; j < m && !ports[0]; j++) {
        int fd = l->fd[k0 + j] = connect_to(l->ip, l->port, nodelay, p, reason);
        ports[1 + j] = fd >= 0 ? local_port(fd) : -1;
        ports[0] = ports[1 + j] < 0;
    }
}

/* Rank 1: accepts a round and files each connection by its peer port. */
static int accept_round(sock_link *l, int lfd, int nodelay, int k0, int m, const int *ports,
                        char *reason)
{
    for (int got = 0; got < m; got++) {
        int port = -1, j = 0;
        int fd = accept_from(lfd, nodelay, &port, reason);
        if (fd < 0)
            return -1;
        while (j < m && (ports[1 + j] != port || l->fd[k0 + j] >= 0))
            j++;
        if (j == m) {
            close(fd);
            snprintf(reason, SOCK_REASON, "a connection from port %d that rank 0 did not make",
                     port);
            return -1;
        }
        l->fd[k0 + j] = fd;
    }
    return 0;
}

static int open_rank0(const fl_ctx *ctx, sock_link *l, const sock_params *p, int nodelay,
                      char *note)
{
    char msg[SOCK_MSG] = "", host[SOCK_MSG] = "";
    int ports[1 + SOCK_ROUND];
    gethostname(host, sizeof host - 1);
    MPI_Send(host, SOCK_MSG, MPI_CHAR, 1, SOCK_TAG, ctx->comm);
    MPI_Recv(msg, SOCK_MSG, MPI_CHAR, 1, SOCK_TAG, ctx->comm, MPI_STATUS_IGNORE);
    if (msg[0] == '!') { /* rank 1 has no listener and waits for nothing */
        snprintf(note, FL_NOTE_LEN, "tcp: rank 1: %.200s", msg + 1);
        return 1;
    }
    int bad = sscanf(msg, "%15s %d", l->ip, &l->port) != 2;
    if (bad)
        snprintf(note, FL_NOTE_LEN, "tcp: bad address message '%.200s'", msg);
    /* every round ends in rank 1's reply; a failed round is the last */
    for (int k0 = 0; k0 < l->n; k0 += SOCK_ROUND) {
        int m = l->n - k0 < SOCK_ROUND ? l->n - k0 : SOCK_ROUND;
        ports[0] = 1;
        if (!bad) {
            connect_round(l, p, nodelay, k0, m, ports, msg);
            if (ports[0])
                snprintf(note, FL_NOTE_LEN, "tcp: rank 0 -> %s:%d: %.200s", l->ip, l->port, msg);
        }
        MPI_Send(ports, 1 + m, MPI_INT, 1, SOCK_TAG, ctx->comm);
        if (ports[0])
            return 1;
        MPI_Recv(msg, SOCK_MSG, MPI_CHAR, 1, SOCK_TAG, ctx->comm, MPI_STATUS_IGNORE);
        if (msg[0] == '!' || sscanf(msg, "%d %d", &l->sndbuf[1], &l->rcvbuf[1]) != 2) {
            snprintf(note, FL_NOTE_LEN, "tcp: rank 1: %.200s", msg + (msg[0] == '!'));
            return 1;
        }
    }
    get_bufs(l->fd[0], &l->sndbuf[0], &l->rcvbuf[0]);
    return 0;
}

static int open_rank1(const fl_ctx *ctx, sock_link *l, const sock_params *p, int nodelay)
{
    char msg[SOCK_MSG] = "", host[SOCK_MSG] = "", mine[SOCK_MSG] = "";
    int ports[1 + SOCK_ROUND], lfd = -1, err = 0;
    gethostname(mine, sizeof mine - 1);
    MPI_Recv(host, SOCK_MSG, MPI_CHAR, 0, SOCK_TAG, ctx->comm, MPI_STATUS_IGNORE);
    if (sock_pick_addr(p, strcmp(host, mine) == 0, l->ip, msg + 1) == 0)
        lfd = make_listener(l->ip, p, SOCK_ROUND, &l->port, msg + 1);
    if (lfd < 0)
        msg[0] = '!';
    else
        snprintf(msg, sizeof msg, "%s %d", l->ip, l->port);
    MPI_Send(msg, SOCK_MSG, MPI_CHAR, 0, SOCK_TAG, ctx->comm);
    if (lfd < 0)
        return 1;
    for (int k0 = 0; k0 < l->n && !err; k0 += SOCK_ROUND) {
        int m = l->n - k0 < SOCK_ROUND ? l->n - k0 : SOCK_ROUND;
        MPI_Recv(ports, 1 + m, MPI_INT, 0, SOCK_TAG, ctx->comm, MPI_STATUS_IGNORE);
        if ((err = ports[0]) != 0)
            break;
        err = accept_round(l, lfd, nodelay, k0, m, ports, msg + 1) != 0;
        if (err) {
            msg[0] = '!';
        } else {
            get_bufs(l->fd[0], &l->sndbuf[1], &l->rcvbuf[1]);
            snprintf(msg, sizeof msg, "%d %d", l->sndbuf[1], l->rcvbuf[1]);
        }
        MPI_Send(msg, SOCK_MSG, MPI_CHAR, 0, SOCK_TAG, ctx->comm);
    }
    close(lfd);
    return err;
}

int sock_open(const fl_ctx *ctx, const sock_params *p, int nodelay, int n, sock_link *l,
              char note[FL_NOTE_LEN])
{
    memset(l, 0, sizeof *l);
    l->role = ctx->rank < 2 ? ctx->rank : -1;
    l->sndbuf[0] = l->sndbuf[1] = l->rcvbuf[0] = l->rcvbuf[1] = -1;
    int err = 0;
    if (l->role >= 0) {
        l->n = n;
        if (!(l->fd = malloc(sizeof *l->fd * (size_t)n)))
            fl_die("tcp: out of memory");
        for (int k = 0; k < n; k++)
            l->fd[k] = -1;
        err = l->role == 0 ? open_rank0(ctx, l, p, nodelay, note) : open_rank1(ctx, l, p, nodelay);
    }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, ctx->comm);
    if (!err)
        return 0;
    /* rank 0 knows why (rank 1 reports to it): every rank says so */
    MPI_Bcast(note, FL_NOTE_LEN, MPI_CHAR, 0, ctx->comm);
    sock_close(l);
    return -1;
}

void sock_close(sock_link *l)
{
    if (l->fd)
        close_all(l, l->role == 0);
    free(l->fd);
    l->fd = NULL;
    l->n = 0;
}

void sock_info(const sock_link *l, const sock_params *p, char *out, size_t len)
{
    snprintf(out, len,
             "\"addr\":\"%s\",\"port\":%d,\"nodelay\":%d,\"sndbuf\":[%d,%d],\"rcvbuf\":[%d,%d]",
             l->ip, l->port, p->nodelay, l->sndbuf[0], l->sndbuf[1], l->rcvbuf[0],
             l->rcvbuf[1]);
}
