"""A progress bar with ETA on stderr; when not a terminal (a log, CI), a
line at the start and at every tenth of the points, so a log stays short."""

from __future__ import annotations

import sys
import time

from ..units import fmt_bytes, fmt_rate, fmt_time


class Progress:
    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done = max(total, 1), 0
        self.stream = stream or sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.t0 = time.monotonic()
        self.bench = None

    def eta(self) -> float | None:
        if not self.done:
            return None
        return (time.monotonic() - self.t0) / self.done * (self.total - self.done)

    def advance(self, bench: str, rec: dict | None) -> None:
        if self.enabled and not self.tty and self.bench is None:
            print(f"fabriclab: {self.total} points to measure, starting with {bench}", file=self.stream, flush=True)
        self.bench = bench
        before, self.done = self.done, self.done + 1
        if not self.tty:
            if self.enabled and self.done * 10 // self.total > before * 10 // self.total:
                eta = self.eta()
                print(f"fabriclab: {self.done * 100 // self.total}% ({self.done}/{self.total} points"
                      + (f", ETA {fmt_time(eta)}" if eta else "") + f"), at {bench}", file=self.stream, flush=True)
            return
        width = 28
        fill = int(width * self.done / self.total)
        eta = self.eta()
        what = ""
        if rec is not None:  # the point just measured (schema.records.Point)
            figure = rec.bandwidth_Bps
            what = (f"{fmt_bytes(rec.size)}" + (f"/s{rec.stride}" if rec.stride > 1 else "")
                    + ": " + (fmt_rate(figure) if figure else fmt_time(rec.latency_s)))
        line = (f"\r[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} "
                f"ETA {fmt_time(eta) if eta is not None else '?':>8}  {bench} {what}")
        self.stream.write(line[:118].ljust(118))
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r" + " " * 118 + "\r")
            self.stream.flush()
