"""Seed 002 (Hellwagner, Lachowitz and Ohlenroth): which VI Architecture
options a communication library should use, re-run on the fabric level
(libfabric, VIA's descendant) first and on MPI and sockets beside it."""

from __future__ import annotations

from . import draw
from .recipe import Finding, Runs, Step, Study

# Round trips at 4 bytes (Table 1), one-way streams (Fig. 2-3), many
# connections at 2048 bytes (Table 2) and scatter into blocks of 8..1024
# bytes (Fig. 5). libfabric's shm and tcp providers scatter into at most 4
# iovec entries, so the provider's scatter runs at 4 segments; MPI's
# datatype receive and the kernel's readv scatter the seed's 32.
QUICK = ("--launches", "3", "--point-time", "0.3")
STEPS = (
    Step("latency", ("fabric.pingpong", "fabric.put_lat", "-s", "4,64,1K", "-p", "completion=poll,block", *QUICK),
         "Table 1: round trips, send/receive vs RDMA write, polling vs blocking", seconds=30),
    Step("latency-beside", ("tcp.rr_poll", "tcp.rr_block", "message.pingpong", "-s", "4,64,1K", *QUICK),
         "Table 1 beside: TCP polling vs blocking, MPI", seconds=30),
    Step("throughput", ("fabric.stream", "fabric.put_bw", "message.stream", "tcp.stream",
                        "-s", "64:64K:x4", *QUICK),
         "Fig. 2-3: one-way throughput, send/receive vs RDMA write, beside MPI and TCP", seconds=60),
    Step("connections", ("fabric.conns", "-s", "2K", "--conns", "1,10,50,100", "-p", "check=cq,scan", *QUICK),
         "Table 2: many connections, one completion queue vs a round robin", seconds=45),
    Step("connections-beside", ("message.conns", "-s", "2K", "--conns", "1,10,50,100",
                                "-p", "check=waitany,scan", *QUICK),
         "Table 2 beside: MPI_Waitany vs a round robin of MPI_Test", seconds=30),
    Step("scatter", ("fabric.scatter", "-s", "8:1K:x2", "-p", "mode=iovec,copy", "-p", "segments=4", *QUICK),
         "Fig. 4-5: scatter by the provider vs received and copied (4 segments)", seconds=45),
    Step("scatter-beside", ("message.scatter", "-s", "8:1K:x2", "-p", "mode=datatype,copy", *QUICK),
         "Fig. 4-5 beside: MPI's datatype receive vs received and copied (32 segments)", seconds=45),
)


_SCATTER = (("fabric, provider's iovec", "scatter", "fabric.scatter", "mode=iovec"),
            ("fabric, receive and copy", "scatter", "fabric.scatter", "mode=copy"),
            ("MPI datatype", "scatter-beside", "message.scatter", "mode=datatype"),
            ("MPI, receive and copy", "scatter-beside", "message.scatter", "mode=copy"))
_CONNS = (("fabric, one CQ", "connections", "fabric.conns", "check=cq"),
          ("fabric, round robin", "connections", "fabric.conns", "check=scan"),
          ("MPI_Waitany", "connections-beside", "message.conns", "check=waitany"),
          ("MPI_Test round robin", "connections-beside", "message.conns", "check=scan"))


def figures(runs: Runs, ref) -> list:
    lat = [draw.measured("fabric send/receive, polling", runs.rows("latency", "fabric.pingpong",
                                                                   "completion=poll"), "op", color=0),
           draw.measured("fabric send/receive, blocking", runs.rows("latency", "fabric.pingpong",
                                                                    "completion=block"), "op", color=1),
           draw.measured("TCP, polling", runs.rows("latency-beside", "tcp.rr_poll"), "op", color=2),
           draw.measured("TCP, blocking", runs.rows("latency-beside", "tcp.rr_block"), "op", color=3)]
    lat += [draw.published(f"cLAN {what} (Table 1)", [ref.get(key)], scale=draw.US, color=c)
            for what, key, c in (("polling", "sr-polling-pentium", 0), ("blocking", "sr-blocking-pentium", 1))]
    thr = [draw.measured("fabric send/receive", runs.rows("throughput", "fabric.stream"), color=0),
           draw.measured("fabric RDMA write", runs.rows("throughput", "fabric.put_bw"), color=1),
           draw.measured("MPI", runs.rows("throughput", "message.stream"), color=2),
           draw.measured("TCP", runs.rows("throughput", "tcp.stream"), color=3)]
    xs = [x for s in thr for x in s.x]
    thr += [draw.level("cLAN send/receive and RDMA write (Fig. 2-3)", ref.get("sr-peak-pentium3"), xs, color=0)]
    conns = [draw.measured(label, runs.rows(step, bench, variant), x="conns", color=c)
             for c, (label, step, bench, variant) in enumerate(_CONNS)]
    conns += [draw.published(f"cLAN {what} (Table 2)", [ref.get(f"{key}-{n}") for n in (1, 10, 50, 100)],
                             x="connections", color=c) for what, key, c in (("CQ", "cq", 0), ("round robin", "rr", 1))]
    scatter = [draw.measured(label, runs.rows(step, bench, where), color=c)
               for c, (label, step, bench, where) in enumerate(_SCATTER)]
    scatter += [draw.published("cLAN, NIC scatter (Fig. 4-5)", [ref.get("nic-scatter-large-blocks")],
                               x="block_size", color=0)]
    return [draw.figure("hv-latency", "Round trip vs message size (Table 1)", draw.SIZE, draw.LATENCY, lat,
                        "median round trip; the seed's cLAN round trips at 4 bytes dashed"),
            draw.figure("hv-throughput", "One-way throughput (Fig. 2-3)", draw.SIZE, draw.BANDWIDTH, thr,
                        "send/receive and RDMA write on the fabric level, MPI and TCP beside them"),
            draw.figure("hv-conns", "Throughput over many connections (Table 2)",
                        draw.Axis("connections", log=True, kind="count"), draw.BANDWIDTH, conns,
                        "2048-byte messages spread over N connections; completions from one queue "
                        "or found by checking each in turn"),
            draw.figure("hv-scatter", "Scatter on receive vs receive and copy (Fig. 4-5)",
                        draw.Axis("segment size (bytes)", log=True, kind="size"), draw.BANDWIDTH, scatter,
                        "the library scatters each message into segments of this size (libfabric: 4 "
                        "segments, its providers' limit; MPI: 32), or the program receives it "
                        "contiguously and copies the segments out")]


