"""What the fabric and ucx levels' libraries offer, and which provider or transports a run uses.

The core's probe (`fabriclab-core --probe fabric|ucx`, no MPI) prints the
library's answers as JSON lines: libfabric's `fi_getinfo` answers (one per
provider, fabric and domain, in the library's order of preference) and
UCX's transport resources. This module reads them and decides, so that the
decision can be tested from recorded answers and the core only times loops:

- **Provider (fabric level)**: `-p provider=NAME` must name one of the
  answers (else exit 2, listing them). Without it, fabriclab chooses:
  with every rank on one host, `shm` (libfabric's shared-memory provider)
  when it offers the benchmark's endpoint type and capabilities; else the
  first answer that does, since fi_getinfo lists providers best first
  (fi_getinfo(3): "ordered by ... expected performance"). The deprecated
  `sockets` provider is taken only when named. A provider that lacks a
  capability a benchmark needs (FI_RMA for writes) is not refused here: the
  kernel records the point as skipped with the reason.
- **Transports (ucx level)**: `-p tls=A+B` (UCX_TLS with `+` for UCX's
  commas, since a comma starts another variant) may name only transports
  the probe found, UCX's aliases, or `^` exclusions (else exit 2, listing them).
- **On a testbed** (`run --testbed`) the emulated hosts share one kernel, so
  shared memory would bypass the emulated cables, as it would for MPI
  (testbed/site.py forces MPI onto TCP): unless told otherwise the fabric
  level runs on the `tcp` provider and the ucx level on `tcp+self`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import RunError, UsageError
from ..suite.benchmarks import LIBRARY_LEVELS
from .protocol import probe_records, run_probe, unreadable

PROBE_TIMEOUT = 60.0
# What a testbed run uses unless told otherwise (the module's docstring).
TESTBED_PROVIDER = "tcp"
TESTBED_TLS = "tcp+self"
SHM = "shm"
DEPRECATED = ("sockets",)
# UCX_TLS names that stand for groups of transports (UCX's ucx.conf / FAQ).
UCX_ALIASES = ("all", "sm", "shm", "mm", "ib", "rc", "ud", "dc", "rc_v", "rc_x", "ud_v", "ud_x",
               "dc_x", "cuda", "rocm", "gga")


@dataclass(frozen=True)
class Answer:
    """One fi_getinfo answer."""
    provider: str
    fabric: str = ""
    domain: str = ""
    ep: str = "rdm"
    caps: frozenset = frozenset()
    inject_size: int = 0
    iov_limit: int = 0
    tx_iov_limit: int = 0
    mr_mode: tuple = ()
    max_msg_size: int = 0

    def offers(self, ep: str, caps) -> bool:
        return self.ep == ep and set(caps) <= self.caps

    def to_dict(self) -> dict:
        return {"provider": self.provider, "fabric": self.fabric, "domain": self.domain, "ep": self.ep,
                "caps": sorted(self.caps), "inject_size": self.inject_size, "iov_limit": self.iov_limit,
                "tx_iov_limit": self.tx_iov_limit, "mr_mode": list(self.mr_mode),
                "max_msg_size": self.max_msg_size}


@dataclass(frozen=True)
class Transport:
    """One UCX transport resource: a transport on a device."""
    tl: str
    device: str = ""
    component: str = ""


@dataclass(frozen=True)
class Offer:
    """What a level's library offers on this host, as its probe said."""
    level: str
    library: dict = field(default_factory=dict)   # name, version, path (where it was loaded from)
    answers: tuple = ()                           # fabric: Answer, in fi_getinfo's order
    transports: tuple = ()                        # ucx: Transport

    @property
    def providers(self) -> list[str]:
        return list(dict.fromkeys(a.provider for a in self.answers))

    @property
    def tls(self) -> list[str]:
        return list(dict.fromkeys(t.tl for t in self.transports))

    def describe(self) -> str:
        lib = self.library
        return f"{lib.get('name', self.level)} {lib.get('version', '?')} ({lib.get('path', '?')})"


