"""The seed studies' published results as data.

One YAML file per study in reference/ (shipped with the package) holds every
number the study's text states for its systems, each with its source: the
figure, table or section (`where`), the value as printed (`printed`), and
whether it was read from the text or from a figure's description
(`read_from`). Like the model catalog, the loader refuses a bare number, and
it refuses a unit or a quantity it does not know, so that every value can be
put in SI units and drawn beside a measurement of the same kind. The format
and the vocabulary are described in docs/studies.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import UsageError
from ..datafile import read_data_file, shown

DATA = Path(__file__).with_name("reference")

# unit -> (dimension, factor to SI). Rates are decimal (1 MB/s = 1e6 B/s, as the
# studies derive them from bus width x clock: 64 bit x 66 MHz = 533 MB/s); sizes
# are binary, and named so (the studies' "KByte" is 1024 bytes: seed 002's 32
# segments of 1024 bytes are its "32 kBytes").
UNITS = {
    "B/s": ("rate", 1.0), "MB/s": ("rate", 1e6), "Mbit/s": ("rate", 1e6 / 8), "Gbit/s": ("rate", 1e9 / 8),
    "ns": ("time", 1e-9), "us": ("time", 1e-6), "ms": ("time", 1e-3), "s": ("time", 1.0),
    "B": ("size", 1.0), "KiB": ("size", 1024.0), "MiB": ("size", 1024.0 ** 2),
    "%": ("ratio", 0.01), "x": ("ratio", 1.0),
    "MFLOP/s": ("flops", 1e6), "GFLOP/s": ("flops", 1e9),
    "elements/s": ("elements", 1.0),
    "nodes": ("count", 1.0), "connections": ("count", 1.0),
}
SI_UNITS = {"rate": "B/s", "time": "s", "size": "B", "ratio": "1", "flops": "FLOP/s",
            "elements": "elements/s", "count": "1"}

# quantity -> the dimensions its unit may have
QUANTITIES = {
    "bandwidth": {"rate"},           # payload moved per second by a transfer, a layer or a test
    "bandwidth_gain": {"rate"},      # how much faster one configuration is than another
    "effective_rate": {"rate"},      # a gross rate times its packet efficiency, computed, not measured
    "wire_rate": {"rate"},           # the gross (raw, nominal) rate of a link or a bus
    "memory_copy": {"rate"},         # copy throughput within one node's memory system
    "latency": {"time"},             # one-way
    "round_trip": {"time"},
    "overhead": {"time", "size"},    # time software adds per operation, or bytes a packet adds to its payload
    "half_peak_size": {"size"},      # the message size that reaches half of the peak bandwidth
    "size": {"size"},                # a size at which the text places an effect (a peak, a threshold, a buffer)
    "packet_payload": {"size"},
    "efficiency": {"ratio"},         # achieved over nominal
    "ratio": {"ratio"},              # another relative figure: a gain, an overhead's share
    "speedup": {"ratio"},
    "sort_rate": {"elements"},
    "flop_rate": {"flops"},
    "crossover": {"count"},          # the system size at which one configuration overtakes another
}
READ_FROM = ("text", "figure")
BOUNDS = ("at_most", "at_least")     # the text states a bound ("under 10 MByte/s"), not a value
_REQUIRED = ("id", "system", "quantity", "value", "unit", "where", "printed", "read_from")
_FIELDS = set(_REQUIRED) | {"at", "note", "bound"}
_HEAD = ("study", "seed", "title", "authors")
_TOP = set(_HEAD) | {"year", "values"}
_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_KEY = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Value:
    """One published number: in the unit it was printed in, with its source."""

    id: str
    system: str
    quantity: str
    value: float
    unit: str
    where: str
    printed: str
    read_from: str
    at: dict = field(default_factory=dict)
    note: str = ""
    bound: Optional[str] = None

    def si(self) -> float:
        """The value in SI units (B/s, s, B, a plain ratio, FLOP/s, elements/s, a count)."""
        return self.value * UNITS[self.unit][1]

    @property
    def si_unit(self) -> str:
        return SI_UNITS[UNITS[self.unit][0]]


@dataclass(frozen=True)
class Reference:
    """A study's published values, in the order its file lists them."""

    study: str
    seed: str
    title: str
    authors: str
    year: Optional[int]
    values: tuple

    def get(self, id: str) -> Value:
        for v in self.values:
            if v.id == id:
                return v
        raise UsageError(f"study {self.study!r} publishes no value {id!r}")


