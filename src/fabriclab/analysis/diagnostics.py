"""Typed warnings about a run, each with the action that fixes it.

Like hyperfine's warnings and pyperf's "the standard deviation is high"
checks: a number the user should not trust comes with the reason and what to
change. Diagnostics are data (code, message, advice, point) so they can be
stored in the result, filtered by code and counted in reports.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, List, Mapping, Optional

from ..schema.run_records import DiagnosticRecord

if TYPE_CHECKING:
    from ..schema.summaries import Summary

UNSTABLE_POINT = "unstable-point"
TOO_FEW_SAMPLES = "too-few-samples"
TIME_CAP = "time-cap"
OUTLIERS = "outliers"
VALIDATION_FAILED = "validation-failed"
LOADED_MACHINE = "loaded-machine"
OVERSUBSCRIBED = "oversubscribed"
TIMER_RESOLUTION = "timer-resolution"
TIMER_OVERHEAD = "timer-overhead"
STEAL_TIME = "steal-time"
FABRIC_BYPASSED = "fabric-bypassed"
UNSTABLE_ACROSS_LAUNCHES = "unstable-across-launches"
STACKED_RANKS = "stacked-ranks"
# Classified over a whole run (analysis/findings.py): one finding about the
# run, or a point that stands out from the run's others.
NOISY_MACHINE = "noisy-machine"
NOT_CONVERGED = "not-converged"
WIDE_INTERVAL = "wide-interval"
OFF_TREND = "off-trend"
OVERLAP_COMPUTE = "overlap-compute"

MIN_SAMPLES = 10  # below this the median CI spans most of the samples (n <= 5: min..max)
OUTLIER_FRACTION = 0.10  # more than this is a disturbed machine, not an odd sample
TIMER_FRACTION = 0.01  # the core sizes batches so the timer costs < 1% of a sample
LOAD_SLACK = 0.5  # load average is a decaying mean; tolerate half a busy CPU
COMPUTE_DRIFT = 0.10  # the overlap's compute loop may run 10% off its calibrated speed


@dataclass(frozen=True)
class Diagnostic:
    """One warning: what is wrong (message), what to do (advice), and where."""

    code: str
    message: str
    advice: str
    bench: Optional[str] = None
    size: Optional[int] = None
    stride: Optional[int] = None

    def to_dict(self) -> dict:
        return asdict(self)

    def record(self) -> DiagnosticRecord:
        """The warning as a run's `diagnostic` record."""
        return DiagnosticRecord(self.code, self.message, self.advice, self.bench,
                                {"size": self.size, "stride": self.stride})

    @classmethod
    def from_dict(cls, d: Mapping) -> "Diagnostic":
        """Inverse of to_dict; code, message and advice are required."""
        for key in ("code", "message", "advice"):
            if not isinstance(d.get(key), str):
                raise ValueError(f"diagnostic lacks a text {key!r}")
        return cls(d["code"], d["message"], d["advice"],
                   d.get("bench"), d.get("size"), d.get("stride"))


def _pct(x: float) -> str:
    return "unbounded" if math.isinf(x) else f"{x:.1%}"


def _si_time(x: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x / 1e-9:.3g} ns"


def _validation_failed(validation: Mapping, where: dict) -> List[Diagnostic]:
    errors = int(validation.get("errors", 0) or 0)
    if errors <= 0:
        return []
    return [Diagnostic(
        VALIDATION_FAILED,
        f"{errors} of {validation.get('checked_bytes', '?')} checked bytes arrived different from what was sent",
        "The data was corrupted in transit: the fabric, its driver or the MPI "
        "library is broken for this transfer. The timings of this point are "
        "invalid; report the failure, not the numbers.", **where)]


