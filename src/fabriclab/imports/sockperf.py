"""sockperf's printed output (its client's stdout, or the file of its
`--full-log`) as fabriclab points (imports/__init__.py builds the document).

sockperf's client (src/client.cpp) prints per test, after its version banner:
`[Total Run] RunTime=T sec; ...; SentMessages=S; ReceivedMessages=R`,
`[Valid Duration] RunTime=T sec; SentMessages=S; ReceivedMessages=R` (the
messages between the first and the last valid observation),
`Summary: Latency is X usec` (the mean of RTT/2: client_statistics, `pLat =
rtt / 2`; "Round trip" under --full-rtt), the dropped, duplicated and
out-of-order counts, and the observations' percentiles
(`---> percentile 99.000 = X`, printPercentiles: the sorted observation at
index (int)(0.5 + p n) - 1) between `<MAX>` and `<MIN>`. Throughput mode
prints `Total of S messages sent in T sec` and `Summary: Message Rate is M
[msg/sec]` instead. The message size, rate and reply rate are not printed on
stdout: they come from `--full-log`'s parameter line (`test was performed
using the following parameters: --mps=.. --reply-every=.. --msg-size=..`),
from throughput mode's `NOTE: ... msg-size=N`, or from the command line
(`sockperf ul -m 64 --mps 10000 ...`) written into the file before the output.

Each test is one point of fabriclab's benchmark with the same semantics:
- under-load: udp.underload, or tcp.underload over TCP. fabriclab's op is one message sent, so
  the op's time is the valid duration over the messages sent in it (the
  inverse of the achieved rate); the latencies (RTT/2), percentiles, counts
  and the observations of a --full-log go into info["underload"].
- ping-pong: udp.rr, or tcp.rr_block over TCP (sockperf's client blocks in
  recvfrom by default); a round trip per op, whose time is twice the printed
  median (the 50th percentile of RTT/2: fabriclab's figure is a median).
- throughput: udp.stream, or tcp.stream; one message per op, whose time is
  the inverse of the printed message rate."""

from __future__ import annotations

import re

from ..errors import UsageError
from .printed import Parsed, Printed

MAX_LINE = 4096              # sockperf's longest line is some 200 characters
MAX_SIZE = 65507             # sockperf's UDP message limit (MAX_PAYLOAD_SIZE for UDP)
MAX_TCP_SIZE = 1 << 30
MAX_RATE = 1e9               # messages a second: beyond any socket
MAX_OBSERVATIONS = 10_000_000
MAX_NUMBER = 1e15            # a day in usec is 8.6e10; counts of a long run stay far below
QUANTILES = (25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999)
AVERAGING = ("sockperf: under-load and ping-pong print the mean and percentiles of RTT/2 over the valid "
             "observations (the point takes the median, 50th percentile; under-load's op time is the valid "
             "duration over the messages sent); throughput prints messages sent over the run's time")
