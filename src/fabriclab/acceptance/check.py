"""`fabriclab check`, the flow: each test of the thresholds run through the
one run API (measure/session.py), judged, and run again while it fails, up
to `attempts` times (a test passes when any attempt passes, as cluster
health checks repeat a test: a healthy node fluctuates and fails a single
try). The cabling test (cabling.py) launches nothing: it reads the fabric once,
before anything launches, and is judged first. What fails is said one line per
cable, host or figure; a collective whose model bottleneck is a cable the pair
matrix named says so, since the cable explains it."""

from __future__ import annotations

import json
import math
import signal
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from .. import outputs
from ..analysis import merge
from ..errors import RunError, Terminated, UsageError
from ..suite import congestion
from ..verdicts import congestion as judged
from ..verdicts import pair_matrix
from ..measure.session import Request, Session
from ..units import fmt_bytes, fmt_time
from .cabling import SAVED, Cabling

PASS, FAIL, REPORTED = "pass", "fail", "reported"
CHECK_LAUNCHES = 2          # a judged figure's launches: its interval then covers launch to launch


@dataclass
class Attempt:
    verdict: str                  # pass | fail | reported (measured, nothing to judge it by)
    items: list                   # one line per failing cable, host or figure
    figures: list                 # what was measured, one line each
    document: str
    named: list = field(default_factory=list)     # the cables the pair matrix named
    bottlenecks: dict = field(default_factory=dict)   # a failing collective's line -> its model bottleneck


@dataclass
class Outcome:
    test: str
    verdict: str
    attempts: list

    @property
    def last(self) -> Attempt:
        return self.attempts[-1]