def check_point(record: Mapping, summary: "Summary", target_ci: float) -> List[Diagnostic]:
    """Warnings for one `point` record (docs/core-protocol.md) and its Summary.

    target_ci is the relative CI half-width the run asked for (--target-ci)."""
    if not (target_ci > 0 and math.isfinite(target_ci)):
        raise ValueError(f"target_ci must be a positive number, got {target_ci!r}")
    get = record.get if isinstance(record, Mapping) else lambda k: getattr(record, k, None)  # a typed Point
    where = dict(bench=get("bench"), size=get("size"), stride=get("stride"))
    out: List[Diagnostic] = []
    n = summary.n

    out += _validation_failed(get("validation") or {}, where)
    if get("stop") == "time_cap":
        out.append(Diagnostic(
            TIME_CAP,
            f"stopped at the --point-time cap after {n} samples, median known to "
            f"+-{_pct(summary.ci_rel)} (target +-{_pct(target_ci)})",
            "Raise --point-time (and --budget, where the run's time budget lowered the cap) so the point "
            "can converge, or accept a wider interval with a larger --target-ci.", **where))

    if summary.ci_rel > target_ci:
        out.append(Diagnostic(
            UNSTABLE_POINT,
            f"the {summary.confidence:.0%} confidence interval of the median is "
            f"+-{_pct(summary.ci_rel)}, wider than the target +-{_pct(target_ci)}",
            "The timings vary from sample to sample: raise --point-time to collect "
            "more samples, stop other work on the nodes, and pin ranks to cores.",
            **where))

    if n < MIN_SAMPLES:
        out.append(Diagnostic(
            TOO_FEW_SAMPLES,
            f"only {n} samples; the median's interval and the tail percentiles "
            "rest on too little data",
            "Raise --min-samples or --point-time (each operation may be slower "
            "than the time allowed per point).", **where))

    out += _overlap_compute(get("overlap"), where)
    if summary.outliers > OUTLIER_FRACTION * n:
        out.append(Diagnostic(
            OUTLIERS,
            f"{summary.outliers} of {n} samples ({summary.outliers / n:.0%}) are "
            "outliers (|modified z-score| > 3.5)",
            "Something interrupts the measurement (other processes, OS noise, "
            "frequency scaling, traffic on shared links). Quiet and pin the "
            "machine; the median is robust, but the tail percentiles describe the "
            "disturbance rather than the fabric.", **where))
    return out


def _overlap_compute(overlap, where: dict) -> List[Diagnostic]:
    """A non-blocking collective's compute loop that ran off its calibrated
    speed (schema.records.Point.overlap): the overlap figure then measures a
    shared or throttled CPU too."""
    if not isinstance(overlap, Mapping):
        return []
    off = {k: overlap.get(k) for k in ("compute_slowdown", "cpu_over_pure")
           if isinstance(overlap.get(k), (int, float)) and abs(overlap[k] - 1) > COMPUTE_DRIFT}
    if not off:
        return []
    said = {"compute_slowdown": "took {:.2f}x its time alone while the collective ran",
            "cpu_over_pure": "took {:.2f}x the time it was calibrated to (t_cpu over t_pure)"}
    return [Diagnostic(
        OVERLAP_COMPUTE,
        "the overlap's compute loop " + " and ".join(said[k].format(v) for k, v in off.items()),
        "The CPU the loop runs on is shared (the library's progress thread, another rank, another process) or "
        "changes speed: the overlap figure measures that as well as the library. Give each rank and its "
        "progress thread a core of their own.", **where)]


def check_host(loadavg1: float, ncpus: int, nranks: int) -> List[Diagnostic]:
    """Warnings about the host before a run: its own load and the ranks placed on it.

    loadavg1 is the 1-minute load average read before the ranks start; ncpus
    and nranks count this host's CPUs and the ranks that will run on it. MPI
    ranks busy-poll, so each needs a CPU of its own: the host is loaded when
    loadavg1 > max(ncpus - nranks, 0) + 0.5."""
    if not (math.isfinite(loadavg1) and loadavg1 >= 0):
        raise ValueError(f"load average must be a non-negative number, got {loadavg1!r}")
    if ncpus < 1 or nranks < 1:
        raise ValueError("ncpus and nranks must be at least 1")
    out: List[Diagnostic] = []
    if nranks > ncpus:
        out.append(Diagnostic(
            OVERSUBSCRIBED,
            f"{nranks} ranks share {ncpus} CPUs",
            "Run at most one rank per CPU: ranks that share a core wait for the "
            "scheduler, and the timings measure that wait instead of the fabric. "
            "(Under MPICH, barrier, bcast, reduce and allreduce then run through its generic "
            "algorithms, MPIR_CVAR_<OP>_POSIX_INTRA_ALGORITHM=mpir: their shared-memory form "
            "spins without yielding and stalls.)"))
    if loadavg1 > max(ncpus - nranks, 0) + LOAD_SLACK:
        out.append(Diagnostic(
            LOADED_MACHINE,
            f"1-minute load average {loadavg1:.2f} on {ncpus} CPUs leaves fewer "
            f"than {nranks} idle for the ranks",
            "Stop other work on the host or choose idle nodes; otherwise the "
            "numbers will be noisy and slower than the fabric allows."))
    return out


