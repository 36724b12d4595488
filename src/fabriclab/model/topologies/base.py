"""What every topology provides: resource classes, per-pair paths, an inventory.

Resource *instances* are numbered 0..R-1, grouped in contiguous *classes*
(all SCI links of dimension 1, all level-2 up-links of a fat tree...). A path
is a list of instance ids with weights (1 for one route, a fraction for a flow
split by ECMP). Paths for many pairs are returned at once in CSR form.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ...errors import UsageError

# Path entries routed at once by loads() and top_marked_class(): about 64 bytes each
# with the sort that lists them (Paths.from_columns), so a block stays near 100 MB.
BLOCK_ENTRIES = 1 << 21


@dataclass(frozen=True, slots=True)    # slots: networks from files have two per link
class ResourceClass:
    key: str        # unique in the topology: "link.d0+", "up.2", "adapter_bus"
    label: str      # qualifier after the technology's name: "dimension 1, + direction"
    kind: str       # link | switch_port | adapter_bus | host_bus
    tech: str       # technology resource that gives the rate: link, adapter_bus, host_bus
    count: int      # number of instances
    rate: Optional[float] = None   # bytes/s, when the topology itself fixes it
    own: Optional[object] = None   # its own TechResource (rate and packet format), networks from files


@dataclass
class Paths:
    """CSR list of paths: flow f uses res[indptr[f]:indptr[f+1]] with weight[...]."""

    indptr: np.ndarray
    res: np.ndarray
    weight: np.ndarray

    @property
    def n_flows(self) -> int:
        return len(self.indptr) - 1

    def path(self, f: int) -> list:
        a, b = self.indptr[f], self.indptr[f + 1]
        return list(zip(self.res[a:b].tolist(), self.weight[a:b].tolist()))

    @staticmethod
    def from_columns(columns: Sequence[tuple], n_flows: int) -> "Paths":
        """Merge per-flow columns: each column is (flow_ids, res_ids, weights)."""
        if columns:
            fl = np.concatenate([c[0] for c in columns]).astype(np.int64, copy=False)
            rs = np.concatenate([c[1] for c in columns]).astype(np.int64, copy=False)
            wt = np.concatenate([np.broadcast_to(np.asarray(c[2], dtype=float), c[0].shape)
                                 for c in columns])
        else:
            fl = rs = np.zeros(0, np.int64)
            wt = np.zeros(0)
        order = np.argsort(fl, kind="stable")     # runs of sorted ids: timsort is fast here
        counts = np.bincount(fl, minlength=n_flows)
        indptr = np.zeros(n_flows + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return Paths(indptr, rs[order], wt[order])


@dataclass(frozen=True)
class NodeModel:
    """Resources inside each node: the adapter bus and the host I/O bus.

    host_bus: None, "half" (one shared bus, e.g. PCI: both directions load it)
    or "full" (separate transmit and receive, e.g. PCIe)."""

    adapter_bus: bool = False
    host_bus: Optional[str] = None

    def classes(self, n: int) -> list:
        out = []
        if self.adapter_bus:
            out.append(ResourceClass("adapter_bus", "", "adapter_bus", "adapter_bus", n))
        if self.host_bus == "half":
            out.append(ResourceClass("host_bus", "", "host_bus", "host_bus", n))
        elif self.host_bus == "full":
            out.append(ResourceClass("host_bus.tx", "transmit", "host_bus", "host_bus", n))
            out.append(ResourceClass("host_bus.rx", "receive", "host_bus", "host_bus", n))
        elif self.host_bus is not None:
            raise UsageError(f"host bus duplex must be 'half' or 'full', got {self.host_bus!r}")
        return out


class Topology(ABC):
    """Base class. Subclasses set ``n_nodes`` and ``classes`` and implement paths()."""

    family = "topology"
    n_nodes: int
    classes: list
    node_model: NodeModel = NodeModel()
    bottleneck_instances = False     # name the most loaded instance, not its class, as the bottleneck

    # --- resource numbering -------------------------------------------------
    def _finish(self) -> None:
        counts = [c.count for c in self.classes]
        self.offsets = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=self.offsets[1:])
        self._class_index = {c.key: i for i, c in enumerate(self.classes)}

    @property
    def n_resources(self) -> int:
        return int(self.offsets[-1])

    def base(self, key: str) -> int:
        return int(self.offsets[self._class_index[key]])

    def has_class(self, key: str) -> bool:
        return key in self._class_index

    def class_of(self, res: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.offsets, res, side="right") - 1

    def instance_label(self, res: int) -> str:
        ci = int(self.class_of(np.array([res]))[0])
        return self.label_of(ci, res - int(self.offsets[ci]))

    def label_of(self, ci: int, k: int) -> str:
        """Instance k of class ci in words."""
        c = self.classes[ci]
        return f"{c.label or c.key} #{k}"

    # --- node-internal resources on a path ----------------------------------
    def node_columns(self, flow: np.ndarray, src: np.ndarray, dst: np.ndarray) -> list:
        """Injection and ejection through the host bus and the adapter bus."""
        cols = []
        nm = self.node_model
        if nm.adapter_bus:
            b = self.base("adapter_bus")
            cols += [(flow, b + src, 1.0), (flow, b + dst, 1.0)]
        if nm.host_bus == "half":
            b = self.base("host_bus")
            cols += [(flow, b + src, 1.0), (flow, b + dst, 1.0)]
        elif nm.host_bus == "full":
            cols += [(flow, self.base("host_bus.tx") + src, 1.0),
                     (flow, self.base("host_bus.rx") + dst, 1.0)]
        return cols

    def node_loads_alltoall(self, n: int) -> dict:
        """Per-instance node-resource loads of a full all-to-all among n nodes."""
        nm = self.node_model
        out = {}
        if nm.adapter_bus:
            out["adapter_bus"] = 2.0 * (n - 1)
        if nm.host_bus == "half":
            out["host_bus"] = 2.0 * (n - 1)
        elif nm.host_bus == "full":
            out["host_bus.tx"] = out["host_bus.rx"] = float(n - 1)
        return out

    # --- each family provides ---------------------------------------------------
    @abstractmethod
    def paths(self, src: np.ndarray, dst: np.ndarray) -> Paths:
        """The routes of the flows src[i] -> dst[i] over this topology's resources."""

    def route_lengths(self, src: np.ndarray, dst: np.ndarray) -> Optional[np.ndarray]:
        """Path entries of each flow, counted without listing them; None where every
        route is short (a few switches), so that flows can be routed in fixed blocks."""
        return None

    def blocks(self, src: np.ndarray, dst: np.ndarray):
        """The flows in ranges [lo, hi) of at most about BLOCK_ENTRIES path entries each."""
        lengths = self.route_lengths(src, dst)
        if lengths is None:
            step = max(1, BLOCK_ENTRIES // 16)
            return [(lo, min(lo + step, len(src))) for lo in range(0, len(src), step)]
        ends = np.cumsum(lengths)
        cuts = np.searchsorted(ends, np.arange(BLOCK_ENTRIES, int(ends[-1]) if len(ends) else 0,
                                               BLOCK_ENTRIES), side="right")
        bounds = np.unique(np.concatenate(([0], cuts, [len(src)])))
        return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))

    def loads(self, src: np.ndarray, dst: np.ndarray, weights: Optional[np.ndarray] = None) -> np.ndarray:
        """The weighted crossings of each resource instance by the flows src[i] -> dst[i]
        (flow i counting weights[i], default 1), routed in blocks so that memory stays
        bounded whatever the routes' lengths."""
        out = np.zeros(self.n_resources)
        w = np.ones(len(src)) if weights is None else np.asarray(weights, float)
        for lo, hi in self.blocks(src, dst):
            p = self.paths(src[lo:hi], dst[lo:hi])
            flow = np.repeat(np.arange(hi - lo), np.diff(p.indptr))
            out += np.bincount(p.res, weights=p.weight * w[lo:hi][flow], minlength=len(out))
        return out

    def first_level(self, src: np.ndarray, dst: np.ndarray, cap: np.ndarray, rel_tol: float) -> tuple:
        """(the lowest share capacity / load of the resources the flows cross, the highest
        class holding a resource at that share on each flow's route, -1: none): the first
        level of max-min filling. Routes of one block are listed once and counted on the
        resources they cross only, never on arrays of every resource (a 100,000-node
        4-ary tree has 5 M: one pass over them costs more than a step's 500,000 entries);
        a topology that counts loads without listing routes (a torus) counts them."""
        if type(self).loads is not Topology.loads or len(self.blocks(src, dst)) != 1:
            load = self.loads(src, dst)
            share = np.divide(cap, load, out=np.full(len(load), np.inf), where=load > 0)
            level = float(share.min())
            return level, self.top_marked_class(src, dst, share <= level * (1 + rel_tol))
        p = self.paths(src, dst)
        used, at = np.unique(p.res, return_inverse=True)
        share = cap[used] / np.bincount(at, p.weight, len(used))
        level = float(share.min())
        hit = share[at] <= level * (1 + rel_tol)
        top = np.full(len(src), -1, np.int64)
        np.maximum.at(top, np.repeat(np.arange(len(src)), np.diff(p.indptr))[hit], self.class_of(p.res[hit]))
        return level, top

    def top_marked_class(self, src: np.ndarray, dst: np.ndarray, marked: np.ndarray) -> np.ndarray:
        """The highest class holding a `marked` resource on each flow's route (-1: none);
        max-min filling names that class when the marked resources saturate first."""
        top = np.full(len(src), -1, np.int64)
        for lo, hi in self.blocks(src, dst):
            p = self.paths(src[lo:hi], dst[lo:hi])
            flow = np.repeat(np.arange(hi - lo), np.diff(p.indptr))
            hit = marked[p.res]
            np.maximum.at(top[lo:hi], flow[hit], self.class_of(p.res[hit]))
        return top

    def check_routing(self, n_destinations: int) -> None:
        """Refuse, before any work, routing flows to this many destinations when it
        would take too long (networks from files build a table per destination)."""

    def alltoall_resource_loads(self) -> Optional[tuple]:
        """(exact load of every resource instance under all-to-all, how it was
        counted), without listing N² flows in memory; None if unavailable."""
        return None

    def alltoall_class_loads(self) -> Optional[dict]:
        """Exact max load per class key for all-to-all, computed without
        enumerating N² flows (symmetry or aggregation); None if unavailable."""
        return None

    def max_switches_on_route(self) -> int:
        """Largest number of switches a packet crosses (route bytes, Eq. 9)."""
        return 0

    def inventory(self) -> dict:
        """Countable parts for the cost model: adapters, switches, enclosures, cables."""
        return {"adapters": self.n_nodes, "switches": 0, "enclosures": 0, "cables": 0}

    def describe(self) -> str:
        return f"{self.family} of {self.n_nodes} nodes"


def check_int(name: str, value, lo: int, hi: Optional[int] = None) -> int:
    """Validate an integer parameter; one clear line on error."""
    try:
        iv = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be an integer, got {value!r}") from None
    if iv != value and not (isinstance(value, str) and str(iv) == value.strip()):
        raise UsageError(f"{name} must be an integer, got {value!r}")
    if iv < lo or (hi is not None and iv > hi):
        rng = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
        raise UsageError(f"{name} must be {rng}, got {iv}")
    return iv


def expand(lengths) -> tuple:
    """For each i, steps 0..lengths[i]-1, concatenated. Returns (owner, step)."""
    lengths = np.asarray(lengths, np.int64)
    total = int(lengths.sum())
    owner = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    if total == 0:
        return owner, np.zeros(0, np.int64)
    firsts = np.zeros(len(lengths), np.int64)
    np.cumsum(lengths[:-1], out=firsts[1:])
    step = np.arange(total, dtype=np.int64) - np.repeat(firsts, lengths)
    return owner, step


def stable_order(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative ints by 16-bit radix passes (numpy sorts
    16-bit keys with a linear-time radix sort)."""
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while int(keys.max(initial=0)) >> shift:
        digit = ((keys[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order
