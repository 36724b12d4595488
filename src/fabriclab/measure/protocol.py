"""The one module that speaks the core's protocol (docs/core-protocol.md):
the core's command line for a job, and its output lines as typed records.

`run`, `run --dry-run` and `doctor` build their argv here; the runner and
doctor read lines through `parse_line`; the levels' probes (`--probe LEVEL`,
which start no MPI job) run through `run_probe` and read `probe_records`."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field

from ..errors import RunError
from .plan import Job, Sampling


def sampling_args(s: Sampling) -> list[str]:
    return ["--warmup", str(s.warmup), "--min-samples", str(s.min_samples),
            "--max-samples", str(s.max_samples), "--target-ci", repr(s.target_ci),
            "--point-time", repr(s.point_time), "--sample-time", repr(s.sample_time),
            *(["--per-op", repr(s.per_op)] if s.per_op > 0 else [])]


def job_argv(core: str, job: Job, sampling: Sampling, validate: bool) -> list[str]:
    """The core's argv for one job: benchmark, axes, buffers, layouts, params, sampling."""
    argv = [core, job.bench.name, "--sizes", ",".join(map(str, job.sizes))]
    if job.buffers:
        argv += ["--buffers", ",".join(map(str, job.buffers))]
    if job.bench.has_stride:
        argv += ["--strides", ",".join(map(str, job.strides))]
    if "conns" in job.bench.axes:
        argv += ["--conns", ",".join(map(str, job.conns))]
    if job.layouts:
        argv += ["--layouts", ";".join(lay.core_text() for lay in job.layouts)]
    for k, v in job.params.items():
        argv += ["--param", f"{k}={v}"]
    return argv + sampling_args(sampling) + (["--validate"] if validate else [])


# doctor's test launch: two ping-pong points, validated, quickly
DOCTOR_SIZES = (0, 4096)


def doctor_argv(core: str) -> list[str]:
    return [core, "message.pingpong", "--sizes", ",".join(map(str, DOCTOR_SIZES)), "--min-samples", "5",
            "--point-time", "0.2", "--validate"]


@dataclass(frozen=True)
class Hello:
    data: dict          # core_version, bench, mpi_library, mpi_version, ranks, hosts, cpus, timer, options


@dataclass(frozen=True)
class Begin:
    data: dict          # bench and where: size, stride, conns[, active]

    def where(self) -> str:
        d = self.data
        text = f" at size {d.get('size')} stride {d.get('stride')}"
        if d.get("conns", 1) != 1:
            text += f" conns {d['conns']}"
        if "active" in d:
            text += f" active {d['active']}"
        return text


@dataclass(frozen=True)
class PointLine:
    data: dict          # the point line without its type


@dataclass(frozen=True)
class Skip:
    data: dict


@dataclass(frozen=True)
class CoreError:
    message: str
    ranks: int | None = None    # the core's world size, when MPI was up
    refused: bool = False       # bad input that only MPI could tell (a thread level below the one asked)


@dataclass(frozen=True)
class End:
    points: int
    data: dict = field(default_factory=dict)


_TYPES = {"hello": Hello, "begin": Begin, "point": PointLine, "skip": Skip}


def parse_line(line: str):
    """A typed record, or None for text that is not a core record (an MPI
    library may print stray text on stdout)."""
    try:
        msg = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(msg, dict):
        return None
    kind = msg.pop("type", None)
    if kind in _TYPES:
        return _TYPES[kind](msg)
    if kind == "error":
        ranks = msg.get("ranks")
        return CoreError(str(msg.get("message", "core error")), ranks if isinstance(ranks, int) else None,
                         msg.get("refused") is True)
    if kind == "end":
        return End(int(msg.get("points", 0)), msg)
    return None


_CUT_HELLO = re.compile(r'\{"type":"hello","core_version":"[^"]*","bench":"[^"]*","ranks":(\d+)[,}]')


def cut_hello_ranks(line: str) -> int | None:
    """The world size a hello line cut short still shows (the core writes it first), or None:
    a launcher that forwards output in pieces (slurmstepd: 1 KiB) interleaves the hello
    lines of N singletons, and none of them parses whole."""
    m = _CUT_HELLO.match(line.strip())
    return int(m.group(1)) if m else None


def probe_records(level: str, lines):
    """(line, record) of each JSON object among a probe's output lines (other lines are
    the library's own and skipped); RunError for an error record or an unreadable line."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError as e:
            raise unreadable(level, line, e) from None
        if not isinstance(d, dict):
            raise unreadable(level, line, "not an object")
        if d.get("type") == "error":
            raise RunError(f"the {level} probe failed: {d.get('message', '?')}")
        yield line, d


def unreadable(level: str, line: str, why) -> RunError:
    return RunError(f"the {level} probe printed an unreadable line ({why}): {line[:120]}")


def run_probe(core_path: str, level: str, read, timeout: float):
    """read(lines) of the core's `--probe LEVEL` output on this host; RunError when it
    cannot start, does not answer within `timeout` seconds or exits with an error."""
    try:
        p = subprocess.run([core_path, "--probe", level], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RunError(f"the {level} probe ({core_path} --probe {level}) did not answer within "
                       f"{timeout:g} s") from None
    except OSError as e:
        raise RunError(f"cannot run the {level} probe: {e}") from None
    out = read(p.stdout.splitlines())
    if p.returncode != 0:
        raise RunError(f"the {level} probe exited {p.returncode}: {p.stderr.strip()[-200:]}")
    return out
