"""Synthetic store rows (fabriclab.store.rows.Rows) made by hand, for the store's tests: a run of N
points, each with its launches, tails and optionally raw samples, a few pairs, impacts, checks,
findings and versions; every figure a function of (i, point) so that tests can predict it."""

from fabriclab.store.rows import Rows

T0 = 1_780_000_000.0       # 2026-05-28T20:26:40Z: run i starts an hour after run i-1


def key(bench, variant, size, stride=1, conns=1, active=None, params=""):
    """The series key as the store's design spells it: bench|variant|size|stride|conns|active|params."""
    return f"{bench}|{variant}|{size}|{stride}|{conns}|{'' if active is None else active}|{params}"


def point(i: int, j: int, launches: int = 3, tails: int = 6, samples: int = 0, bench: str = "message.pingpong") -> dict:
    """Point j of run i: `bench` at size 2**j (j < 40), its median 1e-6 * (j+1) * (1 + i/1000)."""
    size = 2 ** (j % 40)
    variant = "" if j < 40 else f"v{j // 40}"
    median = 1e-6 * (j + 1) * (1 + i / 1000)
    return {"series": key(bench, variant, size), "bench": bench, "variant": variant,
            "size": size, "stride": 1, "conns": 1, "active": None, "params": "", "cache": "warm", "unit": "s",
            "median": median, "ci_low": median * 0.99, "ci_high": median * 1.01, "launches": launches,
            "samples": 100, "bytes_per_op": size, "imported": None,
            "children": {
                "launches": [{"launch": k, "median": median * (1 + (k - 1) / 100), "n": 100} for k in range(launches)],
                "samples": [{"launch": k % max(launches, 1), "value": median + k * 1e-9} for k in range(samples)],
                "tails": [{"pct": pct, "value": median * (1 + pct / 100)} for pct in (50, 90, 99, 99.9, 99.99, 100)[:tails]]}}


def rows(i: int = 0, points: int = 10, cluster: str = "c1", launches: int = 3, tails: int = 6, samples: int = 0,
         bench: str = "message.pingpong", libfabric: str = "1.18", **run) -> Rows:
    """Run i of a cluster (uid run-{cluster}-{i}, its own digest), `points` points of `bench`;
    `run` overrides any runs column (mpi_version="5.0", network_digest=..., uid=..., digest=...)."""
    started = T0 + 3600 * i
    row = {"uid": f"run-{cluster}-{i:06d}", "digest": f"sha256:{cluster}:{i:06d}", "kind": "run", "cluster": cluster,
           "started": _iso(started), "started_s": started, "ended": _iso(started + 60), "ended_s": started + 60,
           "status": "ok", "nranks": 2, "hosts": "n1,n2", "mpi": "mpich", "mpi_version": "4.2",
           "fabriclab_version": "0.3.0", "network": "site.yaml", "network_digest": "aa" * 32,
           "source": f"/data/{cluster}/run{i}.json", "added_s": started + 120}
    row.update(run)
    return Rows(
        run=row,
        versions=[{"component": "mpi", "version": row["mpi_version"]}] * (row["mpi_version"] is not None)
        + [{"component": "libfabric", "version": libfabric}],
        points=[point(i, j, launches, tails, samples, bench) for j in range(points)],
        pairs=[{"size": 1 << 20, "src": s, "dst": d, "src_host": f"n{s + 1}", "dst_host": f"n{d + 1}",
                "bandwidth": 1e10 * (1 + s) / (1 + i / 1000), "expected": 1.2e10, "cable": "leaf1-spine1"}
               for s in range(2) for d in range(2) if s != d],
        impacts=[{"victim": "message.pingpong", "aggressor": "alltoall", "size": 8, "impact": 1.5, "ci_low": 1.4,
                  "ci_high": 1.6, "predicted": 1.45, "cables": "leaf1-spine1"}],
        checks=[{"test": "latency", "verdict": "pass", "attempts": 1}],
        findings=[{"test": "bandwidth", "item": "n1>n2", "cable": "leaf1-spine1", "host": "n1"}])


def _iso(t: float) -> str:
    import datetime
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def history(store, add) -> None:
    """A small history on two clusters, every reader's case in it: c1's runs 0-6 (MPI 4.2 -> 5.0 at
    run 2, libfabric 1.18 -> 1.20 at 3, the network file's content at 4 and its name at 6,
    fabriclab 0.3.0 -> 0.4.0 at 5 whose MPI is not said), a check on c1 at 3.5 h, and c2's
    coll.allreduce runs 0-2 (run 1 with no start time: it sorts by when it was added)."""
    changes = {2: {"mpi_version": "5.0"}, 3: {"mpi_version": "5.0", "libfabric": "1.20"},
               4: {"mpi_version": "5.0", "libfabric": "1.20", "network_digest": "bb" * 32},
               5: {"mpi_version": None, "mpi": None, "libfabric": "1.20", "network_digest": "bb" * 32,
                   "fabriclab_version": "0.4.0"},
               6: {"mpi_version": "5.0", "libfabric": "1.20", "network": "site2.yaml", "network_digest": "cc" * 32,
                   "fabriclab_version": "0.4.0"}}
    for i in range(7):
        add(store, rows(i, points=6, **changes.get(i, {})))
    add(store, rows(3, points=0, kind="check", uid="check-c1", digest="sha256:check", started_s=T0 + 3.5 * 3600,
                    **changes[3]))
    for i in range(3):
        extra = {"started": None, "started_s": None, "added_s": T0 + 3600 * 5} if i == 1 else {}
        add(store, rows(i, points=3, cluster="c2", bench="coll.allreduce", **extra))
