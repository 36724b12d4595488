"""Faults injected into a testbed that is up: one cable's shaped rate
lowered (`testbed degrade`) and put back (`testbed restore`), both ends
alike, while the network file, and so the model, keep the nominal rate, as
a cluster's documentation keeps a cable's rating when the cable goes bad.
The state records the rate shaped now (`shaped_MBps`), so `testbed show`
and the cable watch read it."""

from __future__ import annotations

from ..errors import UsageError
from ..units import in_range
from . import netns

# The rates tc takes in the token bucket netns.tbf writes: its rate and peak rate in whole bytes
# a second, the peak (PEAK times the rate) above the rate, which 20 B/s is the least to keep
# (at 10 B/s both are 10 B/s and the kernel refuses the bucket; at 1e-300 MB/s tc reads 0 bit/s);
# its queue, QUEUE_S of the rate, a 32-bit byte count (8,589.9 MB/s fills it).
MIN_MBPS = 20e-6
MAX_MBPS = ((1 << 32) - 1) / netns.QUEUE_S / 1e6


def cable_name(c: dict) -> str:
    """A cable's name as `testbed show` prints it: its file name, #N for the Nth parallel one."""
    return c["label"].removeprefix("link ") + (f"#{c['index']}" if c.get("index") else "")


def find(state: dict, ref: str) -> int:
    """The index in state["cables"] of the cable `ref` names: its name, or its two ends as
    A-B in either order; UsageError in one line when none or several match."""
    ends = tuple(ref.split("-", 1)) if "-" in ref else None
    hits = [k for k, c in enumerate(state["cables"])
            if cable_name(c) == ref or (ends and {c["a"], c["b"]} == set(ends) and not c.get("index"))]
    if len(hits) != 1:
        names = ", ".join(cable_name(c) for c in state["cables"])
        raise UsageError(f"testbed {state['name']} has {'no' if not hits else 'more than one'} cable {ref!r}"
                         f" (its cables: {names})")
    return hits[0]


def rate(text: str) -> float:
    """A rate in MB/s that tc takes (MIN_MBPS to MAX_MBPS); UsageError in one line otherwise."""
    try:
        r = float(text)
    except ValueError:
        raise UsageError(f"a rate is a number of MB/s, not {text!r}") from None
    if not in_range(r, MIN_MBPS, MAX_MBPS):
        raise UsageError(f"a rate must be from {MIN_MBPS:g} to {MAX_MBPS:.6g} MB/s (what tc's token bucket "
                         f"takes), not {text[:40]}")
    return r


def lines(state: dict, k: int, rate_MBps: float) -> list[tuple[str, str]]:
    """(namespace, tc line) changing both ends of cable k to rate_MBps."""
    c = state["cables"][k]
    return [(state["namespaces"][v], f"qdisc change dev {dev} root handle 1: {netns.tbf(rate_MBps * 1e6, state.get('mtu', netns.MTU_MAX))}")
            for v, dev in ((c["a"], c["a_if"]), (c["b"], c["b_if"]))]


def _shape(state: dict, k: int, rate_MBps: float) -> None:
    for ns, line in lines(state, k, rate_MBps):
        netns.batch(["tc", "-n", ns], [line], f"shaping cable {cable_name(state['cables'][k])}")


def degrade(name: str, ref: str, rate_text: str) -> dict:
    """Shape cable `ref` of testbed `name` at the rate given; the cable changed."""
    netns.require_root()
    state = netns.load(name)
    k, r = find(state, ref), rate(rate_text)
    _shape(state, k, r)
    state["cables"][k]["shaped_MBps"] = r
    netns.save(state)
    return state["cables"][k]


def restore(name: str, ref: str | None = None) -> list[dict]:
    """Shape cable `ref` (every degraded cable when None) at its file's rate again; those restored."""
    netns.require_root()
    state = netns.load(name)
    ks = [find(state, ref)] if ref else [k for k, c in enumerate(state["cables"]) if c.get("shaped_MBps") is not None]
    for k in ks:
        _shape(state, k, state["cables"][k]["rate_MBps"])
        state["cables"][k].pop("shaped_MBps", None)
    netns.save(state)
    return [state["cables"][k] for k in ks]