def names() -> list[str]:
    """The studies whose published values ship with fabriclab."""
    return sorted(p.stem for p in DATA.glob("*.yaml"))


def load(study: str) -> Reference:
    """The published values of a study, by name."""
    known = names()
    if study not in known:
        raise UsageError(f"no published values for study {study!r}: choose one of {', '.join(known)}")
    ref = read(DATA / f"{study}.yaml")
    if ref.study != study:
        raise UsageError(f"{DATA / study}.yaml: names study {ref.study!r}, not {study!r}")
    return ref


def read(path) -> Reference:
    """A published-values file, checked entry by entry (module docstring)."""
    data = read_data_file(path, "published-values file")
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a published-values file is a mapping with {', '.join(_HEAD)} and values")
    _check_keys(data, _TOP, f"{path}")
    for key in _HEAD:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UsageError(f"{path}: {key!r} is missing or empty; every file names its source")
    year = data.get("year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise UsageError(f"{path}: 'year' must be a whole number, got {shown(year)}")
    entries = data.get("values")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: 'values' must be a non-empty list of published values")
    values, seen = [], {}
    for i, entry in enumerate(entries, 1):
        v = _value(entry, f"{path}: value #{i}")
        if v.id in seen:
            raise UsageError(f"{path}: value #{i} ({v.id}): id {v.id!r} is used twice, first by value #{seen[v.id]}")
        seen[v.id] = i
        values.append(v)
    return Reference(data["study"], data["seed"], data["title"], data["authors"], year, tuple(values))


def _value(entry, where: str) -> Value:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: a bare {shown(entry)}; a published value is a mapping of "
                         f"{', '.join(_REQUIRED)}")
    if isinstance(entry.get("id"), str):
        where = f"{where} ({entry['id']})"
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise UsageError(f"{where}: {', '.join(missing)} missing; a published value needs {', '.join(_REQUIRED)}")
    _check_keys(entry, _FIELDS, where)
    for key in ("id", "system", "quantity", "unit", "where", "printed", "read_from"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise UsageError(f"{where}: {key} must be non-empty text, got {shown(entry[key])}")
    _check_terms(entry, where)
    val = entry["value"]
    if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val) or val < 0:
        raise UsageError(f"{where}: value must be a non-negative finite number, got {shown(val)}")
    at = entry.get("at", {})
    if not isinstance(at, dict) or any(not isinstance(k, str) or not _KEY.fullmatch(k) or isinstance(x, (list, dict))
                                       for k, x in at.items()):
        raise UsageError(f"{where}: 'at' must map lowercase names to single values, got {shown(at)}")
    note = entry.get("note", "")
    if not isinstance(note, str):
        raise UsageError(f"{where}: note must be text, got {shown(note)}")
    return Value(entry["id"], entry["system"], entry["quantity"], val, entry["unit"], entry["where"],
                 entry["printed"], entry["read_from"], dict(at), note, entry.get("bound"))


def _check_terms(entry: dict, where: str) -> None:
    """The id's spelling and the words from the fixed vocabularies."""
    if not _ID.fullmatch(entry["id"]):
        raise UsageError(f"{where}: id {entry['id']!r} must be lowercase letters, digits and single hyphens")
    q, unit = entry["quantity"], entry["unit"]
    if q not in QUANTITIES:
        raise UsageError(f"{where}: unknown quantity {q!r}: choose one of {', '.join(QUANTITIES)}")
    if unit not in UNITS:
        raise UsageError(f"{where}: unknown unit {unit!r}: choose one of {', '.join(UNITS)}")
    if UNITS[unit][0] not in QUANTITIES[q]:
        raise UsageError(f"{where}: unit {unit!r} does not measure a {q}")
    if entry["read_from"] not in READ_FROM:
        raise UsageError(f"{where}: read_from must be one of {', '.join(READ_FROM)}, got {shown(entry['read_from'])}")
    if entry.get("bound") is not None and entry["bound"] not in BOUNDS:
        raise UsageError(f"{where}: bound must be one of {', '.join(BOUNDS)}, got {shown(entry['bound'])}")


def _check_keys(mapping: dict, known: set, where: str) -> None:
    unknown = sorted(str(k) for k in set(mapping) - known)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}: the keys are {', '.join(sorted(known))}")