def check_timer(overhead_s: float, resolution_s: float, median_sample_s: float) -> List[Diagnostic]:
    """Warnings when the clock is too coarse or too slow for the timed intervals.

    median_sample_s is the median duration of one timed interval (the per-op
    sample times the point's batch), the span one clock reading must resolve.
    Either timer cost above 1% of it biases the samples (the core's own
    batching target, docs/core-protocol.md)."""
    for name, v in (("overhead_s", overhead_s), ("resolution_s", resolution_s),
                    ("median_sample_s", median_sample_s)):
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a non-negative number, got {v!r}")
    out: List[Diagnostic] = []
    limit = TIMER_FRACTION * median_sample_s
    if resolution_s > limit:
        out.append(Diagnostic(
            TIMER_RESOLUTION,
            f"the timer resolves {_si_time(resolution_s)}, more than 1% of a "
            f"{_si_time(median_sample_s)} timed interval",
            "Raise --sample-time so each sample times more operations, or use a "
            "finer clock; until then samples are quantized to the timer's tick."))
    if overhead_s > limit:
        out.append(Diagnostic(
            TIMER_OVERHEAD,
            f"reading the timer costs {_si_time(overhead_s)}, more than 1% of a "
            f"{_si_time(median_sample_s)} timed interval",
            "Raise --sample-time so the timer's cost is spread over more operations."))
    return out


def steal_launches(stolen: int, launches: int, top: float) -> Diagnostic:
    """The hypervisor took CPU time from this VM during some launches."""
    return Diagnostic(
        STEAL_TIME,
        f"the hypervisor stole CPU time during {stolen} of {launches} launches (at most {top:.2%})",
        "Other virtual machines on the same physical host took CPU time: timings rise and vary "
        "from launch to launch. Use dedicated or bare-metal nodes, or repeat launches "
        "(--launches) and read the between-launch spread.")


_CONDITIONS = {
    UNSTABLE_ACROSS_LAUNCHES: "launches that disagree beyond their own intervals",
    OUTLIERS: "more than 10% outlier samples in a launch",
    UNSTABLE_POINT: "a launch's interval wider than --target-ci",
    TIME_CAP: "a launch stopped at the --point-time cap",
    TOO_FEW_SAMPLES: f"a launch with fewer than {MIN_SAMPLES} samples",
    TIMER_OVERHEAD: "the timer's cost above 1% of a sample",
    TIMER_RESOLUTION: "the timer's tick above 1% of a sample",
}


def capped_run(held: Mapping, capped: int, narrow: int, target_ci: float) -> Diagnostic:
    """Most points reached the --point-time cap (held: code -> [points, of]):
    the cap ended their sampling, which is no evidence of noise. `narrow` of
    the `capped` points whose every launch stopped there still met the target
    interval from at least MIN_SAMPLES samples: for them there is nothing to do."""
    shared = "; ".join(f"{_CONDITIONS.get(code, code)} ({n} of {of} points)" for code, (n, of) in held.items())
    if capped and narrow == capped:
        fix = (f"Every point that stopped there still has its median within +-{_pct(target_ci)}: nothing to "
               "do. A longer --point-time would only add samples.")
    else:
        fix = (f"{capped - narrow} of the {capped} points that stopped there every launch have an interval wider "
               f"than +-{_pct(target_ci)}, or fewer than {MIN_SAMPLES} samples to give one: raise --point-time "
               "(each of their ops is long, so the cap allows few samples), or accept the wider interval with "
               "--target-ci.")
    return Diagnostic(TIME_CAP, f"the --point-time cap, not noise: {shared}", fix)


def run_condition(code: str, n: int, of: int) -> Diagnostic:
    """A condition most points share that is neither noise nor the cap (the timer's cost or tick)."""
    return Diagnostic(code, f"{_CONDITIONS.get(code, code)} ({n} of {of} points)",
                      "Raise --sample-time so that each sample batches more operations and the timer's share "
                      "falls below 1%.")


def noisy_machine(held: Mapping, size: Mapping) -> Diagnostic:
    """Conditions most points of a run share (held: code -> [points, of]),
    stated once with the run's measured noise (findings.noise)."""
    shared = "; ".join(f"{_CONDITIONS.get(code, code)} ({n} of {of} points)" for code, (n, of) in held.items())
    figures = []
    if size.get("launch_ratio_median") is not None:
        figures.append(f"launch medians of a point differ by {size['launch_ratio_median']:.2f}x (max/min) at the "
                       f"median point, {size['launch_ratio_p90']:.2f}x at the 90th percentile")
    if size.get("outlier_share") is not None:
        figures.append(f"{size['outlier_share']:.1%} of samples are outliers")
    if size.get("steal_launches"):
        figures.append(f"the hypervisor stole CPU time in {size['steal_launches']} of {size['launches']} launches "
                       f"(at most {size['steal_max']:.2%})")
    return Diagnostic(
        NOISY_MACHINE,
        "the machine, not any one point: " + "; ".join(([shared] if shared else []) + figures),
        "Every point's interval already covers the launch-to-launch spread, so the figures hold, only less "
        "precisely. To narrow them, quiet the machine (stop other work, keep --bind core, use dedicated or "
        "bare-metal nodes) or measure more launches (--launches). `fabriclab doctor --machine` names what "
        "disturbs this machine; `fabriclab doctor --aa` how far `compare` can be trusted on it.")