MODES = {"ul": "under-load", "under-load": "under-load", "pp": "ping-pong", "ping-pong": "ping-pong",
         "tp": "throughput", "throughput": "throughput"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
BANNER = re.compile(r"== version #(\S+)")
COMMAND = re.compile(r"(?:^|[\s$#>/])sockperf\s+(ul|under-load|pp|ping-pong|tp|throughput)\b(.*)$")
PARAMS = re.compile(r"test was performed using the following parameters:(.*)$")
NOTE_SIZE = re.compile(r"msg-size=(\d+)")
IP_LINE = re.compile(r"IP = \S+\s+PORT =\s*\d+\s+# (UDP|TCP)")
TOTAL_RUN = re.compile(r"\[Total Run\] RunTime=(\d+(?:\.\d+)?) sec;.*SentMessages=(\d+); ReceivedMessages=(\d+)")
VALID = re.compile(r"\[Valid Duration\] RunTime=(\d+(?:\.\d+)?) sec; SentMessages=(\d+); ReceivedMessages=(\d+)")
COUNTS = re.compile(r"# dropped messages = (\d+); # duplicated messages = (\d+); # out-of-order messages = (\d+)")
LATENCY = re.compile(r"Summary: (Latency|Round trip) is (\d+(?:\.\d+)?) usec|====> avg-(latency|rtt)=(\d+(?:\.\d+)?)")
PERCENTILE = re.compile(r"---> percentile\s+(\d+(?:\.\d+)?)\s*=\s*(\d+(?:\.\d+)?)")
EXTREME = re.compile(r"---> <(MAX|MIN)> observation\s*=\s*(\d+(?:\.\d+)?)")
SENT = re.compile(r"Total of (\d+) messages sent in (\d+(?:\.\d+)?) sec")
RATE = re.compile(r"Summary: Message Rate is (\d+) \[msg/sec\]")
CSV_HEAD = re.compile(r"packet, txTime\(sec\), rxTime\(sec\), (latency|rtt)\(usec\)")
CSV_ROW = re.compile(r"(\d+), (\d+(?:\.\d+)?), (\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)")
OPTION = re.compile(r"(?:^|\s)(--mps|--reply-every|--msg-size|-m|--tcp)(?:[= ](\S+))?")


def clean(text: str) -> list[str]:
    """The file's lines without sockperf's colour codes; UsageError for a line longer than
    any sockperf prints or a control character a terminal would obey."""
    lines = ANSI.sub("", text).splitlines()
    for i, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise UsageError(f"line {i} has {len(line):,} characters: not sockperf's output")
        bad = next((c for c in line if ord(c) < 32 and c != "\t" or ord(c) == 127), None)
        if bad is not None:
            raise UsageError(f"line {i} holds the control character {bad!r}: not sockperf's output")
    return lines


def _num(text: str, where: str) -> float:
    """A printed number, at most MAX_NUMBER (sockperf prints usec, seconds and counts)."""
    v = float(text)
    if not v <= MAX_NUMBER:
        raise UsageError(f"{where}: the number {text[:20]}... is beyond any run")
    return v


def quantile(sorted_us: list, p: float) -> float:
    """sockperf's percentile of sorted observations (client.cpp printPercentiles): the one at
    index (int)(0.5 + p/100 n) - 1, where that index is not negative."""
    i = int(0.5 + p / 100 * len(sorted_us)) - 1
    if i < 0:
        raise ValueError(f"{len(sorted_us)} observations have no {p} percentile")
    return sorted_us[i]


def _options(text: str, where: str) -> dict:
    """--mps, --reply-every, --msg-size (-m) and --tcp as written on a command or parameter line."""
    out: dict = {}
    for key, value in OPTION.findall(text):
        key = {"-m": "--msg-size"}.get(key, key)
        if key == "--tcp":
            out["tcp"] = True
            continue
        if key == "--mps" and (value == "max" or value == "-1"):     # a full log writes max as (int)UINT32_MAX
            out["mps"] = None
            continue
        if not value.isascii() or not value.isdigit() or len(value) > 12:
            raise UsageError(f"{where}: {key} {value[:20]!r} is not a whole number")
        if int(value) < 1:          # sockperf refuses them; read as absent they would label the defaults'
            raise UsageError(f"{where}: {key} {value} is not at least 1")
        out[key.lstrip("-").replace("-", "_")] = int(value)
    return out


class _Test:
    """What one test printed."""

    def __init__(self):
        self.version = self.mode = self.proto = None
        self.opts: dict = {}
        self.total = self.valid = self.counts = self.latency = self.sent = self.rate = None
        self.pcts: dict = {}
        self.extremes: dict = {}
        self.csv: list = []
        self.csv_kind = None            # while rows of a --full-log are read: "latency" or "rtt"
        self.logged = False             # a --full-log's rows were read
        self.note_size = None

    @property
    def done(self) -> bool:
        return self.latency is not None or self.rate is not None


def _tests(lines: list) -> list:
    tests, t = [], _Test()
    for n, line in enumerate(lines, 1):
        where = f"line {n}"
        cmd, banner = COMMAND.search(line), BANNER.search(line)
        if (cmd or banner or PARAMS.search(line)) and t.done:     # a full log begins with its parameter line
            tests.append(t)
            t = _Test()
        if cmd:
            t.mode = MODES[cmd.group(1)]
            t.opts.update(_options(cmd.group(2), where))
        elif banner:
            t.version = banner.group(1)
        elif m := PARAMS.search(line):
            t.opts.update(_options(m.group(1), where))
        elif m := IP_LINE.search(line):
            t.proto = m.group(1)
        elif m := TOTAL_RUN.search(line):
            t.total = (_num(m.group(1), where), int(_num(m.group(2), where)), int(_num(m.group(3), where)))
        elif m := VALID.search(line):
            t.valid = (_num(m.group(1), where), int(_num(m.group(2), where)), int(_num(m.group(3), where)))
        elif m := COUNTS.search(line):
            t.counts = tuple(int(_num(x, where)) for x in m.groups())
        elif m := LATENCY.search(line):
            if m.group(1) == "Round trip" or m.group(3) == "rtt":
                raise UsageError(f"{where}: a --full-rtt test prints round trips; fabriclab imports sockperf's "
                                 "latency (RTT/2), its default")
            t.latency = _num(m.group(2) or m.group(4), where)
        elif m := PERCENTILE.search(line):
            t.pcts[_num(m.group(1), where)] = _num(m.group(2), where)
        elif m := EXTREME.search(line):
            t.extremes[m.group(1).lower()] = _num(m.group(2), where)
        elif m := SENT.search(line):
            t.sent = (int(_num(m.group(1), where)), _num(m.group(2), where))
        elif m := RATE.search(line):
            t.rate = int(_num(m.group(1), where))
        elif m := CSV_HEAD.search(line):
            t.csv_kind, t.logged = m.group(1), True
        elif t.csv_kind and not line.strip().strip("-"):     # a rule of dashes (or a blank line) after rows closes it
            t.csv_kind = t.csv_kind if not t.csv else None
        elif t.csv_kind:
            t.csv.append(_csv_row(line, where, len(t.csv)))
        elif "NOTE: test was performed" in line and (m := NOTE_SIZE.search(line)):
            t.note_size = int(_num(m.group(1), where))
    if t.done:
        tests.append(t)
    if not tests:
        raise UsageError("not sockperf's output: no \"Summary: Latency is\", \"avg-latency=\" or \"Summary: Message "
                         "Rate is\" line (sockperf's client prints one per test)")
    return tests


def _csv_row(line: str, where: str, have: int) -> float:
    """A --full-log row's latency (usec); UsageError for a row that is none, a negative latency, too many."""
    m = CSV_ROW.fullmatch(line.strip())
    if not m:
        raise UsageError(f"{where}: {line.strip()[:40]!r} is not a row of the --full-log (packet, txTime, rxTime, "
                         "latency)")
    if have >= MAX_OBSERVATIONS:
        raise UsageError(f"{where}: more than {MAX_OBSERVATIONS:,} observations in one --full-log")
    if m.group(4).startswith("-"):
        raise UsageError(f"{where}: a negative latency ({m.group(4)[:20]} usec) in the --full-log")
    return _num(m.group(4), where)


def parse(text: str, source: str = "sockperf.txt") -> Parsed:
    """Every test in the file (sockperf's stdout, or its --full-log file; several one after
    the other) as a point."""
    tests = _tests(clean(text))
    version = next((t.version for t in tests if t.version), None)
    return Parsed(version[:60] if version else None, AVERAGING, 2).read_each(tests, _one)


def _mode(t: _Test) -> str:
    """The test's mode: as its command line named it, else as its output shows (throughput
    prints a message rate; under-load's server replies to one message in many)."""
    if t.mode:
        return t.mode
    if t.rate is not None:
        return "throughput"
    if "reply_every" in t.opts:
        return "under-load" if t.opts["reply_every"] > 1 else "ping-pong"
    if t.total and t.total[2] > 0:
        return "under-load" if t.total[1] >= 2 * t.total[2] else "ping-pong"
    raise UsageError("the test prints no [Total Run] counts to tell ping-pong from under-load: write the command "
                     "(`sockperf pp ...` or `sockperf ul ...`) on a line before its output")


def _size(t: _Test, mode: str, tcp: bool) -> int:
    size = t.opts.get("msg_size") or t.note_size
    if size is None and mode == "throughput" and not t.opts:
        size = 1472     # stream_statistics: its NOTE names the size, unless 1472 at --mps=max
    if size is None:
        raise UsageError("sockperf does not print the message size on stdout: import the file of its --full-log, "
                         "or write the command (`sockperf ul -m SIZE ...`) on a line before its output")
    hi = MAX_TCP_SIZE if tcp else MAX_SIZE
    if not 1 <= size <= hi:
        raise UsageError(f"message size {size} is outside 1..{hi}")
    return size


def _latencies(t: _Test) -> dict:
    """The printed latency figures in seconds, checked: every percentile sockperf prints for
    the observations' count, in order between the minimum and the maximum."""
    need = [p for p in QUANTILES if int(0.5 + p / 100 * (t.valid[2] if t.valid else 0)) - 1 >= 0] \
        if t.valid else [p for p in QUANTILES if p in t.pcts]
    missing = [p for p in need if p not in t.pcts]
    if missing or "max" not in t.extremes or "min" not in t.extremes:
        raise UsageError(f"the latency summary lacks {'the percentile ' + format(missing[0], 'g') if missing else 'its <MIN> or <MAX> observation'}")
    xs = [t.extremes["min"]] + [t.pcts[p] for p in sorted(need)] + [t.extremes["max"]]
    if any(b < a for a, b in zip(xs, xs[1:])) or not all(0 <= x < 1e12 for x in xs):
        raise UsageError("the printed percentiles are not in order between <MIN> and <MAX>")
    out = {"mean_s": t.latency * 1e-6, "min_s": t.extremes["min"] * 1e-6, "max_s": t.extremes["max"] * 1e-6,
           "quantiles_s": {format(p, "g"): t.pcts[p] * 1e-6 for p in sorted(need)}}
    if t.valid:
        out.update(duration_s=t.valid[0], sent=t.valid[1], observations=t.valid[2])
    if t.counts:
        out.update(dict(zip(("dropped", "duplicated", "out_of_order"), t.counts)))
    if t.logged and t.valid and len(t.csv) != t.valid[2]:
        raise UsageError(f"the --full-log holds {len(t.csv):,} observations of the {t.valid[2]:,} its summary "
                         "counts (cut short?)")
    if t.csv:
        out["full_log_s"] = [x * 1e-6 for x in t.csv]
    return out


def _protocol(t: _Test, out: Parsed) -> bool:
    """Whether the test ran over TCP; a bare --full-log (its parameter line has no --tcp) is read as
    UDP, sockperf's default, with a note that says so."""
    tcp = t.proto == "TCP" or bool(t.opts.get("tcp"))
    note = ("read as UDP, sockperf's default: the file does not say (for a --tcp run's --full-log, or output "
            "without its IP line, write its command, `sockperf ul --tcp ...`, on a line before it)")
    if t.proto is None and not t.mode and not tcp and note not in out.notes:
        out.notes.append(note)
    return tcp


def _one(t: _Test, out: Parsed) -> None:
    tcp = _protocol(t, out)
    proto = "TCP" if tcp else "UDP"
    mode = _mode(t)
    size = _size(t, mode, tcp)
    settings = {"mode": mode, "protocol": proto, "msg_size": size,
                **{k: t.opts[k] for k in ("mps", "reply_every") if k in t.opts}}
    if not out.settings:
        out.settings = settings
    if mode == "throughput":
        bench = "tcp.stream" if tcp else "udp.stream"
        if not t.rate:
            out.skips.append((bench, size, "sockperf throughput: no message sent"))
            return
        info = {"sockperf": {"mode": mode, "protocol": proto, "message_rate": t.rate,
                             **({"sent": t.sent[0], "duration_s": t.sent[1]} if t.sent else {})}}
        out.figures.append(Printed(f"sockperf tp {proto}", bench, "", size, 2, 1 / t.rate, size, 1, False,
                                   float(t.rate), "msg/s", "Summary: Message Rate", t.sent[0] if t.sent else None,
                                   {"Message Rate": str(t.rate)}, info=info))
        return
    if t.latency is None:
        raise UsageError(f"sockperf {mode}: no \"Summary: Latency is\" or \"avg-latency=\" line")
    lat = _latencies(t)
    if mode == "ping-pong":
        bench = "tcp.rr_block" if tcp else "udp.rr"
        p50 = lat["quantiles_s"].get("50")
        if not p50:
            out.skips.append((bench, size, "sockperf ping-pong: no median printed"))
            return
        out.figures.append(Printed(f"sockperf pp {proto}", bench, "", size, 2, 2 * p50, 2 * size, 2, False,
                                   p50 * 1e6, "us", "percentile 50.000", lat.get("observations"),
                                   {"percentile 50.000": f"{p50 * 1e6:.3f}"},
                                   info={"sockperf": {"mode": mode, "protocol": proto, **lat}}))
        return
    bench = "tcp.underload" if tcp else "udp.underload"
    params = {k: t.opts[k] for k in ("mps", "reply_every") if t.opts.get(k)}
    if not t.valid or t.valid[1] < 1 or t.valid[0] <= 0:
        out.skips.append((bench, size, "sockperf under-load: no valid duration"))
        return
    per_msg = t.valid[0] / t.valid[1]
    if not 0 < 1 / per_msg <= MAX_RATE:
        raise UsageError(f"under-load: {t.valid[1]} messages in {t.valid[0]} s is beyond any socket")
    out.figures.append(Printed(f"sockperf ul {proto}", bench, _variant(bench, params), size, 2, per_msg,
                               size, 1, False, t.valid[1] / t.valid[0], "msg/s", "[Valid Duration]",
                               t.valid[1], {"RunTime": str(t.valid[0]), "SentMessages": str(t.valid[1])},
                               info={"underload": {"mode": mode, "protocol": proto, **params, **lat}}))


def _variant(bench: str, params: dict) -> str:
    """The variant fabriclab's own run with these settings records (canonical values that
    differ from the registry's defaults, sorted), so that compare pairs the points."""
    from ..suite.benchmarks import REGISTRY
    b = REGISTRY.get(bench)
    out = {}
    for k, v in params.items():
        v = b.canonical(k, str(v)) if b is not None and k in b.params else str(v)
        if b is None or b.defaults.get(k) != v:
            out[k] = v
    return ",".join(f"{k}={v}" for k, v in sorted(out.items()))