class Check:
    """One check: the thresholds, the run every test starts from (where the ranks go, the
    MPI, the network), the folder written, an optional baseline document."""

    def __init__(self, thresholds: dict, base: Request, out: Path, baseline: Optional[str] = None,
                 say: Callable[[str], None] = lambda line: None, stamped: bool = False,
                 cabling: Optional[Cabling] = None):
        self.t, self.base, self.out, self.baseline, self.say = thresholds, base, out, baseline, say
        self.stamped = stamped        # `out` is a default name stamped to the second: made exclusively
        self.cabling = cabling        # the reference and the fabric read now, for the cabling test

    def request(self, name: str, k: int) -> Request:
        """The run of test `name`'s attempt k."""
        if name == "pairs":
            p = self.t["pairs"]
            return self._request(name, k, benches=(pair_matrix.BENCH,), sizes=str(p["size"]),
                                 params=(f"window={p['window']}",))
        if name == "congestion":
            c = self.t["congestion"]
            bench, inner = congestion.victim_test(c["victim"])
            return self._request(name, k, benches=(bench,), sizes=None,
                                 params=(f"aggressor={c['aggressor']}", *((f"victim={inner}",) if inner else ())),
                                 launches=CHECK_LAUNCHES,
                                 sampling=replace(self.base.sampling,
                                                  sample_time=max(self.base.sampling.sample_time, 0.05)))
        c = self.t["collectives"]
        return self._request(name, k, benches=tuple(f"coll.{op}" for op in c["ops"]), sizes=str(c["size"]),
                             params=(), active=str(self.base.launch.ranks), launches=CHECK_LAUNCHES)

    def check(self, dry_run: bool = False) -> None:
        """Every test's run checked (plan, MPI, ranks, memory), the files of the folder, and the
        baseline's points, then the fabric read for the cabling test (in a dry run, ibnetdiscover
        only looked for), before the first is launched."""
        for name in self.measured():
            session = Session(self.request(name, 1)).check()
            if name == "collectives" and self.baseline:
                self._baseline_covers(session.plan)
        outputs.files(self.out, self.files())
        if "cabling" in self.t["tests"]:
            if self.cabling is None:
                raise UsageError("the cabling test reads the fabric now: give --fabric FILE, - or discover, "
                                 "and the reference network with --network")
            self.cabling.check(discover=not dry_run)

    def measured(self) -> list[str]:
        """The tests that launch a run (every test but cabling)."""
        return [name for name in self.t["tests"] if name != "cabling"]

    def files(self) -> list[str]:
        """Every name the check writes into its folder."""
        runs = [f"{name}-{k}" for name in self.measured() for k in range(1, self.t["attempts"] + 1)]
        read = [SAVED] if "cabling" in self.t["tests"] else []
        return ["check.json", *(["report.html"] if runs else []), *read,
                *(run + ext for run in runs for ext in (".json", ".ndjson"))]

    def _baseline_covers(self, plan) -> None:
        """UsageError naming the collectives' points that the baseline lacks: judged against
        nothing, they would fail only after every run."""
        from ..schema import load
        have = load(self.baseline).groups()
        missing = [key for job in plan.jobs for key in _keys(job) if key not in have]
        if missing:
            shown = [f"{b}{f' ({v})' if v else ''} at {fmt_bytes(size)} on {active} ranks"
                     for b, v, size, _, _, active in missing[:4]]
            raise UsageError(f"the baseline {self.baseline} lacks {', '.join(shown)}"
                             f"{f' and {len(missing) - 4} more' if len(missing) > 4 else ''}: "
                             "judge against a run of the same collectives, sizes and ranks")

    def commands(self, name: str) -> list[str]:
        """The launch commands of test `name`'s first attempt (nothing launched or written)."""
        if name == "cabling":
            return self.cabling.commands()
        return Session(self.request(name, 1)).commands()

    def run(self) -> list[Outcome]:
        if self.stamped:              # another check may have started in the same second
            self.out, self.stamped = outputs.new_directory(self.out), False
        self.out.mkdir(parents=True, exist_ok=True)     # the cabling test writes before any run
        tests = {"pairs": self._pairs, "congestion": self._congestion, "collectives": self._collectives}
        outcomes, ended = [], None
        try:
            for name in sorted(self.t["tests"], key=lambda n: n != "cabling"):     # cabling first
                if name == "cabling":          # the fabric was read once, before anything launched
                    outcomes.append(Outcome(name, (a := self._cabling()).verdict, [a]))
                    continue
                tries = []
                for k in range(1, self.t["attempts"] + 1):
                    self.say(f"{name}: attempt {k} of {self.t['attempts']}")
                    tries.append(tests[name](self.request(name, k)))
                    if tries[-1].verdict != FAIL:
                        break
                outcomes.append(Outcome(name, tries[-1].verdict, tries))
        except KeyboardInterrupt as e:
            ended = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
            raise
        except RunError as e:
            ended = f"failed: {e}"
            raise
        finally:                 # check.json holds the tests that completed, and how the check ended
            self._explain(outcomes)
            outputs.write(self.out / "check.json", json.dumps(to_dict(outcomes, self.t, ended), indent=1) + "\n")
        return outcomes

    def _request(self, name: str, k: int, **kw) -> Request:
        return replace(self.base, output=str(self.out / f"{name}-{k}.json"), **kw)

    def _document(self, request: Request):
        """The run's result; a failed run ends the check (RunError), an interrupted one as its signal would."""
        result = Session(request, say=self.say).run()
        if result.status == "interrupted":
            raise Terminated() if result.signal == signal.SIGTERM else KeyboardInterrupt()
        if result.status != "complete":
            raise RunError(f"check: the {request.benches[0]} run {result.status}: {result.error}")
        return result

    def _cabling(self) -> Attempt:
        self.say(f"cabling: {self.cabling.where} against {self.cabling.reference}")
        passed, items, figures, saved = self.cabling.judge(self.out)
        return Attempt(PASS if passed else FAIL, items, figures, saved)

    def _pairs(self, req: Request) -> Attempt:
        p = self.t["pairs"]
        res = self._document(req)
        doc = res.document
        ms = pair_matrix.matrices(merge.merged(doc), doc.header.hosts or [], doc.header.network, drop=p["drop"])
        if not ms:
            return Attempt(FAIL, ["pairs: no pair was measured"], [], str(res.path))
        m = ms[0]
        n = len(m.hosts)
        items = [f"cable {lab}: {bad} of the {of} pairs it limits low" for lab, bad, of in m.cables]
        items += [f"host {h}: {bad} of its {of} pairs low ({way})" for h, way, bad, of in m.hosts_named]
        basis = "the model's rate" if m.predicted is not None else "the median pair"
        figures = [f"pairs at {fmt_bytes(m.size)}: {len(m.low)} of {n * (n - 1)} below {1 - p['drop']:.0%} "
                   f"of the typical pair against {basis}"]
        return Attempt(FAIL if items else PASS, items, figures, str(res.path), named=[c[0] for c in m.cables])

    def _congestion(self, req: Request) -> Attempt:
        c = self.t["congestion"]
        res = self._document(req)
        doc = res.document
        found = judged.impacts(doc.points, doc.header.hosts, doc.header.network)
        if not found:
            return Attempt(FAIL, ["congestion: no victim point was measured both isolated and congested"], [],
                           str(res.path))
        m = found[0]
        r, lo, hi = m.median
        fig = (f"congestion: {c['victim']} victims under {c['aggressor']}: impact {r:.2f} [{lo:.2f}, {hi:.2f}]"
               + (f", the model's {m.predicted.impact:.2f}" if m.predicted else ""))
        if m.predicted:
            limit, against = m.predicted.impact * (1 + c["tolerance"]), "the model's impact"
        elif c["max_impact"] is not None:
            limit, against = c["max_impact"], "max_impact"
        else:
            return Attempt(REPORTED, [], [fig + " (no model and no max_impact to judge it by)"], str(res.path))
        bad = math.isfinite(lo) and lo > limit
        items = [f"{fig}: above {limit:.2f} ({against}"
                 + (f" x {1 + c['tolerance']:g}" if m.predicted else "") + ")"] if bad else []
        return Attempt(FAIL if bad else PASS, items, [fig], str(res.path))

    def _collectives(self, req: Request) -> Attempt:
        c = self.t["collectives"]
        res = self._document(req)
        if self.baseline:
            return self._against_baseline(res, c)
        return self._against_model(res, c)

    def _against_model(self, res, c: dict) -> Attempt:
        doc = res.document
        rows = doc.coll_predictions
        if not rows:
            figs = [f"{p.bench} at {fmt_bytes(p.size)} on {p.active} ranks: {fmt_time(p.summary.median)}"
                    for p in merge.merged(doc)]
            return Attempt(REPORTED, [], [f + " (no model of the network and no --baseline to judge it by)"
                                          for f in figs], str(res.path))
        low = {(p.bench, p.size, p.active): p.summary.ci_low or p.summary.median for p in merge.merged(doc)}
        items, figures, why = [], [], {}
        for row in rows:
            ratio_lo = low.get((row["bench"], row["size"], row["active"]), row["measured_s"]) / row["predicted_s"]
            line = (f"{row['bench']} at {fmt_bytes(row['size'])} on {row['active']} ranks: "
                    f"{fmt_time(row['measured_s'])}, {row['ratio']:.2f}x the model's {fmt_time(row['predicted_s'])} "
                    f"({row['algorithm']}; the model's bottleneck {row.get('bottleneck') or '-'})")
            figures.append(line)
            if ratio_lo > 1 + c["tolerance"]:
                items.append(f"{line}: slower than {1 + c['tolerance']:g}x the model's")
                why[items[-1]] = row.get("bottleneck") or ""
        return Attempt(FAIL if items else PASS, items, figures, str(res.path), bottlenecks=why)

    def _against_baseline(self, res, c: dict) -> Attempt:
        from ..analysis.compare import compare
        from ..schema import load
        changes = [ch for ch in compare(load(self.baseline), res.document) if ch.bench.startswith("coll.")]
        items, figures = [], []
        for ch in changes:
            line = (f"{ch.bench} at {fmt_bytes(ch.size)} on {ch.active} ranks: {ch.ratio:.2f}x the baseline's time "
                    f"[{ch.ratio_ci_low:.2f}, {ch.ratio_ci_high:.2f}]")
            figures.append(line)
            if ch.verdict == "only-in-base" or (math.isfinite(ch.ratio_ci_low) and ch.ratio_ci_low > 1 + c["tolerance"]):
                items.append(f"{line}: slower than {1 + c['tolerance']:g}x the baseline's")
        if not changes:
            items.append(f"the baseline {self.baseline} has none of these collectives")
        return Attempt(FAIL if items else PASS, items, figures, str(res.path))

    @staticmethod
    def _explain(outcomes: list[Outcome]) -> None:
        """A failing collective beside cables the pair matrix named, said so on its line: it
        runs on the same ranks, whose pairs' paths cross every cable the matrix can name."""
        named = [lab for o in outcomes if o.test == "pairs" for lab in o.last.named]
        for o in outcomes:
            a = o.last
            if o.test != "collectives" or not named:
                continue
            a.items = [f"{line} (its bottleneck, {a.bottlenecks[line]}, is a cable named above)"
                       if a.bottlenecks.get(line) in named else
                       f"{line} (its ranks' traffic crosses {', '.join(named)}, named above)" for line in a.items]