def wide_interval(ci_rel: float, typical: float) -> Diagnostic:
    """A point's interval much wider than the run's others (findings.WIDE_*)."""
    return Diagnostic(
        WIDE_INTERVAL,
        f"interval +-{_pct(ci_rel)}, {ci_rel / typical:.1f}x the run's median +-{_pct(typical)}",
        "Something disturbed this point more than the others (a launch that ran slow, a bimodal protocol "
        "choice at this size): measure it again alone (-s SIZE) with more launches, and compare the launch "
        "medians (`fabriclab show`, column between).")


def off_trend(median: float, lo: float, hi: float) -> Diagnostic:
    """A point outside the envelope of its size neighbours' intervals."""
    side = "above" if median > hi else "below"
    return Diagnostic(
        OFF_TREND,
        f"median {_si_time(median)} lies {side} both neighbouring sizes' intervals ({_si_time(lo)} .. "
        f"{_si_time(hi)}), beyond its own interval",
        "A spike or a dip in the size curve: measure this size again alone (-s SIZE); if it stays, the "
        "fabric or library does something particular here (a protocol switch, an alignment, a cache edge).")


def not_converged(stopped: int, launches: int, within: float, between: float) -> Diagnostic:
    """Most of a point's launches stopped short, and its own samples limit its interval."""
    return Diagnostic(
        NOT_CONVERGED,
        f"{stopped} of {launches} launches stopped before reaching the target interval; within a launch the "
        f"median is known to +-{_pct(within)}, more loosely than the launches differ (+-{_pct(between)})",
        "More samples would narrow this point's interval: raise --point-time (or accept it with a larger "
        "--target-ci).")


def fabric_bypassed(wire_bytes: int, payload_bytes: int, where: str) -> Diagnostic:
    """Far fewer bytes crossed the fabric's interfaces than the points moved."""
    return Diagnostic(
        FABRIC_BYPASSED,
        f"only {wire_bytes:,} bytes crossed {where} while the timed operations alone moved {payload_bytes:,} "
        "payload bytes: the MPI took another path (shared memory, loopback)",
        "The figures describe that path, not the fabric. Force the MPI's network transport onto the "
        "fabric's interfaces (docs/testbed.md, docs/mpi.md) and put the ranks on different hosts.")


def unstable_across_launches(spread: Mapping, nlaunches: int) -> Diagnostic:
    """The launches of a point disagree beyond their own intervals."""
    return Diagnostic(
        UNSTABLE_ACROSS_LAUNCHES,
        f"the medians of {nlaunches} launches differ by {spread['max_min_ratio']:.2f}x (max/min), beyond "
        f"each launch's own interval (+-{spread['within_rel']:.1%})",
        "Something changes from one launch to the next: where the ranks run (keep --bind core, check "
        "each launch's placement), the CPU frequency, noisy neighbours on the host, or steal time on a "
        "virtual machine. The point's interval covers it; more launches (--launches) narrow it.")


def stacked_ranks(hosts: list, affinity: list) -> List[Diagnostic]:
    """Ranks of different hosts bound to the same single CPU: hosts that are
    containers or network namespaces of one machine, each binding its first
    rank to CPU 0, stack their ranks on one core."""
    seen: dict = {}
    for host, mask in zip(hosts, affinity):
        if mask and mask.isdigit():  # bound to exactly one CPU
            seen.setdefault(mask, set()).add(host)
    shared = {cpu: hs for cpu, hs in seen.items() if len(hs) > 1}
    if not shared:
        return []
    cpu, hs = next(iter(shared.items()))
    return [Diagnostic(
        STACKED_RANKS,
        f"ranks of {len(hs)} hosts ({', '.join(sorted(hs)[:4])}) are all bound to CPU {cpu}",
        "These hosts share one machine (containers or network namespaces), and binding put their ranks "
        "on the same core, where they wait for each other. Run with --bind none.")]
