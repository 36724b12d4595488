"""The records of a run beside its points (docs/schema.md): a `launch` (the
core's command and hello), its `launch_end`, a `skip` and a `diagnostic`.
Each reads itself with its types checked and keeps the fields this version
does not know."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from .fields import MAX_BYTES, MAX_RANKS, Fields, is_count, is_text


@dataclass
class LaunchRecord:
    """A `launch` record: one launch of the core, its command and the core's hello."""

    KIND = "launch"
    bench: str
    variant: str = ""
    launch: int = 0
    command: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    started: Optional[float] = None
    hello: Optional[dict] = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {"bench": self.bench, "variant": self.variant, "launch": self.launch, "command": self.command,
             "env": self.env, "started": self.started}
        if self.hello is not None:
            d["hello"] = self.hello
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d, where: str = "launch record") -> "LaunchRecord":
        f = Fields(d, where)
        hello = f.obj("hello", None, none=True)
        if hello is not None:
            h = Fields(hello, f"{where} hello")
            h.int("ranks", None, lo=1, hi=MAX_RANKS, none=True)
            h.list("hosts", is_text, "host names", None, none=True)
            h.list("cpus", lambda x: x is None or is_count(x, MAX_RANKS), "CPU counts", None, none=True)
            h.str("mpi_library", None, none=True)
        return cls(f.str("bench"), f.str("variant", ""), f.int("launch", 0),
                   f.list("command", is_text, "arguments", []), f.obj("env", {}),
                   f.num("started", None, hi=math.inf, none=True), hello,
                   _extra(d, ("bench", "variant", "launch", "command", "env", "started", "hello")))


@dataclass
class LaunchEnd:
    """A `launch_end` record: where a launch's ranks ended, the machine's
    noise around it and, on a testbed, what its cables carried (spans,
    shapers, wire bytes)."""

    KIND = "launch_end"
    bench: str
    variant: str = ""
    launch: int = 0
    noise: Optional[dict] = None
    wire_bytes: Optional[float] = None
    extra: dict = field(default_factory=dict)

    @property
    def spans(self) -> list:
        return self.extra.get("spans") or []

    @property
    def steal_fraction(self) -> Optional[float]:
        v = (self.noise or {}).get("steal_fraction")
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None

    def get(self, key: str, default=None):
        """A field a testbed's watch adds (counters, shapers, spans, ...)."""
        return self.extra.get(key, default)

    def to_dict(self) -> dict:
        d = {"bench": self.bench, "variant": self.variant, "launch": self.launch, "noise": self.noise}
        if self.wire_bytes is not None:
            d["wire_bytes"] = self.wire_bytes
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d, where: str = "launch_end record") -> "LaunchEnd":
        f = Fields(d, where)
        for j, span in enumerate(f.list("spans", lambda x: isinstance(x, dict), "spans", [])):
            g = Fields(span, f"{where} spans[{j}]")
            g.int("size"), g.num("seconds"), g.obj("cpu")
            g.list("cables", lambda x: isinstance(x, dict), "cable directions")
        f.list("shapers", lambda x: isinstance(x, dict), "shaper counters", [])
        return cls(f.str("bench"), f.str("variant", ""), f.int("launch", 0), f.obj("noise", None, none=True),
                   f.num("wire_bytes", None, hi=math.inf, none=True),
                   _extra(d, ("bench", "variant", "launch", "noise", "wire_bytes")))


@dataclass
class SkipRecord:
    """A `skip` record: a point the kernel cannot measure here, and why."""

    KIND = "skip"
    bench: str
    size: int
    reason: str
    stride: int = 1
    variant: str = ""
    conns: int = 1
    active: Optional[int] = None
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        return (self.bench, self.variant, self.size, self.stride, self.conns, self.active)

    def to_dict(self) -> dict:
        return {"bench": self.bench, "variant": self.variant, "size": self.size, "stride": self.stride,
                "conns": self.conns, "active": self.active, "reason": self.reason, **self.extra}

    @classmethod
    def from_dict(cls, d, where: str = "skip record") -> "SkipRecord":
        f = Fields(d, where)
        return cls(f.str("bench"), f.int("size", hi=MAX_BYTES), f.str("reason", "", none=True) or "",
                   f.int("stride", 1, lo=1, hi=MAX_BYTES), f.str("variant", ""),
                   f.int("conns", 1, lo=1, hi=MAX_RANKS), f.int("active", None, hi=MAX_RANKS, none=True),
                   _extra(d, ("bench", "size", "reason", "stride", "variant", "conns", "active")))


@dataclass
class DiagnosticRecord:
    """A `diagnostic` record: a warning about the run or a benchmark (code,
    message, advice), as analysis/diagnostics.py writes it."""

    KIND = "diagnostic"
    code: str
    message: str
    advice: str = ""
    bench: Optional[str] = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "advice": self.advice, "bench": self.bench,
                **self.extra}

    @classmethod
    def from_dict(cls, d, where: str = "diagnostic record") -> "DiagnosticRecord":
        f = Fields(d, where)
        return cls(f.str("code"), f.str("message"), f.str("advice", ""), f.str("bench", None, none=True),
                   _extra(d, ("code", "message", "advice", "bench")))


def _extra(d, known: tuple) -> dict:
    """The fields of a record this version does not type (kept and written back)."""
    return {k: v for k, v in d.items() if k != "kind" and k not in known}

