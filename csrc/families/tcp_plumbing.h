/* tcp: the socket plumbing (tcp_plumbing.c) the socket kernels (tcp.c,
 * tcp_conns.c, tcp_scatter.c) share: TCP connections between ranks 0 and 1,
 * bootstrapped over MPI, and the byte-moving calls. */
#ifndef FL_TCP_PLUMBING_H
#define FL_TCP_PLUMBING_H

#include "../fl.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <sys/types.h>

#define SOCK_TIMEOUT_MS 10000 /* connect/accept give up after this */

/* The socket params of every tcp benchmark (param_sets.py, SOCKET). */
typedef struct {
    const char *addr, *iface; /* rank 1's address, or its interface; "" picks one */
    int nodelay;              /* TCP_NODELAY as asked (0: Nagle while bursts are written) */
    int sndbuf, rcvbuf;       /* SO_SNDBUF/SO_RCVBUF; 0 keeps the kernel's default */
} sock_params;

/* n connections between ranks 0 (connecting) and 1 (accepting). fd[k] is
 * connection k on both ranks; ranks 2.. hold none. */
typedef struct {
    int role;                 /* 0 or 1; -1 on ranks without connections */
    int n;
    int *fd;
    char ip[INET_ADDRSTRLEN];
    int port;                 /* rank 1's listening port */
    int sndbuf[2], rcvbuf[2]; /* in force on rank 0 and on rank 1 (connection 0) */
} sock_link;

void sock_params_get(const fl_opts *o, sock_params *p);
/* Rank 1's address from p->addr and p->iface (the rest of p unused): addr=,
 * else iface='s, else loopback when same_host, else the first non-loopback
 * IPv4 address that is up. 0, or -1 with the reason (up to 200 bytes) in reason. */
int sock_pick_addr(const sock_params *p, int same_host, char ip[INET_ADDRSTRLEN], char *reason);

/* Collective over ctx->comm. Connects n sockets (TCP_NODELAY set when
 * `nodelay`), each step bounded by SOCK_TIMEOUT_MS. Returns 0, or -1 on
 * every rank with the reason in note (the same text everywhere) and no
 * socket left open. */
int sock_open(const fl_ctx *ctx, const sock_params *p, int nodelay, int n, sock_link *l,
              char note[FL_NOTE_LEN]);

/* Closes every connection; rank 0 resets them (SO_LINGER 0), so closing
 * thousands of connections in a sweep leaves no TIME_WAIT ports behind.
 * Callers close only after the peer's last reply, when nothing is in flight. */
void sock_close(sock_link *l);

/* `"addr":..,"port":..,"nodelay":..,"sndbuf":[r0,r1],"rcvbuf":[r0,r1]`: the
 * members of an info object, without braces. */
void sock_info(const sock_link *l, const sock_params *p, char *out, size_t len);

/* Byte movers: any failure or a closed peer ends the run (fl_die). */
_Noreturn void sock_fail(int fd, const char *what);
/* The bytes a recv or recvmsg (`what`) returned as r: 0 when a signal came
 * first (call again), the run's end for a closed peer or an error. */
size_t sock_received(int fd, ssize_t r, const char *what);
void sock_send_all(int fd, const void *p, size_t n);  /* waits in poll() on EAGAIN */
void sock_recv_block(int fd, void *p, size_t n);      /* blocking, MSG_WAITALL */
void sock_recv_poll(int fd, void *p, size_t n);       /* MSG_DONTWAIT spin, never sleeps */
/* One non-blocking recv of at most n bytes: the bytes read, 0 when the socket
 * has nothing now (or EINTR); a closed connection or an error is fatal. */
size_t sock_recv_some(int fd, void *p, size_t n);
void sock_nagle(int fd, int on);
void sock_nonblock(int fd);

/* Streams over a link (tcp.conns, tcp.scatter). The sender's part of a
 * measure call: op i sends slot i % buffers of `size` bytes of sbuf on
 * connection i % n, then awaits the 1-byte ack on connection 0 that ends
 * each sample, by polling (a sleeping sender would add its wake-up to the
 * time of every sample). With nodelay=0 Nagle is on only while the ops are
 * written, so their tail never waits for the peer's delayed ACK. The
 * receiver ends its part with sock_ack_send. */
void sock_send_slots(const sock_link *l, const sock_params *p, char *sbuf, int64_t size,
                     int64_t buffers, int64_t iters);
void sock_ack_send(const sock_link *l);

/* tcp.stream's one-stream kernel (tcp.c), which tcp_streams.c's tcp.stream
 * runs for streams=1 forward or reverse. */
extern const fl_kernel fl_tcp_stream_one;

#endif
