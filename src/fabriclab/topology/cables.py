"""A network file's hosts, switches and cables as plain facts, for show and diff.

The file is read by the model (CustomNetwork.from_dict), so whatever show or
diff lists is a file the model loads, every field checked in one line."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.topologies import CustomNetwork


@dataclass(frozen=True)
class Network:
    """What show and diff read: names, the cables (CustomNetwork.cable_facts), the source."""

    name: str
    hosts: list
    switches: list
    cables: list
    source: dict | None


def read(data, where: str) -> Network:
    net = CustomNetwork.from_dict(data, where=where)
    return Network(str(net.name), list(net.node_names), list(net.switch_names), net.cable_facts(), net.source)


def label(cable: dict) -> str:
    """A cable as people name it: `a [port] -- b [port]` where ports are known, and its
    own name where the file gives one other than that (or than the default `a-b`)."""
    (a, b), ports = cable["ends"], cable["ports"] or (None, None)
    end = lambda name, port: name if port is None else f"{name} [{port}]"
    text = f"{end(a, ports[0])} -- {end(b, ports[1])}"
    if cable["name"] not in (text, f"{a}-{b}"):
        text += f" ({cable['name']})"
    return text


def rate(mbps: float) -> str:
    """A cable's rate in MB/s, and in Gb/s as InfiniBand and Ethernet speak of links."""
    return f"{mbps:g} MB/s ({mbps * 8 / 1000:g} Gb/s)"