def findings(runs: Runs, ref) -> list:
    return [_same_throughput(runs, ref), _poll_vs_block(runs, ref), _cq_flat(runs, ref), _scatter(runs, ref)]


def _same_throughput(runs: Runs, ref) -> Finding:
    f = Finding("hv-1", "Send/receive and RDMA write provide the same throughput", "§3.3, Fig. 2-3, §5",
                f"{draw.quoted(ref.get('sr-peak-pentium3'))} for both")
    send, put = draw.peak(runs.rows("throughput", "fabric.stream")), draw.peak(runs.rows("throughput",
                                                                                         "fabric.put_bw"))
    if send is None or put is None:
        return f.unmeasured(runs.missing("throughput"))
    ratio = put.bandwidth_Bps / send.bandwidth_Bps
    return f.judged(f"send/receive {draw.mbps(send)}, RDMA write {draw.mbps(put)} (ratio {ratio:.2f})",
                    abs(ratio - 1) <= 0.15, f"their peaks differ by {abs(ratio - 1):.0%}, more than 15%")


def _poll_vs_block(runs: Runs, ref) -> Finding:
    poll_v, block_v = ref.get("sr-polling-pentium"), ref.get("sr-blocking-pentium")
    f = Finding("hv-2", "Polling gives round trips several times lower than blocking", "§3.2, Table 1, §5",
                f"{draw.stated(poll_v)} polling, {draw.stated(block_v)} blocking, 4 bytes (Table 1)")
    poll = draw.at(runs.rows("latency", "fabric.pingpong", "completion=poll"), 4)
    block = draw.at(runs.rows("latency", "fabric.pingpong", "completion=block"), 4)
    if poll is None or block is None:
        return f.unmeasured(runs.missing("latency"))
    ratio = block.median_s / poll.median_s
    # "several times": at least twice, the seed's smallest case (RDMA write on the Pentium III) being 1.5x
    return f.judged(f"fabric round trip at 4 bytes: {draw.usec(poll.median_s)} polling, "
                    f"{draw.usec(block.median_s)} blocking ({ratio:.1f}x)", ratio >= 2,
                    f"blocking costs only {ratio:.1f}x polling here")


def _cq_flat(runs: Runs, ref) -> Finding:
    f = Finding("hv-3", "A completion queue's cost does not grow with the connections; a round robin's does",
                "§3.5, Table 2", "from 1 to 100 VIs: round robin " + " to ".join(draw.stated(ref.get(f"rr-{n}"))
                                                                                for n in (1, 100))
                + ", CQ " + " to ".join(draw.stated(ref.get(f"cq-{n}")) for n in (1, 100)) + " (Table 2)")
    cq = runs.rows("connections", "fabric.conns", "check=cq")
    rr = runs.rows("connections", "fabric.conns", "check=scan")
    if len(cq) < 2 or len(rr) < 2:
        return f.unmeasured(runs.missing("connections"))
    cq_drop = 1 - cq[-1].bandwidth_Bps / cq[0].bandwidth_Bps
    rr_drop = 1 - rr[-1].bandwidth_Bps / rr[0].bandwidth_Bps
    return f.judged(f"from {cq[0].conns} to {cq[-1].conns} connections: one CQ loses {cq_drop:.0%}, "
                    f"the round robin {rr_drop:.0%}", rr_drop > cq_drop,
                    "the round robin lost no more than the completion queue")


def _scatter(runs: Runs, ref) -> Finding:
    f = Finding("hv-4", "Scatter by the receiver's library is slower than receiving contiguously and "
                "copying out", "§3.4, Fig. 4-5, §5",
                f"NIC scatter of 8-byte items {draw.quoted(ref.get('nic-scatter-doubles'))}, explicit "
                f"{draw.quoted(ref.get('explicit-scatter'))}")
    for step, bench, lib, prog in (("scatter", "fabric.scatter", "mode=iovec", "mode=copy"),
                                   ("scatter-beside", "message.scatter", "mode=datatype", "mode=copy")):
        a, b = draw.at(runs.rows(step, bench, lib), 8), draw.at(runs.rows(step, bench, prog), 8)
        if a is not None and b is not None and a.bandwidth_Bps and b.bandwidth_Bps:
            ratio = b.bandwidth_Bps / a.bandwidth_Bps
            return f.judged(f"{bench} at 8-byte segments: library {draw.mbps(a)}, copy {draw.mbps(b)} "
                            f"({ratio:.1f}x)", ratio > 1, "the library's scatter was as fast as the copy")
    return f.unmeasured(runs.missing("scatter"))


STUDY = Study(
    "hellwagner-via", "002", "VI Architecture options: send/receive vs RDMA, polling vs blocking, "
    "many connections, scatter",
    "Round trips and one-way throughput of send/receive and RDMA write, polling vs blocking completion, "
    "one completion queue vs a round robin over up to 100 connections, and scatter on receive, on "
    "libfabric first and on MPI and TCP beside it (seed 002's Table 1-2 and Fig. 2-5).",
    STEPS, figures, findings)