@dataclass(frozen=True)
class Choice:
    """The provider a fabric job runs on, and why."""
    provider: str
    why: str
    answer: Answer | None = None


def _answer(d: dict) -> Answer:
    return Answer(str(d["provider"]), str(d.get("fabric", "")), str(d.get("domain", "")),
                  str(d.get("ep", "rdm")), frozenset(map(str, d.get("caps", ()))), int(d.get("inject_size", 0)),
                  int(d.get("iov_limit", 0)), int(d.get("tx_iov_limit", 0)), tuple(map(str, d.get("mr_mode", ()))),
                  int(d.get("max_msg_size", 0)))


def parse(level: str, lines) -> Offer:
    """An Offer from the probe's JSON lines; RunError for an error line or none at all."""
    library, answers, transports = {}, [], []
    for line, d in probe_records(level, lines):
        try:
            kind = d.get("type")
            if kind == "library":
                library = {k: str(d.get(k, "")) for k in ("name", "version", "path")}
            elif kind == "provider":
                answers.append(_answer(d))
            elif kind == "transport":
                transports.append(Transport(str(d["tl"]), str(d.get("device", "")), str(d.get("component", ""))))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise unreadable(level, line, e) from None
    if not library:
        raise RunError(f"the {level} probe named no library")
    return Offer(level, library, tuple(answers), tuple(transports))


def probe(core_path: str, level: str, timeout: float = PROBE_TIMEOUT) -> Offer:
    """Run the core's probe of `level` on this host."""
    return run_probe(core_path, level, lambda lines: parse(level, lines), timeout)


def _caps_text(ep: str, caps) -> str:
    return f"{ep} endpoints" + (f" with {', '.join('FI_' + c.upper() for c in caps)}" if caps else "")


def choose(offer: Offer, ep: str, caps, requested: str = "", one_host: bool = True) -> Choice:
    """The provider for a job: `requested` when it is one of the answers, else fabriclab's choice.

    UsageError when `requested` names no provider here, or when no answer
    offers `ep` endpoints with `caps` and none was requested."""
    if requested:
        mine = [a for a in offer.answers if a.provider == requested]
        if not mine:
            raise UsageError(f"libfabric has no provider {requested!r} here; available: "
                             f"{', '.join(offer.providers) or 'none'}")
        fit = next((a for a in mine if a.offers(ep, caps)), mine[0])
        return Choice(requested, "named with -p provider", fit)
    fit = [a for a in offer.answers if a.offers(ep, caps) and a.provider not in DEPRECATED]
    if not fit:
        raise UsageError(f"no libfabric provider here offers {_caps_text(ep, caps)}; available: "
                         f"{', '.join(offer.providers) or 'none'} (choose one with -p provider=NAME)")
    shm = next((a for a in fit if a.provider == SHM), None)
    if one_host and shm is not None:
        return Choice(SHM, "every rank on one host: libfabric's shared-memory provider", shm)
    first = next((a for a in fit if a.provider != SHM), fit[0])
    return Choice(first.provider, f"the first of fi_getinfo's answers (best first) offering "
                                  f"{_caps_text(ep, caps)}", first)


def check_tls(offer: Offer, tls: str) -> str:
    """`tls` (a UCX_TLS value) unchanged when every name is a transport found here or an alias."""
    known = set(offer.tls) | set(UCX_ALIASES)
    for name in (x.strip() for x in tls.lstrip("^").split("+")):
        if name not in known:
            raise UsageError(f"UCX has no transport {name!r} here; available: {', '.join(offer.tls) or 'none'}"
                             f" (or an alias: {', '.join(UCX_ALIASES[:8])}, ...)")
    return tls


def _unavailable(level: str, built: dict) -> str:
    lib = built.get(level) or {}
    why = lib.get("reason") or "this core was built without it"
    enable = lib.get("enable")
    return f"the {level} level is not available: {why}" + (f"; `{enable}` enables it" if enable else "")