def _keys(job) -> list[tuple]:
    """The keys of the points a job measures (records.Point.key)."""
    actives = [lay.active for lay in job.layouts] or [None]
    return [(job.bench.name, job.variant, size, stride, conns, active) for active in actives
            for size in job.sizes for stride in job.strides for conns in job.conns]


def to_dict(outcomes: list[Outcome], thresholds: dict, ended: Optional[str] = None) -> dict:
    """check.json: passed only when every test ran and none failed; `ended` says why it stopped early."""
    return {"passed": ended is None and all(o.verdict != FAIL for o in outcomes), "thresholds": thresholds,
            **({"ended": ended} if ended else {}),
            "tests": [{"test": o.test, "verdict": o.verdict,
                       "attempts": [{k: v for k, v in asdict(a).items() if k != "bottlenecks"} for a in o.attempts]}
                      for o in outcomes]}


def lines(outcomes: list[Outcome]) -> list[str]:
    """What `fabriclab check` prints: each test's verdict and figures, then one line per failing item."""
    out = []
    for o in outcomes:
        tries = len(o.attempts)
        out.append(f"{o.verdict.upper():<8} {o.test} ({tries} attempt{'s' if tries > 1 else ''})")
        out += [f"  {f}" for f in o.last.figures]
    failing = [(o.test, item) for o in outcomes if o.verdict == FAIL for item in o.last.items]
    out.append("")
    if failing:
        out.append(f"check FAILED: {len(failing)} failing item{'s' if len(failing) > 1 else ''}")
        out += [f"FAIL {test}: {item}" for test, item in failing]
    else:
        out.append("check passed")
    return out
