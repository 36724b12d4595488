"""A network file's facts about its real cables, checked like every other field
(docs/model.md, "Networks from a file": a site's cables): a link's `ports`
and `guids` (one per end, or null for an end without one), `degraded` (why it
runs below what both its ends support), and the file's `source` (what was
read, what was given by options rather than read, and what else a reader
noted of what it read). The model's loads ignore them; they name cables.

Ports are 1-255: an InfiniBand port number is 8 bits and a switch's port 0
is its management port, never a cable's (InfiniBand Architecture
Specification, vol. 1). A GUID is an EUI-64, 16 hex digits, written `0x...`
by ibnetdiscover (leading zeros may be dropped).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...datafile import shown
from ...errors import UsageError
from . import checks

LINK_KEYS = {"ports", "guids", "degraded"}
PORT_MAX = 255
GUID = re.compile(r"0x[0-9a-fA-F]{1,16}")
SOURCE_FORMATS = ("ibnetdiscover", "slurm", "file")
SOURCE_KEYS = {"format", "read", "given"}
MAX_GIVEN = 32                   # entries of source.given, and other keys of source
MAX_GIVEN_LIST = 64              # entries of one given value (rates, say)


@dataclass(frozen=True, slots=True)
class Facts:
    """One link's cable facts: each None where the file gives none."""

    ports: tuple | None = None
    guids: tuple | None = None
    degraded: str | None = None


def link_facts(ln: dict, count: int, w: str) -> Facts | None:
    """The link's facts, or None when it gives none (most links: nothing kept)."""
    if not LINK_KEYS & ln.keys():
        return None
    ports = _pair(ln["ports"], "ports", "a port 1-255", _port, w) if "ports" in ln else None
    if ports is not None and count > 1:
        raise UsageError(f"{w}: ports name one cable's ends; give each of the {count} parallel cables as a link "
                         "of its own, or no ports")
    guids = _pair(ln["guids"], "guids", "a GUID '0x' and 1-16 hex digits", _guid, w) if "guids" in ln else None
    degraded = checks.name(ln["degraded"], "degraded", w, (str,)) if "degraded" in ln else None
    return Facts(ports, guids, degraded)


def _pair(value, what: str, one: str, check, w: str) -> tuple:
    if not isinstance(value, list) or len(value) != 2:
        raise UsageError(f"{w}: {what} must be [A, B], each {one} or null, got {shown(value)}")
    return tuple(None if v is None else check(v, f"{what}[{k}]", w) for k, v in enumerate(value))


def _port(value, what: str, w: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= PORT_MAX:
        raise UsageError(f"{w}: {what} must be a port number from 1 to {PORT_MAX} or null, got {shown(value)}")
    return value


def _guid(value, what: str, w: str) -> str:
    if not isinstance(value, str) or not GUID.fullmatch(value):
        raise UsageError(f"{w}: {what} must be a GUID, '0x' and 1 to 16 hex digits, or null, got {shown(value)}")
    return value.lower()


def unique_ports(facts: dict, ends: list, where: str) -> None:
    """No port carries two cables. facts: link index -> Facts; ends: link index -> (a name,
    b name). A port is told apart by its end's GUID where the link gives one: a host's two
    adapters each have a port 1, with GUIDs of their own; a switch's ports share its GUID."""
    taken: dict = {}
    for i, f in facts.items():
        if f.ports is None:
            continue
        for k, (name, port) in enumerate(zip(ends[i], f.ports)):
            if port is None:
                continue
            guid = f.guids[k] if f.guids is not None else None
            j = taken.setdefault((name, guid, port), i)
            if j != i:
                raise UsageError(f"{where}: links[{i}]: port {port} of {name!r}"
                                 + (f" ({guid})" if guid else "") + f" carries links[{j}] already")


def source(value, where: str) -> dict | None:
    """The file's provenance: {format, read, given} and what else a reader recorded of
    what it read (Slurm's topology name and plugin, say: null, true, false, numbers or
    text, or short lists of them), every value checked."""
    if value is None:
        return None
    w = f"{where}: source"
    if not isinstance(value, dict):
        raise UsageError(f"{w} must be a mapping of format, read and given, got {shown(value)}")
    if "format" not in value:
        raise UsageError(f"{w}: 'format' is required ({' or '.join(SOURCE_FORMATS)})")
    out = {"format": checks.choice(value["format"], "format", w, SOURCE_FORMATS)}
    if "read" in value:
        out["read"] = checks.name(value["read"], "read", w, (str,))
    if "given" in value:
        out["given"] = _given(value["given"], f"{w}: given")
    out.update(_given({k: v for k, v in value.items() if k not in SOURCE_KEYS}, w))
    return out


def _given(value, w: str) -> dict:
    if not isinstance(value, dict):
        raise UsageError(f"{w} must be a mapping of option to value, got {shown(value)}")
    if len(value) > MAX_GIVEN:
        raise UsageError(f"{w}: at most {MAX_GIVEN} entries, got {len(value):,}")
    out = {}
    for key, v in value.items():
        k = checks.name(key, "key", w, (str,))
        if isinstance(v, list):
            if len(v) > MAX_GIVEN_LIST:
                raise UsageError(f"{w}: {k}: at most {MAX_GIVEN_LIST} values, got {len(v):,}")
            out[k] = [_scalar(x, f"{k}[{j}]", w) for j, x in enumerate(v)]
        else:
            out[k] = _scalar(v, k, w)
    return out


def _scalar(v, what: str, w: str):
    """null, true/false, a finite number or a printable text."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        if not math.isfinite(v) or abs(v) > 1e18:
            raise UsageError(f"{w}: {what} must be a finite number of at most 1e18, got {shown(v)}")
        return v
    if isinstance(v, str):
        return checks.name(v, what, w, (str,))
    raise UsageError(f"{w}: {what} must be null, true, false, a number or text, got {shown(v)}")