def _settle_job(job, offer: Offer, one_host: bool, testbed: bool):
    """(the job as it will run, what the header records of it)."""
    b = job.bench
    if b.level == "ucx":
        tls = job.params.get("tls") or (TESTBED_TLS if testbed else "")
        if tls:
            job = replace(job, params={**job.params, "tls": check_tls(offer, tls)})
        return job, {"tls": tls or "default (UCX chooses)"}
    ep = job.params.get("ep", b.defaults.get("ep", "rdm"))
    asked = job.params.get("provider", "")
    c = choose(offer, ep, b.caps, asked or (TESTBED_PROVIDER if testbed else ""), one_host)
    why = "a testbed's emulated cables carry TCP only" if testbed and not asked else c.why
    rec = {"provider": c.provider, "why": why, "ep": ep, "caps": list(b.caps)}
    if c.answer is not None:
        rec["answer"] = c.answer.to_dict()
    return replace(job, params={**job.params, "provider": c.provider}), rec


def settle(plan, core_path: str, built: dict, one_host: bool, named: bool, probe_fn=None,
           testbed: bool = False):
    """(plan, header record, notes): every fabric job with its provider chosen and
    every ucx job's transports checked, from the probes of this host.

    A level this core lacks (`built`: build.levels) is refused when a
    benchmark of it was named, and left out of the default suite with a note.
    A plan with app.matmul also records the BLAS it multiplies with (blas_record).
    `probe_fn(core_path, level)` runs a probe: `probe` (looked up at the call)
    unless a caller passes its own."""
    probe_fn = probe_fn or probe
    blas = blas_record(plan, built)
    levels = {j.bench.level for j in plan.jobs} & set(LIBRARY_LEVELS)
    if not levels:
        return plan, blas, []
    jobs, notes, record, offers = [], [], {}, {}
    for level in sorted(levels):
        if not (built.get(level) or {}).get("available"):
            if named:
                raise UsageError(_unavailable(level, built))
            notes.append(f"{_unavailable(level, built)}; its benchmarks were left out of the default suite")
            continue
        try:
            offers[level] = probe_fn(core_path, level)
        except RunError as e:
            if named:
                raise
            notes.append(f"{e}; the {level} benchmarks were left out of the default suite")
            continue
        record[level] = {"library": offers[level].library, "jobs": []}
    for job in plan.jobs:
        level = job.bench.level
        if level not in LIBRARY_LEVELS:
            jobs.append(job)
        elif level in offers:
            try:
                job, rec = _settle_job(job, offers[level], one_host, testbed)
            except UsageError as e:
                if named:
                    raise
                notes.append(f"{job.bench.name} left out of the default suite: {e}")
                continue
            record[level]["jobs"].append({"bench": job.bench.name, "variant": job.variant, **rec})
            jobs.append(job)
    return replace(plan, jobs=tuple(jobs), notes=plan.notes + tuple(notes)), {**record, **blas}, notes


def blas_record(plan, built: dict) -> dict:
    """{"blas": ...}: the BLAS app.matmul's local multiply uses (library and jobs
    as the levels record them), or why the core multiplies by its blocked loop;
    {} when the plan has no app.matmul or the core recorded nothing."""
    lib = built.get("blas")
    if lib is None or not any(j.bench.app and j.bench.app.blas for j in plan.jobs):
        return {}
    if lib.get("available"):
        return {"blas": {"library": {"name": lib.get("name", "BLAS"), "version": lib.get("header_version", ""),
                                     "path": lib.get("libdir", "")}, "source": lib.get("source", ""), "jobs": []}}
    return {"blas": {"library": {"name": "none (blocked loop)", "version": "", "path": ""},
                     "why": lib.get("reason", ""), "enable": lib.get("enable", ""), "jobs": []}}
