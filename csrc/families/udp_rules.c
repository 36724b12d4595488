/* udp: the receiver's figures and the paced sender's schedule (udp_rules.h). */
#include "udp_rules.h"

#include <math.h>
#include <stdlib.h>

/* iperf3's iperf_udp_recv: a number at or above the expected one moves it
 * on, the gap counted lost; one below is late: out of order, and it fills a
 * gap counted before (cnt_error--). Jitter as RFC 3550 A.8 computes it, on
 * the transit times' differences; unlike iperf3, whose prev_transit starts
 * at 0, the first datagram only sets the transit time. */
void udp_rx_take(udp_rx *rx, uint64_t seq, int64_t sent_ns, size_t bytes, int64_t arrived_ns)
{
    if (seq >= rx->next) {
        rx->lost += (double)(seq - rx->next);
        rx->next = seq + 1;
    } else {
        rx->out_of_order += 1;
        if (rx->lost > 0)
            rx->lost -= 1;
    }
    int64_t transit = arrived_ns - sent_ns;
    if (rx->received > 0) {
        double d = 1e-9 * (double)llabs(transit - rx->transit_ns);
        rx->jitter_s += (d - rx->jitter_s) / 16.0;
    }
    rx->transit_ns = transit;
    rx->ring_seq[rx->ring_n % UDP_RX_RING] = seq;
    rx->ring_jitter[rx->ring_n % UDP_RX_RING] = rx->jitter_s;
    rx->ring_n++;
    rx->received += 1;
    rx->bytes += (double)bytes;
}

/* The call's jitter is J where its own last datagram left it. A receiver
 * asleep in poll() is woken by datagrams, not by the sender's end-of-call
 * message over MPI, so it takes the next call's first datagram before it
 * sees that message; that datagram's transit includes the receiver's
 * wake-up, and J read after it carries a sixteenth of it into every sample
 * (1.26 times J at the end of a burst, in a run on loopback). The next
 * call's datagrams still count in the running J. Past
 * UDP_RX_RING datagrams of the next call the current J stands. */
void udp_rx_close(udp_rx *rx, uint64_t last)
{
    rx->call_jitter_s = rx->jitter_s;
    unsigned kept = rx->ring_n < UDP_RX_RING ? rx->ring_n : UDP_RX_RING;
    for (unsigned j = 1; j <= kept; j++) {
        unsigned at = (rx->ring_n - j) % UDP_RX_RING;
        if (rx->ring_seq[at] <= last) {
            rx->call_jitter_s = rx->ring_jitter[at];
            break;
        }
    }
    if (last + 1 > rx->next) {
        rx->lost += (double)(last + 1 - rx->next);
        rx->next = last + 1;
    }
}

/* iperf3 re-checks its throttle at each tick of its pacing timer and sends
 * whatever keeps its average at the rate (iperf_api.c iperf_check_throttle),
 * so every tick's burst is a whole tick's datagrams and the test ends after
 * one. A call here is a slice of that stream: ticks counted from the call's
 * end leave the partial tick at its start, and its end, where the receiver's
 * jitter is read, comes after a whole burst as iperf3's end does (counted
 * from the start, the last tick held the remainder, a few datagrams after a
 * wake-up: docs/sockets.md, "iperf3's bursts"). */
double udp_due(int64_t i, int64_t iters, double gap, double tick)
{
    double when = (double)i * gap;
    if (tick <= 0)
        return when;
    double end = (double)iters * gap;
    double due = end - ceil((end - when) / tick - 1e-9) * tick;
    return due > 0 ? due : 0;
}
