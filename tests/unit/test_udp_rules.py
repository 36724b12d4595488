"""csrc/families/udp_rules.c built alone with a small driver: the UDP receiver's
figures under iperf3's rules (loss from gaps less late arrivals, out of order,
RFC 3550 jitter), the jitter where a call's own last datagram left it, and the
paced sender's schedule under a pacing timer (ticks counted from the call's end)."""
import shutil
import subprocess
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[2] / "csrc" / "families"
DRIVER = r"""
#include "udp_rules.h"
#include <stdio.h>
int main(void)
{
    udp_rx rx = {0};
    char op;
    while (scanf(" %c", &op) == 1) {
        unsigned long long seq, last;
        long long sent, arr, i, iters;
        double gap, tick;
        if (op == 't' && scanf("%llu %lld %lld", &seq, &sent, &arr) == 3)
            udp_rx_take(&rx, seq, sent, 1000, arr);
        else if (op == 'c' && scanf("%llu", &last) == 1)
            udp_rx_close(&rx, last);
        else if (op == 'p')
            printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", rx.received, rx.bytes, rx.lost, rx.out_of_order,
                   rx.jitter_s, rx.call_jitter_s);
        else if (op == 'd' && scanf("%lld %lld %lf %lf", &i, &iters, &gap, &tick) == 4)
            printf("%.17g\n", udp_due(i, iters, gap, tick));
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    """Feed the driver commands, get its printed lines back."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (cc) is needed: the core is built with one"
    d = tmp_path_factory.mktemp("udp_rules")
    (d / "driver.c").write_text(DRIVER)
    exe = d / "driver"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Werror", f"-I{CSRC}", str(d / "driver.c"),
                    str(CSRC / "udp_rules.c"), "-lm", "-o", str(exe)], check=True, capture_output=True, timeout=60)

    def run(*commands: str) -> list[list[float]]:
        out = subprocess.run([str(exe)], input="\n".join(commands) + "\n", capture_output=True, text=True,
                             check=True, timeout=10).stdout
        return [[float(x) for x in line.split()] for line in out.splitlines()]
    return run


def take(seq: int, sent_ns: int, arrived_ns: int) -> str:
    return f"t {seq} {sent_ns} {arrived_ns}"


def rfc3550(transits_ns: list[int]) -> list[float]:
    """J after each datagram (seconds): J += (|D| - J) / 16; the first only sets the transit."""
    j, out = 0.0, [0.0]
    for a, b in zip(transits_ns, transits_ns[1:]):
        j += (abs(b - a) * 1e-9 - j) / 16
        out.append(j)
    return out


def test_the_jitter_is_rfc_3550s_on_the_transit_times(rules):
    transits = [20_000, 23_000, 19_500, 40_000, 21_000, 20_500, 20_400]
    rows = rules(*(take(k, 1_000_000 * k, 1_000_000 * k + t) for k, t in enumerate(transits)), "p")
    received, got_bytes, lost, late, jitter, _ = rows[0]
    assert (received, got_bytes, lost, late) == (7, 7000, 0, 0)
    assert jitter == pytest.approx(rfc3550(transits)[-1], rel=1e-12)


def test_loss_is_the_gaps_less_the_late_arrivals_as_iperf3_counts_it(rules):
    rows = rules(take(0, 0, 10), take(1, 1, 11), take(3, 3, 13), "p",   # 2 missing: lost
                 take(2, 2, 12), "p",                                   # late: out of order, fills the gap
                 "c 5", "p")                                            # 4 and 5 never came
    assert rows[0][:4] == [3, 3000, 1, 0]
    assert rows[1][:4] == [4, 4000, 0, 1]
    assert rows[2][:4] == [4, 4000, 2, 1]


def test_a_calls_jitter_leaves_out_the_next_calls_first_datagrams(rules):
    # Call 1 is datagrams 0..9; the receiver, woken by datagram 10 of call 2 (its transit
    # holds the wake-up), takes it and 11 before it sees the end-of-call message.
    transits = [20_000 + 300 * (k % 3) for k in range(10)] + [60_000, 45_000]
    cmds = [take(k, 1_000_000 * k, 1_000_000 * k + t) for k, t in enumerate(transits)]
    rows = rules(*cmds, "c 9", "p")
    *_, running, call = rows[0]
    expected = rfc3550(transits)
    assert call == pytest.approx(expected[9], rel=1e-12)
    assert running == pytest.approx(expected[11], rel=1e-12) and running > 2 * call


def test_a_lost_last_datagram_leaves_the_jitter_of_the_last_one_that_came(rules):
    transits = [20_000, 21_000, 20_200, 22_000, 20_000, 20_600, 21_500, 20_100, 90_000]
    seqs = [0, 1, 2, 3, 4, 5, 6, 7, 10]                   # 8 and 9 lost; 10 is the next call's
    rows = rules(*(take(s, 1_000_000 * s, 1_000_000 * s + t) for s, t in zip(seqs, transits)), "c 9", "p")
    _, _, lost, _, _, call = rows[0]
    assert lost == 2 and call == pytest.approx(rfc3550(transits)[7], rel=1e-12)


def test_past_the_ring_the_current_jitter_stands(rules):
    n = 64 + 5                                             # more of the next call than the ring keeps
    transits = [20_000] + [20_000 + 1_000 * (k % 2) for k in range(1, n + 1)]
    rows = rules(*(take(k, 1_000_000 * k, 1_000_000 * k + t) for k, t in enumerate(transits)), "c 0", "p")
    *_, running, call = rows[0]
    assert call == running == pytest.approx(rfc3550(transits)[-1], rel=1e-12)


def test_ticks_are_counted_from_the_calls_end_so_its_last_tick_is_whole(rules):
    gap, tick, iters = 0.3, 1.0, 10                        # 3.33 ops a tick; the call ends at 3.0
    due = [r[0] for r in rules(*(f"d {i} {iters} {gap} {tick}" for i in range(iters)))]
    assert due == pytest.approx([0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
    assert all(d <= i * gap + 1e-12 for i, d in enumerate(due))     # no op leaves after its own time
    last = [i for i in range(iters) if due[i] == pytest.approx(2.0)]
    assert len(last) == 3 and all(i * gap >= iters * gap - tick - 1e-12 for i in last)


def test_without_a_timer_each_op_goes_at_its_own_time(rules):
    due = [r[0] for r in rules(*(f"d {i} 7 0.25 0" for i in range(7)))]
    assert due == pytest.approx([0.25 * i for i in range(7)])
