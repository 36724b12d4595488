"""The versioned result document (docs/schema.md): its typed records, the
document every reader takes, and its NDJSON stream.

A run writes RUN.ndjson line by line while it goes (header, then one line per
launch, point, skip or diagnostic, then a footer) and, at the end, RUN.json:
the same content as one document. A stream cut short (Ctrl-C, a dead rank, a
timeout, a power cut) is still a valid run: `load` reads it and marks it
"incomplete"; a torn last line is dropped.

History of SCHEMA_VERSION:
  1 (fabriclab 0.1.0): first version.
  2 (fabriclab 0.2.0): points say where they are on every axis (conns,
    active), which job variant and cache state they belong to (variant,
    cache, buffers) and how their time becomes figures (concurrent); pattern
    points carry every rank's samples, roles, peers and bytes, and the
    derived ranks, aggregate_bandwidth_Bps, fairness and message_rate_per_s;
    the header records the placement of ranks on hosts and the cache state.
    Version 1 documents still load (their points read as conns 1, no
    variant).
  3 (fabriclab 0.2.0): several launches per point: points carry `launch`,
    `launch_end` records hold where the ranks ended and the machine's noise
    around each launch, the hello holds every rank's affinity and CPU, the
    plan its launches and shuffle seed, the launcher its binding. Older
    documents load as one launch.
  4 (fabriclab 0.2.0): imported documents: header.imported, points without
    samples. `fabriclab import` reads another tool's printed figures (OSU,
    IMB) into a document whose header says so; its points carry the tool's
    figure converted to the time of one op, and no samples. Points without
    samples are valid only in such documents.
  5 (fabriclab 0.2.0): runs across several hosts: the launcher records how it
    reached them (srun's `mpi_plugin`; a testbed's `agent`, `prefix`, `iface`
    and the `transport` forced), `launch_end` records on a testbed carry the
    cables' `counters` per host and `wire_bytes`; a validation document
    (`fabriclab testbed validate`) is an all-to-all run with a `validation`
    block. Older documents load unchanged: every new field is optional.
  6 (fabriclab 0.2.0): a point's `bandwidth_Bps` is null when its op moves no
    payload (size 0), as an imported point's always was; `params` are
    recorded in canonical form (window "1024" for `-p window=1K`); every
    point carries `active` (null outside patterns); skip records carry the
    point's `variant`, `conns` and `active`; a SIGTERM ends a run as
    `interrupted`. Every document is checked for types and ranges when read
    (check.py). Older documents load unchanged.
  7 (fabriclab 0.2.0): the levels below MPI: the header's `levels` records,
    per level (fabric, ucx), the library loaded (name, version, path) and per
    job the provider chosen and why, or UCX_TLS; their points' `info` says
    what the kernel opened (provider, fabric, domain, endpoint type,
    capabilities, inject size, iov limit, MR mode; UCX's lanes). Older
    documents load unchanged.
  8 (fabriclab 0.2.0): the app level: point `phases`, app `info`, header
    `levels.blas`. Older documents load unchanged.
  9 (fabriclab 0.2.0): per-cable truth on a testbed: `launch_end` records
    carry `spans` (per point: every cable direction's bytes, utilization and
    busiest windows, the CPU's idle, softirq and softirq-wait shares) and
    `shapers` (each shaper's bytes, packets, drops, overlimits over the
    launch); a validation block carries `cables` (per size, every cable
    direction predicted against measured), `emulation` and `explanation`.
    Older documents load unchanged.
  10 (fabriclab 0.2.0): warnings at the level they belong to: the document
    carries `findings` (the run's measured noise, how many points had each
    per-launch condition, and the run-level findings), and a merged point's
    `diagnostics` hold only its own warnings (`not-converged`,
    `wide-interval`, `off-trend`, `validation-failed`, a timer bias of every
    one of its launches), each once with `launches`, how many launches had it.
    Version 9 documents load: their merged points are classified when read.
  11 (fabriclab 0.2.0): the stream's header is complete when it is first
    written (the ranks' hosts, the MPI library, the timer and the placement
    from the first launch's hello), so RUN.ndjson's header is RUN.json's.
    Older documents load unchanged.
  12 (fabriclab 0.2.0): points carry `working_set_bytes` (the bytes per side
    of the largest region a rank's ops rotate through; every op of a window
    now has its own buffer, so a windowed point's `buffers` is at least its
    window) and `rank_alloc_bytes` (what each rank's kernel allocated for
    the point, as the core counted it). Older documents load unchanged:
    readers take buffers x size for the working set they lack.
  13 (fabriclab 0.3.0): the `coll_model` block (each collective point
    against the model of the network the run crossed: the algorithm timed,
    predicted and measured seconds, their ratio, verdict and bottleneck, and
    every algorithm's prediction), and coll.reduce_local points. Older
    documents load unchanged.
  14 (fabriclab 0.3.0): `op_histogram` on the points of a `--per-op` run
    (single operations, log buckets); coll points' `selection_file` and
    `selection_read`. Older documents load unchanged.
  15 (fabriclab 0.3.0): the roles `v` (victim) and `a` (aggressor) of the
    congestion benchmarks. Older documents load unchanged.
  16 (fabriclab 0.3.0): the header's `mpi.thread_level` (required and
    provided); the `halo_model` and `rate_model` blocks (the stencils' and
    neighbourhood collectives' exchange, the message-rate benchmarks'
    multi-pair bandwidth, against the network's model); `messages_per_op`
    and `message_rate_per_s` on points outside patterns (the levels' message
    rate over several endpoints). Older documents load unchanged.
  17 (fabriclab 0.3.0): sockets as iperf3, netperf and sockperf see them.
    Points' `rank_cpu` (each rank's user and system CPU seconds over the
    samples, and the wall seconds they span) and the hello timer's `cpu`
    (how CPU was read: getrusage, its step and tick).
    The noise benchmarks' points' `noise` (every rank's CPU and raw
    quanta or detours in integer nanoseconds, docs/noise.md).
    Points' `rank_counters` (per rank, null or each kernel counter's raw
    values before the first sample and after each; docs/core-protocol.md).
    Imported iperf3 tests (`header.imported.tool` "iperf3"): tcp.stream and
    udp.stream points whose `info.socket` holds iperf3's offered rate,
    streams, jitter, loss, intervals and CPU use (docs/sockets.md).
    Older documents load unchanged.
  18 (fabriclab 0.3.0): a run's time budget: the plan's `budget_s` and the
    footer's `budget` (how many launches ran with a lower point-time cap,
    the lowest, the launches' seconds, whether the budget was met;
    docs/statistics.md). Older documents load unchanged."""

from __future__ import annotations

from .document import (RECORD_KINDS, SCHEMA, SCHEMA_VERSION, STATUSES, Document, Footer, Header, StreamWriter,
                       load, write_json)
from .records import AXES, KEY_FIELDS, MergedPoint, Point, point_key
from .summaries import SUMMARY_KEYS

__all__ = ["SCHEMA", "SCHEMA_VERSION", "RECORD_KINDS", "STATUSES", "AXES", "KEY_FIELDS", "SUMMARY_KEYS", "Point",
           "MergedPoint", "Document", "Header", "Footer", "StreamWriter", "load", "write_json", "point_key"]
