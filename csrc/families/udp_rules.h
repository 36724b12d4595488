/* udp: the rules that need no socket and no MPI (udp_rules.c), so that
 * tests build them alone (tests/unit/test_udp_rules.py): a receiver's
 * figures for one flow and direction under iperf3's rules (iperf_udp.c
 * iperf_udp_recv: loss from gaps in sequence numbers less late arrivals,
 * out of order, RFC 3550 jitter), and the paced sender's schedule under a
 * pacing timer. */
#ifndef FL_UDP_RULES_H
#define FL_UDP_RULES_H

#include <stddef.h>
#include <stdint.h>

#define UDP_RX_RING 64 /* the latest datagrams whose jitter a receiver remembers (udp_rx_close) */

/* A receiver's figures, counted since setup as doubles (the runner's counters). */
typedef struct {
    uint64_t next;        /* the sequence number expected next */
    double received;      /* datagrams arrived */
    double bytes;         /* their payload bytes */
    double lost;          /* gaps in sequence numbers, less the late arrivals that filled them */
    double out_of_order;  /* datagrams below the expected number (late) */
    double jitter_s;      /* RFC 3550 A.8: J += (|D| - J) / 16, D the change in transit time */
    int64_t transit_ns;   /* the last datagram's arrival - send time; valid once received > 0 */
    double call_jitter_s; /* J as the call's own last datagram left it (udp_rx_close) */
    uint64_t ring_seq[UDP_RX_RING];  /* the numbers of the latest datagrams taken, */
    double ring_jitter[UDP_RX_RING]; /* and J after each */
    unsigned ring_n;                 /* datagrams taken since setup (the ring's next slot, mod its size) */
} udp_rx;

/* Datagram number `seq`, sent at sent_ns, of `bytes` payload bytes, arrived at arrived_ns. */
void udp_rx_take(udp_rx *rx, uint64_t seq, int64_t sent_ns, size_t bytes, int64_t arrived_ns);
/* The sender's last sequence number of the call is `last` and the wait for
 * the rest is over: those not arrived are lost (a later one counts out of
 * order and takes one off `lost`, as iperf3's rule does), and call_jitter_s
 * is J after the latest datagram numbered `last` or below. */
void udp_rx_close(udp_rx *rx, uint64_t last);

/* Seconds after a call's start at which op i of `iters` is sent, ops spaced
 * `gap` seconds apart on average; with a pacing timer of `tick` seconds (> 0)
 * each op waits for the latest tick at or before its own time on a grid of
 * ticks that ends at the call's end, iters x gap, so that a tick's ops go
 * back to back and the call's last tick holds a whole tick's ops. */
double udp_due(int64_t i, int64_t iters, double gap, double tick);

#endif
