/* udp: the datagram plumbing (udp_plumbing.c) the UDP kernels share:
 * connected UDP sockets between ranks 0 and 1, bootstrapped over MPI; the
 * header every datagram carries (stream, sequence number, send time); the
 * receiver's figures and the paced schedule are udp_rules.h's. */
#ifndef FL_UDP_PLUMBING_H
#define FL_UDP_PLUMBING_H

#include "../fl.h"
#include "udp_rules.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UDP_MAX_PAYLOAD 65507 /* IPv4: 65535 - 20 (IP header) - 8 (UDP header) */
#define UDP_IP_OVERHEAD 28    /* IPv4 and UDP headers: a datagram of S bytes is an S + 28 byte packet */
#define UDP_HDR 24            /* bytes of udp_hdr at the start of every datagram: the smallest SIZE */

/* The socket params of the udp benchmarks (param_sets.py, UDP_SOCKET). */
typedef struct {
    const char *addr, *iface; /* rank 1's address, or its interface; "" picks one (tcp_plumbing's rule) */
    int sndbuf, rcvbuf;       /* SO_SNDBUF/SO_RCVBUF; 0 keeps the kernel's default */
    int dontfrag;             /* df=1: IP_PMTUDISC_DO, a datagram over the path MTU is refused */
} udp_params;

/* n connected, non-blocking UDP sockets between ranks 0 and 1: fd[k] on
 * rank 0 and fd[k] on rank 1 are the two ends of flow k (either may send).
 * Ranks 2.. hold none. */
typedef struct {
    int role;                  /* 0 or 1; -1 on ranks without sockets */
    int n;
    int *fd;
    char ip[2][INET_ADDRSTRLEN]; /* rank 0's and rank 1's addresses */
    int port[2];               /* flow 0's ports on rank 0 and rank 1 */
    int sndbuf[2], rcvbuf[2];  /* in force on rank 0 and rank 1 (flow 0) */
    int mtu;                   /* the path MTU of flow 0 on this rank (IP_MTU), -1 unknown */
} udp_link;

/* The datagram header, in host byte order (both ends run this core). */
typedef struct {
    uint64_t seq;     /* per flow and direction, from 0 */
    int64_t sent_ns;  /* the sender's CLOCK_MONOTONIC at the send (udp_now_ns) */
    uint32_t stream;  /* the flow's index */
    uint32_t flags;   /* the kernel's own (a reply asked, ...) */
} udp_hdr;

void udp_params_get(const fl_opts *o, udp_params *p); /* addr, iface, sndbuf, rcvbuf; df if listed */

/* Collective over ctx->comm: rank 1 binds n sockets on its address
 * (tcp_plumbing's sock_pick_addr: addr=, iface=, loopback on one host, else
 * the first non-loopback IPv4 address) and sends their ports to rank 0 over
 * MPI; rank 0 connects a socket to each (the route picks its address) and
 * sends its own ports back; rank 1 connects each to its peer. Returns 0, or
 * -1 on every rank with the reason in note (the same text everywhere) and no
 * socket left open. */
int udp_open(const fl_ctx *ctx, const udp_params *p, int n, udp_link *l, char note[FL_NOTE_LEN]);
void udp_close(udp_link *l);
/* `"addr":[r0,r1],"port":[r0,r1],"streams":n,"sndbuf":[..],"rcvbuf":[..],"mtu":m,"df":d`:
 * the members of an info object, without braces. */
void udp_info(const udp_link *l, const udp_params *p, char *out, size_t len);

/* CLOCK_MONOTONIC in ns: send times. Two hosts' clocks differ by an offset,
 * which cancels in jitter (a difference of transit times, RFC 3550 6.4.1). */
int64_t udp_now_ns(void);
/* Writes the header (send time: now) at the start of a datagram of at least UDP_HDR bytes. */
void udp_stamp(void *dgram, uint64_t seq, uint32_t stream, uint32_t flags);
void udp_header(const void *dgram, udp_hdr *h);

/* One send of n bytes: 1 sent, 0 when the socket has no room now (EAGAIN,
 * ENOBUFS: nothing was sent; call again); any other failure ends the run. */
int udp_send(int fd, const void *buf, size_t n);
/* One non-blocking receive of at most cap bytes: the bytes, or -1 when none
 * waits now (or an ICMP error was reported); a failure ends the run. */
ssize_t udp_recv(int fd, void *buf, size_t cap);

#endif
