"""The benchmark registry, as data.

Each entry mirrors one kernel of the C core (`fabriclab-core --list`; a test
checks the two agree). `metric` says which figure leads the console table;
`sizes` and `strides` are the default sweep of `fabriclab run`, chosen so the
whole default suite finishes within 3 minutes on a 2-core machine."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import UsageError
from .units import parse_size

LEVELS = {
    "memory": "local copy throughput of one process (ECT: contiguous and strided loads/stores)",
    "deposit": "one-sided remote deposit: MPI_Put/MPI_Get and stores through a shared-memory window",
    "message": "two-sided MPI message passing: ping-pong, streaming, restricted and full postal semantics",
    "tcp": "TCP/IP sockets between ranks: request/response (busy-poll, blocking) and streaming",
}

# Message-size sweep shared by the transfer levels: 0 B .. 4 MiB by x2.
TRANSFER_SIZES = "0:4M:x2"
STRIDES = "1:64:x2"
# Working sets from L1-sized to beyond 4x a 32 MiB last-level cache (2 x size).
MEMORY_SIZES = "16K:64M:x4"
# Socket parameters: the interface by name or address (empty: loopback on one
# host, else the first non-loopback IPv4 address), TCP_NODELAY, and buffer sizes
# (0 = the kernel's default); the values in force are recorded per point.
SOCKET = dict(iface="", addr="", nodelay=1, sndbuf=0, rcvbuf=0)


@dataclass(frozen=True)
class Bench:
    name: str
    summary: str
    metric: str  # "latency" or "bandwidth"
    sizes: str
    strides: str = "1"
    params: dict = field(default_factory=dict)
    min_ranks: int = 2

    @property
    def level(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def defaults(self) -> dict:
        """Parameter defaults: a value listed as "a|b" accepts a or b and defaults to a."""
        return {k: str(v).split("|")[0] for k, v in self.params.items()}

    def check_param(self, key: str, value: str) -> None:
        """The core's rule: listed choices, or an integer where the default is one."""
        spec = str(self.params[key])
        if "|" in spec and value not in spec.split("|"):
            raise UsageError(f"{self.name}: parameter {key} must be one of {spec.replace('|', ', ')}, not {value!r}")
        default = spec.split("|")[0]
        if default and default[0].isdigit():
            try:
                parse_size(value, f"value of {key}")
            except UsageError:
                raise UsageError(f"{self.name}: parameter {key} takes an integer (K/M/G allowed), "
                                 f"not {value!r}") from None

    @property
    def has_stride(self) -> bool:
        """Strided kernels are exactly those whose default sweep has strides."""
        return self.strides != "1"


def _b(name, summary, metric, sizes=TRANSFER_SIZES, strides="1", min_ranks=2, **params):
    return Bench(name, summary, metric, sizes, strides, dict(params), min_ranks)


REGISTRY: dict[str, Bench] = {b.name: b for b in [
    _b("memory.memcpy", "libc memcpy of SIZE bytes (reference)", "bandwidth", MEMORY_SIZES, min_ranks=1),
    _b("memory.copy", "8-byte word copy loop, contiguous loads and stores", "bandwidth", MEMORY_SIZES, min_ranks=1),
    _b("memory.strided_store", "ECT: contiguous loads, stores at a stride of S words", "bandwidth",
       "32K,512K,64M", STRIDES, min_ranks=1),
    _b("memory.strided_load", "ECT: loads at a stride of S words, contiguous stores", "bandwidth",
       "32K,512K,64M", STRIDES, min_ranks=1),
    _b("deposit.put_lat", "MPI_Put of SIZE bytes then completion (flush or fence)", "latency", sync="flush|fence"),
    _b("deposit.get_lat", "MPI_Get of SIZE bytes then completion (flush or fence)", "latency", sync="flush|fence"),
    _b("deposit.put_bw", "a window of MPI_Put then one completion", "bandwidth", sync="flush|fence", window=64),
    _b("deposit.get_bw", "a window of MPI_Get then one completion", "bandwidth", sync="flush|fence", window=64),
    _b("deposit.strided_direct", "strided deposit with a vector-datatype MPI_Put", "bandwidth",
       "4K,256K", STRIDES, sync="flush|fence"),
    _b("deposit.strided_packed", "strided deposit by buffer packing: contiguous put, unpack at the target",
       "bandwidth", "4K,256K", STRIDES, sync="fence|flush"),
    _b("deposit.strided_shm", "strided deposit by direct stores into a shared-memory window", "bandwidth",
       "4K,256K", STRIDES),
    _b("message.pingpong", "MPI_Send/MPI_Recv round trip between two ranks", "latency"),
    _b("message.stream", "a window of MPI_Isend to pre-posted receives, acked per window", "bandwidth",
       window=64),
    _b("message.postal_restricted", "restricted postal semantics: receives posted before the sends",
       "bandwidth", window=64, mode="ready|ssend"),
    _b("message.postal_full", "full postal semantics: sends posted before the receives (library buffers)",
       "bandwidth", window=64),
    _b("tcp.rr_poll", "TCP request/response, busy-polling receive", "latency", **SOCKET),
    _b("tcp.rr_block", "TCP request/response, blocking receive", "latency", **SOCKET),
    _b("tcp.stream", "TCP streaming, SIZE bytes per send", "bandwidth", "1:4M:x2", **SOCKET, burst="32M"),
]}


def select(names: list[str] | None) -> list[Bench]:
    """Benchmarks named by levels ("message") or full names ("message.pingpong").

    None or an empty list selects everything, in registry order."""
    if not names:
        return list(REGISTRY.values())
    chosen: list[Bench] = []
    for name in names:
        if name in LEVELS:
            picked = [b for b in REGISTRY.values() if b.level == name]
        elif name in REGISTRY:
            picked = [REGISTRY[name]]
        else:
            raise UsageError(f"unknown benchmark or level {name!r}; `fabriclab list` shows them")
        chosen.extend(b for b in picked if b not in chosen)
    return chosen
